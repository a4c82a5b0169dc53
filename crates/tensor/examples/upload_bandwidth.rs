//! Host-to-device upload bandwidth on the first GPU (docs/gpu.md), three
//! ways, each the best of `REPS` copies of `MIB` MiB of f32:
//!
//! - `pinned`: a page-locked host buffer copied with `memcpy_htod` (what
//!   the engine's staging buffers allow; docs/tensors.md, "The CUDA
//!   backend");
//! - `pageable`: a plain `Vec<f32>` copied the same way (the driver stages
//!   it itself, synchronously);
//! - `engine`: `to(t, "cuda:0")` and the wait for its event, the path a
//!   program's upload takes (a copy into a staging buffer, a device
//!   allocation, the asynchronous copy).
//!
//! Prints `pinned X GB/s`, `pageable X GB/s` and `engine X GB/s` (GB = 1e9 bytes), for
//! `scripts/gpu-check.sh` to read. Without the `cuda` feature, or without a
//! CUDA device, prints `skipping upload_bandwidth: ...` and exits 0.
//!
//! `cargo run --release -p weft-tensor --features cuda --example upload_bandwidth -- [MIB] [REPS]`
//! (default 64 MiB, best of 20).

fn main() {
    let mut args = std::env::args().skip(1);
    let mib: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(64);
    let reps: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(20);
    let devs = weft_tensor::devices();
    let Some(dev) = devs.iter().find(|d| d.starts_with("cuda:")) else {
        println!(
            "skipping upload_bandwidth: no CUDA device present ({})",
            weft_tensor::device::backend_notes().join("; ")
        );
        return;
    };
    if let Err(e) = measure(dev, mib.max(1), reps.max(1)) {
        eprintln!("upload_bandwidth: {e}");
        std::process::exit(1);
    }
}

/// GB/s of `bytes` moved in `secs`.
#[cfg(feature = "cuda")]
fn gbps(bytes: usize, secs: f64) -> f64 {
    bytes as f64 / secs / 1e9
}

/// The shortest of `reps` runs of `f`, in seconds.
#[cfg(feature = "cuda")]
fn best<E>(reps: usize, mut f: impl FnMut() -> Result<(), E>) -> Result<f64, E> {
    let mut min = f64::INFINITY;
    for _ in 0..reps {
        let t = std::time::Instant::now();
        f()?;
        min = min.min(t.elapsed().as_secs_f64());
    }
    Ok(min)
}

#[cfg(feature = "cuda")]
fn measure(dev: &str, mib: usize, reps: usize) -> Result<(), String> {
    use cudarc::driver::CudaContext;

    let n = mib * (1 << 20) / 4;
    let bytes = n * 4;
    let host: Vec<f32> = (0..n).map(|i| (i % 1000) as f32).collect();
    let ordinal: usize = dev
        .strip_prefix("cuda:")
        .and_then(|o| o.parse().ok())
        .ok_or_else(|| format!("bad device name {dev}"))?;
    let ctx = CudaContext::new(ordinal).map_err(|e| e.to_string())?;
    let stream = ctx.new_stream().map_err(|e| e.to_string())?;
    let mut dst = stream.alloc_zeros::<f32>(n).map_err(|e| e.to_string())?;
    // SAFETY: every value is written (copy_from_slice) before a copy reads it.
    let mut pinned = unsafe { ctx.alloc_pinned::<f32>(n) }.map_err(|e| e.to_string())?;
    pinned
        .as_mut_slice()
        .map_err(|e| e.to_string())?
        .copy_from_slice(&host);

    // One untimed copy each first: the driver's first use of a buffer costs more.
    let mut copy_pinned = || -> Result<(), String> {
        stream
            .memcpy_htod(&pinned, &mut dst)
            .map_err(|e| e.to_string())?;
        stream.synchronize().map_err(|e| e.to_string())
    };
    copy_pinned()?;
    let pinned_s = best(reps, &mut copy_pinned)?;
    let mut copy_pageable = || -> Result<(), String> {
        stream
            .memcpy_htod(host.as_slice(), &mut dst)
            .map_err(|e| e.to_string())?;
        stream.synchronize().map_err(|e| e.to_string())
    };
    copy_pageable()?;
    let pageable_s = best(reps, &mut copy_pageable)?;

    let t = weft_tensor::Tensor::from_vec(&[n], host.clone()).map_err(|e| e.to_string())?;
    let mut upload = || -> Result<(), String> {
        let g = weft_tensor::to(&t, dev).map_err(|e| e.to_string())?;
        block_on(g.ready()).map_err(|e| e.to_string())
    };
    upload()?;
    let engine_s = best(reps, &mut upload)?;

    println!("upload_bandwidth: {dev}, {mib} MiB, best of {reps}");
    println!("pinned {:.2} GB/s", gbps(bytes, pinned_s));
    println!("pageable {:.2} GB/s", gbps(bytes, pageable_s));
    println!("engine {:.2} GB/s", gbps(bytes, engine_s));
    Ok(())
}

#[cfg(not(feature = "cuda"))]
fn measure(_dev: &str, _mib: usize, _reps: usize) -> Result<(), String> {
    // Unreachable in practice: without the feature no CUDA device is listed.
    println!("skipping upload_bandwidth: built without the `cuda` feature");
    Ok(())
}

/// Runs a future to completion on this thread (`Tensor::ready` waits on
/// the compute pool and wakes this thread).
#[cfg(feature = "cuda")]
fn block_on<F: std::future::Future>(f: F) -> F::Output {
    use std::sync::Arc;
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
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park();
    }
}
