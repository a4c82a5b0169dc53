//! Why a task is blocked, in one word: the wait record of `set_wait` /
//! `set_wait_site` as a `u64` (0: no wait), so that recording and clearing a
//! wait on every blocking operation costs a few plain stores and one relaxed
//! atomic store, never a lock, an allocation or a reference count.
//!
//! A word holds the [`WaitKind`] and a *site*: a number that names the
//! source location without carrying it. Sites come in two spaces:
//! - resolver sites (`set_wait_site`): the embedder (the interpreter) numbers
//!   its own blocking instructions and gives the runtime a
//!   [`SiteResolver`] that turns a number back into a `SrcLoc`; it is only
//!   called when a deadlock is reported;
//! - interned sites (`set_wait` with a `SrcLoc`): the location is interned
//!   once per run in [`Sites`] and the word holds its index.
//!
//! Layout: bits 0-55 the site, bit 56 set for an interned site, bits 57-59
//! the kind plus one (so a recorded wait is never 0).
//!
//! Invariants: `pack` is only given sites below `SITE_LIMIT`
//! (`set_wait_site` checks, and records an interned location otherwise);
//! an interned index is never reused within a run, so a published word
//! stays valid until the run ends.

use std::collections::HashMap;
use std::sync::Arc;

use super::api::{SrcLoc, WaitKind};
use crate::loom::Mutex;

/// Turns a site number given to `set_wait_site` back into its location.
pub type SiteResolver = Arc<dyn Fn(u64) -> SrcLoc + Send + Sync>;

/// Sites must be below this (56 bits).
pub const SITE_LIMIT: u64 = 1 << 56;
const INTERNED: u64 = 1 << 56;
const KIND_SHIFT: u32 = 57;

const KINDS: [WaitKind; 6] = [
    WaitKind::ChanSend,
    WaitKind::ChanRecv,
    WaitKind::Select,
    WaitKind::NilChan,
    WaitKind::Sleep,
    WaitKind::Collective,
];

fn kind_code(kind: WaitKind) -> u64 {
    match kind {
        WaitKind::ChanSend => 1,
        WaitKind::ChanRecv => 2,
        WaitKind::Select => 3,
        WaitKind::NilChan => 4,
        WaitKind::Sleep => 5,
        WaitKind::Collective => 6,
    }
}

/// The word for a wait of `kind` at `site` (`site < SITE_LIMIT`).
#[inline]
pub(crate) fn pack(kind: WaitKind, site: u64, interned: bool) -> u64 {
    debug_assert!(site < SITE_LIMIT);
    (kind_code(kind) << KIND_SHIFT) | (u64::from(interned) * INTERNED) | (site & (SITE_LIMIT - 1))
}

/// The kind of a nonzero word.
pub(crate) fn kind_of(word: u64) -> Option<WaitKind> {
    let code = (word >> KIND_SHIFT) as usize;
    KINDS.get(code.checked_sub(1)?).copied()
}

/// The name of a wait's span in the trace ("wait: chan receive"; `None`
/// for 0 or a word no `pack` made).
pub(crate) fn trace_name(word: u64) -> Option<&'static str> {
    Some(match kind_of(word)? {
        WaitKind::ChanSend => "wait: chan send",
        WaitKind::ChanRecv => "wait: chan receive",
        WaitKind::Select => "wait: select",
        WaitKind::NilChan => "wait: nil chan",
        WaitKind::Sleep => "wait: sleep",
        WaitKind::Collective => "wait: collective",
    })
}

/// The per-run table of sites: the embedder's resolver and the interned
/// locations of `set_wait`.
pub(crate) struct Sites {
    resolver: Option<SiteResolver>,
    interned: Mutex<Interned>,
}

#[derive(Default)]
struct Interned {
    locs: Vec<SrcLoc>,
    index: HashMap<SrcLoc, u64>,
}

impl Sites {
    pub fn new(resolver: Option<SiteResolver>) -> Sites {
        Sites {
            resolver,
            interned: Mutex::new(Interned::default()),
        }
    }

    /// The word for a wait at a location given in full (interned).
    pub fn intern(&self, kind: WaitKind, loc: SrcLoc) -> u64 {
        let mut t = self.interned.lock();
        let next = t.locs.len() as u64;
        let i = match t.index.get(&loc) {
            Some(&i) => i,
            None => {
                t.locs.push(loc.clone());
                t.index.insert(loc, next);
                next
            }
        };
        pack(kind, i, true)
    }

    /// The location of a site given to `set_wait_site` (or carried by a
    /// controlled run's operation): the resolver's answer, `?:0:0` without
    /// one.
    pub fn site_loc(&self, site: u64) -> SrcLoc {
        match &self.resolver {
            Some(r) => r(site),
            None => SrcLoc::new("?", 0, 0),
        }
    }

    /// The kind and location of a nonzero word; `None` for 0 or a word
    /// this table did not make.
    pub fn resolve(&self, word: u64) -> Option<(WaitKind, SrcLoc)> {
        let kind = kind_of(word)?;
        let site = word & (SITE_LIMIT - 1);
        let loc = if word & INTERNED != 0 {
            self.interned.lock().locs.get(site as usize).cloned()?
        } else {
            match &self.resolver {
                Some(r) => r(site),
                None => SrcLoc::new("?", 0, 0),
            }
        };
        Some((kind, loc))
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip_through_both_site_spaces() {
        let sites = Sites::new(Some(Arc::new(|s| SrcLoc::new("r.weft", s as u32, 7))));
        for kind in KINDS {
            let w = pack(kind, 42, false);
            assert_ne!(w, 0);
            assert_eq!(sites.resolve(w), Some((kind, SrcLoc::new("r.weft", 42, 7))));
            let w = sites.intern(kind, SrcLoc::new("a.weft", 3, 4));
            assert_eq!(sites.resolve(w), Some((kind, SrcLoc::new("a.weft", 3, 4))));
        }
        // Interning is idempotent: the same location keeps its index.
        let a = sites.intern(WaitKind::Sleep, SrcLoc::new("a.weft", 3, 4));
        let b = sites.intern(WaitKind::Sleep, SrcLoc::new("a.weft", 3, 4));
        assert_eq!(a, b);
        let c = sites.intern(WaitKind::Sleep, SrcLoc::new("a.weft", 5, 4));
        assert_ne!(a, c);
        assert_eq!(sites.resolve(0), None);
        assert_eq!(trace_name(0), None);
        for kind in KINDS {
            let name = trace_name(pack(kind, 1, false));
            assert_eq!(name, Some(format!("wait: {kind}").as_str()));
        }
        assert_eq!(
            sites.resolve(pack(WaitKind::Select, SITE_LIMIT - 1, false)),
            Some((
                WaitKind::Select,
                SrcLoc::new("r.weft", (SITE_LIMIT - 1) as u32, 7)
            ))
        );
    }
}
