//! `exp` and `ln` for f32 written so the compiler vectorizes the loops that
//! call them (no branches it cannot turn into selects, no libm calls).
//!
//! Both are the Cephes single-precision algorithms (S. Moshier, Cephes Math
//! Library, `expf.c` and `logf.c`): range reduction by ln 2 (exp) or to a
//! mantissa in [sqrt(1/2), sqrt(2)) (ln), then a minimax polynomial. Error
//! is within 2 ulp of the correctly rounded result over the normal range;
//! special values follow IEEE: exp(NaN) = NaN, exp(+inf) = +inf,
//! exp(-inf) = 0, ln(0) = -inf, ln(x < 0) = NaN, ln(+inf) = +inf.
//! Results that would be subnormal (exp(x) for x < -87.3) flush to 0.

/// e^x.
#[inline(always)]
pub(crate) fn exp(x: f32) -> f32 {
    const MAX_X: f32 = 88.722_83; // ln(f32::MAX)
    const MIN_X: f32 = -87.336_54; // ln(f32::MIN_POSITIVE)
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    // adding and subtracting 1.5 * 2^23 rounds to the nearest integer
    const ROUND: f32 = 12_582_912.0;
    let xc = x.clamp(MIN_X, MAX_X);
    let shifted = xc * std::f32::consts::LOG2_E + ROUND;
    let n = shifted - ROUND;
    // the rounded integer also sits in the low mantissa bits of `shifted`;
    // reading it there avoids a float-to-int conversion, which would not
    // vectorize (a NaN input gives a meaningless `ni`, but `y` is NaN too)
    let ni = shifted.to_bits() as i32 - 0x4b40_0000;
    let r = xc - n * LN2_HI - n * LN2_LO;
    let mut p = 1.987_569_1e-4_f32;
    p = p * r + 1.398_199_9e-3;
    p = p * r + 8.333_452e-3;
    p = p * r + 4.166_579_6e-2;
    p = p * r + 1.666_666_5e-1;
    p = p * r + 0.5;
    let y = p * r * r + r + 1.0;
    // 2^n in two halves so n = 128 (x near MAX_X) does not overflow the exponent
    let half = ni >> 1;
    let rest = ni - half;
    let pow = |k: i32| f32::from_bits(((k + 127) as u32) << 23);
    let v = y * pow(half) * pow(rest);
    if x > MAX_X {
        f32::INFINITY
    } else if x < MIN_X {
        0.0
    } else {
        v
    }
}

/// The natural logarithm.
#[inline(always)]
pub(crate) fn ln(x: f32) -> f32 {
    const SQRT_HALF: f32 = std::f32::consts::FRAC_1_SQRT_2;
    let sub = x < f32::MIN_POSITIVE;
    // scale subnormals into the normal range (2^23), corrected in the exponent
    let xs = if sub { x * 8_388_608.0 } else { x };
    let bits = xs.to_bits();
    let mut e = ((bits >> 23) & 0xff) as i32 - 126 - if sub { 23 } else { 0 };
    let mut m = f32::from_bits((bits & 0x007f_ffff) | 0x3f00_0000); // [0.5, 1)
    if m < SQRT_HALF {
        e -= 1;
        m = m + m - 1.0;
    } else {
        m -= 1.0;
    }
    let z = m * m;
    let mut y = 7.037_683_6e-2_f32;
    y = y * m - 1.151_461e-1;
    y = y * m + 1.167_699_9e-1;
    y = y * m - 1.242_014_1e-1;
    y = y * m + 1.424_932_3e-1;
    y = y * m - 1.666_805_8e-1;
    y = y * m + 2.000_071_4e-1;
    y = y * m - 2.499_999_4e-1;
    y = y * m + 3.333_333e-1;
    y *= m * z;
    let fe = e as f32;
    y += -2.121_944_4e-4 * fe;
    y += -0.5 * z;
    let v = m + y + 0.693_359_4 * fe;
    if x == 0.0 {
        f32::NEG_INFINITY
    } else if x.is_nan() || x < 0.0 {
        f32::NAN
    } else if x == f32::INFINITY {
        f32::INFINITY
    } else {
        v
    }
}

#[cfg(test)]
mod tests {
    use super::{exp, ln};

    /// Distance in units in the last place.
    fn ulps(a: f32, b: f32) -> u32 {
        (a.to_bits() as i32).abs_diff(b.to_bits() as i32)
    }

    #[test]
    fn exp_is_within_two_ulp() {
        let mut rng = fastrand::Rng::with_seed(1);
        for _ in 0..200_000 {
            let x = rng.f32() * 175.0 - 87.3;
            let want = (f64::from(x)).exp() as f32;
            assert!(ulps(exp(x), want) <= 2, "exp({x}) = {} want {want}", exp(x));
        }
        for x in [0.0f32, 1.0, -1.0, 88.7, -87.3, 1e-8, -1e-8] {
            let want = (f64::from(x)).exp() as f32;
            assert!(ulps(exp(x), want) <= 2, "exp({x}) = {} want {want}", exp(x));
        }
    }

    #[test]
    fn exp_special_values() {
        assert!(exp(f32::NAN).is_nan());
        assert_eq!(exp(f32::INFINITY), f32::INFINITY);
        assert_eq!(exp(89.0), f32::INFINITY);
        assert_eq!(exp(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp(-100.0), 0.0);
        assert_eq!(exp(0.0), 1.0);
    }

    #[test]
    fn ln_is_within_two_ulp() {
        let mut rng = fastrand::Rng::with_seed(2);
        for _ in 0..200_000 {
            // positive floats across the whole range, subnormals included
            let x = f32::from_bits(rng.u32(1..0x7f80_0000));
            let want = (f64::from(x)).ln() as f32;
            assert!(ulps(ln(x), want) <= 2, "ln({x:e}) = {} want {want}", ln(x));
        }
    }

    #[test]
    fn ln_special_values() {
        assert_eq!(ln(0.0), f32::NEG_INFINITY);
        assert_eq!(ln(-0.0), f32::NEG_INFINITY);
        assert!(ln(-1.0).is_nan());
        assert!(ln(f32::NAN).is_nan());
        assert_eq!(ln(f32::INFINITY), f32::INFINITY);
        assert_eq!(ln(1.0), 0.0);
    }
}
