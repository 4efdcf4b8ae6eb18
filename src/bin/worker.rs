//! Entry point of the inference worker: GPT-2, the tokenizer and every estimator run here, off
//! the page's main thread (see `clozelab::app::worker`).

#[cfg(target_arch = "wasm32")]
fn main() {
    clozelab::app::run_static_constructors_once();
    console_error_panic_hook::set_once();
    clozelab::model::ops::gemm_packing::pack_weights_from_few_rows();
    clozelab::app::worker::register();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    eprintln!("the inference worker runs only in the browser; natively, use `clozelab`");
    std::process::ExitCode::from(2)
}
