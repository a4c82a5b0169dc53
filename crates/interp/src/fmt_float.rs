//! Printed form of floats (docs/language.md, "Printing values").
//!
//! The digits are the shortest that read back to the same `f64` (Rust's
//! `Display`/`LowerExp` already produce them, Grisu/Ryu style). The layout
//! follows Go's `%v`: decimal when `1e-4 <= |x| < 1e21`, otherwise an
//! exponent with a sign and at least two digits (`1e+21`, `2.5e-07`).
//! Unlike Go, a float always shows that it is one: `1.0`, not `1`.
//! Special values: `-0.0`, `NaN`, `+Inf`, `-Inf`.

use std::io::Write;

/// Appends the printed form of `x` to `out`.
pub fn write_float(out: &mut Vec<u8>, x: f64) {
    if x.is_nan() {
        out.extend_from_slice(b"NaN");
        return;
    }
    if x.is_infinite() {
        out.extend_from_slice(if x > 0.0 { b"+Inf" } else { b"-Inf" });
        return;
    }
    if x == 0.0 {
        out.extend_from_slice(if x.is_sign_negative() {
            b"-0.0"
        } else {
            b"0.0"
        });
        return;
    }
    let a = x.abs();
    if (1e-4..1e21).contains(&a) {
        let start = out.len();
        // `Display` for f64 never uses an exponent and gives the shortest
        // round-trip digits.
        let _ = write!(out, "{x}");
        if !out[start..].contains(&b'.') {
            out.extend_from_slice(b".0");
        }
        return;
    }
    let s = format!("{x:e}");
    // `s` is like "2.5e-7" or "1e21": split mantissa and exponent.
    match s.split_once('e') {
        Some((mant, exp)) => {
            out.extend_from_slice(mant.as_bytes());
            out.push(b'e');
            let (sign, digits) = match exp.strip_prefix('-') {
                Some(d) => (b'-', d),
                None => (b'+', exp),
            };
            out.push(sign);
            if digits.len() < 2 {
                out.push(b'0');
            }
            out.extend_from_slice(digits.as_bytes());
        }
        None => out.extend_from_slice(s.as_bytes()),
    }
}

/// The printed form of `x` as a new string.
pub fn format_float(x: f64) -> String {
    let mut s = Vec::new();
    write_float(&mut s, x);
    // ASCII only.
    String::from_utf8_lossy(&s).into_owned()
}

#[cfg(test)]
mod tests {
    use super::format_float as f;

    #[test]
    fn whole_numbers_keep_a_point() {
        assert_eq!(f(1.0), "1.0");
        assert_eq!(f(2.0), "2.0");
        assert_eq!(f(-3.0), "-3.0");
        assert_eq!(f(100.0), "100.0");
        assert_eq!(f(1e20), "100000000000000000000.0");
        assert_eq!(f(123456789.0), "123456789.0");
    }

    #[test]
    fn shortest_round_trip_digits() {
        assert_eq!(f(0.1), "0.1");
        assert_eq!(f(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(f(1.5), "1.5");
        assert_eq!(f(-2.25), "-2.25");
        assert_eq!(f(1.0 / 3.0), "0.3333333333333333");
        assert_eq!(f(2.0 / 3.0), "0.6666666666666666");
        assert_eq!(f(std::f64::consts::PI), "3.141592653589793");
        assert_eq!(f(f64::MAX), "1.7976931348623157e+308");
        assert_eq!(f(f64::MIN_POSITIVE), "2.2250738585072014e-308");
        assert_eq!(f(5e-324), "5e-324");
    }

    #[test]
    fn decimal_range_bounds() {
        assert_eq!(f(1e-4), "0.0001");
        assert_eq!(f(0.00012), "0.00012");
        assert_eq!(f(9.99e-5), "9.99e-05");
        assert_eq!(f(1e21), "1e+21");
        assert_eq!(f(999999999999999900000.0), "999999999999999900000.0");
        assert_eq!(f(-1e21), "-1e+21");
        assert_eq!(f(-1e-4), "-0.0001");
    }

    #[test]
    fn exponent_has_sign_and_two_digits() {
        assert_eq!(f(2.5e-7), "2.5e-07");
        assert_eq!(f(1e-5), "1e-05");
        assert_eq!(f(1.25e22), "1.25e+22");
        assert_eq!(f(1e100), "1e+100");
        assert_eq!(f(-6.02e23), "-6.02e+23");
        assert_eq!(f(1e-10), "1e-10");
        assert_eq!(f(1.5e-100), "1.5e-100");
    }

    #[test]
    fn special_values() {
        assert_eq!(f(0.0), "0.0");
        assert_eq!(f(-0.0), "-0.0");
        assert_eq!(f(f64::NAN), "NaN");
        assert_eq!(f(f64::INFINITY), "+Inf");
        assert_eq!(f(f64::NEG_INFINITY), "-Inf");
    }

    #[test]
    fn every_printed_float_reads_back() {
        let mut rng = fastrand::Rng::with_seed(7);
        for _ in 0..20_000 {
            let x = f64::from_bits(rng.u64(..));
            if !x.is_finite() {
                continue;
            }
            let s = f(x);
            assert!(s.contains('.') || s.contains('e'), "{s}");
            let back: f64 = s.parse().expect("parses");
            assert_eq!(back.to_bits(), x.to_bits(), "{s}");
        }
    }
}
