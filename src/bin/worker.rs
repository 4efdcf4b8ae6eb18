//! Entry point of the inference worker: GPT-2, the tokenizer and every estimator run here, off
//! the page's main thread (see `clozelab::app::worker`).

#[cfg(target_arch = "wasm32")]
fn main() {
    clozelab::app::run_static_constructors_once();
    console_error_panic_hook::set_once();
    clozelab::model::ops::gemm_packing::pack_weights_from_few_rows();
    if clozelab::app::worker::product_helper::is_helper() {
        clozelab::app::worker::product_helper::run();
    } else {
        clozelab::app::worker::register();
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    eprintln!("the inference worker runs only in the browser; natively, use `clozelab`");
    std::process::ExitCode::from(2)
}

/// The worker's requests for a caller that holds this wasm itself instead of a page
/// (`scripts/dawn_worker.mjs`): exported here, by the worker binary alone, so that the app's
/// wasm does not carry the model.
#[cfg(target_arch = "wasm32")]
mod direct {
    use wasm_bindgen::prelude::*;

    #[wasm_bindgen]
    pub struct DirectWorker(clozelab::app::worker::direct::DirectWorker);

    #[wasm_bindgen]
    impl DirectWorker {
        #[wasm_bindgen(constructor)]
        #[allow(clippy::new_without_default)]
        pub fn new() -> Self {
            Self(clozelab::app::worker::direct::DirectWorker::new())
        }

        /// A `ToWorker` as JSON; `on_reply` is called with each reply's JSON.
        pub fn request(&self, message: &str, on_reply: js_sys::Function) -> Result<(), JsError> {
            self.0
                .request_json(message, move |reply| {
                    let _ = on_reply.call1(&JsValue::NULL, &JsValue::from_str(&reply));
                })
                .map_err(|e| JsError::new(&format!("not a request: {e}")))
        }

        /// One upload chunk's bytes, as request `id`.
        pub fn upload_chunk(
            &self,
            id: u32,
            file: usize,
            bytes: Vec<u8>,
            on_reply: js_sys::Function,
        ) {
            self.0.upload_chunk(id.into(), file, bytes, move |reply| {
                let _ = on_reply.call1(&JsValue::NULL, &JsValue::from_str(&reply));
            });
        }
    }
}
