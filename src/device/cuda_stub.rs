//! Stand-in for the CUDA backend when the `cuda` feature is off: the same
//! `probe` entry point, reporting no devices and saying why.

use std::sync::Arc;

use super::Device;

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
