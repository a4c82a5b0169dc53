//! The protocol of several processes, simulated in one (one messaging
//! thread and one runtime per process, connected in memory): every
//! scenario of `support/mod.rs` with 2 and 3 processes. The same
//! scenarios run under `mpirun` in `tests/mpirun.rs`.

mod support;

use std::sync::Arc;

use support::{check, host, run_rank, scenario, RankOut};

fn run(name: &str, n: usize) {
    let hosts: Vec<_> = (0..n).map(|_| host()).collect();
    let worlds = weft_mpi::in_memory(hosts.iter().map(|h| h.clone().as_host()).collect())
        .expect("in-memory worlds");
    let body = scenario(name);
    let threads: Vec<_> = worlds
        .into_iter()
        .zip(hosts)
        .map(|(w, h)| std::thread::spawn(move || run_rank(w, h, body)))
        .collect();
    let outs: Vec<RankOut> = threads
        .into_iter()
        .map(|t| t.join().expect("a process's thread panicked"))
        .collect();
    check(name, &outs);
}

macro_rules! scenario_tests {
    ($($name:ident),*) => {$(
        #[test]
        fn $name() {
            for n in [2, 3] {
                run(stringify!($name), n);
            }
        }
    )*};
}

scenario_tests!(
    collectives,
    mismatch,
    channels,
    credits,
    coll_deadlock,
    busy_wire,
    panics,
    exits,
    late_finish,
    attached
);

#[test]
fn a_world_of_four_agrees_bitwise() {
    let _ = Arc::new(());
    run("collectives", 4);
}
