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
