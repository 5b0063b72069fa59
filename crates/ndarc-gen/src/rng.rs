//! Deterministic pseudo-random numbers.
//!
//! The generator promises that the same seed and options give the same bytes
//! on every platform and forever. A hand-written SplitMix64 (Steele, Lea and
//! Flood, 2014) keeps that promise by construction: its output is fixed by
//! the ten lines below, not by whichever version of `rand` Cargo resolves
//! (whose algorithms and helper methods have changed between releases).
//! Only integer arithmetic and the four basic IEEE-754 operations are used;
//! no `ln`, `powf` or other libm function whose last bit may differ between
//! platforms.
//!
//! Every row, cell, object byte and decision is drawn from a generator seeded
//! by [`derive`] from the archive seed and the thing's coordinates (table,
//! row slot, column, byte word …), so any part of an archive can be
//! recomputed on its own, in any order, without replaying a stream.

/// The SplitMix64 increment (2^64 / φ).
pub(crate) const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// The SplitMix64 output function: a bijective 64-bit mixer.
#[inline]
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A seed for the sub-stream `b` of the stream `a` (not symmetric:
/// `derive(a, b) != derive(b, a)` in general).
#[inline]
pub fn derive(a: u64, b: u64) -> u64 {
    mix(a.rotate_left(23) ^ mix(b.wrapping_add(GOLDEN)))
}

/// [`derive`] over several coordinates, left to right.
pub(crate) fn derive_all(a: u64, coords: &[u64]) -> u64 {
    coords.iter().fold(a, |acc, &c| derive(acc, c))
}

/// SplitMix64.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator whose first output depends on every bit of `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GOLDEN);
        mix(self.0)
    }

    /// A number in `0..n` (0 when `n` is 0), by the multiply-high method.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// A number in `lo..=hi` (`lo` when `hi < lo`).
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            lo
        } else {
            lo + self.below(hi - lo + 1)
        }
    }

    /// A signed number in `lo..=hi`.
    pub fn range_i64(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return lo;
        }
        let span = hi.wrapping_sub(lo) as u64;
        let off = if span == u64::MAX {
            self.next_u64()
        } else {
            self.below(span + 1)
        };
        lo.wrapping_add(off as i64)
    }

    /// A double in `[0, 1)` with 53 random bits.
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / 9_007_199_254_740_992.0)
    }

    /// `true` with probability `p` (`p` ≤ 0 never, ≥ 1 always).
    #[inline]
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// `true` with probability `n / d`.
    #[inline]
    pub fn one_in(&mut self, d: u64) -> bool {
        self.below(d) == 0
    }

    /// One element of a non-empty slice.
    ///
    /// # Panics
    /// When `items` is empty (callers pass non-empty constants).
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        *self.pick_ref(items)
    }

    /// A reference to one element of a non-empty slice.
    ///
    /// # Panics
    /// When `items` is empty.
    pub fn pick_ref<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_reference_values() {
        // Reference output of SplitMix64 seeded with 1234567 (from the
        // original C implementation by Sebastiano Vigna).
        let mut r = Rng::new(1234567);
        assert_eq!(r.next_u64(), 6457827717110365317);
        assert_eq!(r.next_u64(), 3203168211198807973);
        assert_eq!(r.next_u64(), 9817491932198370423);
    }

    #[test]
    fn ranges_stay_in_bounds() {
        let mut r = Rng::new(7);
        for _ in 0..1000 {
            assert!(r.below(10) < 10);
            let x = r.range(5, 9);
            assert!((5..=9).contains(&x));
            let y = r.range_i64(-3, 3);
            assert!((-3..=3).contains(&y));
            let u = r.unit();
            assert!((0.0..1.0).contains(&u));
        }
        assert_eq!(r.below(0), 0);
        assert_eq!(r.range(4, 2), 4);
        let _ = r.range_i64(i64::MIN, i64::MAX);
    }

    #[test]
    fn derive_is_not_symmetric() {
        assert_ne!(derive(1, 2), derive(2, 1));
        assert_eq!(derive_all(5, &[1, 2]), derive(derive(5, 1), 2));
    }
}
