//! Replay tokens: one word that names a schedule, and the two choosers
//! around them. [`Recorder`] wraps any chooser and writes down every
//! decision; [`Replayer`] feeds a token's decisions back and checks, as it
//! goes, that the run offers the same choices as the recorded one.
//!
//! What a token holds: the decisions that differ from the default
//! (`SchedPoint::default_choice` for a task, 0 for a value), and default
//! ones at least every 32 decisions (checkpoints, `CHECK_EVERY`), each with
//! its distance from the previous one and a 16-bit check of everything
//! offered and chosen up to it; then the number of decisions and a 32-bit
//! check of the whole stream. A decision's check covers the ready tasks
//! with their operations (kind, site, objects), the kind and range of a
//! data choice, and the choice. So a replay notices a divergence (the
//! program, its input or the engine changed) at the first recorded decision
//! at or after it, within 32 decisions (a 1/32 of the run in a long one),
//! or at the end; it then stops the run.
//!
//! Text form: `w1` and the bytes in unpadded base64url (`A-Z a-z 0-9 - _`):
//! one shell word that never starts with `-`.

use std::hash::{Hash, Hasher};

use crate::choice::{Chooser, PickKind, SchedPoint};

/// A schedule written down (see the module doc).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    entries: Vec<Entry>,
    decisions: u64,
    digest: u32,
}

/// One decision that differs from the default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    /// Decisions since the previous entry (or the start).
    delta: u64,
    /// The task number, or the value.
    value: u64,
    /// The low 16 bits of the stream's check after this decision.
    check: u16,
}

/// Why a token could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid replay token (it must be a word printed by `weft test`)")]
pub struct BadToken;

/// A replay that did not follow its token.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "replay divergence at decision {decision} (step {step}): {what}; the program or the \
     engine is not the one that made the token"
)]
pub struct Divergence {
    /// The decision (from 1) at which the divergence was noticed.
    pub decision: u64,
    /// The run's step then.
    pub step: u64,
    pub what: String,
}

/// The running check of a decision stream.
#[derive(Clone, Copy, Debug)]
struct Chain(u64);

impl Chain {
    fn new() -> Chain {
        Chain(0x5745_4654_5445_5354)
    }

    fn add(&mut self, f: impl FnOnce(&mut std::hash::DefaultHasher)) {
        let mut h = std::hash::DefaultHasher::new();
        self.0.hash(&mut h);
        f(&mut h);
        self.0 = h.finish();
    }

    fn task(&mut self, p: &SchedPoint<'_>, chosen: u64) {
        self.add(|h| {
            0u8.hash(h);
            p.ready.len().hash(h);
            for r in p.ready {
                r.task.hash(h);
                r.op.kind.hash(h);
                r.op.site.hash(h);
                r.op.objs.hash(h);
            }
            chosen.hash(h);
        });
    }

    fn pick(&mut self, what: PickKind, n: usize, chosen: u64) {
        self.add(|h| {
            1u8.hash(h);
            what.hash(h);
            n.hash(h);
            chosen.hash(h);
        });
    }

    fn word(&mut self, v: u64) {
        self.add(|h| {
            2u8.hash(h);
            v.hash(h);
        });
    }

    fn check16(&self) -> u16 {
        (self.0 >> 48) as u16
    }

    fn check32(&self) -> u32 {
        self.0 as u32
    }
}

/// A default decision is written down anyway (a checkpoint: its value and
/// the check) when this many decisions passed since the last one written ...
const CHECK_EVERY: u64 = 32;
/// ... or, in a long run, a `1/CHECKS` of the decisions so far: a replay
/// notices a divergence within that many decisions, and a token of `n`
/// decisions holds about `CHECKS * ln(n / (CHECKS * CHECK_EVERY))`
/// checkpoints at most.
const CHECKS: u64 = 32;

/// Wraps a chooser and records its decisions into a [`Token`].
pub struct Recorder<C> {
    inner: C,
    chain: Chain,
    entries: Vec<Entry>,
    decisions: u64,
    last_entry: u64,
}

impl<C: Chooser> Recorder<C> {
    pub fn new(inner: C) -> Recorder<C> {
        Recorder {
            inner,
            chain: Chain::new(),
            entries: Vec::new(),
            decisions: 0,
            last_entry: 0,
        }
    }

    /// The chooser inside.
    pub fn inner(&self) -> &C {
        &self.inner
    }

    /// The schedule recorded so far.
    pub fn token(&self) -> Token {
        Token {
            entries: self.entries.clone(),
            decisions: self.decisions,
            digest: self.chain.check32(),
        }
    }

    fn note(&mut self, value: u64, default: bool) {
        self.decisions += 1;
        let since = self.decisions - self.last_entry;
        let checkpoint = since >= CHECK_EVERY.max(self.decisions / CHECKS);
        if !default || checkpoint {
            self.entries.push(Entry {
                delta: self.decisions - self.last_entry,
                value,
                check: self.chain.check16(),
            });
            self.last_entry = self.decisions;
        }
    }
}

impl<C: Chooser> Chooser for Recorder<C> {
    fn pick_task(&mut self, p: &SchedPoint<'_>) -> Option<usize> {
        let i = self.inner.pick_task(p)?;
        let task = p.ready.get(i)?.task;
        self.chain.task(p, task);
        self.note(task, i == p.default_choice());
        Some(i)
    }

    fn pick(&mut self, what: PickKind, n: usize) -> usize {
        let v = self.inner.pick(what, n).min(n.saturating_sub(1));
        self.chain.pick(what, n, v as u64);
        self.note(v as u64, v == 0);
        v
    }

    fn word(&mut self) -> u64 {
        let v = self.inner.word();
        self.chain.word(v);
        self.note(v, v == 0);
        v
    }

    fn prefer_case(&mut self, n: usize) -> Option<usize> {
        // A preference is a decision: recorded as value + 1 (0: none).
        let v = self.inner.prefer_case(n).filter(|&c| c < n);
        let value = v.map_or(0, |c| c as u64 + 1);
        self.chain.pick(PickKind::Case, n + 1, value);
        self.note(value, value == 0);
        v
    }
}

/// Feeds a token's decisions back (see the module doc).
pub struct Replayer {
    token: Token,
    chain: Chain,
    /// Decisions made so far.
    decisions: u64,
    /// The next entry and the decision it applies to.
    next: usize,
    next_at: u64,
    step: u64,
    divergence: Option<Divergence>,
}

impl Replayer {
    pub fn new(token: Token) -> Replayer {
        let next_at = token.entries.first().map_or(u64::MAX, |e| e.delta);
        Replayer {
            token,
            chain: Chain::new(),
            decisions: 0,
            next: 0,
            next_at,
            step: 0,
            divergence: None,
        }
    }

    /// After the run: the divergence noticed, or one found now (a run that
    /// made fewer decisions than recorded, or other ones).
    pub fn finish(&self) -> Result<(), Divergence> {
        if let Some(d) = &self.divergence {
            return Err(d.clone());
        }
        if self.decisions != self.token.decisions {
            return Err(self.diverged(format!(
                "the run ended after {} decisions, the token has {}",
                self.decisions, self.token.decisions
            )));
        }
        if self.chain.check32() != self.token.digest {
            return Err(self.diverged("the run was offered other choices".into()));
        }
        Ok(())
    }

    fn diverged(&self, what: String) -> Divergence {
        Divergence {
            decision: self.decisions,
            step: self.step,
            what,
        }
    }

    fn fail(&mut self, what: String) {
        if self.divergence.is_none() {
            self.divergence = Some(self.diverged(what));
        }
    }

    /// The recorded value of the decision about to be made, if any
    /// (`None`: the default). Counts the decision.
    fn take(&mut self) -> Option<Entry> {
        self.decisions += 1;
        if self.decisions > self.token.decisions {
            self.fail(format!(
                "the run goes on past the {} decisions of the token",
                self.token.decisions
            ));
            return None;
        }
        if self.decisions != self.next_at {
            return None;
        }
        let e = self.token.entries.get(self.next).copied();
        self.next += 1;
        self.next_at = match self.token.entries.get(self.next) {
            Some(n) => self.decisions + n.delta,
            None => u64::MAX,
        };
        e
    }

    /// Checks the stream after a recorded decision.
    fn check(&mut self, e: Option<Entry>) {
        if let Some(e) = e {
            if self.chain.check16() != e.check {
                self.fail("the run was offered other choices before it".into());
            }
        }
    }
}

impl Chooser for Replayer {
    fn pick_task(&mut self, p: &SchedPoint<'_>) -> Option<usize> {
        self.step = p.step;
        if self.divergence.is_some() {
            return None;
        }
        let e = self.take();
        if self.divergence.is_some() {
            return None;
        }
        let i = match e {
            None => p.default_choice(),
            Some(e) => match p.ready.iter().position(|r| r.task == e.value) {
                Some(i) => i,
                None => {
                    self.fail(format!("task {} is not runnable", e.value));
                    return None;
                }
            },
        };
        let task = p.ready.get(i)?.task;
        self.chain.task(p, task);
        self.check(e);
        if self.divergence.is_some() {
            return None;
        }
        Some(i)
    }

    fn pick(&mut self, what: PickKind, n: usize) -> usize {
        let e = self.take();
        let v = e.map_or(0, |e| e.value);
        let v = if v >= n as u64 {
            self.fail(format!("value {v} is out of range (0 to {})", n - 1));
            0
        } else {
            v
        };
        self.chain.pick(what, n, v);
        self.check(e);
        v as usize
    }

    fn word(&mut self) -> u64 {
        let e = self.take();
        let v = e.map_or(0, |e| e.value);
        self.chain.word(v);
        self.check(e);
        v
    }

    fn prefer_case(&mut self, n: usize) -> Option<usize> {
        let e = self.take();
        let value = e.map_or(0, |e| e.value);
        let v = if value > n as u64 {
            self.fail(format!("case {value} is out of range"));
            0
        } else {
            value
        };
        self.chain.pick(PickKind::Case, n + 1, v);
        self.check(e);
        v.checked_sub(1).map(|c| c as usize)
    }
}

// ---- the text form ----

const VERSION: u64 = 1;
const PREFIX: &str = "w1";
const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

impl Token {
    /// The number of decisions the token records (all, defaults included).
    pub fn decisions(&self) -> u64 {
        self.decisions
    }

    /// The number of decisions that differ from the default.
    pub fn explicit(&self) -> usize {
        self.entries.len()
    }

    fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::new();
        put_varint(&mut b, VERSION);
        put_varint(&mut b, self.entries.len() as u64);
        for e in &self.entries {
            put_varint(&mut b, e.delta);
            put_varint(&mut b, e.value);
            b.extend_from_slice(&e.check.to_le_bytes());
        }
        put_varint(&mut b, self.decisions);
        b.extend_from_slice(&self.digest.to_le_bytes());
        b
    }

    fn from_bytes(b: &[u8]) -> Result<Token, BadToken> {
        let mut r = Reader { b, at: 0 };
        if r.varint()? != VERSION {
            return Err(BadToken);
        }
        let n = r.varint()?;
        // Each entry takes at least 4 bytes: a bound before allocating.
        if n > (b.len() as u64) / 4 {
            return Err(BadToken);
        }
        let mut entries = Vec::with_capacity(n as usize);
        let mut at = 0u64;
        for _ in 0..n {
            let delta = r.varint()?;
            let value = r.varint()?;
            let check = u16::from_le_bytes([r.byte()?, r.byte()?]);
            if delta == 0 {
                return Err(BadToken);
            }
            at = at.checked_add(delta).ok_or(BadToken)?;
            entries.push(Entry {
                delta,
                value,
                check,
            });
        }
        let decisions = r.varint()?;
        if at > decisions {
            return Err(BadToken);
        }
        let digest = u32::from_le_bytes([r.byte()?, r.byte()?, r.byte()?, r.byte()?]);
        if r.at != b.len() {
            return Err(BadToken);
        }
        Ok(Token {
            entries,
            decisions,
            digest,
        })
    }
}

impl std::fmt::Display for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let bytes = self.to_bytes();
        let mut s = String::with_capacity(PREFIX.len() + bytes.len() * 4 / 3 + 4);
        s.push_str(PREFIX);
        for chunk in bytes.chunks(3) {
            let n = chunk
                .iter()
                .enumerate()
                .fold(0u32, |acc, (i, &b)| acc | (u32::from(b) << (16 - 8 * i)));
            for i in 0..=chunk.len() {
                s.push(B64[((n >> (18 - 6 * i)) & 63) as usize] as char);
            }
        }
        f.write_str(&s)
    }
}

impl std::str::FromStr for Token {
    type Err = BadToken;
    fn from_str(s: &str) -> Result<Token, BadToken> {
        let body = s.strip_prefix(PREFIX).ok_or(BadToken)?;
        let mut digits = Vec::with_capacity(body.len());
        for c in body.bytes() {
            let d = B64.iter().position(|&x| x == c).ok_or(BadToken)?;
            digits.push(d as u32);
        }
        if digits.len() % 4 == 1 {
            return Err(BadToken);
        }
        let mut bytes = Vec::with_capacity(digits.len() * 3 / 4);
        for chunk in digits.chunks(4) {
            let n = chunk
                .iter()
                .enumerate()
                .fold(0u32, |acc, (i, &d)| acc | (d << (18 - 6 * i)));
            let keep = chunk.len() - 1;
            // The bits past the last byte must be zero: one text per token.
            if n & ((1 << (24 - 8 * keep)) - 1) != 0 {
                return Err(BadToken);
            }
            for i in 0..keep {
                bytes.push((n >> (16 - 8 * i)) as u8);
            }
        }
        Token::from_bytes(&bytes)
    }
}

fn put_varint(b: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        b.push((v as u8) | 0x80);
        v >>= 7;
    }
    b.push(v as u8);
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> Result<u8, BadToken> {
        let v = *self.b.get(self.at).ok_or(BadToken)?;
        self.at += 1;
        Ok(v)
    }

    fn varint(&mut self) -> Result<u64, BadToken> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(BadToken)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip_through_text() {
        for n in 0..40u64 {
            let t = Token {
                entries: (0..n)
                    .map(|i| Entry {
                        delta: 1 + i * 7,
                        value: i * i * 1_000_003,
                        check: (i * 31) as u16,
                    })
                    .collect(),
                decisions: n * n * 7 + n,
                digest: (n * 0x9E37_79B9) as u32,
            };
            let s = t.to_string();
            assert!(s.starts_with("w1"), "{s}");
            assert!(s
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_'));
            assert_eq!(s.parse::<Token>(), Ok(t), "{s}");
        }
    }

    #[test]
    fn malformed_tokens_are_refused() {
        for s in [
            "",
            "w1",
            "x1AAAA",
            "w1!!",
            "w1A",
            "w1AAAAAAAAAAAAAAAAAAAAAAA",
        ] {
            assert_eq!(s.parse::<Token>(), Err(BadToken), "{s}");
        }
        let good = Token {
            entries: vec![Entry {
                delta: 3,
                value: 2,
                check: 9,
            }],
            decisions: 5,
            digest: 1,
        }
        .to_string();
        // Cut short, or a character changed into another valid one that
        // breaks the structure: refused, never a panic.
        for cut in 0..good.len() {
            let _ = good[..cut].parse::<Token>();
        }
        assert!(good.parse::<Token>().is_ok());
    }
}
