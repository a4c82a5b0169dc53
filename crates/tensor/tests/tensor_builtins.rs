//! `tensor::builtins`: the interpreter's entry point maps every builtin of
//! docs/language.md, "Tensors" to its kernel, with argument kinds checked and costs that
//! send long kernels to the compute pool.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use weft_tensor::builtins::{call, cost, exec, Arg, Builtin, Ret};
use weft_tensor::{self as tensor, Tensor, INLINE_COST};

struct Unpark(std::thread::Thread);
impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

fn block_on<F: Future>(f: F) -> F::Output {
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut f = pin!(f);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park_timeout(std::time::Duration::from_millis(20));
    }
}

fn run(name: &str, args: Vec<Arg>) -> Ret {
    let b = Builtin::from_name(name).unwrap();
    assert_eq!(b.name(), name);
    block_on(call(b, args)).unwrap()
}

fn tensor_of(r: Ret) -> Tensor {
    match r {
        Ret::Tensor(t) => t,
        other => panic!("not a tensor: {other:?}"),
    }
}

fn vals(r: Ret) -> Vec<f32> {
    tensor_of(r).to_vec().unwrap()
}

#[test]
fn every_builtin_runs_its_kernel() {
    let a = tensor::tensor_from(&[1.0, -2.0, 3.0, 4.0, 5.0, -6.0], &[2, 3]).unwrap();
    let ta = || Arg::Tensor(a.clone());
    let row = Arg::Tensor(tensor::tensor_from(&[1.0, 1.0, 1.0], &[3]).unwrap());
    assert_eq!(
        vals(run("add", vec![ta(), row.clone()])),
        vec![2.0, -1.0, 4.0, 5.0, 6.0, -5.0]
    );
    assert_eq!(
        vals(run("sub", vec![Arg::Float(1.0), ta()])),
        vec![0.0, 3.0, -2.0, -3.0, -4.0, 7.0]
    );
    assert_eq!(
        vals(run("mul", vec![ta(), Arg::Float(2.0)])),
        vec![2.0, -4.0, 6.0, 8.0, 10.0, -12.0]
    );
    assert_eq!(vals(run("div", vec![ta(), ta()])), vec![1.0; 6]);
    assert_eq!(vals(run("neg", vec![ta()]))[1], 2.0);
    assert_eq!(
        vals(run("relu", vec![ta()])),
        vec![1.0, 0.0, 3.0, 4.0, 5.0, 0.0]
    );
    assert_eq!(
        vals(run("relu_mask", vec![ta()])),
        vec![1.0, 0.0, 1.0, 1.0, 1.0, 0.0]
    );
    assert!((vals(run("exp", vec![ta()]))[0] - std::f32::consts::E).abs() < 1e-6);
    assert_eq!(vals(run("log", vec![ta()]))[0], 0.0);
    assert_eq!(vals(run("zeros", vec![Arg::Ints(vec![2])])), vec![0.0; 2]);
    assert_eq!(vals(run("ones", vec![Arg::Ints(vec![2])])), vec![1.0; 2]);
    assert_eq!(
        vals(run("full", vec![Arg::Ints(vec![1]), Arg::Float(3.5)])),
        vec![3.5]
    );
    assert_eq!(
        tensor_of(run("randn", vec![Arg::Ints(vec![3, 4]), Arg::Int(9)])).dims(),
        &[3, 4]
    );
    assert_eq!(
        vals(run(
            "tensor_from",
            vec![Arg::Floats(vec![1.0, 2.0]), Arg::Ints(vec![2, 1])]
        )),
        vec![1.0, 2.0]
    );
    assert!(matches!(run("shape", vec![ta()]), Ret::Ints(s) if s == [2, 3]));
    assert!(matches!(run("numel", vec![ta()]), Ret::Int(6)));
    let at = tensor_of(run("transpose", vec![ta()]));
    assert_eq!(at.dims(), &[3, 2]);
    assert_eq!(
        vals(run("matmul", vec![ta(), Arg::Tensor(at)])),
        vec![14.0, -24.0, -24.0, 77.0]
    );
    assert!((vals(run("softmax", vec![ta()])).iter().sum::<f32>() - 2.0).abs() < 1e-5);
    assert!(matches!(run("sum", vec![ta()]), Ret::Float(x) if x == 5.0));
    assert!(matches!(run("mean", vec![ta()]), Ret::Float(x) if (x - 5.0 / 6.0).abs() < 1e-12));
    assert_eq!(vals(run("sum_rows", vec![ta()])), vec![5.0, 3.0, -3.0]);
    assert!(matches!(run("argmax_rows", vec![ta()]), Ret::Ints(v) if v == [2, 1]));
    assert_eq!(
        vals(run("onehot", vec![Arg::Ints(vec![1]), Arg::Int(3)])),
        vec![0.0, 1.0, 0.0]
    );
    assert_eq!(
        vals(run("rows", vec![ta(), Arg::Int(1), Arg::Int(2)])),
        vec![4.0, 5.0, -6.0]
    );
    assert_eq!(
        vals(run("gather", vec![ta(), Arg::Ints(vec![1, 1])])).len(),
        6
    );
    assert!(matches!(run("get", vec![ta(), Arg::Int(1), Arg::Int(2)]), Ret::Float(x) if x == -6.0));
    assert!(matches!(run("devices", vec![]), Ret::Strs(d) if d[0] == "cpu"));
    assert!(matches!(run("device", vec![ta()]), Ret::Str(d) if d == "cpu"));
    assert_eq!(
        tensor::device(&tensor_of(run("to", vec![ta(), Arg::Str("cpu".into())]))),
        "cpu"
    );
    match run("load_dataset", vec![Arg::Str("digits".into())]) {
        Ret::Dataset(d) => assert_eq!((d.x.dims(), d.y.len()), (&[1797usize, 64][..], 1797)),
        other => panic!("not a dataset: {other:?}"),
    }
}

#[test]
fn errors_come_back_as_values() {
    let b = Builtin::from_name("matmul").unwrap();
    let z = |d: &[i64]| Arg::Tensor(tensor::zeros(d).unwrap());
    let e = block_on(call(b, vec![z(&[2, 3]), z(&[4, 5])])).unwrap_err();
    assert_eq!(e.to_string(), "matmul: shape mismatch [2,3] x [4,5]");
    let e = exec(b, vec![z(&[2, 3])]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "matmul: bad arguments, want (tensor, tensor)"
    );
    let e = exec(Builtin::Add, vec![Arg::Int(1), Arg::Int(2)]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "add: bad arguments, want (tensor or float, tensor or float)"
    );
    let e = exec(Builtin::Get, vec![z(&[2]), Arg::Float(1.0)]).unwrap_err();
    assert_eq!(e.to_string(), "get: bad arguments, want (tensor, int...)");
    let to = exec(Builtin::To, vec![z(&[2]), Arg::Str("cuda:3".into())]).unwrap_err();
    assert_eq!(to.to_string(), "device \"cuda:3\" is not present");
    assert!(Builtin::from_name("print").is_none());
}

#[test]
fn costs_send_long_kernels_to_the_pool() {
    let t = |d: &[i64]| Arg::Tensor(tensor::zeros(d).unwrap());
    // the training example's products stay inline
    assert!(cost(Builtin::Matmul, &[t(&[32, 64]), t(&[64, 128])]) < INLINE_COST);
    assert!(cost(Builtin::Matmul, &[t(&[512, 512]), t(&[512, 512])]) >= INLINE_COST);
    assert!(cost(Builtin::Add, &[t(&[2048, 1024]), t(&[2048, 1024])]) >= INLINE_COST);
    assert!(cost(Builtin::Zeros, &[Arg::Ints(vec![4096, 4096])]) >= INLINE_COST);
    assert!(cost(Builtin::LoadDataset, &[Arg::Str("digits".into())]) >= INLINE_COST);
    assert_eq!(cost(Builtin::Shape, &[t(&[4096, 4096])]), 0);
    // an overflowing shape costs nothing: it fails at once
    assert_eq!(
        cost(Builtin::Zeros, &[Arg::Ints(vec![1 << 40, 1 << 40])]),
        0
    );
    let big = vec![t(&[512, 512]), t(&[512, 512])];
    let got = tensor_of(block_on(call(Builtin::Matmul, big)).unwrap());
    assert_eq!(got.dims(), &[512, 512]);
}

#[test]
fn ints_widen_where_floats_are_wanted() {
    let a = || Arg::Tensor(tensor::tensor_from(&[1.0, -2.0], &[2]).unwrap());
    assert_eq!(
        vals(run("full", vec![Arg::Ints(vec![2]), Arg::Int(3)])),
        vec![3.0; 2]
    );
    assert_eq!(vals(run("mul", vec![a(), Arg::Int(2)])), vec![2.0, -4.0]);
    assert_eq!(vals(run("sub", vec![Arg::Int(1), a()])), vec![0.0, 3.0]);
    assert_eq!(
        vals(run(
            "tensor_from",
            vec![Arg::Ints(vec![4, 5]), Arg::Ints(vec![2])]
        )),
        vec![4.0, 5.0]
    );
    // an empty list is `[]int`, and serves as `[]float` too
    assert_eq!(
        tensor_of(run(
            "tensor_from",
            vec![Arg::Ints(vec![]), Arg::Ints(vec![0])]
        ))
        .dims(),
        &[0]
    );
}
