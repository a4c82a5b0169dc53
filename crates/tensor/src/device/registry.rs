//! The process-wide device list, probed once on first use.
//!
//! `"cpu"` is always first; then every device each compiled-in backend
//! found; then the simulated devices `WEFT_SIM_DEVICES` asks for
//! (`sim.rs`). A backend that cannot start (no driver) contributes a note
//! instead of devices, so a machine without a GPU runs CPU-only. When the
//! CUDA backend is compiled in, its note also goes to the note sink (the
//! command line prints it on stderr); the stand-in's note ("built without
//! the `cuda` feature") is only kept for `backend_notes`.

use std::sync::{Arc, OnceLock};

use super::{cuda, sim, Device, NoSuchDevice};

struct Registry {
    devices: Vec<Arc<dyn Device>>,
    notes: Vec<String>,
}

static NOTE_SINK: OnceLock<fn(&str)> = OnceLock::new();

/// Sets where the notes of a compiled-in backend that found no devices go
/// (once per process; later calls are ignored). Set it before the first
/// use of devices: probing happens once.
pub fn set_note_sink(sink: fn(&str)) {
    let _ = NOTE_SINK.set(sink);
}

fn registry() -> &'static Registry {
    static REG: OnceLock<Registry> = OnceLock::new();
    REG.get_or_init(|| {
        let probe = cuda::probe();
        if let (true, Some(note), Some(sink)) = (cuda::BUILT, &probe.note, NOTE_SINK.get()) {
            sink(note);
        }
        let mut devices = probe.devices;
        devices.extend(sim::from_env());
        Registry {
            devices,
            notes: probe.note.into_iter().collect(),
        }
    })
}

/// The names of the present devices, starting with `"cpu"`.
pub fn devices() -> Vec<String> {
    let mut names = vec!["cpu".to_string()];
    names.extend(registry().devices.iter().map(|d| d.name().to_string()));
    names
}

/// Why a backend found no devices (e.g. `cuda: libcuda.so.1 cannot be
/// loaded`), for the command line to show on request.
pub fn backend_notes() -> &'static [String] {
    &registry().notes
}

/// The device of this name: `Ok(None)` for `"cpu"`, an error naming the
/// device when it is not present.
pub fn lookup(name: &str) -> Result<Option<Arc<dyn Device>>, NoSuchDevice> {
    if name == "cpu" {
        return Ok(None);
    }
    registry()
        .devices
        .iter()
        .find(|d| d.name() == name)
        .cloned()
        .map(Some)
        .ok_or_else(|| NoSuchDevice(name.to_string()))
}
