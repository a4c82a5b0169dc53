//! `load_dataset("digits")`: the embedded UCI digits set parses whole.

use weft_tensor as tensor;

#[test]
fn digits_loads_with_expected_shape_and_labels() {
    let d = tensor::load_dataset("digits").unwrap();
    assert_eq!(d.x.dims(), &[1797, 64]);
    assert_eq!(d.y.len(), 1797);
    let mut counts = [0usize; 10];
    for &l in &d.y {
        counts[usize::try_from(l).unwrap()] += 1;
    }
    // the per-class counts of the UCI test set (as scikit-learn reports them)
    assert_eq!(counts, [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]);
    // pixels are unscaled integers 0..16
    let x = d.x.host_values().unwrap();
    assert!(x
        .iter()
        .all(|&v| (0.0..=16.0).contains(&v) && v.fract() == 0.0));
    assert_eq!(tensor::get(&d.x, &[0, 2]).unwrap(), 5.0);
    assert_eq!(tensor::get(&d.x, &[0, 3]).unwrap(), 13.0);
    assert_eq!(d.y[..3], [0, 1, 2]);
    assert_eq!(d.x.to_string(), "tensor[1797,64]@cpu");
}
