//! Starting a world: alone, under `mpirun` (feature `mpi`), or as N
//! simulated processes in memory (tests). Whether `mpirun` started this
//! process is read from the variables launchers set (MPICH's Hydra and
//! Slurm: `PMI_SIZE`; Open MPI: `OMPI_COMM_WORLD_SIZE`; PMIx launchers:
//! `PMIX_RANK` with `OMPI_UNIVERSE_SIZE`), so that a program started
//! without `mpirun` never loads MPI.

use std::sync::Arc;

use crate::engine::Engine;
use crate::mem::{MemTransport, Net};
use crate::world::{Host, Inbox, World};
use crate::MpiError;

/// The number of processes the launcher started, if this process was
/// started by `mpirun` (or `srun`, ...).
pub fn launched_size() -> Option<usize> {
    ["PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "OMPI_UNIVERSE_SIZE"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.trim().parse().ok())
}

/// This process's world: joins the other processes through MPI when built
/// with the `mpi` feature and started by `mpirun` with more than one
/// process; otherwise a world of one ([`World::solo`]). `host` hears how
/// the program ends.
pub fn launch(host: Arc<dyn Host>) -> Result<World, MpiError> {
    match launched_size() {
        Some(n) if n > 1 => launch_mpi(host),
        _ => Ok(World::solo()),
    }
}

/// This process's rank among those the launcher started, if it says
/// (MPICH's Hydra and Slurm: `PMI_RANK`; Open MPI: `OMPI_COMM_WORLD_RANK`;
/// PMIx launchers: `PMIX_RANK`).
pub fn launched_rank() -> Option<usize> {
    ["PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.trim().parse().ok())
}

/// A note for a binary built without MPI but started by `mpirun` with
/// more than one process: each process then runs alone as rank 0 of 1.
/// Only the process the launcher gave rank 0 gets it (or every process,
/// where the launcher does not say), so that the note is printed once.
pub fn not_built_warning() -> Option<MpiError> {
    if cfg!(feature = "mpi") || launched_rank().is_some_and(|r| r != 0) {
        return None;
    }
    launched_size()
        .filter(|&n| n > 1)
        .map(|size| MpiError::NotBuilt { size })
}

#[cfg(feature = "mpi")]
fn launch_mpi(host: Arc<dyn Host>) -> Result<World, MpiError> {
    crate::mpi::launch(host)
}

#[cfg(not(feature = "mpi"))]
fn launch_mpi(_host: Arc<dyn Host>) -> Result<World, MpiError> {
    Ok(World::solo())
}

/// `hosts.len()` simulated processes in this one, each with its own
/// messaging thread, connected in memory: the protocol of several
/// processes without MPI (tests; the interpreter's tests of several
/// processes).
pub fn in_memory(hosts: Vec<Arc<dyn Host>>) -> Result<Vec<World>, MpiError> {
    let n = hosts.len();
    let net = Net::new(n);
    let mut worlds = Vec::with_capacity(n);
    for (rank, host) in hosts.into_iter().enumerate() {
        let inbox = Arc::new(Inbox::new());
        let t = MemTransport::new(net.clone(), rank);
        let for_thread = inbox.clone();
        let handle = std::thread::Builder::new()
            .name(format!("weft-mpi-{rank}"))
            .spawn(move || {
                *for_thread.thread.lock() = Some(std::thread::current());
                t.register_thread();
                Engine::new(t, for_thread, host).run()
            })
            .map_err(|e| MpiError::Thread(e.to_string()))?;
        worlds.push(World::with_engine(rank, n, inbox, handle));
    }
    Ok(worlds)
}
