//! Frame helpers for the dispatch loop: copying values without calling
//! `Clone` or the drop glue for scalars, and setting a callee's frame to its
//! template.
//!
//! Invariant relied on: slots above the running frame hold only scalars
//! (`Ret` clears what a frame owns), so overwriting them without a drop
//! never leaks; the one `unsafe` block (`init_frame`) also needs only that
//! the template is all scalars, which `Func::scalar_frame` records.

use super::code::{Func, Slot};
use super::value::Value;

/// Sets a callee's frame to `g`'s template. With `Func::scalar_frame` the
/// frame's old values are overwritten without being dropped, which is right
/// because slots above the caller's frame hold only scalars (`Ret` clears
/// what a frame owns). Inlined into `step`'s `Call` arm, whose every call
/// runs it: left to the inliner, it stopped being inlined when `step` grew
/// (the memory ceiling's checks), and calls cost 1.3% more instructions.
#[inline(always)]
pub(super) fn init_frame(frame: &mut [Value], g: &Func) {
    let template = &g.entry[..];
    debug_assert!(!g.entry_scalar || template.iter().all(is_scalar));
    if g.entry_scalar && frame.len() == template.len() {
        // SAFETY: both ranges hold `frame.len()` values and do not overlap
        // (the template is its own allocation). Every entry value is a
        // scalar: `entry_scalar` is computed from this immutable template
        // when the `Func` is built (`lower_emit.rs`, `Emitter::finish`), and
        // scalars own nothing, so a bitwise copy is a valid copy. The
        // overwritten values are not dropped: were one to own something it
        // would leak, never be freed twice.
        unsafe {
            std::ptr::copy_nonoverlapping(template.as_ptr(), frame.as_mut_ptr(), frame.len());
        }
    } else {
        for (slot, v) in frame.iter_mut().zip(template.iter()) {
            put(slot, dup(v));
        }
    }
}

/// A copy of `v`; scalars without a call into `Clone`.
#[inline(always)]
pub(super) fn dup(v: &Value) -> Value {
    match v {
        Value::Int(i) => Value::Int(*i),
        Value::Float(x) => Value::Float(*x),
        Value::Bool(b) => Value::Bool(*b),
        other => other.clone(),
    }
}

/// Whether `v` owns nothing (no drop glue to run).
#[inline(always)]
pub(super) fn is_scalar(v: &Value) -> bool {
    matches!(v, Value::Int(_) | Value::Float(_) | Value::Bool(_))
}

/// Stores `v` in `slot`; a scalar being overwritten is not passed to the
/// drop glue (it owns nothing).
#[inline(always)]
pub(super) fn put(slot: &mut Value, v: Value) {
    if is_scalar(slot) {
        std::mem::forget(std::mem::replace(slot, v));
    } else {
        *slot = v;
    }
}

/// A value as its two words, for [`put_words`]. `MaybeUninit` words: a
/// value's padding (after a bool's byte) may be uninitialized, which no
/// `u64` may hold.
pub(super) type Words = [std::mem::MaybeUninit<u64>; 2];
const _: () = assert!(std::mem::size_of::<Value>() == std::mem::size_of::<Words>());

/// `v` as two words (to be stored with [`put_words`], or turned back with
/// [`from_words`]); its ownership goes with them.
#[inline(always)]
pub(super) fn into_words(v: Value) -> Words {
    // SAFETY: a `Value` is exactly two words (checked above) and every bit
    // pattern, initialized or not, is a valid `Words`.
    unsafe { std::mem::transmute::<Value, Words>(v) }
}

/// The value [`into_words`] took apart.
#[inline(always)]
pub(super) fn from_words(w: Words) -> Value {
    // SAFETY: `w` came from `into_words`, so it is a value's words, owned.
    unsafe { std::mem::transmute::<Words, Value>(w) }
}

/// [`put`] for a value just received, which arrives in two registers:
/// written to the slot as two 8-byte words. Moved as a whole, it went
/// through the stack as two 8-byte stores read back by one 16-byte load,
/// which the store buffer cannot forward: a stall of a dozen cycles in
/// every receive (a fifth of `select4`'s receive path).
#[inline(always)]
pub(super) fn put_words(slot: &mut Value, w: Words) {
    if !is_scalar(slot) {
        // SAFETY: `slot` is a valid value, dropped once here and
        // overwritten below without being read again.
        unsafe { std::ptr::drop_in_place(slot) };
    }
    let p = (slot as *mut Value).cast::<std::mem::MaybeUninit<u64>>();
    // SAFETY: `p` points to the slot's two words, 8-aligned (a `Value` is
    // `repr(C, u64)`); writing a value's words (`into_words`) makes the
    // slot hold that value, and the old one was dropped above (or owned
    // nothing).
    unsafe {
        p.write(w[0]);
        p.add(1).write(w[1]);
    }
}

/// Stores the int `r` in `slot`: when the slot already holds an int (as
/// an int variable's slot always does), one store of the payload.
#[inline(always)]
pub(super) fn put_int(slot: &mut Value, r: i64) {
    match slot {
        Value::Int(old) => *old = r,
        other => *other = Value::Int(r),
    }
}

/// The value of `x` for an op whose result replaces `out`: taken (no copy,
/// so copy-on-write can reuse the storage) when `out` is `x`, else cloned.
pub(super) fn take_or_clone(fs: &mut [Value], x: Slot, out: Slot) -> Value {
    let xi = x as usize;
    if x == out {
        std::mem::replace(&mut fs[xi], Value::Int(0))
    } else {
        fs[xi].clone()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    /// The `unsafe` copy in `init_frame` (run under Miri:
    /// `cargo +nightly miri test --lib interp::frame`).
    fn func(template: Vec<Value>) -> Func {
        Func {
            name: Arc::from("f"),
            scalar_frame: template.iter().all(is_scalar),
            entry_scalar: template.iter().all(is_scalar),
            entry: template.clone().into(),
            junk: template.len().checked_sub(1).map(|s| s as Slot),
            template: template.into(),
            params: Vec::new(),
            code: Vec::new(),
            locs: Vec::new(),
        }
    }

    #[test]
    fn init_frame_copies_scalar_and_owning_templates() {
        let g = func(vec![Value::Int(3), Value::Float(0.5), Value::Bool(true)]);
        assert!(g.scalar_frame);
        let mut frame = vec![Value::Int(9), Value::Int(8), Value::Int(7)];
        init_frame(&mut frame, &g);
        assert_eq!(format!("{frame:?}"), format!("{:?}", &g.template[..]));
        // A template with an owned value is cloned in, and what the frame
        // held is dropped.
        let g = func(vec![Value::Int(1), Value::str("s"), Value::Int(2)]);
        assert!(!g.scalar_frame);
        let mut frame = vec![Value::str("old"), Value::Int(0), Value::Int(0)];
        init_frame(&mut frame, &g);
        assert_eq!(format!("{frame:?}"), format!("{:?}", &g.template[..]));
    }
}
