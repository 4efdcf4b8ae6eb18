//! The worker's requests without a page: the same dispatch the page's messages take, fed JSON by
//! a caller that holds the worker's wasm itself (`scripts/dawn_worker.mjs` runs it under Node.js
//! on Dawn, the WebGPU engine Chromium ships, where no browser reaches the GPU). Model files come
//! in as bytes, through the page's own upload requests.

use std::rc::Rc;

use super::{Shared, dispatch};
use crate::runtime::protocol::{FromWorker, Request, ToWorker, UploadChunkRequest};

/// One worker's state, driven by direct calls.
#[derive(Default)]
pub struct DirectWorker {
    state: Shared,
}

impl DirectWorker {
    pub fn new() -> Self {
        Self::default()
    }

    /// Handles one [`ToWorker`] given as JSON; each reply reaches `on_reply` as JSON (progress
    /// first, the final reply last, as the page receives them).
    pub fn request_json(
        &self,
        message: &str,
        on_reply: impl Fn(String) + 'static,
    ) -> Result<(), serde_json::Error> {
        let message: ToWorker = serde_json::from_str(message)?;
        dispatch(&self.state, message, json_sink(on_reply));
        Ok(())
    }

    /// One piece of an upload (the bytes stay out of JSON): [`Request::UploadChunk`] as id `id`.
    pub fn upload_chunk(
        &self,
        id: u64,
        file: usize,
        bytes: Vec<u8>,
        on_reply: impl Fn(String) + 'static,
    ) {
        let request = Request::UploadChunk(UploadChunkRequest { file, bytes });
        dispatch(&self.state, ToWorker { id, request }, json_sink(on_reply));
    }
}

fn json_sink(on_reply: impl Fn(String) + 'static) -> Rc<dyn Fn(FromWorker)> {
    Rc::new(move |reply: FromWorker| {
        // Every reply type is plain serde data (the protocol's round-trip tests), so this holds.
        let text = serde_json::to_string(&reply).unwrap_or_else(|e| {
            format!(
                r#"{{"id":{},"reply":{{"Failed":"reply not encodable: {e}"}}}}"#,
                reply.id
            )
        });
        on_reply(text);
    })
}
