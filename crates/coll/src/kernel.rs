//! The reduction arithmetic: one place defines what `Sum`, `Max`, `Min`
//! and `Prod` do to ints, floats and `f32` buffers, so that the small path
//! (the last arriver reduces alone) and the sliced path (members reduce
//! chunks) give bitwise the same results. Public so that collectives
//! across processes can compute bitwise what a group does.
//!
//! Order: element `i` of the result is `((x0[i] op x1[i]) op x2[i]) ...`,
//! members in rank order, whoever computes it (docs/collectives.md,
//! "Results"). Floats: `Sum`/`Prod` are IEEE `+`/`*`; `Max` replaces the
//! running value `a` by the next member's `b` when `b > a` or `b` is NaN,
//! so a NaN anywhere gives a NaN (the highest-ranked NaN's bits), and ties
//! (`+0`/`-0` included) keep the lower rank's value; `Min` likewise with
//! `b < a`. Integers: `Sum`/`Prod` wrap.
//!
//! The buffer kernel walks the output `LANES` elements (one cache line) at
//! a time, keeping the running values in a fixed-size array (registers):
//! it loads rank 0's line, combines every other member's line into it in
//! rank order, and writes the output line once. So all inputs are read as
//! parallel streams, each once, and nothing but the output is written (a
//! first version combined 4 KiB blocks input by input through a stack
//! buffer; it was 1.3 to 1.5 times slower with 8 members, since each pass
//! read one page of one input). The loops have fixed trip counts and the
//! op inlined (one instantiation per op), which LLVM vectorizes.

use std::mem::MaybeUninit;

use crate::Reduce;

/// Elements per step of the buffer kernel: one 64-byte cache line of
/// each input.
const LANES: usize = 16;

/// `Max` on floats: `b` replaces `a` when larger or NaN.
#[inline(always)]
fn max_f32(a: f32, b: f32) -> f32 {
    if b > a || b.is_nan() {
        b
    } else {
        a
    }
}

/// `Min` on floats: `b` replaces `a` when smaller or NaN.
#[inline(always)]
fn min_f32(a: f32, b: f32) -> f32 {
    if b < a || b.is_nan() {
        b
    } else {
        a
    }
}

/// Combines two `f64` values (the scalar `float` all-reduce), with the
/// same rules as the `f32` kernel.
#[inline]
pub fn float(op: Reduce, a: f64, b: f64) -> f64 {
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

/// Combines two integers (the `int` all-reduce); sums and products wrap.
#[inline]
pub fn int(op: Reduce, a: i64, b: i64) -> i64 {
    match op {
        Reduce::Sum => a.wrapping_add(b),
        Reduce::Prod => a.wrapping_mul(b),
        Reduce::Max => a.max(b),
        Reduce::Min => a.min(b),
    }
}

/// Writes `out[i] = ((inputs[0][i] op inputs[1][i]) op ...)` for every
/// `i`. Every input must have `out.len()` elements (the kernel panics on
/// a shorter one); with no input, `out` is left as it is.
///
/// ```
/// use std::mem::MaybeUninit;
/// use weft_coll::{kernel, Reduce};
///
/// let (a, b) = ([1.0f32, 5.0], [3.0f32, f32::NAN]);
/// let mut out = [MaybeUninit::<f32>::uninit(); 2];
/// kernel::reduce_f32(Reduce::Max, &[&a, &b], &mut out);
/// // SAFETY: `reduce_f32` wrote both elements.
/// let out = unsafe { [out[0].assume_init(), out[1].assume_init()] };
/// assert_eq!(out[0], 3.0);
/// assert!(out[1].is_nan());
/// ```
pub fn reduce_f32(op: Reduce, inputs: &[&[f32]], out: &mut [MaybeUninit<f32>]) {
    match op {
        Reduce::Sum => lanes(inputs, out, |a, b| a + b),
        Reduce::Prod => lanes(inputs, out, |a, b| a * b),
        Reduce::Max => lanes(inputs, out, max_f32),
        Reduce::Min => lanes(inputs, out, min_f32),
    }
}

/// The buffer kernel for one op (see the module doc).
#[inline(always)]
fn lanes(inputs: &[&[f32]], out: &mut [MaybeUninit<f32>], f: impl Fn(f32, f32) -> f32 + Copy) {
    let n = out.len();
    let Some((first, rest)) = inputs.split_first() else {
        return;
    };
    debug_assert!(inputs.iter().all(|x| x.len() == n));
    let mut outs = out.chunks_exact_mut(LANES);
    let mut i = 0;
    for o in &mut outs {
        let mut acc = [0f32; LANES];
        acc.copy_from_slice(&first[i..i + LANES]);
        for x in rest {
            let x = &x[i..i + LANES];
            for j in 0..LANES {
                acc[j] = f(acc[j], x[j]);
            }
        }
        for j in 0..LANES {
            o[j].write(acc[j]);
        }
        i += LANES;
    }
    for (k, o) in outs.into_remainder().iter_mut().enumerate() {
        let mut a = first[i + k];
        for x in rest {
            a = f(a, x[i + k]);
        }
        o.write(a);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel on `inputs`, as a plain vector.
    fn run(op: Reduce, inputs: &[Vec<f32>]) -> Vec<f32> {
        let n = inputs[0].len();
        let slices: Vec<&[f32]> = inputs.iter().map(|v| v.as_slice()).collect();
        let mut out = Vec::with_capacity(n);
        reduce_f32(op, &slices, out.spare_capacity_mut());
        // SAFETY: `reduce_f32` wrote all `n` elements.
        unsafe { out.set_len(n) };
        out
    }

    /// Element by element in rank order, written plainly.
    fn reference(op: Reduce, inputs: &[Vec<f32>]) -> Vec<f32> {
        (0..inputs[0].len())
            .map(|i| {
                let mut a = inputs[0][i];
                for x in &inputs[1..] {
                    let b = x[i];
                    a = match op {
                        Reduce::Sum => a + b,
                        Reduce::Prod => a * b,
                        Reduce::Max if b.is_nan() || b > a => b,
                        Reduce::Min if b.is_nan() || b < a => b,
                        _ => a,
                    };
                }
                a
            })
            .collect()
    }

    #[test]
    fn buffers_match_the_element_order_across_lane_edges() {
        let special = [
            0.0,
            -0.0,
            f32::NAN,
            -f32::NAN,
            f32::INFINITY,
            1.5,
            -2.25,
            3e38,
        ];
        for members in 1..=5 {
            for len in [0, 1, 7, LANES - 1, LANES, LANES + 3, 64 * LANES + 17] {
                let inputs: Vec<Vec<f32>> = (0..members)
                    .map(|m| {
                        (0..len)
                            .map(|i| {
                                let k = i * 31 + m * 7;
                                if k % 5 == 0 {
                                    special[k % special.len()]
                                } else {
                                    (k % 101) as f32 * 0.37 - 17.0
                                }
                            })
                            .collect()
                    })
                    .collect();
                for op in [Reduce::Sum, Reduce::Prod, Reduce::Max, Reduce::Min] {
                    let got: Vec<u32> = run(op, &inputs).iter().map(|x| x.to_bits()).collect();
                    let want: Vec<u32> =
                        reference(op, &inputs).iter().map(|x| x.to_bits()).collect();
                    assert_eq!(got, want, "{op:?} members {members} len {len}");
                }
            }
        }
    }

    #[test]
    fn nan_wins_and_ties_keep_the_lower_rank() {
        let nan = f32::NAN;
        assert!(run(Reduce::Max, &[vec![nan], vec![1.0]])[0].is_nan());
        assert!(run(Reduce::Max, &[vec![1.0], vec![nan]])[0].is_nan());
        assert!(run(Reduce::Min, &[vec![1.0], vec![nan], vec![0.0]])[0].is_nan());
        assert_eq!(
            run(Reduce::Max, &[vec![-0.0], vec![0.0]])[0].to_bits(),
            (-0.0f32).to_bits()
        );
        assert_eq!(
            run(Reduce::Min, &[vec![0.0], vec![-0.0]])[0].to_bits(),
            0.0f32.to_bits()
        );
        assert!(float(Reduce::Max, f64::NAN, 1.0).is_nan());
        assert!(float(Reduce::Min, 1.0, f64::NAN).is_nan());
        assert_eq!(float(Reduce::Max, -0.0, 0.0).to_bits(), (-0.0f64).to_bits());
        assert_eq!(int(Reduce::Sum, i64::MAX, 1), i64::MIN);
        assert_eq!(int(Reduce::Prod, i64::MAX, 2), -2);
    }
}
