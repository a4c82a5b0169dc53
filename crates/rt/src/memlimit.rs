//! The memory ceiling of a run (`weft run --max-memory MIB`): a counting
//! global allocator that the `weft` binary installs, and a check the
//! interpreter makes where a program grows (lists, channels, tasks), so a
//! program that allocates without end stops with a clear panic naming the
//! limit instead of taking the machine down.
//!
//! Invariants: `ALLOCATED` is the number of bytes currently allocated
//! through [`CountingAlloc`] (zero when another allocator is in use, as in
//! tests, so the check never fires there); a limit of 0 means none. The
//! counters are relaxed atomics: the ceiling is a guard rail, checked at
//! growth points, not an exact cap on every byte.
//!
//! The one module of the crate that names `std`'s atomics rather than the
//! loom facade (`weft_chan::loom`): the counters are `static`s that the
//! global allocator updates on every allocation of the process, loom's
//! atomics are neither `const`-constructible nor usable outside a model,
//! and the counters take part in no protocol that the loom tests check.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

static ALLOCATED: AtomicUsize = AtomicUsize::new(0);
static LIMIT: AtomicUsize = AtomicUsize::new(0);

/// The system allocator, counting the bytes it holds.
pub struct CountingAlloc;

// SAFETY: every method forwards to `System` with the caller's layout and
// pointer unchanged, which upholds `GlobalAlloc`'s contract; the counting
// touches only atomics and never allocates.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's layout is forwarded unchanged.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            ALLOCATED.fetch_add(layout.size(), Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's layout is forwarded unchanged.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            ALLOCATED.fetch_add(layout.size(), Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` with this layout.
        unsafe { System.dealloc(ptr, layout) };
        ALLOCATED.fetch_sub(layout.size(), Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` was allocated by `System` with `layout`; the caller
        // guarantees `new_size` is valid for it.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            ALLOCATED.fetch_add(new_size, Relaxed);
            ALLOCATED.fetch_sub(layout.size(), Relaxed);
        }
        p
    }
}

/// Sets the ceiling in bytes (`None`: no ceiling).
pub fn set_limit(bytes: Option<usize>) {
    LIMIT.store(bytes.unwrap_or(0), Relaxed);
}

/// Bytes allocated now through [`CountingAlloc`] (0 if it is not installed).
pub fn allocated() -> usize {
    ALLOCATED.load(Relaxed)
}

/// The default ceiling: three quarters of the machine's memory, read from
/// `/proc/meminfo` (`None` where it cannot be read).
pub fn default_limit() -> Option<usize> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kib: usize = info
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib / 4 * 3 * 1024)
}

/// The panic message when the ceiling is passed, else `None`. One relaxed
/// load when no ceiling is set.
#[inline]
pub fn exceeded() -> Option<String> {
    let limit = LIMIT.load(Relaxed);
    if limit == 0 || ALLOCATED.load(Relaxed) <= limit {
        return None;
    }
    Some(format!(
        "out of memory: the program uses more than {} MiB (--max-memory)",
        limit >> 20
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_ceiling_never_fires_and_the_default_is_plausible() {
        set_limit(None);
        assert_eq!(exceeded(), None);
        if let Some(d) = default_limit() {
            assert!(d > 1 << 20, "{d}");
        }
    }
}
