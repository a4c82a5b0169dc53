//! Error messages of the tensor builtins: they are the runtime panic
//! messages of docs/language.md, "Tensors", so each is checked word for word.

use weft_tensor::{self as tensor, BinOp, Tensor};

fn z(dims: &[i64]) -> Tensor {
    tensor::zeros(dims).unwrap()
}

fn msg<T: std::fmt::Debug>(r: Result<T, tensor::TensorError>) -> String {
    r.unwrap_err().to_string()
}

#[test]
fn shape_mismatches_name_both_shapes() {
    assert_eq!(
        msg(tensor::matmul(&z(&[2, 3]), &z(&[4, 5]))),
        "matmul: shape mismatch [2,3] x [4,5]"
    );
    assert_eq!(
        msg(tensor::matmul(&z(&[3]), &z(&[3, 2]))),
        "matmul: shape mismatch [3] x [3,2]"
    );
    assert_eq!(
        msg(tensor::add(z(&[2, 3]), z(&[3, 2]))),
        "add: shape mismatch [2,3] + [3,2]"
    );
    assert_eq!(
        msg(tensor::sub(z(&[2, 3]), z(&[2]))),
        "sub: shape mismatch [2,3] - [2]"
    );
    assert_eq!(
        msg(tensor::mul(z(&[4]), z(&[2, 3]))),
        "mul: shape mismatch [4] * [2,3]"
    );
    assert_eq!(
        msg(tensor::div(z(&[2, 3, 4]), z(&[4]))),
        "div: shape mismatch [2,3,4] / [4]"
    );
    assert_eq!(
        msg(tensor::binary(BinOp::Add, Tensor::default(), z(&[1]))),
        "add: shape mismatch [0] + [1]"
    );
}

#[test]
fn rank_errors() {
    assert_eq!(
        msg(tensor::transpose(&z(&[3]))),
        "transpose: expected a 2-d tensor, got shape [3]"
    );
    assert_eq!(
        msg(tensor::sum_rows(&z(&[2, 2, 2]))),
        "sum_rows: expected a 2-d tensor, got shape [2,2,2]"
    );
    assert_eq!(
        msg(tensor::argmax_rows(&z(&[5]))),
        "argmax_rows: expected a 2-d tensor, got shape [5]"
    );
    assert_eq!(
        msg(tensor::argmax_rows(&z(&[2, 0]))),
        "argmax_rows: rows of shape [2,0] are empty"
    );
    assert_eq!(
        msg(tensor::softmax(&z(&[1, 2, 3]))),
        "softmax: expected a 1-d or 2-d tensor, got shape [1,2,3]"
    );
    assert_eq!(
        msg(tensor::rows(&z(&[]), 0, 0)),
        "rows: expected a 1-d or higher tensor, got shape []"
    );
}

#[test]
fn constructor_errors() {
    assert_eq!(msg(tensor::zeros(&[2, -1])), "zeros: invalid shape [2,-1]");
    assert_eq!(msg(tensor::randn(&[-3], 0)), "randn: invalid shape [-3]");
    assert_eq!(
        msg(tensor::ones(&[1 << 40, 1 << 40])),
        "ones: shape [1099511627776,1099511627776] is too large"
    );
    assert_eq!(
        msg(tensor::tensor_from(&[1.0, 2.0], &[3])),
        "tensor_from: 2 values do not fill shape [3]"
    );
    assert_eq!(
        msg(tensor::onehot(&[1, 10], 10)),
        "onehot: label 10 out of range [0, 10)"
    );
    assert_eq!(
        msg(tensor::onehot(&[-1], 3)),
        "onehot: label -1 out of range [0, 3)"
    );
    assert_eq!(
        msg(tensor::onehot(&[0], -2)),
        "onehot: invalid shape [1,-2]"
    );
}

#[test]
fn index_errors() {
    let t = z(&[5, 2]);
    assert_eq!(
        msg(tensor::rows(&t, 3, 1)),
        "rows: slice bounds out of range [3:1] with length 5"
    );
    assert_eq!(
        msg(tensor::rows(&t, 0, 6)),
        "rows: slice bounds out of range [0:6] with length 5"
    );
    assert_eq!(
        msg(tensor::rows(&t, -1, 2)),
        "rows: slice bounds out of range [-1:2] with length 5"
    );
    assert_eq!(
        msg(tensor::gather(&t, &[0, 7])),
        "gather: index out of range [7] with length 5"
    );
    assert_eq!(
        msg(tensor::get(&t, &[1, 2])),
        "get: index [1,2] out of range for shape [5,2]"
    );
    assert_eq!(
        msg(tensor::get(&t, &[1])),
        "get: index [1] out of range for shape [5,2]"
    );
    assert_eq!(
        msg(tensor::get(&t, &[-1, 0])),
        "get: index [-1,0] out of range for shape [5,2]"
    );
}

#[test]
fn device_and_dataset_errors() {
    assert_eq!(
        msg(tensor::to(&z(&[2]), "cuda:7")),
        "device \"cuda:7\" is not present"
    );
    assert_eq!(
        msg(tensor::to(&z(&[2]), "tpu")),
        "device \"tpu\" is not present"
    );
    assert_eq!(
        msg(tensor::load_dataset("mnist")),
        "unknown dataset \"mnist\" (available: digits)"
    );
}
