//! End to end through the kernels: the training example's MLP learns the
//! digits set (loss falls, training accuracy passes 90% in a few epochs).

#[path = "tensor_support/mlp.rs"]
mod mlp;

#[test]
fn mlp_learns_digits() {
    let (x, y) = mlp::digits().unwrap();
    let mut net = mlp::Mlp::new(42).unwrap();
    let mut rng = fastrand::Rng::with_seed(7);
    let before = net.accuracy(&x, &y).unwrap();
    let mut losses = Vec::new();
    for _ in 0..5 {
        let mut perm: Vec<i64> = (0..y.len() as i64).collect();
        rng.shuffle(&mut perm);
        losses.push(mlp::epoch(&mut net, &x, &y, &perm, 32, 0.1).unwrap());
    }
    let after = net.accuracy(&x, &y).unwrap();
    assert!(losses[4] < losses[0] * 0.5, "losses {losses:?}");
    assert!(
        after > 0.9,
        "accuracy {before} -> {after}, losses {losses:?}"
    );
}
