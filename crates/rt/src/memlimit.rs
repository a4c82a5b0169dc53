//! The memory ceiling of a run (`weft run --max-memory MIB`): a counting
//! global allocator that the `weft` binary installs, and [`Ceiling`], which
//! the interpreter checks before every allocation a program causes (string
//! results, list copies and growth, channel buffers, timers, tasks and their
//! call stacks, tensor results), with the size about to be allocated, so a
//! program that allocates without end stops with a clear panic naming the
//! limit instead of taking the machine down, and an allocation larger than
//! the limit is refused before it is attempted (not an abort of the process).
//!
//! Invariants: `ALLOCATED` plus every thread's `PENDING` is the number of
//! bytes currently allocated through [`CountingAlloc`] (zero when another
//! allocator is in use, as in tests: then only single requests larger than
//! the limit are refused); a limit of 0 means none. The ceiling is a guard
//! rail, checked at growth points with the size about to be allocated, not
//! an exact cap on every byte (the runtime's own bookkeeping and allocator
//! slack are counted only as they happen), so the count may lag: each
//! thread adds what it allocates and frees to its own `PENDING` and moves
//! that to `ALLOCATED` once it reaches `FLUSH` bytes either way, so
//! [`allocated`] is off by less than `FLUSH` bytes a thread. One shared
//! counter written by every allocation of the process made two trainers on
//! two cores of a 16-core machine pass its cache line back and forth on
//! every tensor op (docs/performance.md, "Eighteenth session"). A thread
//! that ends leaves its last `PENDING` (under `FLUSH`) uncounted; the
//! run's threads (workers, the compute pool) live as long as the process.
//! A thread may free what another allocated, so `ALLOCATED` may go below
//! zero for a while; [`allocated`] reads it as 0 then.
//!
//! The one module of the crate that names `std`'s atomics rather than the
//! loom facade (`weft_chan::loom`): the counter is a `static` that the
//! global allocator updates, loom's atomics are neither
//! `const`-constructible nor usable outside a model, and the counter takes
//! part in no protocol that the loom tests check.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicIsize, Ordering::Relaxed};

static ALLOCATED: AtomicIsize = AtomicIsize::new(0);

/// How many bytes a thread's count may drift before it is added to
/// `ALLOCATED` (either way).
const FLUSH: isize = 256 << 10;

thread_local! {
    /// This thread's allocations less its frees not yet in `ALLOCATED`.
    /// A `const` `Cell` of a type without `Drop`: no destructor is
    /// registered and the first use allocates nothing, which the global
    /// allocator needs.
    static PENDING: Cell<isize> = const { Cell::new(0) };
}

/// Counts `bytes` allocated (positive) or freed (negative).
#[inline]
fn count(bytes: isize) {
    // `Some(n)`: `n` bytes to add to `ALLOCATED` now.
    let flush = PENDING.try_with(|p| {
        let v = p.get() + bytes;
        let full = v.unsigned_abs() >= FLUSH as usize;
        p.set(if full { 0 } else { v });
        full.then_some(v)
    });
    match flush {
        Ok(None) => {}
        Ok(Some(v)) => {
            ALLOCATED.fetch_add(v, Relaxed);
        }
        Err(_) => {
            ALLOCATED.fetch_add(bytes, Relaxed);
        }
    }
}

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
            count(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's layout is forwarded unchanged.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` with this layout.
        unsafe { System.dealloc(ptr, layout) };
        count(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` was allocated by `System` with `layout`; the caller
        // guarantees `new_size` is valid for it.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            count(new_size as isize - layout.size() as isize);
        }
        p
    }
}

/// Bytes allocated now through [`CountingAlloc`], to within `FLUSH` (256
/// KiB) a thread (0 if it is not installed).
pub fn allocated() -> usize {
    ALLOCATED.load(Relaxed).max(0) as usize
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

/// The memory ceiling of one run (`--max-memory`), checked before each
/// allocation a program causes, with the size about to be allocated.
/// A value, not a global: runs in one process (tests) keep their own.
///
/// [`Ceiling::check`] compares [`allocated`] plus the request with the
/// limit, so a single allocation larger than what is left is refused
/// before it is attempted, and the bytes the program already holds count
/// (where the counting allocator is installed; elsewhere [`allocated`] is 0
/// and only single requests larger than the limit are refused).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ceiling {
    /// The limit in bytes; 0: none.
    limit: usize,
}

impl Ceiling {
    /// No ceiling.
    pub const NONE: Ceiling = Ceiling { limit: 0 };

    /// A ceiling of `bytes` (`None`: none).
    pub fn new(bytes: Option<usize>) -> Ceiling {
        Ceiling {
            limit: bytes.unwrap_or(0),
        }
    }

    /// The limit in bytes, if there is one.
    pub fn limit(self) -> Option<usize> {
        (self.limit != 0).then_some(self.limit)
    }

    /// Whether `request` more bytes fit under the ceiling; the failure names
    /// the limit. One relaxed load and a compare.
    #[inline]
    pub fn check(self, request: usize) -> Result<(), OutOfMemory> {
        if self.limit == 0 || allocated().saturating_add(request) <= self.limit {
            return Ok(());
        }
        Err(OutOfMemory { limit: self.limit })
    }

    /// The bytes that may still be allocated (`usize::MAX` without a
    /// ceiling): a bound for work whose size shows only as it is done
    /// (formatting a value).
    pub fn headroom(self) -> usize {
        match self.limit {
            0 => usize::MAX,
            limit => limit.saturating_sub(allocated()),
        }
    }

    /// The failure of an allocation that does not fit.
    pub fn exceeded(self) -> OutOfMemory {
        OutOfMemory { limit: self.limit }
    }
}

/// An allocation did not fit under the ceiling. Its `Display` is the
/// program's panic message (docs/language.md, "Errors and exit codes").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutOfMemory {
    limit: usize,
}

impl std::fmt::Display for OutOfMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "out of memory: the program uses more than {} MiB (--max-memory)",
            self.limit >> 20
        )
    }
}

impl std::error::Error for OutOfMemory {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_ceiling_never_fires_and_the_default_is_plausible() {
        assert_eq!(Ceiling::NONE.check(usize::MAX), Ok(()));
        assert_eq!(Ceiling::new(None), Ceiling::NONE);
        assert_eq!(Ceiling::NONE.headroom(), usize::MAX);
        if let Some(d) = default_limit() {
            assert!(d > 1 << 20, "{d}");
        }
    }

    /// A thread's count reaches the shared one once it has drifted `FLUSH`
    /// bytes, either way, and frees counted on another thread may take the
    /// shared count below zero for a while, which reads as 0. The counting
    /// allocator is not installed in this test binary, so only these calls
    /// move `ALLOCATED`.
    #[test]
    fn counts_reach_the_shared_counter_within_flush_a_thread() {
        let base = ALLOCATED.load(Relaxed);
        count(FLUSH - 1);
        assert_eq!(ALLOCATED.load(Relaxed), base);
        count(1);
        assert_eq!(ALLOCATED.load(Relaxed), base + FLUSH);
        count(-(FLUSH / 2));
        assert_eq!(ALLOCATED.load(Relaxed), base + FLUSH);
        std::thread::spawn(|| count(-4 * FLUSH)).join().unwrap();
        assert_eq!(ALLOCATED.load(Relaxed), base - 3 * FLUSH);
        assert_eq!(allocated(), 0);
        std::thread::spawn(|| count(3 * FLUSH)).join().unwrap();
        assert_eq!(ALLOCATED.load(Relaxed), base);
        count(FLUSH / 2);
        assert_eq!(ALLOCATED.load(Relaxed), base);
    }

    /// Without the counting allocator nothing is counted as held, so only
    /// a single request larger than the limit is refused; it is refused
    /// before anything is allocated, with the message naming the limit.
    #[test]
    fn a_request_past_the_limit_is_refused_with_the_message() {
        let c = Ceiling::new(Some(100 << 20));
        assert_eq!(c.limit(), Some(100 << 20));
        assert_eq!(c.check(1 << 20), Ok(()));
        let e = c.check(2 << 30).unwrap_err();
        assert_eq!(
            e.to_string(),
            "out of memory: the program uses more than 100 MiB (--max-memory)"
        );
        assert_eq!(c.check(usize::MAX), Err(e));
        assert_eq!(c.exceeded(), e);
    }
}
