//! A projection with f16 weights and f32 activations: cubek's matmul (the crate under burn's
//! own) given operands of different types, which burn's `matmul` does not offer (it takes both
//! in one type). The weights are read as f16 (half the bytes of f32), the activations stay f32
//! and the products are accumulated and written in f32, so of f16 only the weights' rounding
//! remains; composed in burn, the activations went to f16 and the products back, two more
//! kernels and two more roundings per projection.

use burn::backend::cubecl::dtype_to_storage_type;
use burn::tensor::DType;
use burn_cubecl::kernel::into_contiguous;
use burn_cubecl::ops::numeric::empty_device_dtype;
use burn_cubecl::tensor::CubeTensor;
use cubek::matmul::definition::{MatmulElems, MatmulGlobalElems};
use cubek::matmul::multi_level;
use cubek::matmul::routine::BlueprintStrategy;
use cubek::matmul::strategy::Strategy;
use cubek::std::InputBinding;

/// `input · weight`: input `[rows, in]` (f32), weight `[in, out]` (f16) → `[rows, out]` (f32).
///
/// One row (a decoding step) takes cubek's vector-matrix kernel where its shape suits it (both
/// widths multiples of the GPU's plane), every other product cubek's own choice: a tensor-core
/// kernel where the GPU offers one for these types, else its tiled kernel on the GPU's units.
pub(super) fn launch_half_product(input: CubeTensor, weight: CubeTensor) -> CubeTensor {
    let input = into_contiguous(input);
    let weight = into_contiguous(weight);
    let rows = input.meta.shape()[0];
    let cols = weight.meta.shape()[1];
    let client = input.client.clone();
    let output = empty_device_dtype(
        client.clone(),
        input.device.clone(),
        [rows, cols].into(),
        DType::F32,
    );
    let launch = |strategy: &Strategy| {
        let mut dtypes = MatmulElems::from_globals(&MatmulGlobalElems {
            lhs: dtype_to_storage_type(input.dtype),
            rhs: dtype_to_storage_type(weight.dtype),
            out: dtype_to_storage_type(DType::F32),
        });
        cubek::matmul::launch::launch_ref(
            strategy,
            &client,
            InputBinding::new(input.clone().binding(), dtype_to_storage_type(input.dtype)),
            InputBinding::new(
                weight.clone().binding(),
                dtype_to_storage_type(weight.dtype),
            ),
            output.clone().binding(),
            &mut dtypes,
        )
    };
    let vector = Strategy::MultiLevel(multi_level::Strategy::GemvUnitPerpendicular(
        BlueprintStrategy::Inferred(Default::default()),
    ));
    // The vector kernel declines shapes it cannot take before launching anything, and cubek's
    // own choice always has its units' kernel to fall back on; a failure there is a bug in
    // cubek, not bad input, so it is not turned into an error of ours.
    if rows != 1 || launch(&vector).is_err() {
        launch(&Strategy::Auto).expect("cubek's matmul takes any shape on its units' kernel");
    }
    output
}
