//! Entry point: the Leptos app in the browser, the CLI natively.

#[cfg(target_arch = "wasm32")]
fn main() {
    clozelab::app::mount();
}

#[cfg(not(target_arch = "wasm32"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    clozelab::cli::allocator::keep_freed_memory();
    clozelab::model::ops::gemm_packing::pack_weights_from_few_rows();
    clozelab::cli::main()
}
