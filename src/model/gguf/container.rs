//! The GGUF container (ggml's specification `gguf.md`, versions 2 and 3): a header, typed
//! key/value metadata, then each tensor's name, shape, type and offset, and the tensors' data
//! after the header at the file's alignment. Everything is checked against the file's length
//! before it is read, so a truncated or hostile file is an error naming what is wrong, never a
//! panic or an allocation the file's size does not justify.
//!
//! Hand-written rather than a crate: the format is ~150 lines, the GGUF readers on crates.io
//! (`gguf`, `gguf-rs-lib`, candle's `gguf_file`) either read from `std::io` files only (the
//! browser has bytes), pull in candle's tensor library, or panic on malformed input.

use std::collections::BTreeMap;

use super::blocks::{GgmlType, READ_TYPES};

/// GGUF's magic, the file's first four bytes.
pub const MAGIC: &[u8; 4] = b"GGUF";

/// Why a GGUF file cannot be read.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum GgufError {
    #[error("not a GGUF file (it does not begin with \"GGUF\")")]
    NotGguf,
    #[error("GGUF version {0} is not read (versions 2 and 3 are)")]
    Version(u32),
    #[error("the GGUF file is truncated: it ends inside {0}")]
    Truncated(String),
    #[error("the GGUF file is malformed: {0}")]
    Malformed(String),
    #[error("tensor `{name}` is stored as {type_name}; clozelab reads {READ_TYPES}")]
    UnsupportedType { name: String, type_name: String },
    #[error("tensor `{name}` lies past the end of the file ({end} bytes of {len})")]
    PastEnd { name: String, end: u64, len: usize },
    #[error("metadata `{key}`: {reason}")]
    Metadata { key: String, reason: String },
}

/// A metadata value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Int(i64),
    /// Unsigned 64-bit values do not all fit `Int`.
    Uint(u64),
    Float(f64),
    Bool(bool),
    Str(String),
    Array(Vec<Value>),
}

/// A tensor's entry in the header: its GGUF shape lists the innermost dimension first
/// (`[columns, rows]` for a matrix, the reverse of PyTorch's).
#[derive(Clone, Debug, PartialEq)]
pub struct TensorInfo {
    pub name: String,
    pub dims: Vec<usize>,
    pub ggml_type: GgmlType,
    /// Where its data begins, from the start of the file.
    pub start: usize,
    pub len: usize,
}

impl TensorInfo {
    /// The shape as PyTorch writes it (outermost first).
    pub fn torch_shape(&self) -> Vec<usize> {
        self.dims.iter().rev().copied().collect()
    }

    /// Its values as f32.
    pub fn decode(&self, file: &[u8]) -> Vec<f32> {
        let mut out = Vec::new();
        self.ggml_type
            .decode(&file[self.start..self.start + self.len], &mut out);
        out
    }
}

/// A parsed GGUF header. The tensors' data stays in the caller's bytes.
#[derive(Clone, Debug)]
pub struct GgufFile {
    pub version: u32,
    pub metadata: BTreeMap<String, Value>,
    pub tensors: Vec<TensorInfo>,
}

/// A cursor over the file that fails, naming what it was reading, where the file ends.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], GgufError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&end| end <= self.bytes.len())
            .ok_or_else(|| GgufError::Truncated(what.to_string()))?;
        let taken = &self.bytes[self.at..end];
        self.at = end;
        Ok(taken)
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], GgufError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    fn u32(&mut self, what: &str) -> Result<u32, GgufError> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    fn u64(&mut self, what: &str) -> Result<u64, GgufError> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    /// A count of items that each take at least `min_bytes`: refused when the rest of the file
    /// cannot hold that many, before anything is allocated for them.
    fn count(&mut self, min_bytes: usize, what: &str) -> Result<usize, GgufError> {
        let n = self.u64(what)?;
        let left = (self.bytes.len() - self.at) as u64;
        if n.saturating_mul(min_bytes.max(1) as u64) > left {
            return Err(GgufError::Truncated(format!("{what} ({n} of them)")));
        }
        Ok(n as usize)
    }

    fn string(&mut self, what: &str) -> Result<String, GgufError> {
        let n = self.count(1, what)?;
        let bytes = self.take(n, what)?;
        String::from_utf8(bytes.to_vec())
            .map_err(|_| GgufError::Malformed(format!("{what} is not UTF-8")))
    }

    fn value(&mut self, kind: u32, what: &str, depth: usize) -> Result<Value, GgufError> {
        Ok(match kind {
            0 => Value::Uint(u64::from(self.array::<1>(what)?[0])),
            1 => Value::Int(i64::from(self.array::<1>(what)?[0] as i8)),
            2 => Value::Uint(u64::from(u16::from_le_bytes(self.array(what)?))),
            3 => Value::Int(i64::from(i16::from_le_bytes(self.array(what)?))),
            4 => Value::Uint(u64::from(self.u32(what)?)),
            5 => Value::Int(i64::from(i32::from_le_bytes(self.array(what)?))),
            6 => Value::Float(f64::from(f32::from_le_bytes(self.array(what)?))),
            7 => Value::Bool(self.array::<1>(what)?[0] != 0),
            8 => Value::Str(self.string(what)?),
            9 if depth == 0 => {
                let item = self.u32(what)?;
                let n = self.count(value_min_bytes(item), what)?;
                let mut items = Vec::with_capacity(n);
                for _ in 0..n {
                    items.push(self.value(item, what, depth + 1)?);
                }
                Value::Array(items)
            }
            10 => Value::Uint(self.u64(what)?),
            11 => Value::Int(i64::from_le_bytes(self.array(what)?)),
            12 => Value::Float(f64::from_le_bytes(self.array(what)?)),
            9 => return Err(GgufError::Malformed(format!("{what}: an array of arrays"))),
            other => {
                return Err(GgufError::Malformed(format!(
                    "{what} has value type {other}, which GGUF does not define"
                )));
            }
        })
    }
}

/// The fewest bytes one value of GGUF value type `kind` takes.
fn value_min_bytes(kind: u32) -> usize {
    match kind {
        0 | 1 | 7 => 1,
        2 | 3 => 2,
        4..=6 => 4,
        _ => 8,
    }
}

impl GgufFile {
    /// Reads the header of `bytes` and checks every tensor's type and extent against them.
    pub fn parse(bytes: &[u8]) -> Result<Self, GgufError> {
        if bytes.len() < 4 || &bytes[..4] != MAGIC {
            return Err(GgufError::NotGguf);
        }
        let mut r = Reader { bytes, at: 4 };
        let version = r.u32("the header")?;
        if !(2..=3).contains(&version) {
            return Err(GgufError::Version(version));
        }
        // A tensor entry takes at least 8 + 4 + 4 + 8 bytes, a metadata entry 8 + 4 + 1.
        let n_tensors = r.count(24, "the tensor count")?;
        let n_metadata = r.count(13, "the metadata count")?;
        let mut metadata = BTreeMap::new();
        for _ in 0..n_metadata {
            let key = r.string("a metadata key")?;
            let kind = r.u32(&format!("metadata `{key}`"))?;
            let value = r.value(kind, &format!("metadata `{key}`"), 0)?;
            if metadata.insert(key.clone(), value).is_some() {
                return Err(GgufError::Malformed(format!(
                    "metadata `{key}` given twice"
                )));
            }
        }
        let alignment = match metadata.get("general.alignment") {
            None => 32,
            Some(Value::Uint(a)) if *a > 0 && a.is_power_of_two() && *a <= 1 << 20 => *a as usize,
            Some(other) => {
                return Err(GgufError::Metadata {
                    key: "general.alignment".into(),
                    reason: format!("{other:?} is not a power of two"),
                });
            }
        };
        let mut entries = Vec::with_capacity(n_tensors);
        for _ in 0..n_tensors {
            let name = r.string("a tensor's name")?;
            let what = format!("tensor `{name}`'s entry");
            let n_dims = r.u32(&what)?;
            if !(1..=4).contains(&n_dims) {
                return Err(GgufError::Malformed(format!(
                    "tensor `{name}` has {n_dims} dimensions (GGUF allows 1 to 4)"
                )));
            }
            let mut dims = Vec::with_capacity(n_dims as usize);
            for _ in 0..n_dims {
                dims.push(r.u64(&what)?);
            }
            let type_id = r.u32(&what)?;
            let offset = r.u64(&what)?;
            entries.push((name, dims, type_id, offset));
        }
        let data_start = r.at.next_multiple_of(alignment);
        let mut tensors = Vec::with_capacity(n_tensors);
        let mut names = std::collections::BTreeSet::new();
        for (name, dims, type_id, offset) in entries {
            if !names.insert(name.clone()) {
                return Err(GgufError::Malformed(format!(
                    "tensor `{name}` appears twice"
                )));
            }
            let ggml_type =
                GgmlType::from_id(type_id).map_err(|type_name| GgufError::UnsupportedType {
                    name: name.clone(),
                    type_name,
                })?;
            let count = dims
                .iter()
                .try_fold(1u64, |n, &d| n.checked_mul(d))
                .filter(|&n| n > 0 && n <= bytes.len() as u64 * 2)
                .ok_or_else(|| {
                    GgufError::Malformed(format!(
                        "tensor `{name}` has shape {dims:?}, which no file of {} bytes holds",
                        bytes.len()
                    ))
                })? as usize;
            if !(dims[0] as usize).is_multiple_of(ggml_type.block_values()) {
                return Err(GgufError::Malformed(format!(
                    "tensor `{name}`'s rows of {} values are not whole {} blocks of {}",
                    dims[0],
                    ggml_type.name(),
                    ggml_type.block_values()
                )));
            }
            if !offset.is_multiple_of(alignment as u64) {
                return Err(GgufError::Malformed(format!(
                    "tensor `{name}` starts at {offset}, not a multiple of the alignment {alignment}"
                )));
            }
            let len = ggml_type.bytes_for(count).unwrap_or(usize::MAX);
            let start = (data_start as u64).saturating_add(offset);
            let end = start.saturating_add(len as u64);
            if end > bytes.len() as u64 {
                return Err(GgufError::PastEnd {
                    name,
                    end,
                    len: bytes.len(),
                });
            }
            tensors.push(TensorInfo {
                name,
                dims: dims.into_iter().map(|d| d as usize).collect(),
                ggml_type,
                start: start as usize,
                len,
            });
        }
        Ok(Self {
            version,
            metadata,
            tensors,
        })
    }

    /// The tensor named `name`.
    pub fn tensor(&self, name: &str) -> Option<&TensorInfo> {
        self.tensors.iter().find(|t| t.name == name)
    }

    /// A metadata string.
    pub fn string(&self, key: &str) -> Result<&str, GgufError> {
        match self.metadata.get(key) {
            Some(Value::Str(s)) => Ok(s),
            other => Err(wrong(key, other, "a string")),
        }
    }

    /// A metadata count (any unsigned or non-negative integer type).
    pub fn usize(&self, key: &str) -> Result<usize, GgufError> {
        match self.metadata.get(key) {
            Some(Value::Uint(n)) => usize::try_from(*n).map_err(|_| wrong(key, None, "a count")),
            Some(Value::Int(n)) if *n >= 0 => Ok(*n as usize),
            other => Err(wrong(key, other, "a count")),
        }
    }

    /// A metadata count, if present.
    pub fn usize_or(&self, key: &str, default: Option<usize>) -> Result<Option<usize>, GgufError> {
        match self.metadata.contains_key(key) {
            true => self.usize(key).map(Some),
            false => Ok(default),
        }
    }

    /// A metadata number, if present.
    pub fn float(&self, key: &str) -> Result<Option<f64>, GgufError> {
        match self.metadata.get(key) {
            None => Ok(None),
            Some(Value::Float(x)) => Ok(Some(*x)),
            Some(Value::Uint(n)) => Ok(Some(*n as f64)),
            Some(Value::Int(n)) => Ok(Some(*n as f64)),
            other => Err(wrong(key, other, "a number")),
        }
    }

    /// A metadata array of strings.
    pub fn strings(&self, key: &str) -> Result<Vec<&str>, GgufError> {
        match self.metadata.get(key) {
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| match v {
                    Value::Str(s) => Ok(s.as_str()),
                    other => Err(wrong(key, Some(other), "an array of strings")),
                })
                .collect(),
            other => Err(wrong(key, other, "an array of strings")),
        }
    }

    /// A metadata array of integers, if present.
    pub fn ints(&self, key: &str) -> Result<Option<Vec<i64>>, GgufError> {
        match self.metadata.get(key) {
            None => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| match v {
                    Value::Int(n) => Ok(*n),
                    Value::Uint(n) => i64::try_from(*n).map_err(|_| wrong(key, None, "integers")),
                    other => Err(wrong(key, Some(other), "an array of integers")),
                })
                .collect::<Result<_, _>>()
                .map(Some),
            other => Err(wrong(key, other, "an array of integers")),
        }
    }
}

fn wrong(key: &str, found: Option<&Value>, expected: &str) -> GgufError {
    GgufError::Metadata {
        key: key.to_string(),
        reason: match found {
            None => format!("missing (expected {expected})"),
            Some(value) => {
                let shown = format!("{value:?}");
                let shown: String = shown.chars().take(60).collect();
                format!("expected {expected}, found {shown}")
            }
        },
    }
}
