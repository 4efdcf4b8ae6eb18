//! The tensor types of GGML (llama.cpp's tensor library) that GGUF files store, and their
//! decoding to f32: the plain floats and the block quantizations llama.cpp's common presets use.
//! Each block format is ggml's own (`ggml-common.h`, `dequantize_row_*` in `ggml-quants.c`);
//! `tests/fixtures/gguf_blocks.json` holds blocks decoded by llama.cpp's Python package `gguf`,
//! which the tests compare with.
//!
//! A row of `n` values of a block type is `n / block_values` blocks of `block_bytes` each, so a
//! row's length must be a multiple of the block's: checked where the file is read.

use half::{bf16, f16};

/// A GGML tensor type: the id a GGUF file stores, and how its values are laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GgmlType {
    F32,
    F16,
    BF16,
    /// 32 values: an f16 scale `d` and 32 signed bytes; `x = d·q`.
    Q8_0,
    /// 32 values: an f16 scale `d` and 32 nibbles; `x = d·(q − 8)`.
    Q4_0,
    /// 32 values: f16 `d` and `m` and 32 nibbles; `x = d·q + m`.
    Q4_1,
    /// 256 values in 8 sub-blocks of 32, each with a 6-bit scale and minimum under the
    /// super-block's f16 `d` and `dmin`; 4-bit values: `x = d·s·q − dmin·m`.
    Q4K,
    /// As [`GgmlType::Q4K`] with a fifth bit per value (`qh`).
    Q5K,
    /// 256 values in 16 sub-blocks of 16, each with a signed 8-bit scale under an f16 `d`; 6-bit
    /// values: `x = d·s·(q − 32)`.
    Q6K,
}

/// The types a GGUF file may name that clozelab does not read, by id (`ggml.h`'s `ggml_type`).
const OTHER_TYPES: [(u32, &str); 22] = [
    (6, "Q5_0"),
    (7, "Q5_1"),
    (9, "Q8_1"),
    (10, "Q2_K"),
    (11, "Q3_K"),
    (15, "Q8_K"),
    (16, "IQ2_XXS"),
    (17, "IQ2_XS"),
    (18, "IQ3_XXS"),
    (19, "IQ1_S"),
    (20, "IQ4_NL"),
    (21, "IQ3_S"),
    (22, "IQ2_S"),
    (23, "IQ4_XS"),
    (24, "I8"),
    (25, "I16"),
    (26, "I32"),
    (27, "I64"),
    (28, "F64"),
    (29, "IQ1_M"),
    (34, "TQ1_0"),
    (35, "TQ2_0"),
];

/// The types clozelab reads, as an error message lists them.
pub const READ_TYPES: &str = "F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q4_K, Q5_K, Q6_K";

/// Values per super-block of the K-quantizations.
const QK_K: usize = 256;

impl GgmlType {
    /// Every type clozelab reads, plain ones first.
    pub const ALL: [GgmlType; 9] = [
        GgmlType::F32,
        GgmlType::F16,
        GgmlType::BF16,
        GgmlType::Q8_0,
        GgmlType::Q4_0,
        GgmlType::Q4_1,
        GgmlType::Q4K,
        GgmlType::Q5K,
        GgmlType::Q6K,
    ];

    /// The type with GGML id `id`, or the name of a type clozelab does not read (`Err`; "type
    /// N" for an id GGML does not define either).
    pub fn from_id(id: u32) -> Result<Self, String> {
        Ok(match id {
            0 => Self::F32,
            1 => Self::F16,
            30 => Self::BF16,
            8 => Self::Q8_0,
            2 => Self::Q4_0,
            3 => Self::Q4_1,
            12 => Self::Q4K,
            13 => Self::Q5K,
            14 => Self::Q6K,
            other => {
                return Err(OTHER_TYPES
                    .iter()
                    .find(|(known, _)| *known == other)
                    .map_or_else(|| format!("type {other}"), |(_, name)| name.to_string()));
            }
        })
    }

    /// GGML's id of the type.
    pub fn id(self) -> u32 {
        match self {
            Self::F32 => 0,
            Self::F16 => 1,
            Self::BF16 => 30,
            Self::Q8_0 => 8,
            Self::Q4_0 => 2,
            Self::Q4_1 => 3,
            Self::Q4K => 12,
            Self::Q5K => 13,
            Self::Q6K => 14,
        }
    }

    /// The name llama.cpp gives the type.
    pub fn name(self) -> &'static str {
        match self {
            Self::F32 => "F32",
            Self::F16 => "F16",
            Self::BF16 => "BF16",
            Self::Q8_0 => "Q8_0",
            Self::Q4_0 => "Q4_0",
            Self::Q4_1 => "Q4_1",
            Self::Q4K => "Q4_K",
            Self::Q5K => "Q5_K",
            Self::Q6K => "Q6_K",
        }
    }

    /// Values per block (1 for the plain floats).
    pub fn block_values(self) -> usize {
        match self {
            Self::F32 | Self::F16 | Self::BF16 => 1,
            Self::Q8_0 | Self::Q4_0 | Self::Q4_1 => 32,
            Self::Q4K | Self::Q5K | Self::Q6K => QK_K,
        }
    }

    /// Bytes per block.
    pub fn block_bytes(self) -> usize {
        match self {
            Self::F32 => 4,
            Self::F16 | Self::BF16 => 2,
            Self::Q8_0 => 2 + 32,
            Self::Q4_0 => 2 + 16,
            Self::Q4_1 => 2 + 2 + 16,
            Self::Q4K => 2 + 2 + 12 + QK_K / 2,
            Self::Q5K => 2 + 2 + 12 + QK_K / 8 + QK_K / 2,
            Self::Q6K => QK_K / 2 + QK_K / 4 + QK_K / 16 + 2,
        }
    }

    /// Bytes that `values` values take (`None` if `values` is not a whole number of blocks or
    /// the size overflows).
    pub fn bytes_for(self, values: usize) -> Option<usize> {
        values
            .is_multiple_of(self.block_values())
            .then(|| (values / self.block_values()).checked_mul(self.block_bytes()))
            .flatten()
    }

    /// Decodes `bytes`, a whole number of blocks, appending their values to `out`.
    ///
    /// ```
    /// use clozelab::model::gguf::blocks::GgmlType;
    /// // One Q8_0 block: scale 0.5 (f16 0x3800), then the values −2, 4 and thirty 0s.
    /// let mut block = vec![0x00, 0x38, (-2i8) as u8, 4];
    /// block.resize(34, 0);
    /// let mut out = Vec::new();
    /// GgmlType::Q8_0.decode(&block, &mut out);
    /// assert_eq!(&out[..3], &[-1.0, 2.0, 0.0]);
    /// assert_eq!(out.len(), 32);
    /// ```
    pub fn decode(self, bytes: &[u8], out: &mut Vec<f32>) {
        let blocks = bytes.chunks_exact(self.block_bytes());
        out.reserve(blocks.len() * self.block_values());
        for block in blocks {
            match self {
                Self::F32 => out.push(f32::from_le_bytes([block[0], block[1], block[2], block[3]])),
                Self::F16 => out.push(half_at(block, 0)),
                Self::BF16 => out.push(bf16::from_le_bytes([block[0], block[1]]).to_f32()),
                Self::Q8_0 => {
                    let d = half_at(block, 0);
                    out.extend(block[2..].iter().map(|&q| d * f32::from(q as i8)));
                }
                Self::Q4_0 => {
                    let d = half_at(block, 0);
                    nibbles(&block[2..], |q| d * (q - 8.0), out);
                }
                Self::Q4_1 => {
                    let (d, m) = (half_at(block, 0), half_at(block, 2));
                    nibbles(&block[4..], |q| d * q + m, out);
                }
                Self::Q4K => q4_k(block, out),
                Self::Q5K => q5_k(block, out),
                Self::Q6K => q6_k(block, out),
            }
        }
    }
}

fn half_at(block: &[u8], at: usize) -> f32 {
    f16::from_le_bytes([block[at], block[at + 1]]).to_f32()
}

/// The 32 values of 16 bytes of nibbles: the low nibbles are values 0–15, the high 16–31.
fn nibbles(qs: &[u8], value: impl Fn(f32) -> f32, out: &mut Vec<f32>) {
    out.extend(qs.iter().map(|&q| value(f32::from(q & 0x0F))));
    out.extend(qs.iter().map(|&q| value(f32::from(q >> 4))));
}

/// The 6-bit scale and minimum of sub-block `j` (0–7) from the 12 packed bytes of a Q4_K or
/// Q5_K block (`get_scale_min_k4`).
fn scale_min(j: usize, packed: &[u8]) -> (f32, f32) {
    let (scale, min) = if j < 4 {
        (packed[j] & 63, packed[j + 4] & 63)
    } else {
        (
            (packed[j + 4] & 0x0F) | ((packed[j - 4] >> 6) << 4),
            (packed[j + 4] >> 4) | ((packed[j] >> 6) << 4),
        )
    };
    (f32::from(scale), f32::from(min))
}

fn q4_k(block: &[u8], out: &mut Vec<f32>) {
    let (d, dmin) = (half_at(block, 0), half_at(block, 2));
    let (packed, qs) = (&block[4..16], &block[16..]);
    for (pair, q) in qs.chunks_exact(32).enumerate() {
        for (half, shift) in [(0, 0), (1, 4)] {
            let (scale, min) = scale_min(2 * pair + half, packed);
            let (scale, min) = (d * scale, dmin * min);
            out.extend(
                q.iter()
                    .map(|&q| scale * f32::from((q >> shift) & 0x0F) - min),
            );
        }
    }
}

fn q5_k(block: &[u8], out: &mut Vec<f32>) {
    let (d, dmin) = (half_at(block, 0), half_at(block, 2));
    let (packed, qh, qs) = (&block[4..16], &block[16..48], &block[48..]);
    for (pair, q) in qs.chunks_exact(32).enumerate() {
        for (half, shift) in [(0, 0), (1, 4)] {
            let (scale, min) = scale_min(2 * pair + half, packed);
            let (scale, min) = (d * scale, dmin * min);
            let high_bit = 1u8 << (2 * pair + half);
            out.extend(q.iter().zip(qh).map(|(&q, &h)| {
                let high = if h & high_bit != 0 { 16 } else { 0 };
                scale * f32::from(((q >> shift) & 0x0F) + high) - min
            }));
        }
    }
}

fn q6_k(block: &[u8], out: &mut Vec<f32>) {
    let (ql, qh, scales) = (&block[..128], &block[128..192], &block[192..208]);
    let d = half_at(block, 208);
    let start = out.len();
    out.resize(start + QK_K, 0.0);
    let values = &mut out[start..];
    for n in 0..2 {
        let (ql, qh, sc) = (&ql[64 * n..], &qh[32 * n..], &scales[8 * n..]);
        let y = &mut values[128 * n..128 * (n + 1)];
        for l in 0..32 {
            let is = l / 16;
            let q = [
                (ql[l] & 0x0F) | ((qh[l] & 3) << 4),
                (ql[l + 32] & 0x0F) | (((qh[l] >> 2) & 3) << 4),
                (ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4),
                (ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4),
            ];
            for (k, q) in q.into_iter().enumerate() {
                let scale = f32::from(sc[is + 2 * k] as i8);
                y[l + 32 * k] = d * scale * (f32::from(q) - 32.0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_ggmls() {
        // ggml's type_traits: Q4_K 144, Q5_K 176, Q6_K 210 bytes per 256 values.
        assert_eq!(GgmlType::Q4K.block_bytes(), 144);
        assert_eq!(GgmlType::Q5K.block_bytes(), 176);
        assert_eq!(GgmlType::Q6K.block_bytes(), 210);
        assert_eq!(GgmlType::Q4_1.bytes_for(64), Some(40));
        assert_eq!(GgmlType::Q4_1.bytes_for(48), None);
    }

    #[test]
    fn ids_round_trip_and_others_are_named() {
        for t in GgmlType::ALL {
            assert_eq!(GgmlType::from_id(t.id()), Ok(t));
        }
        assert_eq!(GgmlType::from_id(11), Err("Q3_K".to_string()));
        assert_eq!(GgmlType::from_id(99), Err("type 99".to_string()));
    }

    #[test]
    fn q4_1_low_nibbles_first() {
        // d = 1, m = −8 (f16 0xC800): nibble q gives q − 8.
        let mut block = vec![0x00, 0x3C, 0x00, 0xC8];
        block.extend((0..16).map(|i| (i as u8) | (15 - i as u8) << 4));
        let mut out = Vec::new();
        GgmlType::Q4_1.decode(&block, &mut out);
        assert_eq!(out[0], -8.0);
        assert_eq!(out[15], 7.0);
        assert_eq!(out[16], 7.0);
        assert_eq!(out[31], -8.0);
    }
}
