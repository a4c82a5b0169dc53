//! Soft placement (docs/tensors.md, "Soft placement"): a kernel whose
//! device has no implementation of it (the backend's hook declined, or the
//! `Device` trait has no hook for it, as for `rows` and `gather`) runs on
//! the host: its operands are downloaded, the CPU kernel runs, and the
//! result is uploaded back to the device. Such a fallback is never silent:
//!
//! - inside a [`scope`] every fallback is recorded as a [`HostFallback`]
//!   (the op, the device, and when each step ran), which the interpreter
//!   draws in the trace as the two copies and the host kernel;
//! - a strict scope (`weft run --strict-placement`) refuses it instead:
//!   the kernel fails with [`TensorError::NoKernel`], naming the op and
//!   the device, before anything is copied.
//!
//! The scope is a thread-local set around one builtin call (`builtins::
//! call_placed`, on whichever thread runs the kernel, the compute pool
//! included), so the kernels need no extra parameter. Outside a scope a
//! fallback is allowed and not recorded. Reading values that are meant to
//! reach the host (`get`, `to(t, "cpu")`, the float of `sum` from a device
//! hook) is a copy, not a fallback.

use std::cell::RefCell;
use std::sync::Arc;
use std::time::Instant;

use super::{Tensor, TensorError};
use crate::device::{Device, DeviceBuffer};

/// One op that ran on the host because its device had no kernel for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostFallback {
    /// The builtin's name (`gather`, `matmul`, ...).
    pub op: &'static str,
    /// The device that had no kernel (`cuda:0`).
    pub device: String,
    /// When the download of the operands began.
    pub start: Instant,
    /// When the operands were on the host and the host kernel began.
    pub downloaded: Instant,
    /// When the host kernel ended.
    pub computed: Instant,
    /// When the result was back on the device; `None` when the result is
    /// a host value (the float of `sum`, the indices of `argmax_rows`).
    pub uploaded: Option<Instant>,
}

struct Scope {
    strict: bool,
    seen: Vec<HostFallback>,
}

thread_local! {
    static SCOPE: RefCell<Option<Scope>> = const { RefCell::new(None) };
}

/// Runs `f` with fallbacks refused (`strict`) or recorded, and returns its
/// result with the fallbacks it made, in order. Scopes nest: the inner
/// one's fallbacks are its own.
pub fn scope<R>(strict: bool, f: impl FnOnce() -> R) -> (R, Vec<HostFallback>) {
    let outer = SCOPE.with(|s| {
        s.borrow_mut().replace(Scope {
            strict,
            seen: Vec::new(),
        })
    });
    // Puts the outer scope back when this returns or `f` unwinds (the
    // compute pool catches a kernel's panic and re-raises it in the task).
    struct Restore(Option<Scope>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let outer = self.0.take();
            SCOPE.with(|s| *s.borrow_mut() = outer);
        }
    }
    let _restore = Restore(outer);
    let r = f();
    let seen = SCOPE.with(|s| {
        s.borrow_mut()
            .as_mut()
            .map(|sc| std::mem::take(&mut sc.seen))
    });
    (r, seen.unwrap_or_default())
}

/// A fallback under way: made by [`begin`] before the operands are
/// downloaded, completed by [`Fallback::upload`] or [`Fallback::host`].
#[must_use]
pub(crate) struct Fallback {
    op: &'static str,
    device: Arc<dyn Device>,
    start: Instant,
    downloaded: Option<Instant>,
}

/// Starts running `op` on the host for `device`, which has no kernel for
/// it: refused in a strict scope, else timed from now.
pub(crate) fn begin(op: &'static str, device: &Arc<dyn Device>) -> Result<Fallback, TensorError> {
    let strict = SCOPE.with(|s| s.borrow().as_ref().is_some_and(|sc| sc.strict));
    if strict {
        return Err(TensorError::NoKernel {
            op,
            device: device.name().to_string(),
        });
    }
    Ok(Fallback {
        op,
        device: device.clone(),
        start: Instant::now(),
        downloaded: None,
    })
}

impl Fallback {
    /// Marks that the operands are on the host: the host kernel starts.
    pub(crate) fn downloaded(mut self) -> Fallback {
        self.downloaded = Some(Instant::now());
        self
    }

    /// Uploads the host kernel's result to the device and records the
    /// fallback.
    pub(crate) fn upload(self, out: Tensor) -> Result<Tensor, TensorError> {
        let computed = Instant::now();
        let host = out.to_vec()?;
        let mem = self.device.upload(&host)?;
        let buf = DeviceBuffer {
            device: self.device.clone(),
            mem,
            len: host.len(),
        };
        let t = Tensor::on_device(out.shape().clone(), buf);
        self.record(computed, Some(Instant::now()));
        Ok(t)
    }

    /// Records a fallback whose result is already back on the device.
    pub(crate) fn uploaded(self) {
        self.record(Instant::now(), Some(Instant::now()));
    }

    /// Records a fallback whose result stays on the host.
    pub(crate) fn host<R>(self, out: R) -> R {
        self.record(Instant::now(), None);
        out
    }

    fn record(self, computed: Instant, uploaded: Option<Instant>) {
        let rec = HostFallback {
            op: self.op,
            device: self.device.name().to_string(),
            start: self.start,
            downloaded: self.downloaded.unwrap_or(self.start),
            computed,
            uploaded,
        };
        SCOPE.with(|s| {
            if let Some(sc) = s.borrow_mut().as_mut() {
                sc.seen.push(rec);
            }
        });
    }
}
