//! Writes a GGUF file (version 3): metadata, then each tensor encoded as F32, F16 or Q8_0 at
//! the file's alignment, as llama.cpp's own writer lays them out (`gguf_write_to_file`).

use super::blocks::GgmlType;
use super::container::{MAGIC, Value};

const ALIGNMENT: usize = 32;

/// A GGUF file being assembled.
#[derive(Default)]
pub struct GgufWriter {
    metadata: Vec<(String, Value)>,
    /// Name, GGUF dims (innermost first), type, encoded bytes.
    tensors: Vec<(String, Vec<usize>, GgmlType, Vec<u8>)>,
}

/// Why a tensor cannot be written.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum WriteError {
    #[error("tensor `{name}`: {values} values do not fill shape {shape:?}")]
    Shape {
        name: String,
        values: usize,
        shape: Vec<usize>,
    },
    #[error("tensor `{name}`: rows of {row} values are not whole blocks of {block} ({ggml_type})")]
    Blocks {
        name: String,
        row: usize,
        block: usize,
        ggml_type: &'static str,
    },
    #[error("tensor `{0}`: {1} is not written (F32, F16 and Q8_0 are)")]
    Type(String, &'static str),
}

impl GgufWriter {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn metadata(&mut self, key: &str, value: Value) -> &mut Self {
        self.metadata.push((key.to_string(), value));
        self
    }

    /// Adds a tensor of PyTorch shape `shape` (outermost first), encoded as `ggml_type`.
    pub fn tensor(
        &mut self,
        name: &str,
        shape: &[usize],
        values: &[f32],
        ggml_type: GgmlType,
    ) -> Result<&mut Self, WriteError> {
        if shape.iter().product::<usize>() != values.len() || shape.is_empty() {
            return Err(WriteError::Shape {
                name: name.into(),
                values: values.len(),
                shape: shape.to_vec(),
            });
        }
        let row = shape[shape.len() - 1];
        if !row.is_multiple_of(ggml_type.block_values()) {
            return Err(WriteError::Blocks {
                name: name.into(),
                row,
                block: ggml_type.block_values(),
                ggml_type: ggml_type.name(),
            });
        }
        let bytes = encode(name, values, ggml_type)?;
        let dims = shape.iter().rev().copied().collect();
        self.tensors
            .push((name.to_string(), dims, ggml_type, bytes));
        Ok(self)
    }

    /// The file's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&3u32.to_le_bytes());
        out.extend_from_slice(&(self.tensors.len() as u64).to_le_bytes());
        out.extend_from_slice(&(self.metadata.len() as u64).to_le_bytes());
        for (key, value) in &self.metadata {
            put_string(&mut out, key);
            put_value(&mut out, value, true);
        }
        let mut offset = 0usize;
        for (name, dims, ggml_type, bytes) in &self.tensors {
            put_string(&mut out, name);
            out.extend_from_slice(&(dims.len() as u32).to_le_bytes());
            for d in dims {
                out.extend_from_slice(&(*d as u64).to_le_bytes());
            }
            out.extend_from_slice(&ggml_type.id().to_le_bytes());
            out.extend_from_slice(&(offset as u64).to_le_bytes());
            offset = (offset + bytes.len()).next_multiple_of(ALIGNMENT);
        }
        out.resize(out.len().next_multiple_of(ALIGNMENT), 0);
        for (_, _, _, bytes) in &self.tensors {
            out.extend_from_slice(bytes);
            out.resize(out.len().next_multiple_of(ALIGNMENT), 0);
        }
        out
    }
}

fn put_string(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u64).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// GGUF's value type id of `value` (integers as i64/u64, floats as f32 as llama.cpp's
/// writer stores them, so that readers that expect f32 find it).
fn kind(value: &Value) -> u32 {
    match value {
        Value::Uint(_) => 10,
        Value::Int(_) => 11,
        Value::Float(_) => 6,
        Value::Bool(_) => 7,
        Value::Str(_) => 8,
        Value::Array(_) => 9,
    }
}

fn put_value(out: &mut Vec<u8>, value: &Value, with_kind: bool) {
    if with_kind {
        out.extend_from_slice(&kind(value).to_le_bytes());
    }
    match value {
        Value::Uint(n) => out.extend_from_slice(&n.to_le_bytes()),
        Value::Int(n) => out.extend_from_slice(&n.to_le_bytes()),
        Value::Float(x) => out.extend_from_slice(&(*x as f32).to_le_bytes()),
        Value::Bool(b) => out.push(u8::from(*b)),
        Value::Str(s) => put_string(out, s),
        Value::Array(items) => {
            let item_kind = items.first().map_or(8, kind);
            out.extend_from_slice(&item_kind.to_le_bytes());
            out.extend_from_slice(&(items.len() as u64).to_le_bytes());
            for item in items {
                put_value(out, item, false);
            }
        }
    }
}

/// `values` in `ggml_type`. Q8_0 as ggml's `quantize_row_q8_0_ref`: per block of 32,
/// `d = max |x| / 127` and `q = round(x / d)`.
///
/// ```
/// use clozelab::model::gguf::blocks::GgmlType;
/// use clozelab::model::gguf::writer::encode;
/// let values: Vec<f32> = (0..32).map(|i| i as f32 - 16.0).collect();
/// let bytes = encode("x", &values, GgmlType::Q8_0).unwrap();
/// let mut back = Vec::new();
/// GgmlType::Q8_0.decode(&bytes, &mut back);
/// // d = 16/127, rounded to f16: every value back within d/2 + f16's rounding of d.
/// assert!(values.iter().zip(&back).all(|(a, b)| (a - b).abs() <= 0.07));
/// ```
pub fn encode(name: &str, values: &[f32], ggml_type: GgmlType) -> Result<Vec<u8>, WriteError> {
    let mut out = Vec::with_capacity(ggml_type.bytes_for(values.len()).unwrap_or(0));
    match ggml_type {
        GgmlType::F32 => values
            .iter()
            .for_each(|v| out.extend_from_slice(&v.to_le_bytes())),
        GgmlType::F16 => values
            .iter()
            .for_each(|v| out.extend_from_slice(&half::f16::from_f32(*v).to_le_bytes())),
        GgmlType::Q8_0 => {
            for block in values.chunks(32) {
                let amax = block.iter().fold(0f32, |m, v| m.max(v.abs()));
                let d = amax / 127.0;
                let inverse = if d > 0.0 { 1.0 / d } else { 0.0 };
                out.extend_from_slice(&half::f16::from_f32(d).to_le_bytes());
                out.extend(block.iter().map(|v| (v * inverse).round() as i8 as u8));
            }
        }
        other => return Err(WriteError::Type(name.to_string(), other.name())),
    }
    Ok(out)
}
