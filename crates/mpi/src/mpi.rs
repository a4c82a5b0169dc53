//! The MPI transport (feature `mpi`), over rsmpi and the system's MPI
//! library. It lives on the messaging thread, which starts MPI
//! (`MPI_THREAD_FUNNELED`: that thread is the only one to call it) and
//! shuts it down. Messages use a duplicate of `MPI_COMM_WORLD`
//! (`MPI_Isend`; `MPI_Improbe` then `MPI_Mrecv` for messages of any size
//! and tag from anyone; the tag counts the attached buffers that follow a
//! message, see [`TAG`]); collective steps use MPI's
//! non-blocking collectives (`MPI_Iallgatherv`, `MPI_Ibcast`,
//! `MPI_Ialltoallv`) on another duplicate, so they never match a message.
//! rsmpi's safe requests borrow their buffers for a scope; the messaging
//! thread keeps requests across passes, so this file calls the C functions
//! of `mpi::ffi` with buffers it owns until the request is complete.

use std::any::Any;
use std::mem::MaybeUninit;
use std::os::raw::{c_int, c_void};
use std::sync::mpsc;
use std::sync::Arc;

use mpi::datatype::Equivalence;
use mpi::environment::Universe;
use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::Threading;

use crate::engine::Engine;
use crate::transport::{Attached, F32Src, Step, StepOut, Transport, TransportError};
use crate::world::{Host, Inbox, World};
use crate::MpiError;

/// The tag of Weft's messages: `TAG + k` for a message followed by `k`
/// attached `f32` buffers (`Payload::attach`), each its own message of
/// `MPI_FLOAT`s, sent right after it (MPI's non-overtaking rule keeps
/// them behind it, and the messaging thread sends nothing in between).
const TAG: c_int = 7;

/// A message received whose attached buffers are still to come.
struct Partial {
    buf: Vec<u8>,
    left: usize,
    got: Attached,
}

/// A buffer an `MPI_Isend` reads, kept until the send completes.
enum Sent {
    Bytes(Vec<u8>),
    /// A tensor's memory: the program may read it meanwhile (MPI only
    /// reads it too), and nobody writes it (it is shared).
    F32 {
        _kept: Arc<Vec<f32>>,
    },
}

/// Starts the messaging thread, which joins MPI; returns once it has.
pub(crate) fn launch(host: Arc<dyn Host>) -> Result<World, MpiError> {
    let inbox = Arc::new(Inbox::new());
    let (tx, rx) = mpsc::channel();
    let for_thread = inbox.clone();
    let handle = std::thread::Builder::new()
        .name("weft-mpi".into())
        .spawn(move || {
            let t = match MpiTransport::init() {
                Ok(t) => t,
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return Ok(());
                }
            };
            if t.size > 1 {
                crate::pool::keep_freed_memory();
            }
            let _ = tx.send(Ok((t.rank, t.size)));
            *for_thread.thread.lock() = Some(std::thread::current());
            Engine::new(t, for_thread, host).run()
        })
        .map_err(|e| MpiError::Thread(e.to_string()))?;
    match rx.recv() {
        Ok(Ok((rank, size))) => Ok(World::with_engine(rank, size, inbox, handle)),
        Ok(Err(e)) => {
            let _ = handle.join();
            Err(e)
        }
        Err(_) => Err(MpiError::Thread("the messaging thread stopped".into())),
    }
}

/// Buffers kept alive until the request that uses them completes.
type Held = Vec<Box<dyn Any>>;

/// Where a collective step's result lands.
enum Recv {
    Bytes(Vec<u8>),
    /// A buffer whose first `len` elements MPI writes (its length is 0
    /// until the step completes: it may be fresh memory, never written).
    F32 {
        buf: Vec<f32>,
        len: usize,
    },
}

struct StepState {
    req: ffi::MPI_Request,
    recv: Recv,
    /// The step's scratch send buffer, handed back at completion.
    spare: Option<Vec<f32>>,
    _held: Held,
}

/// Receives the matched message `msg`, which `status` describes, as
/// elements of `T`, into a buffer from `alloc(len)` (an empty one with room
/// for `len`: fresh, or one kept for reuse): all of its elements.
fn mrecv<T: Equivalence>(
    status: &ffi::MPI_Status,
    msg: &mut ffi::MPI_Message,
    alloc: impl FnOnce(usize) -> Vec<T>,
) -> Result<Vec<T>, TransportError> {
    let mut n: c_int = 0;
    // SAFETY: `status` describes the matched message.
    check("MPI_Get_count", unsafe {
        ffi::MPI_Get_count(status, T::equivalent_datatype().as_raw(), &mut n)
    })?;
    // MPI_UNDEFINED (negative) when the bytes are not whole elements.
    let len =
        usize::try_from(n).map_err(|_| TransportError("a message of partial elements".into()))?;
    let mut buf = room(alloc(len), len);
    // SAFETY: `buf` has room for the `n` elements of the matched message
    // `msg`, which this call receives (and frees) before returning; MPI
    // writes them through the raw pointer.
    check("MPI_Mrecv", unsafe {
        ffi::MPI_Mrecv(
            buf.as_mut_ptr() as *mut c_void,
            n,
            T::equivalent_datatype().as_raw(),
            msg,
            status_ignore(),
        )
    })?;
    // SAFETY: `MPI_Mrecv` succeeded: it wrote all `len` elements of the
    // message (its count, from `MPI_Get_count`).
    unsafe { buf.set_len(len) };
    Ok(buf)
}

/// `buf`, emptied, with room for `len` elements (reused when it has it).
fn room<T>(mut buf: Vec<T>, len: usize) -> Vec<T> {
    buf.clear();
    buf.reserve_exact(len);
    buf
}

pub(crate) struct MpiTransport {
    // Field order is drop order: the communicators are freed before the
    // universe finalizes MPI.
    p2p: SimpleCommunicator,
    coll: SimpleCommunicator,
    _universe: Universe,
    rank: usize,
    size: usize,
    sends: Vec<(ffi::MPI_Request, Sent)>,
    /// Per sender, a message whose attached buffers are still to come.
    partial: Vec<Option<Partial>>,
    step: Option<StepState>,
}

fn check(what: &str, rc: c_int) -> Result<(), TransportError> {
    if rc == 0 {
        Ok(())
    } else {
        Err(TransportError(format!("{what} failed (MPI error {rc})")))
    }
}

fn count(n: usize) -> Result<c_int, TransportError> {
    c_int::try_from(n).map_err(|_| {
        TransportError(format!(
            "a message of {n} elements is larger than MPI's count"
        ))
    })
}

/// Counts and displacements of a variable-size collective.
fn counts_displs(counts: &[usize]) -> Result<(Vec<c_int>, Vec<c_int>), TransportError> {
    let mut cs = Vec::with_capacity(counts.len());
    let mut ds = Vec::with_capacity(counts.len());
    let mut at = 0usize;
    for &c in counts {
        cs.push(count(c)?);
        ds.push(count(at)?);
        at += c;
    }
    Ok((cs, ds))
}

fn request_null() -> ffi::MPI_Request {
    // SAFETY: reading an immutable constant exported by the rsmpi shim.
    unsafe { ffi::RSMPI_REQUEST_NULL }
}

fn status_ignore() -> *mut ffi::MPI_Status {
    // SAFETY: reading an immutable constant exported by the rsmpi shim.
    unsafe { ffi::RSMPI_STATUS_IGNORE }
}

/// Tests a request; true when it completed (it is then freed).
fn test(req: &mut ffi::MPI_Request) -> Result<bool, TransportError> {
    let mut flag: c_int = 0;
    // SAFETY: `req` is a live request handle owned by the caller, `flag`
    // a valid out pointer, and MPI is initialized on this thread.
    check("MPI_Test", unsafe {
        ffi::MPI_Test(req, &mut flag, status_ignore())
    })?;
    Ok(flag != 0)
}

impl MpiTransport {
    fn init() -> Result<MpiTransport, MpiError> {
        let (universe, level) = mpi::initialize_with_threading(Threading::Funneled)
            .ok_or_else(|| MpiError::Init("MPI was already started in this process".into()))?;
        if level == Threading::Single {
            return Err(MpiError::Threading(format!("{level:?}")));
        }
        let world = universe.world();
        let (rank, size) = (world.rank() as usize, world.size() as usize);
        let p2p = world.duplicate();
        let coll = world.duplicate();
        Ok(MpiTransport {
            p2p,
            coll,
            _universe: universe,
            rank,
            size,
            sends: Vec::new(),
            partial: (0..size).map(|_| None).collect(),
            step: None,
        })
    }
}

impl Transport for MpiTransport {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn send(
        &mut self,
        to: usize,
        buf: Vec<u8>,
        start: usize,
        attached: Attached,
    ) -> Result<(), TransportError> {
        if attached.len() > crate::payload::MAX_ATTACHED {
            return Err(TransportError("too many attached buffers".into()));
        }
        let bytes = &buf[start..];
        let n = count(bytes.len())?;
        let mut req = request_null();
        // SAFETY: `bytes` points into `buf`, which is kept in `self.sends`
        // (its heap block does not move) until `MPI_Test` reports the send
        // complete; the datatype is MPI's byte type and the count its length.
        check("MPI_Isend", unsafe {
            ffi::MPI_Isend(
                bytes.as_ptr() as *const c_void,
                n,
                u8::equivalent_datatype().as_raw(),
                to as c_int,
                TAG + attached.len() as c_int,
                self.p2p.as_raw(),
                &mut req,
            )
        })?;
        self.sends.push((req, Sent::Bytes(buf)));
        for a in attached {
            let n = count(a.len())?;
            let mut req = request_null();
            // SAFETY: `a` is a shared buffer nobody writes (it is behind
            // an `Arc`); the clone kept in `self.sends` keeps its heap
            // block alive and in place until `MPI_Test` reports the send
            // complete; MPI only reads it; the count is its length.
            check("MPI_Isend", unsafe {
                ffi::MPI_Isend(
                    a.as_ptr() as *const c_void,
                    n,
                    f32::equivalent_datatype().as_raw(),
                    to as c_int,
                    TAG,
                    self.p2p.as_raw(),
                    &mut req,
                )
            })?;
            self.sends.push((req, Sent::F32 { _kept: a }));
        }
        Ok(())
    }

    fn sends_in_flight(&mut self) -> Result<usize, TransportError> {
        let mut i = 0;
        while i < self.sends.len() {
            if test(&mut self.sends[i].0)? {
                if let Sent::Bytes(b) = self.sends.swap_remove(i).1 {
                    crate::pool::give(b);
                }
            } else {
                i += 1;
            }
        }
        Ok(self.sends.len())
    }

    fn try_recv(&mut self) -> Result<Option<(usize, Vec<u8>, Attached)>, TransportError> {
        loop {
            let mut flag: c_int = 0;
            let mut msg = MaybeUninit::<ffi::MPI_Message>::uninit();
            let mut status = MaybeUninit::<ffi::MPI_Status>::uninit();
            // SAFETY: out pointers to local storage; MPI writes `msg` and
            // `status` when it sets `flag`.
            check("MPI_Improbe", unsafe {
                ffi::MPI_Improbe(
                    ffi::RSMPI_ANY_SOURCE,
                    ffi::RSMPI_ANY_TAG,
                    self.p2p.as_raw(),
                    &mut flag,
                    msg.as_mut_ptr(),
                    status.as_mut_ptr(),
                )
            })?;
            if flag == 0 {
                return Ok(None);
            }
            // SAFETY: `flag` is set, so MPI wrote both.
            let (mut msg, status) = unsafe { (msg.assume_init(), status.assume_init()) };
            let src = status.MPI_SOURCE as usize;
            let waiting = self
                .partial
                .get_mut(src)
                .ok_or_else(|| TransportError(format!("a message from rank {src}")))?;
            if let Some(p) = waiting {
                // The next attached buffer of `src`'s message: straight
                // into the memory that becomes the receiver's tensor.
                if status.MPI_TAG != TAG {
                    return Err(TransportError(format!(
                        "a message of tag {} from rank {src} where an attached buffer was due",
                        status.MPI_TAG
                    )));
                }
                let v = mrecv(&status, &mut msg, Vec::<f32>::with_capacity)?;
                p.got.push(Arc::new(v));
                p.left -= 1;
                if p.left == 0 {
                    let p = waiting.take().expect("a partial message");
                    return Ok(Some((src, p.buf, p.got)));
                }
                continue;
            }
            let buf = mrecv(&status, &mut msg, crate::pool::take)?;
            let k = status.MPI_TAG - TAG;
            if !(0..=crate::payload::MAX_ATTACHED as c_int).contains(&k) {
                return Err(TransportError(format!(
                    "a message of tag {}",
                    status.MPI_TAG
                )));
            }
            if k == 0 {
                return Ok(Some((src, buf, Vec::new())));
            }
            *waiting = Some(Partial {
                buf,
                left: k as usize,
                got: Vec::with_capacity(k as usize),
            });
        }
    }

    fn start(&mut self, step: Step) -> Result<(), TransportError> {
        let byte = u8::equivalent_datatype().as_raw();
        let float = f32::equivalent_datatype().as_raw();
        let comm = self.coll.as_raw();
        let mut req = request_null();
        let state = match step {
            Step::Gather { mine, counts } => {
                let (cs, ds) = counts_displs(&counts)?;
                let mut recv = vec![0u8; counts.iter().sum()];
                // SAFETY: every buffer (`mine`, `recv`, `cs`, `ds`) is moved
                // into the step's state below and kept until `MPI_Test`
                // reports completion; counts and displacements describe
                // `recv` exactly, and every process passes the same counts.
                check("MPI_Iallgatherv", unsafe {
                    ffi::MPI_Iallgatherv(
                        mine.as_ptr() as *const c_void,
                        count(mine.len())?,
                        byte,
                        recv.as_mut_ptr() as *mut c_void,
                        cs.as_ptr(),
                        ds.as_ptr(),
                        byte,
                        comm,
                        &mut req,
                    )
                })?;
                StepState {
                    req,
                    recv: Recv::Bytes(recv),
                    spare: None,
                    _held: vec![Box::new(mine), Box::new(cs), Box::new(ds)],
                }
            }
            Step::Bcast { root, mut buf } => {
                // SAFETY: `buf` moves into the step's state and is kept
                // until completion; every process passes the same length.
                check("MPI_Ibcast", unsafe {
                    ffi::MPI_Ibcast(
                        buf.as_mut_ptr() as *mut c_void,
                        count(buf.len())?,
                        byte,
                        root as c_int,
                        comm,
                        &mut req,
                    )
                })?;
                StepState {
                    req,
                    recv: Recv::Bytes(buf),
                    spare: None,
                    _held: Vec::new(),
                }
            }
            Step::ToAllF32 {
                send,
                ranges,
                recv_counts,
                recv,
            } => {
                let lens: Vec<usize> = ranges.iter().map(|r| r.len()).collect();
                let (scs, _) = counts_displs(&lens)?;
                let sds = ranges
                    .iter()
                    .map(|r| count(r.start))
                    .collect::<Result<Vec<_>, _>>()?;
                let (rcs, rds) = counts_displs(&recv_counts)?;
                if ranges.iter().any(|r| r.end > send.len()) {
                    return Err(TransportError("all-to-all range out of the buffer".into()));
                }
                let len = recv_counts.iter().sum();
                let mut recv = room(recv, len);
                // SAFETY: the ranges lie inside `send` (checked above);
                // `recv` has room for the `len` elements the counts and
                // displacements describe (MPI writes them through the raw
                // pointer; its length is set once the step completes);
                // `send`, `recv` and the four count arrays move into the
                // step's state and are kept until completion.
                check("MPI_Ialltoallv", unsafe {
                    ffi::MPI_Ialltoallv(
                        send.as_ptr() as *const c_void,
                        scs.as_ptr(),
                        sds.as_ptr(),
                        float,
                        recv.as_mut_ptr() as *mut c_void,
                        rcs.as_ptr(),
                        rds.as_ptr(),
                        float,
                        comm,
                        &mut req,
                    )
                })?;
                StepState {
                    req,
                    recv: Recv::F32 { buf: recv, len },
                    spare: None,
                    _held: vec![
                        Box::new(send),
                        Box::new(scs),
                        Box::new(sds),
                        Box::new(rcs),
                        Box::new(rds),
                    ],
                }
            }
            Step::GatherF32 {
                mine,
                range,
                counts,
                recv,
            } => {
                let piece = mine
                    .as_slice()
                    .get(range)
                    .ok_or_else(|| TransportError("all-gather range out of the buffer".into()))?;
                let (cs, ds) = counts_displs(&counts)?;
                let len = counts.iter().sum();
                let mut recv = room(recv, len);
                // SAFETY: `piece` points into `mine`'s heap buffer, which
                // moves into the step's state (and does not move) until
                // completion, as do `recv`, `cs` and `ds`; `recv` has room
                // for the `len` elements the counts and displacements
                // describe (its length is set once the step completes).
                check("MPI_Iallgatherv", unsafe {
                    ffi::MPI_Iallgatherv(
                        piece.as_ptr() as *const c_void,
                        count(piece.len())?,
                        float,
                        recv.as_mut_ptr() as *mut c_void,
                        cs.as_ptr(),
                        ds.as_ptr(),
                        float,
                        comm,
                        &mut req,
                    )
                })?;
                let (spare, held): (Option<Vec<f32>>, Box<dyn Any>) = match mine {
                    F32Src::Owned(v) => (Some(v), Box::new(())),
                    F32Src::Shared(a) => (None, Box::new(a)),
                };
                StepState {
                    req,
                    recv: Recv::F32 { buf: recv, len },
                    spare,
                    _held: vec![held, Box::new(cs), Box::new(ds)],
                }
            }
        };
        self.step = Some(state);
        Ok(())
    }

    fn test(&mut self) -> Result<Option<StepOut>, TransportError> {
        let Some(s) = self.step.as_mut() else {
            return Ok(None);
        };
        if !test(&mut s.req)? {
            return Ok(None);
        }
        Ok(self.step.take().map(|s| match s.recv {
            Recv::Bytes(b) => StepOut::Bytes(b),
            Recv::F32 { mut buf, len } => {
                // SAFETY: the step completed, so MPI wrote all `len`
                // elements its counts and displacements describe (they
                // cover `0..len` without gaps), and `room` reserved them.
                unsafe { buf.set_len(len) };
                StepOut::F32(buf, s.spare)
            }
        }))
    }

    fn close(self, clean: bool) {
        if clean {
            // Frees the communicators, then `MPI_Finalize`.
            drop(self);
        } else {
            // The transport failed: finalizing could wait for a peer that
            // is gone. Leave MPI to the process's exit.
            std::mem::forget(self);
        }
    }
}
