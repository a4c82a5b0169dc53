//! An in-memory [`Transport`]: N processes simulated by N messaging
//! threads in one process, with mailboxes for messages and a board for
//! collective steps. It keeps the transport's rules (`transport.rs`), so
//! the whole protocol (remote channels, credits, collectives, the deadlock
//! detector, the end of a program) runs and is tested without `mpirun`.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::thread::Thread;

use crate::loom::Mutex;
use crate::transport::{Attached, Step, StepOut, Transport, TransportError};

/// Messages waiting for one process: sender and bytes.
type Mailbox = Mutex<VecDeque<(usize, Vec<u8>, Attached)>>;

/// The shared network of one simulated program.
pub(crate) struct Net {
    size: usize,
    mailboxes: Vec<Mailbox>,
    /// Each process's messaging thread, to wake when something arrives.
    threads: Vec<Mutex<Option<Thread>>>,
    board: Mutex<Board>,
}

#[derive(Default)]
struct Board {
    /// Contributions of step `k`, by rank.
    open: HashMap<u64, Vec<Option<Step>>>,
    /// Results of step `k` for a rank.
    done: HashMap<(u64, usize), StepOut>,
}

impl Net {
    pub fn new(size: usize) -> Arc<Net> {
        Arc::new(Net {
            size,
            mailboxes: (0..size).map(|_| Mutex::new(VecDeque::new())).collect(),
            threads: (0..size).map(|_| Mutex::new(None)).collect(),
            board: Mutex::new(Board::default()),
        })
    }

    fn wake(&self, rank: usize) {
        if let Some(t) = self.threads[rank].lock().as_ref() {
            t.unpark();
        }
    }
}

/// One simulated process's end of the network.
pub(crate) struct MemTransport {
    net: Arc<Net>,
    rank: usize,
    /// The next step's number.
    step: u64,
    /// The step in progress.
    pending: Option<u64>,
}

impl MemTransport {
    pub fn new(net: Arc<Net>, rank: usize) -> MemTransport {
        MemTransport {
            net,
            rank,
            step: 0,
            pending: None,
        }
    }

    /// Called on the messaging thread: messages to this rank wake it.
    pub fn register_thread(&self) {
        *self.net.threads[self.rank].lock() = Some(std::thread::current());
    }
}

/// Every rank's result of a step whose contributions are all in.
fn results(steps: Vec<Step>) -> Result<Vec<StepOut>, TransportError> {
    let n = steps.len();
    let bad = |what: &str| Err(TransportError(format!("mismatched {what} step")));
    match &steps[0] {
        Step::Gather { .. } => {
            let mut all = Vec::new();
            for (r, s) in steps.iter().enumerate() {
                let Step::Gather { mine, counts } = s else {
                    return bad("gather");
                };
                if counts.len() != n || mine.len() != counts[r] {
                    return bad("gather");
                }
                all.extend_from_slice(mine);
            }
            Ok((0..n).map(|_| StepOut::Bytes(all.clone())).collect())
        }
        Step::Bcast { root, .. } => {
            let root = *root;
            let Some(Step::Bcast { buf, .. }) = steps.get(root) else {
                return bad("broadcast");
            };
            for s in &steps {
                match s {
                    Step::Bcast { root: r, buf: b } if *r == root && b.len() == buf.len() => {}
                    _ => return bad("broadcast"),
                }
            }
            Ok((0..n).map(|_| StepOut::Bytes(buf.clone())).collect())
        }
        Step::ToAllF32 { .. } => {
            // What each rank sends, and the buffer each receives into.
            let mut sends = Vec::with_capacity(n);
            let mut recvs = Vec::with_capacity(n);
            for s in steps {
                let Step::ToAllF32 {
                    send,
                    ranges,
                    recv_counts,
                    mut recv,
                } = s
                else {
                    return bad("all-to-all");
                };
                if recv_counts.len() != n {
                    return bad("all-to-all");
                }
                recv.clear();
                sends.push((send, ranges, recv_counts));
                recvs.push(recv);
            }
            for (j, recv) in recvs.iter_mut().enumerate() {
                let want = &sends[j].2;
                for (r, (send, ranges, _)) in sends.iter().enumerate() {
                    let Some(piece) = ranges.get(j).and_then(|g| send.get(g.clone())) else {
                        return bad("all-to-all");
                    };
                    if piece.len() != want[r] {
                        return bad("all-to-all");
                    }
                    recv.extend_from_slice(piece);
                }
            }
            Ok(recvs
                .into_iter()
                .map(|recv| StepOut::F32(recv, None))
                .collect())
        }
        Step::GatherF32 { .. } => {
            let mut all = Vec::new();
            for (r, s) in steps.iter().enumerate() {
                let Step::GatherF32 {
                    mine,
                    range,
                    counts,
                    ..
                } = s
                else {
                    return bad("gather");
                };
                match mine.as_slice().get(range.clone()) {
                    Some(piece) if counts.len() == n && piece.len() == counts[r] => {
                        all.extend_from_slice(piece)
                    }
                    _ => return bad("gather"),
                }
            }
            let mut outs = Vec::with_capacity(n);
            for s in steps {
                let Step::GatherF32 { mine, mut recv, .. } = s else {
                    return bad("gather");
                };
                recv.clear();
                recv.extend_from_slice(&all);
                outs.push(StepOut::F32(recv, mine.into_owned()));
            }
            Ok(outs)
        }
    }
}

impl Transport for MemTransport {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.net.size
    }

    fn send(
        &mut self,
        to: usize,
        mut buf: Vec<u8>,
        start: usize,
        attached: Attached,
    ) -> Result<(), TransportError> {
        let mailbox = self
            .net
            .mailboxes
            .get(to)
            .ok_or_else(|| TransportError(format!("no rank {to}")))?;
        buf.drain(..start);
        mailbox.lock().push_back((self.rank, buf, attached));
        self.net.wake(to);
        Ok(())
    }

    fn sends_in_flight(&mut self) -> Result<usize, TransportError> {
        Ok(0)
    }

    fn try_recv(&mut self) -> Result<Option<(usize, Vec<u8>, Attached)>, TransportError> {
        Ok(self.net.mailboxes[self.rank].lock().pop_front())
    }

    fn start(&mut self, step: Step) -> Result<(), TransportError> {
        let k = self.step;
        self.step += 1;
        self.pending = Some(k);
        let n = self.net.size;
        let finished = {
            let mut board = self.net.board.lock();
            let slots = board
                .open
                .entry(k)
                .or_insert_with(|| (0..n).map(|_| None).collect());
            slots[self.rank] = Some(step);
            if slots.iter().all(Option::is_some) {
                let steps = board
                    .open
                    .remove(&k)
                    .unwrap_or_default()
                    .into_iter()
                    .flatten()
                    .collect();
                let outs = results(steps)?;
                for (r, out) in outs.into_iter().enumerate() {
                    board.done.insert((k, r), out);
                }
                true
            } else {
                false
            }
        };
        if finished {
            for r in 0..n {
                self.net.wake(r);
            }
        }
        Ok(())
    }

    fn test(&mut self) -> Result<Option<StepOut>, TransportError> {
        let Some(k) = self.pending else {
            return Ok(None);
        };
        let out = self.net.board.lock().done.remove(&(k, self.rank));
        if out.is_some() {
            self.pending = None;
        }
        Ok(out)
    }

    fn close(self, _clean: bool) {
        *self.net.threads[self.rank].lock() = None;
    }
}
