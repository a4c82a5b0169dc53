//! The sliced all-reduce of large tensors: one shared output buffer, cut
//! into chunks that any member of the step may claim and reduce, reading
//! every member's input in place (docs/collectives.md, "The sliced path").
//!
//! Protocol:
//! 1. The last arriver makes the job: the inputs (the members' own
//!    `Arc<Vec<f32>>`s, not copied) and an output buffer of `len`
//!    elements, uninitialized, split into `chunks` ranges.
//! 2. Every member that polls its call runs [`Job::work`]: it claims chunk
//!    numbers with `next.fetch_add(1)` (each number is handed out once)
//!    and writes each claimed chunk's range of the output through the raw
//!    pointer, then adds the number of chunks it wrote to `done` (AcqRel).
//!    A chunk is claimed and written within one call of `work`, so a call
//!    future dropped between polls never leaves a chunk half done.
//! 3. The member whose `done.fetch_add` brings the count to `chunks` is
//!    the finisher: the AcqRel read-modify-write chain on `done` makes
//!    every chunk's writes visible to it, so it alone may take the buffer
//!    ([`Job::take_output`]), now fully written, as the shared result.
//!
//! A job whose members all dropped their calls before it finished frees
//! the buffer unread (its length stays 0, `f32` needs no drop).
//!
//! Under loom, one `UnsafeCell<()>` per chunk stands for the chunk's part
//! of the buffer: a write is a `with_mut` on it and the finisher's read is
//! a `with` on each, so loom checks that the writes happen before the
//! read.

use std::mem::MaybeUninit;
use std::sync::Arc;

use smallvec::SmallVec;

use crate::kernel;
use crate::loom::{AtomicUsize, Ordering, UnsafeCell};
use crate::Reduce;

/// A sliced all-reduce in progress.
pub(crate) struct Job {
    op: Reduce,
    shape: Arc<[usize]>,
    inputs: Vec<Arc<Vec<f32>>>,
    /// The output buffer: length 0 until the finisher takes it, capacity
    /// `len`; its elements are written through `ptr`.
    out: UnsafeCell<Vec<f32>>,
    /// `out`'s buffer.
    ptr: *mut f32,
    len: usize,
    chunks: usize,
    /// The next chunk number to hand out (may run past `chunks`).
    next: AtomicUsize,
    /// Chunks written.
    done: AtomicUsize,
    /// One per chunk: loom's view of the chunk's part of the buffer.
    marks: Vec<UnsafeCell<()>>,
}

// SAFETY: the raw pointer is the only field that is not `Send`/`Sync`. It
// points into `out`'s heap buffer, which the job owns; threads write
// through it only to the disjoint ranges of chunks they claimed (each
// chunk number is handed out once by `next`), and the buffer is read
// (taken) only by the finisher after every chunk's writes happened before
// its `done` update (module doc, step 3).
unsafe impl Send for Job {}
// SAFETY: as for `Send`.
unsafe impl Sync for Job {}

impl Job {
    /// A job reducing `inputs` (at least one, each of `len` elements) with
    /// `op`, in `chunks` chunks (clamped to `1..=len`).
    pub(crate) fn new(
        op: Reduce,
        shape: Arc<[usize]>,
        inputs: Vec<Arc<Vec<f32>>>,
        chunks: usize,
    ) -> Job {
        let len = inputs.first().map_or(0, |x| x.len());
        debug_assert!(inputs.iter().all(|x| x.len() == len));
        let chunks = chunks.clamp(1, len.max(1));
        let mut out: Vec<f32> = Vec::with_capacity(len);
        let ptr = out.as_mut_ptr();
        Job {
            op,
            shape,
            inputs,
            out: UnsafeCell::new(out),
            ptr,
            len,
            chunks,
            next: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
            marks: (0..chunks).map(|_| UnsafeCell::new(())).collect(),
        }
    }

    /// The result's shape.
    pub(crate) fn shape(&self) -> &Arc<[usize]> {
        &self.shape
    }

    /// Claims and reduces chunks until none is left to claim, calling
    /// `progress` after each. True when this call wrote the last chunk:
    /// the caller is the finisher and must call [`Job::take_output`].
    pub(crate) fn work(&self, progress: impl Fn()) -> bool {
        let mut wrote = 0;
        loop {
            let c = self.next.fetch_add(1, Ordering::Relaxed);
            if c >= self.chunks {
                break;
            }
            self.reduce_chunk(c);
            wrote += 1;
            progress();
        }
        wrote > 0 && self.done.fetch_add(wrote, Ordering::AcqRel) + wrote == self.chunks
    }

    /// Reduces chunk `c`, which this thread claimed.
    fn reduce_chunk(&self, c: usize) {
        let start = c * self.len / self.chunks;
        let end = (c + 1) * self.len / self.chunks;
        let inputs: SmallVec<[&[f32]; 8]> = self.inputs.iter().map(|x| &x[start..end]).collect();
        self.marks[c].with_mut(|_| {
            // SAFETY: `start <= end <= len`, the buffer's capacity, so the
            // range is inside the allocation; chunk `c` was handed out to
            // this thread alone by `next`, chunks' ranges are disjoint, and
            // nothing reads the buffer before `done` counts every chunk,
            // so no other reference to these elements exists.
            let out = unsafe {
                std::slice::from_raw_parts_mut(
                    self.ptr.add(start).cast::<MaybeUninit<f32>>(),
                    end - start,
                )
            };
            kernel::reduce_f32(self.op, &inputs, out);
        });
    }

    /// The finished buffer. Called once, by the finisher.
    pub(crate) fn take_output(&self) -> Vec<f32> {
        for m in &self.marks {
            m.with(|_| ());
        }
        self.out.with_mut(|out| {
            // SAFETY: only the finisher calls this, once, after the AcqRel
            // chain on `done` made every chunk's writes happen before this
            // point; no thread writes through `ptr` any more (every chunk
            // was claimed), so this is the only access to `out`. Every
            // element `0..len` was written by exactly one chunk.
            unsafe {
                let out = &mut *out;
                out.set_len(self.len);
                std::mem::take(out)
            }
        })
    }
}
