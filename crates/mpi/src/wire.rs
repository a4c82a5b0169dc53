//! The messages between processes and their bytes (docs/distributed.md,
//! "Wire protocol"). Every message starts with a kind byte; integers are
//! little-endian. *Basic* messages carry the program's communication (a
//! value for a remote channel, a receive request, a close, a reply); they
//! are counted by the deadlock detector. *Control* messages carry the
//! detector's token, the verdict and the end of the program; they are not
//! counted. Collectives do not travel as messages: they use the
//! transport's collectives (`transport.rs`).

use crate::payload::Payload;

/// One message between two processes.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Msg {
    /// A value sent to the owner's channel `chan`; the owner replies to
    /// `req` once the value is taken (unbuffered) or buffered.
    Data {
        chan: u64,
        req: u64,
        payload: Payload,
    },
    /// A receive from the owner's channel `chan`; the reply carries the
    /// value, or says the channel is closed and drained.
    Recv { chan: u64, req: u64 },
    /// Close the owner's channel `chan`.
    Close { chan: u64, req: u64 },
    /// How many values `chan` holds.
    Len { chan: u64, req: u64 },
    /// The answer to request `req` (`status` is a [`Status`] byte).
    Reply {
        req: u64,
        status: u8,
        payload: Payload,
    },
    /// The detector's token (Safra's algorithm, `detect.rs`).
    Token(Token),
    /// Rank 0 found every process blocked: report your blocked tasks.
    Verdict,
    /// A process's blocked-task lines, for rank 0's deadlock report.
    Report(Vec<String>),
    /// This process's `main` returned (to rank 0).
    Done,
    /// The program ends: `finished` when every `main` returned, else a
    /// process panicked or called `exit(code)`.
    End { code: i32, finished: bool },
    /// This process has stopped sending and started `joined` collectives
    /// (the others join any it started alone, so that none is left
    /// incomplete when MPI shuts down).
    Fin { joined: u64 },
}

/// The detector's token as it travels (see `detect.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Token {
    /// The sum of the visited processes' message counters.
    pub q: i64,
    /// Some visited process had an event since it last passed the token.
    pub black: bool,
    /// The fewest collectives any visited process has joined.
    pub min_joined: u64,
    /// The fewest collectives any visited process has completed.
    pub min_done: u64,
}

/// The status byte of a reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    /// Done; a receive's reply carries the value.
    Ok = 0,
    /// The channel is closed (a send or close failed; a receive found it
    /// drained).
    Closed = 1,
    /// The owner knows no such channel, or could not read the value: an
    /// engine bug.
    Broken = 2,
}

impl Status {
    pub fn from_byte(b: u8) -> Status {
        match b {
            0 => Status::Ok,
            1 => Status::Closed,
            _ => Status::Broken,
        }
    }
}

/// Why bytes are not a message (an engine bug: both ends run the same
/// binary).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("malformed message ({0})")]
pub(crate) struct WireError(pub &'static str);

const DATA: u8 = 1;
const RECV: u8 = 2;
const CLOSE: u8 = 3;
const LEN: u8 = 4;
const REPLY: u8 = 5;
const TOKEN: u8 = 16;
const VERDICT: u8 = 17;
const REPORT: u8 = 18;
const DONE: u8 = 19;
const END: u8 = 20;
const FIN: u8 = 21;

impl Msg {
    /// A basic message (counted by the detector), as opposed to control.
    pub fn is_basic(&self) -> bool {
        matches!(
            self,
            Msg::Data { .. }
                | Msg::Recv { .. }
                | Msg::Close { .. }
                | Msg::Len { .. }
                | Msg::Reply { .. }
        )
    }

    /// Takes out the buffers its payload carries beside the bytes (they
    /// travel beside the message, `transport.rs`).
    pub fn take_attached(&mut self) -> crate::transport::Attached {
        match self {
            Msg::Data { payload, .. } | Msg::Reply { payload, .. } => payload.take_attached(),
            _ => Vec::new(),
        }
    }

    /// Gives a received message the buffers that came with it.
    pub fn set_attached(&mut self, attached: crate::transport::Attached) -> Result<(), WireError> {
        match self {
            Msg::Data { payload, .. } | Msg::Reply { payload, .. } => {
                payload.set_attached(attached);
                Ok(())
            }
            _ if attached.is_empty() => Ok(()),
            _ => Err(WireError("buffers beside a message without a payload")),
        }
    }

    /// The message's bytes: a buffer and the offset where they start (a
    /// payload is not copied, see `payload.rs`).
    pub fn encode(self) -> (Vec<u8>, usize) {
        let mut h = Vec::with_capacity(crate::payload::ROOM);
        match self {
            Msg::Data { chan, req, payload } => {
                h.push(DATA);
                h.extend_from_slice(&chan.to_le_bytes());
                h.extend_from_slice(&req.to_le_bytes());
                payload.into_frame(&h)
            }
            Msg::Reply {
                req,
                status,
                payload,
            } => {
                h.push(REPLY);
                h.extend_from_slice(&req.to_le_bytes());
                h.push(status);
                payload.into_frame(&h)
            }
            Msg::Recv { chan, req } => (req_msg(RECV, chan, req), 0),
            Msg::Close { chan, req } => (req_msg(CLOSE, chan, req), 0),
            Msg::Len { chan, req } => (req_msg(LEN, chan, req), 0),
            Msg::Token(t) => {
                h.push(TOKEN);
                h.extend_from_slice(&t.q.to_le_bytes());
                h.push(t.black as u8);
                h.extend_from_slice(&t.min_joined.to_le_bytes());
                h.extend_from_slice(&t.min_done.to_le_bytes());
                (h, 0)
            }
            Msg::Verdict => (vec![VERDICT], 0),
            Msg::Report(lines) => {
                h.push(REPORT);
                h.extend_from_slice(&(lines.len() as u64).to_le_bytes());
                for l in lines {
                    h.extend_from_slice(&(l.len() as u64).to_le_bytes());
                    h.extend_from_slice(l.as_bytes());
                }
                (h, 0)
            }
            Msg::Done => (vec![DONE], 0),
            Msg::End { code, finished } => {
                h.push(END);
                h.extend_from_slice(&code.to_le_bytes());
                h.push(finished as u8);
                (h, 0)
            }
            Msg::Fin { joined } => {
                h.push(FIN);
                h.extend_from_slice(&joined.to_le_bytes());
                (h, 0)
            }
        }
    }

    /// Reads a message from `buf[start..]`; a payload keeps `buf`.
    pub fn decode(buf: Vec<u8>, start: usize) -> Result<Msg, WireError> {
        let mut r = Reader {
            buf: &buf,
            at: start,
        };
        let kind = r.u8()?;
        let msg = match kind {
            DATA => {
                let chan = r.u64()?;
                let req = r.u64()?;
                let at = r.at;
                Msg::Data {
                    chan,
                    req,
                    payload: Payload::from_received(buf, at),
                }
            }
            REPLY => {
                let req = r.u64()?;
                let status = r.u8()?;
                let at = r.at;
                Msg::Reply {
                    req,
                    status,
                    payload: Payload::from_received(buf, at),
                }
            }
            RECV | CLOSE | LEN => {
                let chan = r.u64()?;
                let req = r.u64()?;
                r.end()?;
                match kind {
                    RECV => Msg::Recv { chan, req },
                    CLOSE => Msg::Close { chan, req },
                    _ => Msg::Len { chan, req },
                }
            }
            TOKEN => {
                let q = r.u64()? as i64;
                let black = r.u8()? != 0;
                let min_joined = r.u64()?;
                let min_done = r.u64()?;
                r.end()?;
                Msg::Token(Token {
                    q,
                    black,
                    min_joined,
                    min_done,
                })
            }
            VERDICT => {
                r.end()?;
                Msg::Verdict
            }
            REPORT => {
                let n = r.u64()?;
                let mut lines = Vec::new();
                for _ in 0..n {
                    let len = r.u64()?;
                    let bytes = r.take(len)?;
                    let line =
                        String::from_utf8(bytes.to_vec()).map_err(|_| WireError("report text"))?;
                    lines.push(line);
                }
                r.end()?;
                Msg::Report(lines)
            }
            DONE => {
                r.end()?;
                Msg::Done
            }
            END => {
                let code = i32::from_le_bytes(r.array()?);
                let finished = r.u8()? != 0;
                r.end()?;
                Msg::End { code, finished }
            }
            FIN => {
                let joined = r.u64()?;
                r.end()?;
                Msg::Fin { joined }
            }
            _ => return Err(WireError("unknown kind")),
        };
        Ok(msg)
    }
}

fn req_msg(kind: u8, chan: u64, req: u64) -> Vec<u8> {
    let mut h = Vec::with_capacity(17);
    h.push(kind);
    h.extend_from_slice(&chan.to_le_bytes());
    h.extend_from_slice(&req.to_le_bytes());
    h
}

struct Reader<'a> {
    buf: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: u64) -> Result<&'a [u8], WireError> {
        let n = usize::try_from(n).map_err(|_| WireError("length"))?;
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.buf.len())
            .ok_or(WireError("truncated"))?;
        let s = &self.buf[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], WireError> {
        let s = self.take(N as u64)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    fn u8(&mut self) -> Result<u8, WireError> {
        Ok(self.array::<1>()?[0])
    }

    fn u64(&mut self) -> Result<u64, WireError> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    fn end(&self) -> Result<(), WireError> {
        if self.at == self.buf.len() {
            Ok(())
        } else {
            Err(WireError("trailing bytes"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn payload() -> impl Strategy<Value = Payload> {
        proptest::collection::vec(any::<u8>(), 0..64).prop_map(|b| Payload::from_bytes(&b))
    }

    fn msg() -> impl Strategy<Value = Msg> {
        prop_oneof![
            (any::<u64>(), any::<u64>(), payload()).prop_map(|(chan, req, payload)| Msg::Data {
                chan,
                req,
                payload
            }),
            (any::<u64>(), any::<u64>()).prop_map(|(chan, req)| Msg::Recv { chan, req }),
            (any::<u64>(), any::<u64>()).prop_map(|(chan, req)| Msg::Close { chan, req }),
            (any::<u64>(), any::<u64>()).prop_map(|(chan, req)| Msg::Len { chan, req }),
            (any::<u64>(), 0u8..3, payload()).prop_map(|(req, status, payload)| Msg::Reply {
                req,
                status,
                payload
            }),
            (any::<i64>(), any::<bool>(), any::<u64>(), any::<u64>()).prop_map(
                |(q, black, min_joined, min_done)| Msg::Token(Token {
                    q,
                    black,
                    min_joined,
                    min_done
                })
            ),
            Just(Msg::Verdict),
            proptest::collection::vec(".{0,20}", 0..4).prop_map(Msg::Report),
            Just(Msg::Done),
            (any::<i32>(), any::<bool>()).prop_map(|(code, finished)| Msg::End { code, finished }),
            any::<u64>().prop_map(|joined| Msg::Fin { joined }),
        ]
    }

    proptest! {
        #[test]
        fn every_message_reads_back(m in msg()) {
            let (buf, at) = m.clone().encode();
            prop_assert_eq!(Msg::decode(buf, at), Ok(m));
        }

        #[test]
        fn no_bytes_make_decode_panic(b in proptest::collection::vec(any::<u8>(), 0..40)) {
            let _ = Msg::decode(b, 0);
        }
    }

    #[test]
    fn a_truncated_message_is_an_error() {
        let (mut buf, at) = Msg::Token(Token {
            q: 1,
            black: false,
            min_joined: 2,
            min_done: 3,
        })
        .encode();
        buf.pop();
        assert_eq!(Msg::decode(buf, at), Err(WireError("truncated")));
    }

    #[test]
    fn only_channel_traffic_is_basic() {
        assert!(Msg::Recv { chan: 1, req: 2 }.is_basic());
        assert!(!Msg::Verdict.is_basic());
        assert!(!Msg::Fin { joined: 3 }.is_basic());
    }
}
