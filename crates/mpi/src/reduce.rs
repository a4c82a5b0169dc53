//! The all-reduce of a tensor over `world()` in pieces: how a large one is
//! split into chunks, and the rank-order fold of members' buffers. The
//! arithmetic is `weft_coll::kernel`, the one the in-process groups use
//! (docs/collectives.md, "Results"), so that a world of N processes gives
//! bitwise the result of `group(N)`: element `i` of the result is
//! `((x0[i] op x1[i]) op x2[i]) ...`, members in rank order. Every process
//! computes the same expression on the same bits, in the same order, so
//! every process gets bitwise the same result, whatever the MPI library's
//! own reduction algorithms would do. (Scalars fold with
//! `weft_coll::kernel::{int, float}` directly.)

use std::ops::Range;

use weft_coll::{kernel, Reduce};

/// `((parts[0][i] op parts[1][i]) op parts[2][i]) ...` for every `i` in
/// `0..n`: every part has `n` elements (a shorter one panics). With no
/// part (a tensor of no elements gathered as no chunks), `n` zeros.
pub(crate) fn fold_f32(op: Reduce, parts: &[&[f32]], n: usize) -> Vec<f32> {
    fold_f32_into(op, parts, n, Vec::new())
}

/// [`fold_f32`] into `out`, whose elements are replaced (its allocation
/// is reused when large enough: a scratch buffer of the messaging
/// thread's).
pub(crate) fn fold_f32_into(op: Reduce, parts: &[&[f32]], n: usize, mut out: Vec<f32>) -> Vec<f32> {
    out.clear();
    if parts.is_empty() {
        out.resize(n, 0.0);
        return out;
    }
    out.reserve_exact(n);
    kernel::reduce_f32(op, parts, &mut out.spare_capacity_mut()[..n]);
    // SAFETY: with at least one input, `reduce_f32` wrote every element of
    // `out[..n]` (it panics on an input shorter than `n`, before this).
    unsafe { out.set_len(n) };
    out
}

/// The elements of chunk `j` when `n` elements are split into `parts`
/// nearly equal chunks (the reduce-scatter of a large all-reduce: rank `j`
/// reduces chunk `j`).
pub(crate) fn chunk(n: usize, parts: usize, j: usize) -> Range<usize> {
    let at = |k: usize| ((n as u128 * k as u128) / parts as u128) as usize;
    at(j)..at(j + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const OPS: [Reduce; 4] = [Reduce::Sum, Reduce::Max, Reduce::Min, Reduce::Prod];

    /// The rules this crate had before it used `weft_coll::kernel`,
    /// written plainly, element by element: the fold must keep them
    /// bitwise.
    fn reference(op: Reduce, parts: &[Vec<f32>]) -> Vec<f32> {
        let n = parts[0].len();
        (0..n)
            .map(|i| {
                let mut a = parts[0][i];
                for p in &parts[1..] {
                    let b = p[i];
                    a = match op {
                        Reduce::Sum => a + b,
                        Reduce::Prod => a * b,
                        Reduce::Max if b > a || b.is_nan() => b,
                        Reduce::Min if b < a || b.is_nan() => b,
                        _ => a,
                    };
                }
                a
            })
            .collect()
    }

    fn special() -> impl Strategy<Value = f32> {
        prop_oneof![
            any::<f32>(),
            Just(f32::NAN),
            Just(-f32::NAN),
            Just(-0.0f32),
            Just(0.0f32),
            Just(f32::INFINITY),
            Just(f32::NEG_INFINITY),
            -4.0f32..4.0,
        ]
    }

    proptest! {
        #[test]
        fn fold_is_the_rank_order_fold(
            op in 0usize..4,
            parts in (1usize..6, 0usize..70).prop_flat_map(|(m, n)| {
                proptest::collection::vec(proptest::collection::vec(special(), n), m)
            })
        ) {
            let op = OPS[op];
            let views: Vec<&[f32]> = parts.iter().map(|p| p.as_slice()).collect();
            let out = fold_f32(op, &views, parts[0].len());
            // A reused buffer (longer, holding old values) gives the same.
            let reused = fold_f32_into(op, &views, parts[0].len(), vec![7.0; 80]);
            let want = reference(op, &parts);
            // Bitwise, except which NaN a sum or product of NaNs gives:
            // Rust leaves that to the code generator (RFC 3514), which may
            // order the operands either way. `Max` and `Min` pick an
            // operand, so their NaNs are exact too.
            let arith = matches!(op, Reduce::Sum | Reduce::Prod);
            let key = |x: f32| if arith && x.is_nan() { u32::MAX } else { x.to_bits() };
            let keys = |v: &[f32]| v.iter().map(|&x| key(x)).collect::<Vec<_>>();
            prop_assert_eq!(keys(&out), keys(&want));
            prop_assert_eq!(keys(&reused), keys(&want));
        }

        #[test]
        fn scalars_are_the_rank_order_fold(
            op in 0usize..4,
            xs in proptest::collection::vec(
                prop_oneof![any::<f64>(), Just(f64::NAN), Just(-0.0f64), Just(0.0f64)], 1..6),
            is in proptest::collection::vec(any::<i64>(), 1..6),
        ) {
            let op = OPS[op];
            let f = xs[1..].iter().fold(xs[0], |a, &b| kernel::float(op, a, b));
            let want = xs[1..].iter().fold(xs[0], |a, &b| match op {
                Reduce::Sum => a + b,
                Reduce::Prod => a * b,
                Reduce::Max if b > a || b.is_nan() => b,
                Reduce::Min if b < a || b.is_nan() => b,
                _ => a,
            });
            let arith = matches!(op, Reduce::Sum | Reduce::Prod);
            if arith && f.is_nan() {
                prop_assert!(want.is_nan());
            } else {
                prop_assert_eq!(f.to_bits(), want.to_bits());
            }
            let i = is[1..].iter().fold(is[0], |a, &b| kernel::int(op, a, b));
            let want = is[1..].iter().fold(is[0], |a, &b| match op {
                Reduce::Sum => a.wrapping_add(b),
                Reduce::Prod => a.wrapping_mul(b),
                Reduce::Max => a.max(b),
                Reduce::Min => a.min(b),
            });
            prop_assert_eq!(i, want);
        }

        #[test]
        fn chunks_cover_every_element_once(n in 0usize..10_000, parts in 1usize..9) {
            let mut next = 0;
            for j in 0..parts {
                let r = chunk(n, parts, j);
                prop_assert_eq!(r.start, next);
                next = r.end;
            }
            prop_assert_eq!(next, n);
        }
    }

    #[test]
    fn no_parts_give_zeros() {
        assert_eq!(fold_f32(Reduce::Sum, &[], 0), Vec::<f32>::new());
        assert_eq!(fold_f32(Reduce::Max, &[], 3), vec![0.0; 3]);
    }

    #[test]
    fn scalars_follow_the_group_rules() {
        assert_eq!(kernel::int(Reduce::Sum, i64::MAX, 1), i64::MIN);
        assert_eq!(kernel::int(Reduce::Prod, i64::MAX, 2), -2);
        assert!(kernel::float(Reduce::Max, 1.0, f64::NAN).is_nan());
        assert_eq!(
            kernel::float(Reduce::Max, f64::NAN, 1.0).to_bits(),
            f64::NAN.to_bits()
        );
        // Ties keep the lower rank's value.
        assert!(kernel::float(Reduce::Max, -0.0, 0.0).is_sign_negative());
        assert!(kernel::float(Reduce::Min, 0.0, -0.0).is_sign_positive());
    }
}
