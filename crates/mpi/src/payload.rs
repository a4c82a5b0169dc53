//! [`Payload`]: the bytes of one value crossing processes. It keeps room in
//! front of the bytes for a message header (`wire.rs`), so that a value
//! serialized into it is sent as it is, without another copy; a received
//! message's payload is the tail of the received buffer, also not copied.
//! A large payload's buffer comes from, and goes back to, the pool of
//! `pool.rs`.

use std::fmt;
use std::sync::Arc;

/// Bytes reserved in front of a new payload: the longest header of
/// `wire.rs` fits.
pub(crate) const ROOM: usize = 24;

/// The serialized form of one value that crosses processes. Write into it
/// with [`Payload::extend_from_slice`], [`Payload::push`] or
/// [`std::io::Write`]; read with [`Payload::as_slice`].
///
/// Large `f32` buffers (a tensor's memory) can travel beside the bytes
/// without being copied into them: [`Payload::attach`]. The receiver gets
/// them, in the same order, from [`Payload::attached`]; MPI sends them
/// from the shared buffer itself and receives them straight into the new
/// buffer (docs/distributed.md, "Speed").
#[derive(Clone)]
pub struct Payload {
    buf: Vec<u8>,
    start: usize,
    attached: Vec<Arc<Vec<f32>>>,
}

/// The most buffers one payload carries beside its bytes
/// ([`Payload::attach`]).
pub const MAX_ATTACHED: usize = 64;

impl Payload {
    /// An empty payload with room for a header.
    pub fn new() -> Payload {
        Payload::with_capacity(0)
    }

    /// An empty payload with room for a header and `n` bytes.
    pub fn with_capacity(n: usize) -> Payload {
        let mut buf = crate::pool::take(ROOM.saturating_add(n));
        buf.resize(ROOM, 0);
        Payload {
            buf,
            start: ROOM,
            attached: Vec::new(),
        }
    }

    /// A payload holding `bytes` (copied once, behind the header room).
    pub fn from_bytes(bytes: &[u8]) -> Payload {
        let mut p = Payload::with_capacity(bytes.len());
        p.extend_from_slice(bytes);
        p
    }

    /// The payload's bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.buf[self.start..]
    }

    /// The number of bytes.
    pub fn len(&self) -> usize {
        self.buf.len() - self.start
    }

    /// True when there are no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends bytes.
    pub fn extend_from_slice(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Makes room for `additional` more bytes (a large payload's buffer
    /// then comes from the pool of reused buffers; write the size of a
    /// large value first, so that it is not grown step by step).
    pub fn reserve(&mut self, additional: usize) {
        let need = self.buf.len().saturating_add(additional);
        if need <= self.buf.capacity() {
            return;
        }
        if need >= crate::pool::MIN {
            let mut b = crate::pool::take(need);
            b.extend_from_slice(&self.buf);
            crate::pool::give(std::mem::replace(&mut self.buf, b));
        } else {
            self.buf.reserve(additional);
        }
    }

    /// Appends one byte.
    pub fn push(&mut self, b: u8) {
        self.buf.push(b);
    }

    /// The payload as the tail of a received buffer.
    pub(crate) fn from_received(buf: Vec<u8>, start: usize) -> Payload {
        debug_assert!(start <= buf.len());
        Payload {
            buf,
            start,
            attached: Vec::new(),
        }
    }

    /// Carries `data` beside the bytes, shared, not copied (MPI reads it
    /// while the program may also read it: it is never written again).
    /// False, and nothing attached, when the payload already carries
    /// [`MAX_ATTACHED`] buffers: serialize the data into the bytes then.
    pub fn attach(&mut self, data: Arc<Vec<f32>>) -> bool {
        if self.attached.len() >= MAX_ATTACHED {
            return false;
        }
        self.attached.push(data);
        true
    }

    /// The buffers carried beside the bytes, in the order attached.
    pub fn attached(&self) -> &[Arc<Vec<f32>>] {
        &self.attached
    }

    /// Takes the attached buffers out (the transport sends them).
    pub(crate) fn take_attached(&mut self) -> Vec<Arc<Vec<f32>>> {
        std::mem::take(&mut self.attached)
    }

    /// Gives a received payload the buffers that came with it.
    pub(crate) fn set_attached(&mut self, attached: Vec<Arc<Vec<f32>>>) {
        self.attached = attached;
    }

    /// Writes `header` just in front of the bytes and returns the whole
    /// message as a buffer and the offset where it starts. Copies the
    /// bytes only when there is not enough room (a received payload sent
    /// on).
    pub(crate) fn into_frame(mut self, header: &[u8]) -> (Vec<u8>, usize) {
        if self.start < header.len() {
            let mut buf = crate::pool::take(header.len() + self.len());
            buf.extend_from_slice(header);
            buf.extend_from_slice(self.as_slice());
            return (buf, 0);
        }
        let at = self.start - header.len();
        self.buf[at..self.start].copy_from_slice(header);
        (std::mem::take(&mut self.buf), at)
    }
}

impl Drop for Payload {
    /// A large buffer goes back to the pool (`pool.rs`) for the next
    /// payload or received message.
    fn drop(&mut self) {
        crate::pool::give(std::mem::take(&mut self.buf));
    }
}

impl Default for Payload {
    fn default() -> Payload {
        Payload::new()
    }
}

impl PartialEq for Payload {
    fn eq(&self, other: &Payload) -> bool {
        self.as_slice() == other.as_slice() && self.attached == other.attached
    }
}

impl Eq for Payload {}

impl fmt::Debug for Payload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Payload({} bytes", self.len())?;
        for a in &self.attached {
            write!(f, ", {} floats", a.len())?;
        }
        write!(f, ")")
    }
}

impl std::io::Write for Payload {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_reuses_the_room_and_keeps_the_bytes() {
        let mut p = Payload::new();
        p.extend_from_slice(b"abc");
        p.push(b'd');
        assert_eq!(p.as_slice(), b"abcd");
        let (buf, at) = p.into_frame(&[9, 8]);
        assert_eq!(&buf[at..], &[9, 8, b'a', b'b', b'c', b'd']);
        assert_eq!(at, ROOM - 2);
    }

    #[test]
    fn reserving_keeps_the_bytes_and_the_room() {
        let mut p = Payload::from_bytes(b"xy");
        p.reserve(crate::pool::MIN * 2);
        assert!(p.buf.capacity() >= ROOM + 2 + crate::pool::MIN * 2);
        assert_eq!(p.as_slice(), b"xy");
        p.reserve(1);
        p.push(b'z');
        let (buf, at) = p.into_frame(&[1]);
        assert_eq!(&buf[at..], &[1, b'x', b'y', b'z']);
    }

    #[test]
    fn a_payload_without_room_is_copied_behind_the_header() {
        let p = Payload::from_received(vec![1, 2, 3], 1);
        assert_eq!(p.as_slice(), &[2, 3]);
        let (buf, at) = p.into_frame(&[7, 7]);
        assert_eq!(&buf[at..], &[7, 7, 2, 3]);
    }
}
