//! Large byte buffers kept for reuse: a payload's buffer, once the value
//! was read or its message sent, goes here, and the next large payload or
//! received message takes it instead of fresh memory. Fresh memory of a
//! megabyte or more comes from the kernel page by page (a fault and a
//! zeroed page each 4 KiB), which cost most of a 1 MB message's time
//! (docs/distributed.md, "Speed"). Small buffers are not kept (the
//! allocator reuses those well), nor more than [`MAX_BUFS`] buffers or
//! [`MAX_BYTES`] in all, so that a program keeps at most that much memory
//! it no longer uses (it counts toward `weft run --max-memory`, like any
//! allocation).

use std::sync::Mutex;

/// Buffers smaller than this are left to the allocator.
pub(crate) const MIN: usize = 64 * 1024;
/// At most this many buffers are kept.
const MAX_BUFS: usize = 8;
/// At most this many bytes are kept in all.
const MAX_BYTES: usize = 64 << 20;

struct Kept {
    bufs: Vec<Vec<u8>>,
    bytes: usize,
}

static POOL: Mutex<Kept> = Mutex::new(Kept::new());

impl Kept {
    const fn new() -> Kept {
        Kept {
            bufs: Vec::new(),
            bytes: 0,
        }
    }

    fn take(&mut self, n: usize) -> Option<Vec<u8>> {
        let fit = (0..self.bufs.len())
            .filter(|&i| (n..=n.saturating_mul(4)).contains(&self.bufs[i].capacity()))
            .min_by_key(|&i| self.bufs[i].capacity())?;
        let b = self.bufs.swap_remove(fit);
        self.bytes -= b.capacity();
        Some(b)
    }

    fn give(&mut self, mut buf: Vec<u8>) {
        let cap = buf.capacity();
        if self.bufs.len() < MAX_BUFS && self.bytes + cap <= MAX_BYTES {
            buf.clear();
            self.bytes += cap;
            self.bufs.push(buf);
        }
    }
}

/// An empty buffer with room for `n` bytes, from the pool when it keeps
/// one that fits (not more than four times larger), else new.
pub(crate) fn take(n: usize) -> Vec<u8> {
    if n >= MIN {
        let got = POOL.lock().unwrap_or_else(|e| e.into_inner()).take(n);
        if let Some(b) = got {
            return b;
        }
    }
    Vec::with_capacity(n)
}

/// Keeps `buf` for a later [`take`] if it is large and the pool has room.
pub(crate) fn give(buf: Vec<u8>) {
    if buf.capacity() >= MIN {
        POOL.lock().unwrap_or_else(|e| e.into_inner()).give(buf);
    }
}

/// The C allocator's settings for a process of several (glibc only): an
/// allocation up to 32 MiB comes from the heap, not from fresh pages of
/// its own, and up to 64 MiB freed at the heap's top stays for the next
/// allocation instead of going back to the kernel. A tensor received from
/// another process is new memory the program owns (`mpi.rs` receives it
/// straight into its buffer); with glibc's defaults, streaming large
/// tensors paid a page fault and a zeroed page every 4 KiB of each
/// (docs/distributed.md, "Speed"). Memory the program frees is reused,
/// not counted: at most 64 MiB per heap stays with the process.
#[cfg(feature = "mpi")]
pub(crate) fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only changes glibc's tuning parameters, under the
    // allocator's own lock; both values are within its bounds.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 64 << 20);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_that_fits_comes_back_emptied() {
        let mut k = Kept::new();
        let mut b = Vec::with_capacity(1000);
        b.extend_from_slice(&[1, 2, 3]);
        let at = b.as_ptr();
        k.give(b);
        assert!(k.take(5000).is_none(), "too small");
        assert!(k.take(100).is_none(), "more than four times larger");
        let c = k.take(900).expect("fits");
        assert!(c.is_empty() && c.as_ptr() == at);
        assert_eq!(k.bytes, 0);
    }

    #[test]
    fn the_pool_keeps_a_bounded_amount() {
        let mut k = Kept::new();
        for _ in 0..MAX_BUFS + 3 {
            k.give(Vec::with_capacity(MIN));
        }
        assert_eq!(k.bufs.len(), MAX_BUFS);
        k.give(Vec::with_capacity(MAX_BYTES));
        assert_eq!(k.bufs.len(), MAX_BUFS);
        assert!(k.bytes <= MAX_BYTES);
    }
}
