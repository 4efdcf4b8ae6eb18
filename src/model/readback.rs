//! Reading tensors back to the host: async, the only way that works on WebGPU (and the same
//! code natively, where the future is ready at once).

use burn::tensor::Tensor;

use crate::model::ModelError;

/// Reads a float tensor back to the host (async: the only way that works on WebGPU).
///
/// # Errors
/// [`ModelError::Readback`] where the device cannot hand the data over, and
/// [`ModelError::NotANumber`] where it holds NaN: no result of the model's is NaN on a sound
/// device (the weights are checked at load), so a caller never builds on one.
pub async fn read_f32<const D: usize>(tensor: Tensor<D>) -> Result<Vec<f32>, ModelError> {
    let data = tensor
        .into_data_async()
        .await
        .map_err(|e| ModelError::Readback(format!("{e:?}")))?;
    let values = data
        .convert::<f32>()
        .try_to_vec::<f32>()
        .map_err(|e| ModelError::Readback(format!("{e:?}")))?;
    if values.iter().any(|v| v.is_nan()) {
        return Err(ModelError::NotANumber("a result read back"));
    }
    Ok(values)
}

/// Reads a float tensor to the host without waiting: for the CPU backend, whose data is already
/// there (the browser's packed products read their inputs so), and natively. A GPU tensor in
/// the browser needs [`read_f32`].
pub fn read_f32_now<const D: usize>(tensor: Tensor<D>) -> Result<Vec<f32>, ModelError> {
    tensor
        .try_into_data()
        .map_err(|e| ModelError::Readback(format!("{e:?}")))?
        .convert::<f32>()
        .try_into_vec::<f32>()
        .map_err(|e| ModelError::Readback(format!("{e:?}")))
}

/// Reads an integer tensor back to the host (async, as [`read_f32`]).
pub async fn read_i64<const D: usize>(
    tensor: Tensor<D, burn::tensor::Int>,
) -> Result<Vec<i64>, ModelError> {
    let data = tensor
        .into_data_async()
        .await
        .map_err(|e| ModelError::Readback(format!("{e:?}")))?;
    data.convert::<i64>()
        .try_to_vec::<i64>()
        .map_err(|e| ModelError::Readback(format!("{e:?}")))
}
