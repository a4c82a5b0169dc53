//! Simulated devices, for trying placement without a GPU: with
//! `WEFT_SIM_DEVICES=N` in the environment (N from 1 to 8), `devices()`
//! lists `sim:0` ... `sim:N-1` after the real devices (docs/tensors.md,
//! "Simulated devices").
//!
//! A simulated device is not an accelerator and does not pretend to be
//! one: its memory is host memory behind the `Device` trait, its work runs
//! on the calling thread, and every buffer is ready when made. It has
//! kernels for the elementwise `+ - * /` on equal shapes and for `matmul`
//! (plain loops, so results may differ from the host's in the last bits)
//! and declines every other kernel, so programs on it run the way they run
//! on a real device: tensors carry its name, mixing devices is an error,
//! copies between it and the host are real copies, and the ops it declines
//! are host fallbacks (recorded in the trace, refused under
//! `--strict-placement`).
//!
//! For tests of who waits for a device's events: while a [`Hold`] lives,
//! the buffers simulated devices make carry an event that stays incomplete
//! until the hold is released (their values are there at once, as always;
//! only a wait for the event blocks), and the hold reports each wait that
//! begins (docs/tensors.md, "Readiness").

use std::any::Any;
use std::fmt;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use super::{BinOp, Complete, Device, DeviceError, DeviceMem, Event, Layout, MatmulDims};

/// The environment variable that asks for simulated devices.
pub const ENV: &str = "WEFT_SIM_DEVICES";

/// The most simulated devices.
const MAX: usize = 8;

/// The simulated devices the environment asks for (none when `ENV` is
/// unset, not a number, or out of `1..=8`).
pub fn from_env() -> Vec<Arc<dyn Device>> {
    (0..count(std::env::var(ENV).ok().as_deref()))
        .map(|i| {
            Arc::new(Sim {
                name: format!("sim:{i}"),
            }) as Arc<dyn Device>
        })
        .collect()
}

/// How many devices a value of `ENV` asks for.
fn count(v: Option<&str>) -> usize {
    v.and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|n| (1..=MAX).contains(n))
        .unwrap_or(0)
}

/// One simulated device.
#[derive(Debug)]
struct Sim {
    name: String,
}

fn values(m: &DeviceMem) -> &[f32] {
    m.data
        .downcast_ref::<Vec<f32>>()
        .map_or(&[], |v| v.as_slice())
}

fn mem(v: Vec<f32>) -> DeviceMem {
    let ready: Arc<dyn Event> = match &*lock(&HOLD) {
        Some(gate) => Arc::new(Held(gate.clone())),
        None => Arc::new(Complete),
    };
    DeviceMem {
        data: Arc::new(v) as Arc<dyn Any + Send + Sync>,
        ready,
    }
}

/// The gate of the live [`Hold`], if any.
static HOLD: Mutex<Option<Arc<Gate>>> = Mutex::new(None);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What a held event waits on: open once the hold is released.
struct Gate {
    open: Mutex<bool>,
    opened: Condvar,
    /// Called when a wait for a held event begins, before it blocks.
    on_wait: Box<dyn Fn() + Send + Sync>,
}

impl Gate {
    fn open(&self) {
        *lock(&self.open) = true;
        self.opened.notify_all();
    }
}

/// The event of a buffer made while a [`Hold`] lived.
struct Held(Arc<Gate>);

impl fmt::Debug for Held {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Held").field(&*lock(&self.0.open)).finish()
    }
}

impl Event for Held {
    fn is_complete(&self) -> bool {
        *lock(&self.0.open)
    }

    fn wait(&self) -> Result<(), DeviceError> {
        if !self.is_complete() {
            (self.0.on_wait)();
        }
        let mut open = lock(&self.0.open);
        while !*open {
            open = self
                .0
                .opened
                .wait(open)
                .unwrap_or_else(PoisonError::into_inner);
        }
        Ok(())
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Holds the events of the buffers that simulated devices make from now
/// until [`Hold::release`] (or the drop): `is_complete` is false and
/// `wait` blocks until then, and `on_wait` is called as each wait for a
/// held event begins. One hold at a time in a process: a test that holds
/// events runs alone in its test binary.
pub struct Hold {
    gate: Arc<Gate>,
}

/// Starts holding events (see [`Hold`]).
pub fn hold(on_wait: impl Fn() + Send + Sync + 'static) -> Hold {
    let gate = Arc::new(Gate {
        open: Mutex::new(false),
        opened: Condvar::new(),
        on_wait: Box::new(on_wait),
    });
    *lock(&HOLD) = Some(gate.clone());
    Hold { gate }
}

impl Hold {
    /// Completes every held event and stops holding new ones.
    pub fn release(self) {}
}

impl Drop for Hold {
    fn drop(&mut self) {
        let mut cur = lock(&HOLD);
        if cur.as_ref().is_some_and(|g| Arc::ptr_eq(g, &self.gate)) {
            *cur = None;
        }
        drop(cur);
        self.gate.open();
    }
}

impl Sim {
    fn short(&self, what: &str) -> DeviceError {
        DeviceError {
            device: self.name.clone(),
            msg: format!("{what} is shorter than its tensor"),
        }
    }
}

impl Device for Sim {
    fn name(&self) -> &str {
        &self.name
    }

    fn upload(&self, host: &[f32]) -> Result<DeviceMem, DeviceError> {
        Ok(mem(host.to_vec()))
    }

    fn download(&self, m: &DeviceMem, len: usize) -> Result<Vec<f32>, DeviceError> {
        values(m)
            .get(..len)
            .map(<[f32]>::to_vec)
            .ok_or_else(|| self.short("a buffer"))
    }

    fn binary(
        &self,
        op: BinOp,
        a: &DeviceMem,
        b: &DeviceMem,
        layout: Layout,
    ) -> Result<Option<DeviceMem>, DeviceError> {
        let Layout::Same { len } = layout else {
            return Ok(None);
        };
        let (Some(a), Some(b)) = (values(a).get(..len), values(b).get(..len)) else {
            return Err(self.short("an operand"));
        };
        let f = match op {
            BinOp::Add => |x: f32, y: f32| x + y,
            BinOp::Sub => |x: f32, y: f32| x - y,
            BinOp::Mul => |x: f32, y: f32| x * y,
            BinOp::Div => |x: f32, y: f32| x / y,
        };
        Ok(Some(mem(a.iter().zip(b).map(|(&x, &y)| f(x, y)).collect())))
    }

    fn matmul(
        &self,
        a: &DeviceMem,
        b: &DeviceMem,
        d: MatmulDims,
    ) -> Result<Option<DeviceMem>, DeviceError> {
        let (Some(a), Some(b)) = (values(a).get(..d.m * d.k), values(b).get(..d.k * d.n)) else {
            return Err(self.short("an operand"));
        };
        let mut out = vec![0.0f32; d.m * d.n];
        for i in 0..d.m {
            let row = &mut out[i * d.n..(i + 1) * d.n];
            for p in 0..d.k {
                let x = a[i * d.k + p];
                for (o, &y) in row.iter_mut().zip(&b[p * d.n..(p + 1) * d.n]) {
                    *o += x * y;
                }
            }
        }
        Ok(Some(mem(out)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_asks_for_one_to_eight() {
        for (v, n) in [
            (None, 0),
            (Some("2"), 2),
            (Some(" 8 "), 8),
            (Some("9"), 0),
            (Some("0"), 0),
            (Some("-1"), 0),
            (Some("two"), 0),
        ] {
            assert_eq!(count(v), n, "{v:?}");
        }
    }

    #[test]
    fn a_hold_keeps_events_pending_until_released() {
        let d = Sim {
            name: "sim:0".into(),
        };
        let (began, waits) = std::sync::mpsc::channel();
        let h = hold(move || {
            let _ = began.send(());
        });
        let a = d.upload(&[1.0, 2.0]).unwrap();
        let b = d.binary(BinOp::Add, &a, &a, Layout::Same { len: 2 });
        let b = b.unwrap().unwrap();
        assert!(!a.ready.is_complete() && !b.ready.is_complete());
        assert_eq!(d.download(&b, 2).unwrap(), [2.0, 4.0]);
        let ev = b.ready.clone();
        std::thread::scope(|s| {
            let waiter = s.spawn(move || ev.wait());
            // The waiter reports before it blocks; the hold then lets it go.
            waits.recv().unwrap();
            h.release();
            waiter.join().unwrap().unwrap();
        });
        assert!(a.ready.is_complete() && b.ready.is_complete());
        assert!(d.upload(&[1.0]).unwrap().ready.is_complete());
    }

    #[test]
    fn kernels_compute_and_the_rest_is_declined() {
        let d = Sim {
            name: "sim:0".into(),
        };
        let a = d.upload(&[1.0, 2.0, 3.0, 4.0]).unwrap();
        let b = d.upload(&[5.0, 6.0, 7.0, 8.0]).unwrap();
        let dims = MatmulDims { m: 2, k: 2, n: 2 };
        let p = d.matmul(&a, &b, dims).unwrap().unwrap();
        assert_eq!(d.download(&p, 4).unwrap(), [19.0, 22.0, 43.0, 50.0]);
        let q = d.binary(BinOp::Div, &b, &a, Layout::Same { len: 4 });
        let q = q.unwrap().unwrap();
        assert_eq!(d.download(&q, 4).unwrap(), [5.0, 3.0, 7.0 / 3.0, 2.0]);
        let row = Layout::RowRight { m: 2, n: 2 };
        assert!(d.binary(BinOp::Add, &a, &b, row).unwrap().is_none());
        assert!(d.sum(&a, 4).unwrap().is_none());
        assert!(d.download(&a, 5).is_err());
    }
}
