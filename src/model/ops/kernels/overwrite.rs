//! Host values written into a tensor's own device buffer, in place: how a recorded step's inputs
//! change between replays, since the recording reads the buffers it saw. No kernel runs (one
//! queued write), where burn's API would upload a new tensor and copy it over (a kernel more a
//! buffer).

use burn::tensor::{DType, Int, Tensor};
use burn_cubecl::tensor::CubeTensor;
use burn_dispatch::{BackendTensor, DispatchTensor, DispatchTensorKind};
use cubecl::bytes::Bytes;

/// Why [`overwrite_ints`] or [`overwrite_floats`] refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OverwriteError {
    #[error("{given} values for a buffer of {held}")]
    Length { given: usize, held: usize },
    #[error("a buffer of {0:?} cannot be written in place")]
    DType(DType),
    #[error("the tensor is not on a GPU")]
    NotOnGpu,
}

/// Writes `values` over an integer tensor's elements, in its own buffer, after the work queued
/// before; every value must fit the tensor's type.
///
/// # Shapes
/// - tensor: any, with as many elements as `values`, contiguous from its buffer's start
pub fn overwrite_ints<const D: usize>(
    tensor: &Tensor<D, Int>,
    values: &[i64],
) -> Result<(), OverwriteError> {
    let held = tensor.shape().num_elements();
    overwrite(held, tensor.dtype(), tensor.clone().into_dispatch(), values)
}

/// [`overwrite_ints`] for a float tensor: each value written as its type holds it.
///
/// # Shapes
/// - tensor: any, with as many elements as `values`, contiguous from its buffer's start
pub fn overwrite_floats<const D: usize>(
    tensor: &Tensor<D>,
    values: &[i64],
) -> Result<(), OverwriteError> {
    let held = tensor.shape().num_elements();
    overwrite(held, tensor.dtype(), tensor.clone().into_dispatch(), values)
}

fn overwrite(
    held: usize,
    dtype: DType,
    tensor: DispatchTensor,
    values: &[i64],
) -> Result<(), OverwriteError> {
    if values.len() != held {
        return Err(OverwriteError::Length {
            given: values.len(),
            held,
        });
    }
    let bytes: Vec<u8> = match dtype {
        DType::F32 => values
            .iter()
            .flat_map(|&v| (v as f32).to_le_bytes())
            .collect(),
        DType::I32 => values
            .iter()
            .flat_map(|&v| (v as i32).to_le_bytes())
            .collect(),
        DType::I64 => values.iter().flat_map(|&v| v.to_le_bytes()).collect(),
        DType::U32 => values
            .iter()
            .flat_map(|&v| (v as u32).to_le_bytes())
            .collect(),
        other => return Err(OverwriteError::DType(other)),
    };
    let cube = on_gpu(tensor)?;
    cube.client
        .write(&cube.handle, Bytes::from_bytes_vec(bytes));
    Ok(())
}

/// The GPU tensor under burn's dispatch (natively: the tensor itself).
#[cfg(not(target_arch = "wasm32"))]
fn on_gpu(tensor: DispatchTensor) -> Result<CubeTensor, OverwriteError> {
    match tensor.kind {
        DispatchTensorKind::Cube(BackendTensor::Float(t) | BackendTensor::Int(t)) => Ok(t),
        _ => Err(OverwriteError::NotOnGpu),
    }
}

/// The GPU tensor under burn's dispatch: in the browser, fusion's tensor resolved (the work
/// queued for it run first), which shares its buffer.
#[cfg(target_arch = "wasm32")]
fn on_gpu(tensor: DispatchTensor) -> Result<CubeTensor, OverwriteError> {
    use burn_cubecl::CubeBackend;
    match tensor.kind {
        DispatchTensorKind::Cube(BackendTensor::Float(t)) => {
            Ok(t.client.clone().resolve_tensor_float::<CubeBackend>(t))
        }
        DispatchTensorKind::Cube(BackendTensor::Int(t)) => {
            Ok(t.client.clone().resolve_tensor_int::<CubeBackend>(t))
        }
        _ => Err(OverwriteError::NotOnGpu),
    }
}
