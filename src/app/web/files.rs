//! Reading files the user picked or dropped, and offering text as a download (gloo-file).

use wasm_bindgen::JsCast;

use super::WebError;

/// Name and bytes of every file in a `FileList`.
pub async fn read_file_list(files: &web_sys::FileList) -> Result<Vec<(String, Vec<u8>)>, WebError> {
    let mut out = Vec::new();
    for file in gloo_file::FileList::from(files.clone()).iter() {
        out.push((file.name(), read_file(file).await?));
    }
    Ok(out)
}

/// One file's bytes.
pub async fn read_file(file: &gloo_file::File) -> Result<Vec<u8>, WebError> {
    gloo_file::futures::read_as_bytes(file)
        .await
        .map_err(|e| WebError::ReadFile {
            name: file.name(),
            message: e.to_string(),
        })
}

/// Offers `text` as a download named `name` (nothing leaves the machine: a local blob URL).
pub fn download_text(name: &str, mime: &str, text: &str) -> Result<(), WebError> {
    let blob = gloo_file::Blob::new_with_options(text, Some(mime));
    let url = gloo_file::ObjectUrl::from(blob);
    // `url` is revoked when dropped, after the click has started the download.
    download_url(name, &url)
}

/// Offers `bytes` as a download named `name` (a ZIP the page made).
pub fn download_bytes(name: &str, mime: &str, bytes: &[u8]) -> Result<(), WebError> {
    let blob = gloo_file::Blob::new_with_options(bytes, Some(mime));
    let url = gloo_file::ObjectUrl::from(blob);
    download_url(name, &url)
}

/// Offers what `url` points at (a blob or `data:` URL) as a download named `name`.
pub fn download_url(name: &str, url: &str) -> Result<(), WebError> {
    let document = web_sys::window()
        .and_then(|w| w.document())
        .ok_or_else(|| WebError::Browser("no document".into()))?;
    let anchor: web_sys::HtmlAnchorElement = document
        .create_element("a")
        .map_err(|e| WebError::browser(&e))?
        .dyn_into()
        .map_err(|_| WebError::Browser("<a> is not an anchor element".into()))?;
    anchor.set_href(url);
    anchor.set_download(name);
    anchor.click();
    Ok(())
}
