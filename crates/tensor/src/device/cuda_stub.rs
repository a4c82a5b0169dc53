//! Stand-in for the CUDA backend when the `cuda` feature is off: the same
//! `probe` and `check_kernels` entry points, reporting no devices and no
//! kernels, and saying why.

use std::sync::Arc;

use super::{Device, KernelCheck};

/// Whether the real backend is compiled in (no: this is the stand-in).
pub const BUILT: bool = false;

/// What probing the backend found.
pub struct Probe {
    /// The devices found (none here).
    pub devices: Vec<Arc<dyn Device>>,
    /// Why none were found.
    pub note: Option<String>,
}

/// Reports no CUDA devices: this build has no CUDA backend.
pub fn probe() -> Probe {
    Probe {
        devices: Vec::new(),
        note: Some("cuda: built without the `cuda` feature".to_string()),
    }
}

/// Nothing to compile: this build has no CUDA backend.
pub fn check_kernels(_arch: &str) -> KernelCheck {
    KernelCheck::Skipped("built without the `cuda` feature".to_string())
}
