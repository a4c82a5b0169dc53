//! The completion of a receive and of a select, written once for both
//! paths that reach it: `step`'s fast path (the channel was ready) and
//! `run_task`'s parked path (the task waited). Completing stores the
//! received value (or the element's zero value from a closed channel) and
//! `ok` in their slots; a select then goes to the chosen case's block, or
//! fails when the chosen case sent on a closed channel.
//!
//! Also here: `chan_ref` (a slot's channel) and `FrameCases` (a select's
//! cases as the select protocol sees them, read from the frame).

use weft_chan::{Cases, Chan, Outcome, Selected};
use weft_tensor::Tensor;

use super::code::{Func, SelCase, Slot};
use super::error::{InternalError, RuntimeError};
use super::frame::{dup, from_words, into_words, put, put_words};
use super::state::{loc_of, Failure, InFlight, Pending};
use super::value::{closed_error, Value};

/// The channel a slot holds (`None`: nil).
#[inline(always)]
pub(super) fn chan_ref(v: &Value) -> Result<Option<&Chan<Value>>, RuntimeError> {
    match v {
        Value::Chan(c) => Ok(c.ch.as_ref()),
        other => Err(RuntimeError::unexpected("channel", other)),
    }
}

/// The tensors to wait for after receiving `v`: every device tensor in it
/// whose producer's event has not completed, at the top or nested in a
/// struct, list, map or closure's captures. Free for what most channels
/// carry (scalars, strings, host tensors): only a container is walked.
#[inline(always)]
pub(super) fn in_flight(v: &Value) -> Option<InFlight> {
    match v {
        Value::Tensor(t) if !t.is_ready() => Some(Box::new(Pending(vec![Tensor::clone(t)]))),
        Value::Struct(_) | Value::List(_) | Value::Map(_) | Value::Func(Some(_)) => nested(v),
        _ => None,
    }
}

/// `in_flight` of a container: a walk with a stack of its own (a value
/// may nest deeply). A list or map whose first element's kinds show that
/// its element type holds no tensor is not walked further; a struct of
/// scalars, or such a list or map, is ruled out before anything is
/// allocated.
#[inline(never)]
fn nested(v: &Value) -> Option<InFlight> {
    let free = match v {
        Value::Struct(_) => tensor_free(v),
        Value::List(items) => items.first().is_none_or(tensor_free),
        Value::Map(m) => m.entries.values().next().is_none_or(tensor_free),
        _ => false,
    };
    if free {
        return None;
    }
    let mut found = Vec::new();
    let mut todo = vec![v];
    while let Some(v) = todo.pop() {
        match v {
            Value::Tensor(t) if !t.is_ready() => found.push(Tensor::clone(t)),
            Value::Struct(fields) => todo.extend(fields.iter()),
            Value::List(items) if !items.first().is_some_and(tensor_free) => {
                todo.extend(items.iter());
            }
            // Keys are comparable: never tensors.
            Value::Map(m) if !m.entries.values().next().is_some_and(tensor_free) => {
                todo.extend(m.entries.values());
            }
            Value::Func(Some(c)) => todo.extend(c.captures.iter()),
            _ => {}
        }
    }
    (!found.is_empty()).then(|| Box::new(Pending(found)))
}

/// Whether `v`'s type holds no tensor, as its kinds show: a scalar,
/// string, channel or comm, or a struct of only those. Values of one type
/// have the same kinds in the same places except inside lists, maps and
/// funcs (which may be empty or nil), so when one element of a list is
/// tensor-free, all are (a list's elements all have its element type).
fn tensor_free(v: &Value) -> bool {
    match v {
        Value::Int(_)
        | Value::Float(_)
        | Value::Bool(_)
        | Value::Str(_)
        | Value::Chan(_)
        | Value::Comm(_) => true,
        Value::Struct(fields) => fields.iter().all(tensor_free),
        Value::Tensor(_) | Value::List(_) | Value::Map(_) | Value::Func(_) => false,
    }
}

/// Completes a receive into the frame `fs`: the value received (`None`:
/// the channel is closed and drained, so the element's `zero`) goes to
/// `out`, whether one came to `ok`. Returns the received tensors still in
/// flight to their device, for the receiver to wait for.
#[inline(always)]
pub(super) fn complete_recv(
    fs: &mut [Value],
    out: Option<Slot>,
    ok: Option<Slot>,
    zero: &Value,
    got: Option<Value>,
) -> Option<InFlight> {
    let Some(v) = got else {
        // `put`: the old value of an int or bool slot (what a received
        // value's and `ok`'s slots hold) is not passed to the drop glue.
        if let Some(o) = out {
            put(&mut fs[o as usize], zero.clone());
        }
        if let Some(k) = ok {
            put(&mut fs[k as usize], Value::Bool(false));
        }
        return None;
    };
    complete_recv_value(fs, out, ok, v)
}

/// [`complete_recv`] for a value received (not the channel's close): the
/// receive's hot path, with no `Option` around the value.
#[inline(always)]
pub(super) fn complete_recv_value(
    fs: &mut [Value],
    out: Option<Slot>,
    ok: Option<Slot>,
    v: Value,
) -> Option<InFlight> {
    // The value goes to its slot first and is looked at there: checked
    // where it arrived (`in_flight(&v)` before the move), it was spilled
    // to the stack in two 8-byte halves and copied on in one 16-byte load,
    // which the store buffer cannot forward (a fifth of `select4`'s
    // receive path stalled there).
    let w = into_words(v);
    let pending = match out {
        Some(o) => {
            let slot = &mut fs[o as usize];
            put_words(slot, w);
            in_flight(slot)
        }
        None => in_flight(&from_words(w)),
    };
    if let Some(k) = ok {
        put(&mut fs[k as usize], Value::Bool(true));
    }
    pending
}

/// Completes the select at `at` of `f` (its `cases`) into the frame `fs`:
/// stores what the chosen case received and returns the first instruction
/// of the case's block, with the received tensors to wait for. A chosen send
/// on a closed channel fails.
#[inline]
pub(super) fn complete_select(
    fs: &mut [Value],
    f: &Func,
    at: usize,
    cases: &[SelCase],
    chosen: Selected<Value>,
) -> Result<(usize, Option<InFlight>), Failure> {
    let Some(case) = cases.get(chosen.index) else {
        let bug = InternalError::BadCaseIndex {
            index: chosen.index,
            cases: cases.len(),
        };
        return Err(Failure::at(Some(f), at, bug.into()));
    };
    let pending = match chosen.outcome {
        Outcome::Received(got) => {
            if got.is_none() {
                // Closed and drained: a `lines` reader's error?
                if let Some(err) = fs.get(case.chan as usize).and_then(closed_error) {
                    let loc = case.loc.clone().unwrap_or_else(|| loc_of(Some(f), at));
                    return Err(Failure { err, loc });
                }
            }
            complete_recv(fs, case.recv, case.ok, &case.zero, got)
        }
        Outcome::Sent => None,
        Outcome::SendClosed(_) => return Err(send_closed(f, at, case)),
    };
    Ok((case.target as usize, pending))
}

/// A chosen send case on a closed channel: a panic located at the case
/// when the IR gave its location (docs/language.md, "Details"), else at
/// the `select`.
#[cold]
#[inline(never)]
fn send_closed(f: &Func, at: usize, case: &SelCase) -> Failure {
    Failure {
        err: RuntimeError::SendOnClosed,
        loc: case.loc.clone().unwrap_or_else(|| loc_of(Some(f), at)),
    }
}

/// A `select` instruction's cases over the frame `fs`: the select reads
/// the channels and send values where they are (no case list is built).
pub(super) struct FrameCases<'s> {
    cases: &'s [SelCase],
    fs: &'s [Value],
}

impl<'s> FrameCases<'s> {
    /// Checks that every case names a channel (or nil).
    pub(super) fn new(cases: &'s [SelCase], fs: &'s [Value]) -> Result<Self, RuntimeError> {
        for c in cases {
            if let Some(v) = fs.get(c.chan as usize) {
                if chan_ref(v)?.is_none() {
                    if let Value::Chan(ch) = v {
                        if let Some(far) = &ch.far {
                            return Err(RuntimeError::SelectRemote(far.r.owner));
                        }
                    }
                }
            }
        }
        Ok(FrameCases { cases, fs })
    }
}

impl Cases<Value> for FrameCases<'_> {
    #[inline]
    fn count(&self) -> usize {
        self.cases.len()
    }
    #[inline]
    fn chan(&self, i: usize) -> Option<&Chan<Value>> {
        match self.fs.get(self.cases.get(i)?.chan as usize)? {
            Value::Chan(c) => c.ch.as_ref(),
            _ => None,
        }
    }
    #[inline]
    fn is_send(&self, i: usize) -> bool {
        self.cases
            .get(i)
            .is_some_and(|c| c.send && c.value.is_some())
    }
    #[inline]
    fn take_value(&self, i: usize) -> Option<Value> {
        let c = self.cases.get(i)?;
        if !c.send {
            return None;
        }
        self.fs.get(c.value? as usize).map(dup)
    }
    #[inline]
    fn put_back(&self, _: usize, _: Value) {
        // The frame still holds the value: the taken copy is dropped.
    }
}
