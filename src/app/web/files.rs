//! Reading files the user picked or dropped.

use js_sys::Uint8Array;
use wasm_bindgen_futures::JsFuture;

/// Name and bytes of every file in a `FileList`.
pub async fn read_file_list(files: &web_sys::FileList) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut out = Vec::new();
    for index in 0..files.length() {
        let Some(file) = files.get(index) else { continue };
        let buffer = JsFuture::from(file.array_buffer())
            .await
            .map_err(|e| format!("cannot read {}: {}", file.name(), super::js_error_text(&e)))?;
        out.push((file.name(), Uint8Array::new(&buffer).to_vec()));
    }
    Ok(out)
}

/// Offers `text` as a download named `name` (nothing leaves the machine: a local blob URL).
pub fn download_text(name: &str, mime: &str, text: &str) -> Result<(), String> {
    use wasm_bindgen::JsCast;
    let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(text));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options).map_err(|e| super::js_error_text(&e))?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(|e| super::js_error_text(&e))?;
    let document = web_sys::window().and_then(|w| w.document()).ok_or("no document")?;
    let anchor: web_sys::HtmlAnchorElement = document.create_element("a").map_err(|e| super::js_error_text(&e))?.dyn_into().map_err(|_| "not an anchor")?;
    anchor.set_href(&url);
    anchor.set_download(name);
    anchor.click();
    let _ = web_sys::Url::revoke_object_url(&url);
    Ok(())
}
