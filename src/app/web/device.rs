//! The participant's browser and device as the page sees them (user agent, screen size, touch),
//! recorded in the export's manifest.

use wasm_bindgen::JsValue;

use crate::game::run::export::DeviceInfo;

/// `object[name]` as a whole number (0 when absent). Read through `Reflect`: web-sys's
/// `Screen` binding would be one more feature for two numbers.
fn number(object: &JsValue, name: &str) -> u32 {
    js_sys::Reflect::get(object, &JsValue::from_str(name))
        .ok()
        .and_then(|v| v.as_f64())
        .filter(|n| n.is_finite() && *n >= 0.0)
        .map_or(0, |n| n.min(f64::from(u32::MAX)) as u32)
}

/// This browser and device; `None` outside a window (the worker).
pub fn device_info() -> Option<DeviceInfo> {
    let window = web_sys::window()?;
    let navigator = window.navigator();
    let screen = js_sys::Reflect::get(&window, &JsValue::from_str("screen")).unwrap_or_default();
    Some(DeviceInfo {
        user_agent: navigator.user_agent().unwrap_or_default(),
        screen_width: number(&screen, "width"),
        screen_height: number(&screen, "height"),
        touch: number(&navigator, "maxTouchPoints") > 0,
    })
}
