//! Every CPU kernel against a naive reference on random inputs (proptest),
//! plus broadcasting and copy-on-write behaviour.

use proptest::prelude::*;
use weft_tensor::{self as tensor, BinOp, Tensor, UnaryOp};

fn t(dims: &[usize], v: &[f32]) -> Tensor {
    Tensor::from_vec(dims, v.to_vec()).unwrap()
}

fn vals(t: &Tensor) -> Vec<f32> {
    t.to_vec().unwrap()
}

fn close(a: &[f32], b: &[f32], tol: f32) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| (x - y).abs() <= tol * (1.0 + y.abs()) || (x.is_nan() && y.is_nan()))
}

/// A random matrix `[m, n]` with values in [-4, 4].
fn matrix(max: usize) -> impl Strategy<Value = (usize, usize, Vec<f32>)> {
    (1..=max, 1..=max)
        .prop_flat_map(|(m, n)| (Just(m), Just(n), prop::collection::vec(-4.0f32..4.0, m * n)))
}

fn apply(op: BinOp, x: f32, y: f32) -> f32 {
    match op {
        BinOp::Add => x + y,
        BinOp::Sub => x - y,
        BinOp::Mul => x * y,
        BinOp::Div => x / y,
    }
}

/// A scalar reference implementation of a map.
type Reference = fn(f32) -> f32;

fn binop() -> impl Strategy<Value = BinOp> {
    prop_oneof![
        Just(BinOp::Add),
        Just(BinOp::Sub),
        Just(BinOp::Mul),
        Just(BinOp::Div)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn matmul_matches_naive((m, k, a) in matrix(40), n in 1usize..40, seed in any::<i64>()) {
        let b = tensor::randn(&[k as i64, n as i64], seed).unwrap();
        let bv = vals(&b);
        let got = tensor::matmul(&t(&[m, k], &a), &b).unwrap();
        prop_assert_eq!(got.dims(), &[m, n]);
        let mut want = vec![0f32; m * n];
        for i in 0..m {
            for j in 0..n {
                let s: f64 = (0..k).map(|p| f64::from(a[i * k + p]) * f64::from(bv[p * n + j])).sum();
                want[i * n + j] = s as f32;
            }
        }
        prop_assert!(close(&vals(&got), &want, 1e-4));
    }

    #[test]
    fn transpose_matches_naive((m, n, a) in matrix(70)) {
        let got = tensor::transpose(&t(&[m, n], &a)).unwrap();
        prop_assert_eq!(got.dims(), &[n, m]);
        let g = vals(&got);
        for i in 0..m {
            for j in 0..n {
                prop_assert_eq!(g[j * m + i], a[i * n + j]);
            }
        }
    }

    #[test]
    fn lazy_transposes_feed_matmul_and_every_other_kernel((m, n, a) in matrix(24), k in 1usize..24, seed in any::<i64>()) {
        let ta = t(&[m, n], &a);
        let at = tensor::transpose(&ta).unwrap();
        prop_assert!(at.shares_storage(&ta));
        // transpose of a transpose is the original buffer
        let back = tensor::transpose(&at).unwrap();
        prop_assert!(back.shares_storage(&ta));
        prop_assert_eq!(back.dims(), &[m, n]);
        prop_assert_eq!(vals(&back), a.clone());
        // matmul reads transposed operands through strides, on either side
        let b = tensor::randn(&[m as i64, k as i64], seed).unwrap();
        let dense_at = Tensor::from_vec(&[n, m], vals(&at)).unwrap();
        let want = vals(&tensor::matmul(&dense_at, &b).unwrap());
        prop_assert!(close(&vals(&tensor::matmul(&at, &b).unwrap()), &want, 1e-5));
        let c = tensor::randn(&[k as i64, n as i64], seed ^ 1).unwrap();
        let ct = tensor::transpose(&c).unwrap();
        let dense_ct = Tensor::from_vec(&[n, k], vals(&ct)).unwrap();
        let want = vals(&tensor::matmul(&ta, &dense_ct).unwrap());
        prop_assert!(close(&vals(&tensor::matmul(&ta, &ct).unwrap()), &want, 1e-5));
        let bt = tensor::transpose(&b).unwrap();
        let dense_bt = Tensor::from_vec(&[k, m], vals(&bt)).unwrap();
        let both = vals(&tensor::matmul(&ct, &bt).unwrap());
        let want = vals(&tensor::matmul(&dense_ct, &dense_bt).unwrap());
        prop_assert!(close(&both, &want, 1e-5));
        // other kernels see the row-major values; the source is untouched
        let r = tensor::relu(at.clone()).unwrap();
        prop_assert_eq!(vals(&r), vals(&dense_at).iter().map(|&x| x.max(0.0)).collect::<Vec<_>>());
        let s = tensor::add(at.clone(), dense_at.clone()).unwrap();
        prop_assert_eq!(vals(&s), vals(&dense_at).iter().map(|&x| x + x).collect::<Vec<_>>());
        prop_assert_eq!(vals(&tensor::rows(&at, 0, 1).unwrap()), vals(&dense_at)[..m].to_vec());
        prop_assert_eq!(vals(&tensor::sum_rows(&at).unwrap()), vals(&tensor::sum_rows(&dense_at).unwrap()));
        prop_assert_eq!(vals(&ta), a);
    }

    #[test]
    fn binary_same_shape((m, n, a) in matrix(20), op in binop(), seed in any::<i64>()) {
        let b = tensor::randn(&[m as i64, n as i64], seed).unwrap();
        let bv = vals(&b);
        let want: Vec<f32> = a.iter().zip(&bv).map(|(&x, &y)| apply(op, x, y)).collect();
        // shared operands (fresh buffer) and uniquely owned ones (reused buffer)
        let ta = t(&[m, n], &a);
        let shared = tensor::binary(op, ta.clone(), b.clone()).unwrap();
        prop_assert!(close(&vals(&shared), &want, 1e-6));
        prop_assert_eq!(vals(&ta), a.clone());
        let owned_left = tensor::binary(op, t(&[m, n], &a), b.clone()).unwrap();
        prop_assert!(close(&vals(&owned_left), &want, 1e-6));
        let owned_right = tensor::binary(op, ta.clone(), tensor::Tensor::from_vec(&[m, n], bv.clone()).unwrap()).unwrap();
        prop_assert!(close(&vals(&owned_right), &want, 1e-6));
    }

    #[test]
    fn binary_row_broadcast((m, n, a) in matrix(20), op in binop(), seed in any::<i64>()) {
        let row = vals(&tensor::randn(&[n as i64], seed).unwrap());
        let right: Vec<f32> = (0..m * n).map(|i| apply(op, a[i], row[i % n])).collect();
        let left: Vec<f32> = (0..m * n).map(|i| apply(op, row[i % n], a[i])).collect();
        for keep in [false, true] {
            let ta = t(&[m, n], &a);
            let held = keep.then(|| ta.clone());
            let r = tensor::binary(op, ta, t(&[n], &row)).unwrap();
            prop_assert_eq!(r.dims(), &[m, n]);
            prop_assert!(close(&vals(&r), &right, 1e-6));
            let tb = t(&[m, n], &a);
            let held2 = keep.then(|| tb.clone());
            let l = tensor::binary(op, t(&[n], &row), tb).unwrap();
            prop_assert!(close(&vals(&l), &left, 1e-6));
            if let (Some(h), Some(h2)) = (held, held2) {
                prop_assert_eq!(vals(&h), a.clone());
                prop_assert_eq!(vals(&h2), a.clone());
            }
        }
    }

    #[test]
    fn scalar_both_orders((m, n, a) in matrix(20), op in binop(), s in -3.0f64..3.0) {
        let ta = t(&[m, n], &a);
        let r = tensor::tensor_scalar(op, ta.clone(), s).unwrap();
        let want: Vec<f32> = a.iter().map(|&x| apply(op, x, s as f32)).collect();
        prop_assert!(close(&vals(&r), &want, 1e-6));
        let l = tensor::scalar_tensor(op, s, ta.clone()).unwrap();
        let want: Vec<f32> = a.iter().map(|&x| apply(op, s as f32, x)).collect();
        prop_assert!(close(&vals(&l), &want, 1e-6));
        prop_assert_eq!(vals(&ta), a);
    }

    #[test]
    fn unary_maps((m, n, a) in matrix(20)) {
        let cases: [(UnaryOp, Reference); 5] = [
            (UnaryOp::Neg, |x| -x),
            (UnaryOp::Relu, |x| if x > 0.0 { x } else { 0.0 }),
            (UnaryOp::ReluMask, |x| if x > 0.0 { 1.0 } else { 0.0 }),
            (UnaryOp::Exp, |x| (f64::from(x).exp()) as f32),
            (UnaryOp::Log, |x| (f64::from(x).ln()) as f32),
        ];
        for (op, f) in cases {
            let ta = t(&[m, n], &a);
            let got = tensor::unary(op, ta.clone()).unwrap();
            let want: Vec<f32> = a.iter().map(|&x| f(x)).collect();
            prop_assert!(close(&vals(&got), &want, 1e-5), "{:?}", op);
            let owned = tensor::unary(op, t(&[m, n], &a)).unwrap();
            prop_assert!(close(&vals(&owned), &want, 1e-5), "{:?}", op);
        }
    }

    #[test]
    fn reductions((m, n, a) in matrix(30)) {
        let ta = t(&[m, n], &a);
        let total: f64 = a.iter().map(|&x| f64::from(x)).sum();
        prop_assert!((tensor::sum(&ta).unwrap() - total).abs() < 1e-6);
        prop_assert!((tensor::mean(&ta).unwrap() - total / (m * n) as f64).abs() < 1e-6);
        let sr = tensor::sum_rows(&ta).unwrap();
        prop_assert_eq!(sr.dims(), &[n]);
        let want: Vec<f32> = (0..n).map(|j| (0..m).map(|i| f64::from(a[i * n + j])).sum::<f64>() as f32).collect();
        prop_assert!(close(&vals(&sr), &want, 1e-5));
        let am = tensor::argmax_rows(&ta).unwrap();
        for i in 0..m {
            let row = &a[i * n..(i + 1) * n];
            let best = row.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
            let first = row.iter().position(|&x| x == best).unwrap();
            prop_assert_eq!(am[i], first as i64);
        }
    }

    #[test]
    fn softmax_matches_naive((m, n, a) in matrix(20), scale in 1.0f32..50.0) {
        let a: Vec<f32> = a.iter().map(|x| x * scale).collect();
        let got = vals(&tensor::softmax(&t(&[m, n], &a)).unwrap());
        for i in 0..m {
            let row: Vec<f64> = a[i * n..(i + 1) * n].iter().map(|&x| f64::from(x)).collect();
            let max = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let z: f64 = row.iter().map(|x| (x - max).exp()).sum();
            for j in 0..n {
                let want = ((row[j] - max).exp() / z) as f32;
                prop_assert!((got[i * n + j] - want).abs() < 1e-5);
            }
        }
    }

    #[test]
    fn rows_and_gather((m, n, a) in matrix(20), picks in prop::collection::vec(any::<prop::sample::Index>(), 0..30)) {
        let ta = t(&[m, n], &a);
        let idx: Vec<i64> = picks.iter().map(|p| p.index(m) as i64).collect();
        let g = tensor::gather(&ta, &idx).unwrap();
        prop_assert_eq!(g.dims(), &[idx.len(), n]);
        let want: Vec<f32> = idx.iter().flat_map(|&i| a[i as usize * n..(i as usize + 1) * n].to_vec()).collect();
        prop_assert_eq!(vals(&g), want);
        let (s, e) = if idx.len() >= 2 { let (x, y) = (idx[0], idx[1]); (x.min(y), x.max(y)) } else { (0, m as i64) };
        let r = tensor::rows(&ta, s, e).unwrap();
        prop_assert_eq!(r.dims(), &[(e - s) as usize, n]);
        prop_assert_eq!(vals(&r), a[s as usize * n..e as usize * n].to_vec());
        let (i, j) = (idx.first().copied().unwrap_or(0), (idx.len() % n) as i64);
        prop_assert_eq!(tensor::get(&ta, &[i, j]).unwrap(), f64::from(a[i as usize * n + j as usize]));
    }

    #[test]
    fn onehot_rows(labels in prop::collection::vec(0i64..10, 0..40)) {
        let o = tensor::onehot(&labels, 10).unwrap();
        prop_assert_eq!(o.dims(), &[labels.len(), 10]);
        let v = vals(&o);
        for (r, &l) in labels.iter().enumerate() {
            for c in 0..10 {
                prop_assert_eq!(v[r * 10 + c], if c as i64 == l { 1.0 } else { 0.0 });
            }
        }
        prop_assert_eq!(tensor::argmax_rows(&o).unwrap(), labels);
    }
}

#[test]
fn constructors_and_queries() {
    let z = tensor::zeros(&[2, 3]).unwrap();
    assert_eq!(vals(&z), vec![0.0; 6]);
    assert_eq!(tensor::shape(&z), vec![2, 3]);
    assert_eq!(tensor::numel(&z), 6);
    assert_eq!(vals(&tensor::ones(&[4]).unwrap()), vec![1.0; 4]);
    assert_eq!(vals(&tensor::full(&[2, 2], 2.5).unwrap()), vec![2.5; 4]);
    let f = tensor::tensor_from(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2]).unwrap();
    assert_eq!(tensor::get(&f, &[2, 1]).unwrap(), 6.0);
    assert_eq!(z.to_string(), "tensor[2,3]@cpu");
    assert_eq!(Tensor::default().to_string(), "tensor[0]@cpu");
    assert_eq!(tensor::device(&z), "cpu");
    assert_eq!(tensor::numel(&tensor::zeros(&[]).unwrap()), 1);
    assert_eq!(tensor::numel(&tensor::zeros(&[3, 0]).unwrap()), 0);
}

#[test]
fn randn_is_seeded_and_standard_normal() {
    let a = vals(&tensor::randn(&[10_001], 7).unwrap());
    assert_eq!(a, vals(&tensor::randn(&[10_001], 7).unwrap()));
    assert_ne!(a, vals(&tensor::randn(&[10_001], 8).unwrap()));
    let n = a.len() as f64;
    let mean = a.iter().map(|&x| f64::from(x)).sum::<f64>() / n;
    let var = a
        .iter()
        .map(|&x| (f64::from(x) - mean).powi(2))
        .sum::<f64>()
        / n;
    assert!(mean.abs() < 0.05, "mean {mean}");
    assert!((var - 1.0).abs() < 0.05, "variance {var}");
}

#[test]
fn copy_on_write_shares_until_written() {
    let a = tensor::randn(&[4, 4], 1).unwrap();
    let b = a.clone();
    assert!(a.shares_storage(&b));
    let before = vals(&a);
    // `b` is shared, so relu writes a new buffer and `a` is untouched
    let r = tensor::relu(b).unwrap();
    assert!(!r.shares_storage(&a));
    assert_eq!(vals(&a), before);
    // a uniquely owned operand is reused in place
    let unique = tensor::randn(&[4, 4], 2).unwrap();
    let ptr = unique.host_values().unwrap().as_ptr();
    let out = tensor::tensor_scalar(BinOp::Mul, unique, 2.0).unwrap();
    assert_eq!(out.host_values().unwrap().as_ptr(), ptr);
    let out2 = tensor::add(out, a.clone()).unwrap();
    assert_eq!(out2.host_values().unwrap().as_ptr(), ptr);
}

#[test]
fn empty_tensors() {
    let e = Tensor::default();
    assert_eq!(tensor::sum(&e).unwrap(), 0.0);
    assert!(tensor::mean(&e).unwrap().is_nan());
    let z = tensor::zeros(&[0, 3]).unwrap();
    assert_eq!(tensor::sum_rows(&z).unwrap().dims(), &[3]);
    assert_eq!(tensor::argmax_rows(&z).unwrap(), Vec::<i64>::new());
    let p = tensor::matmul(
        &tensor::zeros(&[2, 0]).unwrap(),
        &tensor::zeros(&[0, 3]).unwrap(),
    )
    .unwrap();
    assert_eq!(vals(&p), vec![0.0; 6]);
}

/// An empty sum is +0.0 (it printed `-0.0`: Rust's `Iterator::sum` of
/// floats starts from -0.0), whatever the reduction; sums start from +0.0
/// as the GPU kernels do, and NaN and infinities still propagate.
#[test]
fn empty_sums_are_positive_zero() {
    let positive_zero = |x: f64| x == 0.0 && x.is_sign_positive();
    for dims in [&[0][..], &[0, 3], &[3, 0], &[2, 0, 4]] {
        let e = tensor::zeros(dims).unwrap();
        let s = tensor::sum(&e).unwrap();
        assert!(positive_zero(s), "sum of {dims:?} is {s:?}");
        assert!(tensor::mean(&e).unwrap().is_nan(), "mean of {dims:?}");
    }
    assert!(positive_zero(tensor::sum(&Tensor::default()).unwrap()));
    // The columns of zero rows, and a product with an empty inner dimension.
    let cols = tensor::sum_rows(&tensor::zeros(&[0, 3]).unwrap()).unwrap();
    assert!(
        vals(&cols).iter().all(|&x| positive_zero(f64::from(x))),
        "{:?}",
        vals(&cols)
    );
    let p = tensor::matmul(
        &tensor::zeros(&[2, 0]).unwrap(),
        &tensor::zeros(&[0, 3]).unwrap(),
    )
    .unwrap();
    assert!(
        vals(&p).iter().all(|&x| positive_zero(f64::from(x))),
        "{:?}",
        vals(&p)
    );
    // Negative zeros add up to +0.0, as on the GPU and in `sum_rows`.
    let nz = t(&[2, 2], &[-0.0; 4]);
    assert!(positive_zero(tensor::sum(&nz).unwrap()));
    assert!(positive_zero(tensor::mean(&nz).unwrap()));
    assert!(vals(&tensor::sum_rows(&nz).unwrap())
        .iter()
        .all(|x| x.is_sign_positive()));
    // Otherwise IEEE: a NaN or an infinity propagates, opposite infinities give NaN.
    assert!(tensor::sum(&t(&[3], &[1.0, f32::NAN, 2.0]))
        .unwrap()
        .is_nan());
    assert_eq!(
        tensor::sum(&t(&[2], &[1.0, f32::INFINITY])).unwrap(),
        f64::INFINITY
    );
    assert!(tensor::sum(&t(&[2], &[f32::NEG_INFINITY, f32::INFINITY]))
        .unwrap()
        .is_nan());
    assert_eq!(tensor::sum(&t(&[3], &[-1.5, 0.5, -2.0])).unwrap(), -3.0);
}

#[test]
fn debug_form_is_short() {
    let t = tensor::zeros(&[100, 100]).unwrap();
    assert_eq!(
        format!("{t:?}"),
        "tensor[100,100]@cpu [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]..."
    );
    assert_eq!(format!("{:?}", Tensor::default()), "tensor[0]@cpu []");
}

/// `host_buffer` and `from_host_buffer` move a host tensor's values out
/// and back without copying them; a lazy transpose comes out row-major.
#[test]
fn host_buffers_are_shared_not_copied() {
    let a = t(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let buf = a.host_buffer().unwrap();
    let b = Tensor::from_host_buffer(&[3, 2], buf.clone()).unwrap();
    assert!(b.shares_storage(&a));
    assert_eq!(b.dims(), &[3, 2]);
    let at = tensor::transpose(&a).unwrap();
    assert_eq!(
        *at.host_buffer().unwrap(),
        vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]
    );
    let err = Tensor::from_host_buffer(&[4], buf).unwrap_err();
    assert_eq!(
        err.to_string(),
        Tensor::from_vec(&[4], vec![0.0; 6])
            .unwrap_err()
            .to_string()
    );
}
