//! Routing of the row-wise device hooks without a GPU: a test double whose
//! memory is a host `Vec` implements every `Device` hook with plain loops
//! and counts the calls. Checks that the tensor layer sends each builtin of
//! the training step to its hook (so a step needs no download: the loss's
//! `sum` brings back one float), that `matmul(transpose(x), y)` reaches
//! `matmul_t` with the right flag and without a transposed copy, that the
//! results equal the CPU kernels', and that a backend declining the new
//! hooks still gets correct results through the host fallback.

use std::any::Any;
use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::Mutex;
use weft_tensor::device::{
    BinOp, Complete, Device, DeviceError, DeviceMem, Layout, MatmulDims, Rows, Trans, UnaryOp,
};
use weft_tensor::{self as tensor, Tensor};

#[path = "tensor_support/step.rs"]
mod step;
use step::step;

/// A device over host vectors. `full` implements every hook; otherwise only
/// upload, download and the elementwise hooks (the rest decline).
#[derive(Debug)]
struct Twin {
    full: bool,
    /// What `launches_async` says (whether the tensor layer may launch
    /// its kernels inline).
    asynchronous: bool,
    calls: Mutex<BTreeMap<&'static str, usize>>,
}

impl Twin {
    fn new(full: bool) -> Arc<Twin> {
        Arc::new(Twin {
            full,
            asynchronous: false,
            calls: Mutex::new(BTreeMap::new()),
        })
    }

    fn count(&self, hook: &'static str) {
        *self.calls.lock().entry(hook).or_default() += 1;
    }

    fn calls(&self, hook: &str) -> usize {
        self.calls.lock().get(hook).copied().unwrap_or(0)
    }

    fn reset(&self) {
        self.calls.lock().clear();
    }
}

fn mem(v: Vec<f32>) -> DeviceMem {
    DeviceMem {
        data: Arc::new(v) as Arc<dyn Any + Send + Sync>,
        ready: Arc::new(Complete),
    }
}

fn data(m: &DeviceMem) -> &[f32] {
    m.data.downcast_ref::<Vec<f32>>().unwrap()
}

type Hook<T> = Result<Option<T>, DeviceError>;

impl Device for Twin {
    fn launches_async(&self) -> bool {
        self.asynchronous
    }

    fn name(&self) -> &str {
        "twin:0"
    }
    fn upload(&self, host: &[f32]) -> Result<DeviceMem, DeviceError> {
        self.count("upload");
        Ok(mem(host.to_vec()))
    }
    fn download(&self, m: &DeviceMem, len: usize) -> Result<Vec<f32>, DeviceError> {
        self.count("download");
        assert_eq!(data(m).len(), len);
        Ok(data(m).to_vec())
    }
    fn unary(&self, op: UnaryOp, a: &DeviceMem, _len: usize) -> Hook<DeviceMem> {
        self.count("unary");
        let f = |x: f32| match op {
            UnaryOp::Neg => -x,
            UnaryOp::Relu => x.max(0.0),
            UnaryOp::ReluMask => f32::from(x > 0.0),
            UnaryOp::Exp => x.exp(),
            UnaryOp::Log => x.ln(),
        };
        Ok(Some(mem(data(a).iter().map(|&x| f(x)).collect())))
    }
    fn binary(&self, op: BinOp, a: &DeviceMem, b: &DeviceMem, l: Layout) -> Hook<DeviceMem> {
        self.count("binary");
        let f = |x: f32, y: f32| match op {
            BinOp::Add => x + y,
            BinOp::Sub => x - y,
            BinOp::Mul => x * y,
            BinOp::Div => x / y,
        };
        let (a, b) = (data(a), data(b));
        let out = match l {
            Layout::Same { .. } => a.iter().zip(b).map(|(&x, &y)| f(x, y)).collect(),
            Layout::RowRight { n, .. } => (0..a.len()).map(|i| f(a[i], b[i % n])).collect(),
            Layout::RowLeft { n, .. } => (0..b.len()).map(|i| f(a[i % n], b[i])).collect(),
        };
        Ok(Some(mem(out)))
    }
    fn scalar(&self, op: BinOp, a: &DeviceMem, s: f32, left: bool, _: usize) -> Hook<DeviceMem> {
        self.count("scalar");
        let f = |x: f32, y: f32| match op {
            BinOp::Add => x + y,
            BinOp::Sub => x - y,
            BinOp::Mul => x * y,
            BinOp::Div => x / y,
        };
        let out = data(a)
            .iter()
            .map(|&x| if left { f(s, x) } else { f(x, s) })
            .collect();
        Ok(Some(mem(out)))
    }
    fn matmul(&self, a: &DeviceMem, b: &DeviceMem, d: MatmulDims) -> Hook<DeviceMem> {
        if !self.full {
            return Ok(None);
        }
        self.count("matmul");
        Ok(Some(mem(product(data(a), data(b), d, Trans::default()))))
    }
    fn matmul_t(&self, a: &DeviceMem, b: &DeviceMem, d: MatmulDims, t: Trans) -> Hook<DeviceMem> {
        if !self.full {
            return Ok(None);
        }
        self.count("matmul_t");
        Ok(Some(mem(product(data(a), data(b), d, t))))
    }
    fn transpose(&self, a: &DeviceMem, r: Rows) -> Hook<DeviceMem> {
        if !self.full {
            return Ok(None);
        }
        self.count("transpose");
        let a = data(a);
        let mut out = vec![0.0; a.len()];
        for i in 0..r.rows {
            for j in 0..r.cols {
                out[j * r.rows + i] = a[i * r.cols + j];
            }
        }
        Ok(Some(mem(out)))
    }
    fn softmax(&self, a: &DeviceMem, r: Rows) -> Hook<DeviceMem> {
        if !self.full {
            return Ok(None);
        }
        self.count("softmax");
        let mut out = data(a).to_vec();
        for row in out.chunks_exact_mut(r.cols.max(1)) {
            let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let total: f32 = row.iter().map(|x| (x - max).exp()).sum();
            for x in row.iter_mut() {
                *x = (*x - max).exp() / total;
            }
        }
        Ok(Some(mem(out)))
    }
    fn sum(&self, a: &DeviceMem, _len: usize) -> Hook<f64> {
        if !self.full {
            return Ok(None);
        }
        self.count("sum");
        Ok(Some(data(a).iter().map(|&x| f64::from(x)).sum()))
    }
    fn sum_rows(&self, a: &DeviceMem, r: Rows) -> Hook<DeviceMem> {
        if !self.full {
            return Ok(None);
        }
        self.count("sum_rows");
        let a = data(a);
        let out = (0..r.cols)
            .map(|j| (0..r.rows).map(|i| a[i * r.cols + j]).sum())
            .collect();
        Ok(Some(mem(out)))
    }
    fn argmax_rows(&self, a: &DeviceMem, r: Rows) -> Hook<Vec<i64>> {
        if !self.full {
            return Ok(None);
        }
        self.count("argmax_rows");
        let out = data(a)
            .chunks_exact(r.cols)
            .map(|row| {
                let mut best = 0;
                for (j, &x) in row.iter().enumerate() {
                    if x > row[best] {
                        best = j;
                    }
                }
                best as i64
            })
            .collect();
        Ok(Some(out))
    }
    fn onehot(&self, labels: &[i64], n: usize) -> Hook<DeviceMem> {
        if !self.full {
            return Ok(None);
        }
        self.count("onehot");
        let mut out = vec![0.0; labels.len() * n];
        for (i, &l) in labels.iter().enumerate() {
            out[i * n + l as usize] = 1.0;
        }
        Ok(Some(mem(out)))
    }
}

/// Row-major `op(a) x op(b)`; an operand with its flag set is stored
/// transposed (`a` as `[k, m]`, `b` as `[n, k]`).
fn product(a: &[f32], b: &[f32], d: MatmulDims, t: Trans) -> Vec<f32> {
    let MatmulDims { m, k, n } = d;
    let at = |i: usize, p: usize| if t.a { a[p * m + i] } else { a[i * k + p] };
    let bt = |p: usize, j: usize| if t.b { b[j * k + p] } else { b[p * n + j] };
    let mut out = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            out[i * n + j] = (0..k).map(|p| at(i, p) * bt(p, j)).sum();
        }
    }
    out
}

fn assert_close(got: &Tensor, want: &Tensor, what: &str) {
    assert_eq!(got.dims(), want.dims(), "{what}: shape");
    let (g, w) = (got.to_vec().unwrap(), want.to_vec().unwrap());
    for (i, (x, y)) in g.iter().zip(&w).enumerate() {
        assert!(
            (x - y).abs() <= 1e-4 * (1.0 + y.abs()),
            "{what}: [{i}] {x} vs {y}"
        );
    }
}

struct Inputs {
    x: Tensor,
    y: Tensor,
    w1: Tensor,
    b1: Tensor,
    w2: Tensor,
}

fn inputs() -> Inputs {
    let labels: Vec<i64> = (0..16).map(|i| (i * 7) % 10).collect();
    Inputs {
        x: tensor::randn(&[16, 64], 1).unwrap(),
        y: tensor::onehot(&labels, 10).unwrap(),
        w1: tensor::tensor_scalar(BinOp::Mul, tensor::randn(&[64, 32], 2).unwrap(), 0.2).unwrap(),
        b1: tensor::randn(&[32], 3).unwrap(),
        w2: tensor::tensor_scalar(BinOp::Mul, tensor::randn(&[32, 10], 4).unwrap(), 0.2).unwrap(),
    }
}

fn run_step_on(dev: &Arc<dyn Device>) -> (Vec<Tensor>, f64) {
    let i = inputs();
    let up = |t: &Tensor| tensor::to_device(t, dev).unwrap();
    step(&up(&i.x), &up(&i.y), &up(&i.w1), &up(&i.b1), &up(&i.w2))
}

/// The step run on the twin matches the host's: the same loss, and every
/// gradient equal and left on the twin.
fn assert_step_matches(got: &[Tensor], loss: f64, want: &[Tensor], want_loss: f64) {
    assert!((loss - want_loss).abs() < 1e-5, "{loss} vs {want_loss}");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(tensor::device(g), "twin:0");
        assert_close(g, w, &format!("gradient {k}"));
    }
}

#[test]
fn a_training_step_stays_on_the_device() {
    let twin = Twin::new(true);
    let dev: Arc<dyn Device> = twin.clone();
    let i = inputs();
    let (want, want_loss) = step(&i.x, &i.y, &i.w1, &i.b1, &i.w2);
    let (got, loss) = run_step_on(&dev);
    assert_eq!(twin.calls("upload"), 5, "only the inputs are uploaded");
    assert_eq!(twin.calls("download"), 0, "no download during a step");
    assert_eq!(twin.calls("transpose"), 0, "no transposed copy");
    assert_eq!(twin.calls("matmul"), 2);
    assert_eq!(twin.calls("matmul_t"), 3);
    assert_eq!(twin.calls("softmax"), 1);
    assert_eq!(twin.calls("sum"), 1);
    assert_eq!(twin.calls("sum_rows"), 2);
    assert_step_matches(&got, loss, &want, want_loss);
}

#[test]
fn declined_hooks_fall_back_to_the_host_with_equal_results() {
    let twin = Twin::new(false);
    let dev: Arc<dyn Device> = twin.clone();
    let i = inputs();
    let (want, want_loss) = step(&i.x, &i.y, &i.w1, &i.b1, &i.w2);
    let (got, loss) = run_step_on(&dev);
    assert!(twin.calls("download") > 0);
    assert_step_matches(&got, loss, &want, want_loss);
}

#[test]
fn a_device_transpose_is_lazy_and_made_dense_once_where_needed() {
    for full in [true, false] {
        let twin = Twin::new(full);
        let dev: Arc<dyn Device> = twin.clone();
        let a = tensor::randn(&[5, 3], 7).unwrap();
        let da = tensor::to_device(&a, &dev).unwrap();
        let t = tensor::transpose(&da).unwrap();
        assert_eq!(t.to_string(), "tensor[3,5]@twin:0");
        assert!(t.shares_storage(&da));
        // transposing back gives the original buffer
        let back = tensor::transpose(&t).unwrap();
        assert!(back.shares_storage(&da));
        assert_close(&back, &a, "transpose of transpose");
        // values, host copies and elementwise kernels see the transpose
        let want = tensor::transpose(&a).unwrap();
        assert_close(&t, &want, "to_vec");
        assert_close(&tensor::to(&t, "cpu").unwrap(), &want, "to cpu");
        twin.reset();
        let r1 = tensor::relu(t.clone()).unwrap();
        let r2 = tensor::neg(t.clone()).unwrap();
        assert_close(&r1, &tensor::relu(want.clone()).unwrap(), "relu");
        assert_close(&r2, &tensor::neg(want.clone()).unwrap(), "neg");
        // made dense once, on the device when the backend can
        let (copies, uploads) = (twin.calls("transpose"), twin.calls("upload"));
        assert_eq!(copies + uploads, 1, "full {full}: {:?}", twin.calls.lock());
        assert_eq!(copies, usize::from(full));
        // either operand transposed, or both
        let b = tensor::randn(&[5, 4], 8).unwrap();
        let db = tensor::to_device(&b, &dev).unwrap();
        let p = tensor::matmul(&t, &db).unwrap();
        assert_close(&p, &tensor::matmul(&want, &b).unwrap(), "t(a) x b");
        let c = tensor::randn(&[4, 5], 9).unwrap();
        let dc = tensor::to_device(&c, &dev).unwrap();
        let q = tensor::matmul(&t, &tensor::transpose(&dc).unwrap()).unwrap();
        let want_q = tensor::matmul(&want, &tensor::transpose(&c).unwrap()).unwrap();
        assert_close(&q, &want_q, "t(a) x t(c)");
    }
}

#[test]
fn reductions_and_onehot_run_on_the_device() {
    let twin = Twin::new(true);
    let dev: Arc<dyn Device> = twin.clone();
    let a = tensor::randn(&[7, 10], 5).unwrap();
    let da = tensor::to_device(&a, &dev).unwrap();
    twin.reset();
    assert_eq!(
        tensor::argmax_rows(&da).unwrap(),
        tensor::argmax_rows(&a).unwrap()
    );
    assert!((tensor::mean(&da).unwrap() - tensor::mean(&a).unwrap()).abs() < 1e-6);
    let row = tensor::to_device(&tensor::randn(&[10], 6).unwrap(), &dev).unwrap();
    let s1 = tensor::softmax(&row).unwrap();
    assert_eq!(s1.dims(), &[10]);
    assert!((tensor::sum(&s1).unwrap() - 1.0).abs() < 1e-5);
    assert_eq!(twin.calls("argmax_rows"), 1);
    assert_eq!(twin.calls("sum"), 2);
    assert_eq!(twin.calls("softmax"), 1);
    assert_eq!(twin.calls("download"), 0);

    let labels = [3, 0, 9, 3];
    let oh = tensor::onehot_on(&labels, 10, &dev).unwrap();
    assert_eq!(twin.calls("onehot"), 1);
    assert_eq!(tensor::device(&oh), "twin:0");
    assert_eq!(
        oh.to_vec().unwrap(),
        tensor::onehot(&labels, 10).unwrap().to_vec().unwrap()
    );
    // labels are checked before the device sees them
    assert_eq!(
        tensor::onehot_on(&[10], 10, &dev).unwrap_err().to_string(),
        tensor::onehot(&[10], 10).unwrap_err().to_string()
    );
    assert_eq!(twin.calls("onehot"), 1);
    // a declining backend gets host one-hot rows, uploaded
    let plain = Twin::new(false);
    let pdev: Arc<dyn Device> = plain.clone();
    let oh = tensor::onehot_on(&labels, 10, &pdev).unwrap();
    assert_eq!(plain.calls("upload"), 1);
    assert_eq!(tensor::device(&oh), "twin:0");
    assert_eq!(
        oh.to_vec().unwrap(),
        tensor::onehot(&labels, 10).unwrap().to_vec().unwrap()
    );
}

/// The compute-pool cost of a builtin: on a device whose kernels only queue
/// work, the launches cost `LAUNCH_COST` (inline, whatever the size), while
/// the builtins that bring values back, and every builtin on a device that
/// computes on the caller's thread, cost at least `INLINE_COST`.
#[test]
fn launches_on_an_asynchronous_device_run_inline() {
    use tensor::builtins::{cost, Arg, Builtin, LAUNCHES, LAUNCH_COST};
    let queueing: Arc<dyn Device> = Arc::new(Twin {
        full: true,
        asynchronous: true,
        calls: Mutex::new(BTreeMap::new()),
    });
    let computing: Arc<dyn Device> = Twin::new(true);
    // Big enough that its host cost alone would go to the pool.
    let big = tensor::zeros(&[1024, 2048]).unwrap();
    assert!(big.numel() >= tensor::INLINE_COST);
    let on = |d: &Arc<dyn Device>| Arg::Tensor(tensor::to_device(&big, d).unwrap());
    let args = |b: Builtin, t: Arg| match b {
        Builtin::Add | Builtin::Sub | Builtin::Mul | Builtin::Div => vec![t.clone(), t],
        Builtin::Matmul => {
            let Arg::Tensor(x) = &t else { unreachable!() };
            vec![t.clone(), Arg::Tensor(tensor::transpose(x).unwrap())]
        }
        _ => vec![t],
    };
    for &b in LAUNCHES {
        assert_eq!(
            cost(b, &args(b, on(&queueing))),
            LAUNCH_COST,
            "{}",
            b.name()
        );
        assert!(
            cost(b, &args(b, on(&computing))) >= tensor::INLINE_COST,
            "{}",
            b.name()
        );
    }
    const { assert!(LAUNCH_COST < tensor::INLINE_COST) };
    // Values back to the host: the pool, on any device.
    for b in [
        Builtin::Sum,
        Builtin::Mean,
        Builtin::ArgmaxRows,
        Builtin::Values,
    ] {
        assert!(
            cost(b, &[on(&queueing)]) >= tensor::INLINE_COST,
            "{}",
            b.name()
        );
    }
    // A host operand among device ones: the pool (it may be copied).
    let mixed = vec![on(&queueing), Arg::Tensor(big.clone())];
    assert!(cost(Builtin::Add, &mixed) >= tensor::INLINE_COST);
}
