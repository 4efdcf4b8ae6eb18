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

    /// An index in `0..n` (n > 0), by modulo: the bias is below n / 2⁶⁴, and recorded seeds
    /// depend on this exact stream.
    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// Shuffles `items` uniformly (Fisher–Yates from the back).
    ///
    /// ```
    /// use clozelab::rng::SplitMix64;
    /// let mut items = [1, 2, 3, 4, 5];
    /// SplitMix64::new(7).shuffle(&mut items);
    /// items.sort();
    /// assert_eq!(items, [1, 2, 3, 4, 5]);
    /// ```
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }

    /// Moves a uniform sample of `k` of `items` (without replacement, in random order) to the
    /// front, touching only what it needs (Fisher–Yates from the front, stopped after `k`).
    /// `k` beyond the length shuffles everything.
    ///
    /// ```
    /// use clozelab::rng::SplitMix64;
    /// let mut items: Vec<u32> = (0..100).collect();
    /// SplitMix64::new(7).choose_to_front(&mut items, 3);
    /// let chosen = &items[..3];
    /// assert!(chosen.iter().all(|x| *x < 100) && chosen[0] != chosen[1]);
    /// ```
    pub fn choose_to_front<T>(&mut self, items: &mut [T], k: usize) {
        let n = items.len();
        for i in 0..k.min(n) {
            let j = i + self.below(n - i);
            items.swap(i, j);
        }
    }
}

/// FNV-1a: a stable 64-bit hash (the order seed must not change between releases).
pub fn stable_hash(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}
