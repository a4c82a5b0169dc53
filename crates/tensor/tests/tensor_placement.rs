//! Placement from the tensor side (docs/tensors.md, "Soft placement"): an
//! op whose device has no kernel for it runs on the host and is recorded as
//! a `HostFallback` (op, device, the times of its download, host kernel and
//! upload); under a strict scope it fails with `NoKernel`, naming the op
//! and the device, before anything is copied; an op the device does run is
//! no fallback. Also `auto_device`, the choice of `go ... on "auto"`.
//!
//! The device is a test double whose memory is a host `Vec`: it runs
//! `+` and declines every other kernel, as a real backend declines what
//! it has not implemented (CUDA has no `rows` or `gather` kernel).

use std::any::Any;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use weft_tensor::builtins::{self, Arg, Builtin, Ret};
use weft_tensor::device::{BinOp, Complete, Device, DeviceError, DeviceMem, Layout};
use weft_tensor::fallback::{self, HostFallback};
use weft_tensor::{self as tensor, Tensor, TensorError};

/// Runs `+` on equal shapes; declines the rest. Counts uploads.
#[derive(Debug, Default)]
struct AddOnly {
    uploads: AtomicUsize,
}

fn data(m: &DeviceMem) -> &Vec<f32> {
    m.data.downcast_ref::<Vec<f32>>().expect("a Vec")
}

fn mem(v: Vec<f32>) -> DeviceMem {
    DeviceMem {
        data: Arc::new(v) as Arc<dyn Any + Send + Sync>,
        ready: Arc::new(Complete),
    }
}

impl Device for AddOnly {
    fn name(&self) -> &str {
        "mock:0"
    }
    fn upload(&self, host: &[f32]) -> Result<DeviceMem, DeviceError> {
        self.uploads.fetch_add(1, Ordering::SeqCst);
        Ok(mem(host.to_vec()))
    }
    fn download(&self, m: &DeviceMem, _len: usize) -> Result<Vec<f32>, DeviceError> {
        Ok(data(m).clone())
    }
    fn binary(
        &self,
        op: BinOp,
        a: &DeviceMem,
        b: &DeviceMem,
        layout: Layout,
    ) -> Result<Option<DeviceMem>, DeviceError> {
        match (op, layout) {
            (BinOp::Add, Layout::Same { .. }) => Ok(Some(mem(data(a)
                .iter()
                .zip(data(b))
                .map(|(x, y)| x + y)
                .collect()))),
            _ => Ok(None),
        }
    }
}

fn setup() -> (Arc<AddOnly>, Arc<dyn Device>, Tensor) {
    let mock = Arc::new(AddOnly::default());
    let dev: Arc<dyn Device> = mock.clone();
    let host = tensor::tensor_from(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2]).unwrap();
    let t = tensor::to_device(&host, &dev).unwrap();
    (mock, dev, t)
}

fn check_times(f: &HostFallback) {
    assert!(f.start <= f.downloaded && f.downloaded <= f.computed);
    if let Some(up) = f.uploaded {
        assert!(f.computed <= up);
    }
}

#[test]
fn an_op_without_a_kernel_runs_on_the_host_and_is_recorded() {
    let (mock, _dev, t) = setup();
    let before = mock.uploads.load(Ordering::SeqCst);
    let (got, seen) = fallback::scope(false, || tensor::gather(&t, &[2, 0]));
    let got = got.unwrap();
    // The result is back on the device, with the host kernel's values.
    assert_eq!(got.device_name(), "mock:0");
    assert_eq!(got.to_vec().unwrap(), vec![5.0, 6.0, 1.0, 2.0]);
    assert_eq!(mock.uploads.load(Ordering::SeqCst), before + 1);
    assert_eq!(seen.len(), 1);
    assert_eq!((seen[0].op, seen[0].device.as_str()), ("gather", "mock:0"));
    assert!(seen[0].uploaded.is_some());
    check_times(&seen[0]);

    // A reduction whose result is a host value: no upload.
    let (s, seen) = fallback::scope(false, || tensor::sum(&t));
    assert_eq!(s.unwrap(), 21.0);
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].op, "sum");
    assert_eq!(seen[0].uploaded, None);
    check_times(&seen[0]);

    // Several fallbacks of one call come in order: a lazy transpose made
    // dense on the host, then the softmax over it.
    let (_, seen) = fallback::scope(false, || {
        let tt = tensor::transpose(&t).unwrap();
        tensor::softmax(&tt)
    });
    let ops: Vec<&str> = seen.iter().map(|f| f.op).collect();
    assert_eq!(ops, ["transpose", "softmax"]);
}

#[test]
fn a_kernel_the_device_has_is_no_fallback() {
    let (_, _, t) = setup();
    let (sum, seen) = fallback::scope(true, || tensor::add(t.clone(), t.clone()));
    assert_eq!(
        sum.unwrap().to_vec().unwrap(),
        vec![2.0, 4.0, 6.0, 8.0, 10.0, 12.0]
    );
    assert!(seen.is_empty());
    // Host tensors never fall back.
    let h = tensor::ones(&[2, 2]).unwrap();
    let (r, seen) = fallback::scope(true, || tensor::gather(&h, &[1]));
    assert!(r.is_ok());
    assert!(seen.is_empty());
}

#[test]
fn strict_placement_refuses_a_fallback_before_copying() {
    let (mock, _, t) = setup();
    let before = mock.uploads.load(Ordering::SeqCst);
    let want = "strict placement: gather has no kernel on mock:0";
    let (r, seen) = fallback::scope(true, || tensor::gather(&t, &[0]));
    let e = r.unwrap_err();
    assert_eq!(e.to_string(), want);
    assert_eq!(
        e,
        TensorError::NoKernel {
            op: "gather",
            device: "mock:0".into()
        }
    );
    assert!(seen.is_empty());
    assert_eq!(mock.uploads.load(Ordering::SeqCst), before);
    for (op, r) in [
        (
            "mul",
            fallback::scope(true, || tensor::mul(t.clone(), t.clone())).0,
        ),
        ("relu", fallback::scope(true, || tensor::relu(t.clone())).0),
        ("rows", fallback::scope(true, || tensor::rows(&t, 0, 1)).0),
        ("sum_rows", fallback::scope(true, || tensor::sum_rows(&t)).0),
        ("softmax", fallback::scope(true, || tensor::softmax(&t)).0),
    ] {
        let msg = r.unwrap_err().to_string();
        assert_eq!(
            msg,
            format!("strict placement: {op} has no kernel on mock:0")
        );
    }
    let tt = tensor::transpose(&t).unwrap();
    let r = fallback::scope(true, || tensor::matmul(&tt, &t)).0;
    assert!(r.is_err());
    assert!(fallback::scope(true, || tensor::argmax_rows(&t)).0.is_err());
}

#[test]
fn outside_a_scope_a_fallback_runs_unrecorded_and_scopes_nest() {
    let (_, _, t) = setup();
    assert!(tensor::gather(&t, &[1]).is_ok());
    let ((inner, inner_seen), outer_seen) = fallback::scope(false, || {
        let _ = tensor::rows(&t, 0, 1);
        fallback::scope(true, || tensor::gather(&t, &[1]))
    });
    assert!(inner.is_err());
    assert!(inner_seen.is_empty());
    assert_eq!(outer_seen.len(), 1);
    assert_eq!(outer_seen[0].op, "rows");
    // The scope is gone once it returns.
    assert!(tensor::gather(&t, &[1]).is_ok());
}

#[test]
fn call_placed_applies_the_policy_and_returns_the_fallbacks() {
    let (_, _, t) = setup();
    let run = |strict| {
        let args = vec![Arg::Tensor(t.clone()), Arg::Ints(vec![0, 1])];
        block_on(builtins::call_placed(Builtin::Gather, args, strict))
    };
    let (ret, seen) = run(false).unwrap();
    assert!(matches!(ret, Ret::Tensor(ref g) if g.device_name() == "mock:0"));
    assert_eq!(seen.len(), 1);
    assert_eq!(
        run(true).unwrap_err().to_string(),
        "strict placement: gather has no kernel on mock:0"
    );
}

#[test]
fn auto_spreads_over_the_gpus_in_turn_or_takes_the_cpu() {
    let cpu = vec!["cpu".to_string()];
    for turn in 0..5 {
        assert_eq!(tensor::auto_device(&cpu, turn), "cpu");
    }
    let two: Vec<String> = ["cpu", "cuda:0", "cuda:1"].map(String::from).to_vec();
    let picks: Vec<&str> = (0..5).map(|k| tensor::auto_device(&two, k)).collect();
    assert_eq!(picks, ["cuda:0", "cuda:1", "cuda:0", "cuda:1", "cuda:0"]);
    let one: Vec<String> = ["cpu", "cuda:0"].map(String::from).to_vec();
    assert_eq!(tensor::auto_device(&one, 7), "cuda:0");
    // What this machine has: the first pick is its first GPU, or the CPU.
    let here = tensor::devices();
    let want = here.get(1).map_or("cpu", String::as_str);
    assert_eq!(tensor::auto_device(&here, 0), want);
}

/// Polls a future to completion on this thread (the builtins' futures
/// need no runtime: a cheap call runs inline, a long one on the compute
/// pool, which wakes this thread).
fn block_on<F: std::future::Future>(f: F) -> F::Output {
    use std::task::{Context, Poll, Wake, Waker};
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut f = std::pin::pin!(f);
    loop {
        match f.as_mut().poll(&mut cx) {
            Poll::Ready(v) => return v,
            Poll::Pending => std::thread::park(),
        }
    }
}
