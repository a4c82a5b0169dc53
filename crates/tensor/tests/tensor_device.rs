//! The device layer without a GPU: `devices()` is `["cpu"]`, `to(t,
//! "cuda:0")` fails clearly, and a test double implementing the `Device`
//! trait exercises dispatch: kernels a backend implements run there, the
//! others fall back to the host and come back, readiness waits for the
//! producer's event, and mixing devices is an error.

use std::any::Any;
use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};
use weft_tensor::device::{BinOp, Device, DeviceError, DeviceMem, Event, Layout, MatmulDims};
use weft_tensor::{self as tensor, Tensor};

/// An event completed by hand.
#[derive(Debug, Default)]
struct Manual {
    done: Mutex<bool>,
    cv: Condvar,
}

impl Manual {
    fn complete(&self) {
        *self.done.lock() = true;
        self.cv.notify_all();
    }
}

impl Event for Manual {
    fn is_complete(&self) -> bool {
        *self.done.lock()
    }
    fn wait(&self) -> Result<(), DeviceError> {
        let mut d = self.done.lock();
        while !*d {
            self.cv.wait(&mut d);
        }
        Ok(())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A "device" whose memory is a host `Vec`; implements matmul and binary
/// ops, declines the rest. Uploads produce events completed by hand.
#[derive(Debug, Default)]
struct Mock {
    uploads: AtomicUsize,
    kernels: AtomicUsize,
    last_event: Mutex<Option<Arc<Manual>>>,
    hold_uploads: bool,
}

fn data(m: &DeviceMem) -> &Vec<f32> {
    m.data.downcast_ref::<Vec<f32>>().unwrap()
}

impl Mock {
    fn mem(&self, v: Vec<f32>) -> DeviceMem {
        let ev = Arc::new(Manual::default());
        if !self.hold_uploads {
            ev.complete();
        }
        *self.last_event.lock() = Some(ev.clone());
        DeviceMem {
            data: Arc::new(v) as Arc<dyn Any + Send + Sync>,
            ready: ev,
        }
    }
}

impl Device for Mock {
    fn name(&self) -> &str {
        "mock:0"
    }
    fn upload(&self, host: &[f32]) -> Result<DeviceMem, DeviceError> {
        self.uploads.fetch_add(1, Ordering::SeqCst);
        Ok(self.mem(host.to_vec()))
    }
    fn download(&self, mem: &DeviceMem, len: usize) -> Result<Vec<f32>, DeviceError> {
        mem.ready.wait()?;
        assert_eq!(data(mem).len(), len);
        Ok(data(mem).clone())
    }
    fn matmul(
        &self,
        a: &DeviceMem,
        b: &DeviceMem,
        d: MatmulDims,
    ) -> Result<Option<DeviceMem>, DeviceError> {
        self.kernels.fetch_add(1, Ordering::SeqCst);
        let (a, b) = (data(a), data(b));
        let mut out = vec![0f32; d.m * d.n];
        for i in 0..d.m {
            for j in 0..d.n {
                out[i * d.n + j] = (0..d.k).map(|p| a[i * d.k + p] * b[p * d.n + j]).sum();
            }
        }
        Ok(Some(self.mem(out)))
    }
    fn binary(
        &self,
        op: BinOp,
        a: &DeviceMem,
        b: &DeviceMem,
        layout: Layout,
    ) -> Result<Option<DeviceMem>, DeviceError> {
        if op != BinOp::Add {
            return Ok(None);
        }
        self.kernels.fetch_add(1, Ordering::SeqCst);
        let (a, b) = (data(a), data(b));
        let out = match layout {
            Layout::Same { .. } => a.iter().zip(b).map(|(x, y)| x + y).collect(),
            Layout::RowRight { n, .. } => a.iter().enumerate().map(|(i, x)| x + b[i % n]).collect(),
            Layout::RowLeft { n, .. } => b.iter().enumerate().map(|(i, y)| a[i % n] + y).collect(),
        };
        Ok(Some(self.mem(out)))
    }
}

struct Unpark(thread::Thread);
impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

fn block_on<F: Future>(f: F) -> F::Output {
    let waker = Waker::from(Arc::new(Unpark(thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut f = pin!(f);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        thread::park_timeout(Duration::from_millis(50));
    }
}

#[test]
fn without_a_gpu_only_cpu_is_present() {
    let devs = tensor::devices();
    assert_eq!(devs[0], "cpu");
    if devs.len() == 1 {
        let t = tensor::ones(&[2]).unwrap();
        assert_eq!(
            tensor::to(&t, "cuda:0").unwrap_err().to_string(),
            "device \"cuda:0\" is not present"
        );
        assert!(!weft_tensor::device::backend_notes().is_empty());
    }
    let t = tensor::ones(&[2]).unwrap();
    let same = tensor::to(&t, "cpu").unwrap();
    assert!(same.shares_storage(&t));
    assert!(block_on(t.ready()).is_ok());
}

#[test]
fn kernels_run_on_the_device_or_fall_back() {
    let mock = Arc::new(Mock::default());
    let dev: Arc<dyn Device> = mock.clone();
    let a = tensor::randn(&[3, 4], 1).unwrap();
    let b = tensor::randn(&[4, 5], 2).unwrap();
    let da = tensor::to_device(&a, &dev).unwrap();
    let db = tensor::to_device(&b, &dev).unwrap();
    assert_eq!(da.to_string(), "tensor[3,4]@mock:0");
    assert_eq!(tensor::device(&da), "mock:0");
    assert_eq!(mock.uploads.load(Ordering::SeqCst), 2);

    // implemented by the backend: runs there
    let p = tensor::matmul(&da, &db).unwrap();
    assert_eq!(tensor::device(&p), "mock:0");
    let want = tensor::matmul(&a, &b).unwrap().to_vec().unwrap();
    let got = p.to_vec().unwrap();
    assert!(got.iter().zip(&want).all(|(x, y)| (x - y).abs() < 1e-4));
    let row = tensor::to_device(&tensor::ones(&[5]).unwrap(), &dev).unwrap();
    let s = tensor::add(p.clone(), row.clone()).unwrap();
    assert_eq!(mock.kernels.load(Ordering::SeqCst), 2);
    assert_eq!(tensor::device(&s), "mock:0");

    // declined by the backend: host fallback, result back on the device
    let uploads = mock.uploads.load(Ordering::SeqCst);
    let r = tensor::relu(tensor::sub(s.clone(), row).unwrap()).unwrap();
    assert_eq!(tensor::device(&r), "mock:0");
    assert_eq!(mock.uploads.load(Ordering::SeqCst), uploads + 2);
    let want_r: Vec<f32> = want.iter().map(|&x| x.max(0.0)).collect();
    assert!(r
        .to_vec()
        .unwrap()
        .iter()
        .zip(&want_r)
        .all(|(x, y)| (x - y).abs() < 1e-4));
    let sm = tensor::softmax(&r).unwrap();
    assert_eq!(tensor::device(&sm), "mock:0");
    assert_eq!(
        tensor::argmax_rows(&sm).unwrap(),
        tensor::argmax_rows(
            &r.to_vec()
                .map(|v| Tensor::from_vec(&[3, 5], v).unwrap())
                .unwrap()
        )
        .unwrap()
    );
    assert!((tensor::sum(&sm).unwrap() - 3.0).abs() < 1e-5);

    // back to the host
    let h = tensor::to(&s, "cpu").unwrap();
    assert_eq!(tensor::device(&h), "cpu");
    assert_eq!(h.to_vec().unwrap(), s.to_vec().unwrap());
}

#[test]
fn tensors_cross_threads_and_device_work_goes_to_the_pool() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Tensor>();
    send_sync::<tensor::TensorError>();
    let dev: Arc<dyn Device> = Arc::new(Mock::default());
    let h = tensor::ones(&[2, 2]).unwrap();
    let d = tensor::to_device(&h, &dev).unwrap();
    assert_eq!(tensor::kernel_cost(4, &[&h, &h]), 4);
    assert_eq!(tensor::kernel_cost(4, &[&h, &d]), tensor::INLINE_COST);
}

#[test]
fn mixing_devices_is_an_error() {
    let dev: Arc<dyn Device> = Arc::new(Mock::default());
    let a = tensor::ones(&[2, 2]).unwrap();
    let da = tensor::to_device(&a, &dev).unwrap();
    assert_eq!(
        tensor::add(a.clone(), da.clone()).unwrap_err().to_string(),
        "add: tensors on different devices \"cpu\" and \"mock:0\""
    );
    assert_eq!(
        tensor::matmul(&da, &a).unwrap_err().to_string(),
        "matmul: tensors on different devices \"mock:0\" and \"cpu\""
    );
}

#[test]
fn ready_waits_for_the_producers_event() {
    let mock = Arc::new(Mock {
        hold_uploads: true,
        ..Mock::default()
    });
    let dev: Arc<dyn Device> = mock.clone();
    let t = tensor::to_device(&tensor::ones(&[4]).unwrap(), &dev).unwrap();
    let ev = mock.last_event.lock().clone().unwrap();
    let w = Arc::new(Unpark(thread::current()));
    let waker = Waker::from(w);
    let mut cx = Context::from_waker(&waker);
    let mut fut = pin!(t.ready());
    assert!(fut.as_mut().poll(&mut cx).is_pending());
    assert!(fut.as_mut().poll(&mut cx).is_pending());
    ev.complete();
    let r = loop {
        if let Poll::Ready(r) = fut.as_mut().poll(&mut cx) {
            break r;
        }
        thread::park_timeout(Duration::from_millis(50));
    };
    assert!(r.is_ok());
    // once complete, ready() returns at once
    assert!(block_on(t.ready()).is_ok());
}
