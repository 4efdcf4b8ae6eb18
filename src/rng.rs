//! The one seeded random number generator of clozelab, and a stable string hash for seeds.
//!
//! Everything random in clozelab (test-model weights, Monte Carlo draws, oracle splits,
//! bootstrap resamples, a participant's passage order) goes through [`SplitMix64`]: its stream
//! is fixed forever, unlike library generators whose streams may change between versions, so
//! golden fixtures and recorded seeds stay valid.

/// SplitMix64 (Steele et al. 2014): a tiny, well-mixed, reproducible generator.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1) with 24 bits, exact in f32.
    pub fn next_unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    /// Uniform in [−a, a).
    pub fn uniform(&mut self, a: f32) -> f32 {
        (2.0 * self.next_unit() - 1.0) * a
    }
}

/// FNV-1a: a stable 64-bit hash (the order seed must not change between releases).
pub fn stable_hash(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}
