//! The channel scenarios shared by `benches/chan.rs` (criterion) and
//! `benches/chan_paired.rs` (interleaved pairs): Weft's channels and
//! crossbeam-channel behind one trait, used from plain threads (Weft's
//! `_blocking` forms).

use std::hint::black_box;
use std::thread;

use weft_chan::{Chan, Outcome, Select};

/// Messages per iteration in the threaded scenarios.
pub const N: u64 = 20_000;

/// The two implementations behind one face.
pub trait Flavor {
    type S: Clone + Send + 'static;
    type R: Clone + Send + 'static;
    fn new(cap: usize) -> (Self::S, Self::R);
    fn send(s: &Self::S, v: u64);
    fn try_send(s: &Self::S, v: u64) -> bool;
    fn recv(r: &Self::R) -> Option<u64>;
}

pub struct Weft;
impl Flavor for Weft {
    type S = Chan<u64>;
    type R = Chan<u64>;
    fn new(cap: usize) -> (Chan<u64>, Chan<u64>) {
        let c = Chan::new(cap);
        (c.clone(), c)
    }
    fn send(s: &Chan<u64>, v: u64) {
        let _ = s.send_blocking(v);
    }
    fn try_send(s: &Chan<u64>, v: u64) -> bool {
        s.try_send(v).is_ok()
    }
    fn recv(r: &Chan<u64>) -> Option<u64> {
        r.recv_blocking()
    }
}

pub struct Crossbeam;
impl Flavor for Crossbeam {
    type S = crossbeam_channel::Sender<u64>;
    type R = crossbeam_channel::Receiver<u64>;
    fn new(cap: usize) -> (Self::S, Self::R) {
        crossbeam_channel::bounded(cap)
    }
    fn send(s: &Self::S, v: u64) {
        let _ = s.send(v);
    }
    fn try_send(s: &Self::S, v: u64) -> bool {
        s.try_send(v).is_ok()
    }
    fn recv(r: &Self::R) -> Option<u64> {
        r.recv().ok()
    }
}

/// One thread: fill up to `cap`, then drain, `N` values in all.
pub fn sequential<F: Flavor>(cap: usize) {
    let (s, r) = F::new(cap);
    let mut left = N;
    while left > 0 {
        let k = (cap as u64).min(left);
        for i in 0..k {
            F::try_send(&s, i);
        }
        for _ in 0..k {
            black_box(F::recv(&r));
        }
        left -= k;
    }
}

/// `senders` threads send `N` values in all; `receivers` threads take them.
pub fn mpmc<F: Flavor>(cap: usize, senders: u64, receivers: u64) {
    let (s, r) = F::new(cap);
    thread::scope(|scope| {
        for _ in 0..senders {
            let s = s.clone();
            scope.spawn(move || {
                for i in 0..N / senders {
                    F::send(&s, i);
                }
            });
        }
        for _ in 0..receivers {
            let r = r.clone();
            scope.spawn(move || {
                for _ in 0..N / receivers {
                    black_box(F::recv(&r));
                }
            });
        }
    });
}

/// Two threads bounce one value over two unbuffered channels.
pub fn ping_pong<F: Flavor>(rounds: u64) {
    let (s1, r1) = F::new(0);
    let (s2, r2) = F::new(0);
    thread::scope(|scope| {
        scope.spawn(move || {
            for _ in 0..rounds {
                if let Some(v) = F::recv(&r1) {
                    F::send(&s2, v);
                }
            }
        });
        for i in 0..rounds {
            F::send(&s1, i);
            black_box(F::recv(&r2));
        }
    });
}

/// Four sender threads on four channels; the main thread selects.
pub fn select_weft(cap: usize) {
    let chans: Vec<Chan<u64>> = (0..4).map(|_| Chan::new(cap)).collect();
    thread::scope(|scope| {
        for c in &chans {
            scope.spawn(move || {
                for i in 0..N / 4 {
                    let _ = c.send_blocking(i);
                }
            });
        }
        let mut rng = fastrand::Rng::with_seed(1);
        for _ in 0..N {
            let mut sel = Select::new();
            for c in &chans {
                sel.recv_ref(Some(c));
            }
            let got = sel.select_blocking(&mut rng);
            assert!(matches!(got.outcome, Outcome::Received(Some(_))));
        }
    });
}

pub fn select_crossbeam(cap: usize) {
    let chans: Vec<_> = (0..4)
        .map(|_| crossbeam_channel::bounded::<u64>(cap))
        .collect();
    thread::scope(|scope| {
        for (s, _) in &chans {
            scope.spawn(move || {
                for i in 0..N / 4 {
                    let _ = s.send(i);
                }
            });
        }
        for _ in 0..N {
            let mut sel = crossbeam_channel::Select::new();
            for (_, r) in &chans {
                sel.recv(r);
            }
            let op = sel.select();
            let i = op.index();
            black_box(op.recv(&chans[i].1).ok());
        }
    });
}

/// One thread: `N` selects with a default over 4 empty buffered channels
/// (nothing is ever ready: the cost of finding that out).
pub fn try_select_empty_weft() {
    let chans: Vec<Chan<u64>> = (0..4).map(|_| Chan::new(1024)).collect();
    let mut rng = fastrand::Rng::with_seed(1);
    for _ in 0..N {
        let mut sel = Select::new();
        for c in &chans {
            sel.recv_ref(Some(c));
        }
        assert!(black_box(sel.try_select(&mut rng)).is_none());
    }
}

pub fn try_select_empty_crossbeam() {
    let chans: Vec<_> = (0..4)
        .map(|_| crossbeam_channel::bounded::<u64>(1024))
        .collect();
    for _ in 0..N {
        let mut sel = crossbeam_channel::Select::new();
        for (_, r) in &chans {
            sel.recv(r);
        }
        assert!(black_box(sel.try_select()).is_err());
    }
}

/// One scenario: its name (`spsc/1`: scenario / capacity) and the same
/// work run by Weft and by crossbeam-channel.
pub struct Scenario {
    pub name: String,
    pub weft: Box<dyn Fn()>,
    pub crossbeam: Box<dyn Fn()>,
}

fn scenario(name: String, weft: impl Fn() + 'static, crossbeam: impl Fn() + 'static) -> Scenario {
    Scenario {
        name,
        weft: Box::new(weft),
        crossbeam: Box::new(crossbeam),
    }
}

/// Every scenario of `benches/chan.rs`, in its order.
pub fn scenarios() -> Vec<Scenario> {
    let mut v = Vec::new();
    for cap in [1usize, 1024] {
        v.push(scenario(
            format!("seq/{cap}"),
            move || sequential::<Weft>(cap),
            move || sequential::<Crossbeam>(cap),
        ));
    }
    for (name, s, r) in [("spsc", 1, 1), ("mpsc", 4, 1), ("mpmc", 4, 4)] {
        for cap in [0usize, 1, 1024] {
            v.push(scenario(
                format!("{name}/{cap}"),
                move || mpmc::<Weft>(cap, s, r),
                move || mpmc::<Crossbeam>(cap, s, r),
            ));
        }
    }
    for cap in [0usize, 1024] {
        v.push(scenario(
            format!("select4/{cap}"),
            move || select_weft(cap),
            move || select_crossbeam(cap),
        ));
    }
    v.push(scenario(
        "tryselect4/1024".into(),
        try_select_empty_weft,
        try_select_empty_crossbeam,
    ));
    v.push(scenario(
        "pingpong".into(),
        || ping_pong::<Weft>(PING_PONG_ROUNDS),
        || ping_pong::<Crossbeam>(PING_PONG_ROUNDS),
    ));
    v
}

/// Round trips per iteration of `pingpong`.
pub const PING_PONG_ROUNDS: u64 = 2_000;
