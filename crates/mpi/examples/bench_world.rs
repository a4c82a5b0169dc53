//! The Weft side of scripts/bench-mpi.sh (docs/distributed.md, "Speed"):
//! the measurements of `benches/baseline.c`, through `weft_mpi::World`
//! (the messaging thread, the protocol, the served channels), from plain
//! threads. Run under `mpirun`:
//!
//!   bench_world allreduce BYTES ITERS   all-reduce (sum) of BYTES/4 floats
//!   bench_world pingpong BYTES ITERS    round trips over unbuffered remote channels
//!   bench_world stream BYTES COUNT      rank 1 streams COUNT values to rank 0's
//!                                       buffered channel (capacity 4): a tensor's
//!                                       floats, attached as the interpreter
//!                                       attaches a large tensor's memory
//!   bench_world streambytes BYTES COUNT the same with the bytes copied into each
//!                                       payload (a value serialized)
//!   bench_world idle SECONDS            nothing to do: CPU used per process
//!
//! Each prints one line like the baseline's.

use std::sync::Arc;
use std::time::{Duration, Instant};

use weft_chan::Chan;
use weft_coll::{Data, Op, Outcome, Reduce};
use weft_mpi::{chan_endpoint, ChanRef, End, Host, Payload, World};

struct Quiet;

impl Host for Quiet {
    fn blocked(&self) -> Vec<String> {
        Vec::new()
    }
    fn end(&self, _why: End) {}
}

fn barrier(w: &World) {
    w.call(Op::Barrier, "".into(), Data::Unit)
        .wait()
        .expect("barrier");
}

/// Rank 0's number, on every rank.
fn agree(w: &World, x: f64) -> f64 {
    match w
        .call(Op::Broadcast { root: 0 }, "float".into(), Data::Float(x))
        .wait()
    {
        Ok(Outcome::Float(v)) => v,
        other => panic!("broadcast: {other:?}"),
    }
}

fn allreduce(w: &World, bytes: usize, iters: usize) -> f64 {
    let n = (bytes / 4).max(1);
    let data = Arc::new(
        (0..n)
            .map(|i| (w.rank() + i % 7) as f32)
            .collect::<Vec<f32>>(),
    );
    let shape: Arc<[usize]> = Arc::from([n]);
    let call = || {
        let d = Data::F32 {
            shape: shape.clone(),
            data: data.clone(),
        };
        w.call(Op::AllReduce(Reduce::Sum), "tensor".into(), d)
            .wait()
            .expect("allreduce")
    };
    call();
    barrier(w);
    let t0 = Instant::now();
    for _ in 0..iters {
        call();
    }
    agree(w, t0.elapsed().as_secs_f64() / iters as f64 * 1e6)
}

/// A channel of payloads of this process, served to the others; every
/// process's reference.
fn channel(w: &World, cap: usize) -> (Chan<Payload>, Vec<ChanRef>) {
    let c = Chan::<Payload>::new(cap);
    let for_ep = c.clone();
    let r = w.export(c.id(), cap, move || chan_endpoint(for_ep, Ok, Ok));
    let refs = match w
        .call(
            Op::AllGather,
            "chan".into(),
            Data::Value(r.to_bytes().to_vec()),
        )
        .wait()
    {
        Ok(Outcome::Gathered(v)) => v.iter().filter_map(|b| ChanRef::from_bytes(b)).collect(),
        other => panic!("allgather: {other:?}"),
    };
    (c, refs)
}

fn pingpong(w: &World, bytes: usize, iters: usize) -> f64 {
    let (own, refs) = channel(w, 0);
    let msg = vec![1u8; bytes];
    let round = || {
        if w.rank() == 0 {
            w.send(refs[1], Payload::from_bytes(&msg))
                .wait()
                .expect("send");
            own.recv_blocking().expect("recv");
        } else if w.rank() == 1 {
            let p = own.recv_blocking().expect("recv");
            w.send(refs[0], p).wait().expect("send");
        }
    };
    for _ in 0..100 {
        round();
    }
    barrier(w);
    let t0 = Instant::now();
    for _ in 0..iters {
        round();
    }
    agree(w, t0.elapsed().as_secs_f64() / iters as f64 / 2.0 * 1e6)
}

fn stream(w: &World, bytes: usize, count: usize, attach: bool) -> f64 {
    let (own, refs) = channel(w, 4);
    let msg = vec![1u8; bytes];
    let floats = Arc::new(vec![1f32; bytes / 4]);
    let value = || {
        if attach {
            // As the interpreter sends a tensor: a short header, the
            // tensor's memory attached.
            let mut p = Payload::from_bytes(&[9; 17]);
            assert!(p.attach(floats.clone()));
            p
        } else {
            Payload::from_bytes(&msg)
        }
    };
    barrier(w);
    let t0 = Instant::now();
    if w.rank() == 1 {
        // Up to 4 sends on their way (the capacity): one task per slot
        // would do the same; here, pending sends are awaited in order.
        let mut pending = std::collections::VecDeque::new();
        for _ in 0..count {
            if pending.len() == 4 {
                let p: weft_mpi::Pending<()> = pending.pop_front().expect("one");
                p.wait().expect("send");
            }
            pending.push_back(w.send(refs[0], value()));
        }
        for p in pending {
            p.wait().expect("send");
        }
    } else if w.rank() == 0 {
        for _ in 0..count {
            let p = own.recv_blocking().expect("recv");
            if attach {
                assert_eq!(p.attached()[0].len() * 4, bytes);
            } else {
                assert_eq!(p.len(), bytes);
            }
        }
    }
    let t = agree(w, t0.elapsed().as_secs_f64());
    (bytes * count) as f64 / t / 1e9
}

/// CPU seconds this process used so far.
fn cpu_secs() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command's closing parenthesis: utime is the 12th,
    // stime the 13th (in clock ticks of 1/100 s on Linux).
    let rest = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|s| s.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).map(String::as_str).unwrap_or("");
    let a: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(8);
    let b: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let w = weft_mpi::launch(Arc::new(Quiet)).expect("launch");
    let np = w.size();
    let best = |f: &dyn Fn() -> f64, lower: bool| {
        (0..3)
            .map(|_| f())
            .fold(if lower { f64::MAX } else { 0.0 }, |x, y| {
                if lower {
                    x.min(y)
                } else {
                    x.max(y)
                }
            })
    };
    let line = match mode {
        "allreduce" => format!(
            "allreduce bytes={a} np={np} us={:.2}",
            best(&|| allreduce(&w, a, b), true)
        ),
        "pingpong" => format!(
            "pingpong bytes={a} np={np} us={:.2}",
            best(&|| pingpong(&w, a, b), true)
        ),
        "stream" => format!(
            "stream bytes={a} np={np} gbps={:.3}",
            best(&|| stream(&w, a, b, true), false)
        ),
        "streambytes" => format!(
            "streambytes bytes={a} np={np} gbps={:.3}",
            best(&|| stream(&w, a, b, false), false)
        ),
        "idle" => {
            barrier(&w);
            let (c0, t0) = (cpu_secs(), Instant::now());
            std::thread::sleep(Duration::from_secs(a as u64));
            let (c, t) = (cpu_secs() - c0, t0.elapsed().as_secs_f64());
            format!(
                "idle rank={} seconds={t:.1} cpu_seconds={c:.3} cpu_percent={:.2}",
                w.rank(),
                100.0 * c / t
            )
        }
        _ => {
            eprintln!("usage: bench_world allreduce|pingpong|stream|idle ...");
            std::process::exit(64);
        }
    };
    if w.rank() == 0 || mode == "idle" {
        println!("{line}");
    }
    w.main_returned();
    let _ = w.finish();
}
