//! The reduction arithmetic of an all-reduce over `world()`: the rules of
//! the in-process groups (docs/collectives.md, "Results"), so that a world
//! of N processes gives bitwise the result of `group(N)`. Element `i` of
//! the result is `((x0[i] op x1[i]) op x2[i]) ...`, members in rank order.
//! Floats: `Sum`/`Prod` are IEEE `+`/`*`; `Max` replaces the running value
//! `a` by the next member's `b` when `b > a` or `b` is NaN (so a NaN
//! anywhere gives a NaN, and ties such as `+0`/`-0` keep the lower rank's
//! value); `Min` likewise with `b < a`. Integers: `Sum`/`Prod` wrap.
//!
//! Every process computes the same expression on the same bits, in the
//! same order, so every process gets bitwise the same result, whatever the
//! MPI library's own reduction algorithms would do.

use std::ops::Range;

use weft_coll::Reduce;

/// Combines two integers; sums and products wrap.
pub(crate) fn int(op: Reduce, a: i64, b: i64) -> i64 {
    match op {
        Reduce::Sum => a.wrapping_add(b),
        Reduce::Prod => a.wrapping_mul(b),
        Reduce::Max => a.max(b),
        Reduce::Min => a.min(b),
    }
}

/// Combines two floats.
pub(crate) fn float(op: Reduce, a: f64, b: f64) -> f64 {
    match op {
        Reduce::Sum => a + b,
        Reduce::Prod => a * b,
        Reduce::Max => {
            if b > a || b.is_nan() {
                b
            } else {
                a
            }
        }
        Reduce::Min => {
            if b < a || b.is_nan() {
                b
            } else {
                a
            }
        }
    }
}

/// `out[i] = ((parts[0][i] op parts[1][i]) op parts[2][i]) ...`. Every
/// part has `out.len()` elements; there is at least one part.
pub(crate) fn fold_f32(op: Reduce, parts: &[&[f32]], out: &mut [f32]) {
    let Some((first, rest)) = parts.split_first() else {
        return;
    };
    out.copy_from_slice(first);
    for p in rest {
        // One loop per op, each a zip that LLVM vectorizes.
        match op {
            Reduce::Sum => out.iter_mut().zip(*p).for_each(|(a, b)| *a += *b),
            Reduce::Prod => out.iter_mut().zip(*p).for_each(|(a, b)| *a *= *b),
            Reduce::Max => out.iter_mut().zip(*p).for_each(|(a, &b)| {
                if b > *a || b.is_nan() {
                    *a = b
                }
            }),
            Reduce::Min => out.iter_mut().zip(*p).for_each(|(a, &b)| {
                if b < *a || b.is_nan() {
                    *a = b
                }
            }),
        }
    }
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
            Just(-0.0f32),
            Just(0.0f32),
            Just(f32::INFINITY),
            -4.0f32..4.0,
        ]
    }

    proptest! {
        #[test]
        fn fold_is_the_rank_order_fold(
            op in 0usize..4,
            parts in (1usize..5, 0usize..40).prop_flat_map(|(m, n)| {
                proptest::collection::vec(proptest::collection::vec(special(), n), m)
            })
        ) {
            let op = OPS[op];
            let views: Vec<&[f32]> = parts.iter().map(|p| p.as_slice()).collect();
            let mut out = vec![0.0f32; parts[0].len()];
            fold_f32(op, &views, &mut out);
            let want = reference(op, &parts);
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            prop_assert_eq!(bits(&out), bits(&want));
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
    fn scalars_follow_the_group_rules() {
        assert_eq!(int(Reduce::Sum, i64::MAX, 1), i64::MIN);
        assert_eq!(int(Reduce::Prod, i64::MAX, 2), -2);
        assert!(float(Reduce::Max, 1.0, f64::NAN).is_nan());
        assert_eq!(
            float(Reduce::Max, f64::NAN, 1.0).to_bits(),
            f64::NAN.to_bits()
        );
        // Ties keep the lower rank's value.
        assert!(float(Reduce::Max, -0.0, 0.0).is_sign_negative());
        assert!(float(Reduce::Min, 0.0, -0.0).is_sign_positive());
    }
}
