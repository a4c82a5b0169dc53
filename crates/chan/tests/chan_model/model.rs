//! A sequential reference model of Go's channel rules (docs/language.md, "Channels";
//! `runtime/chan.go`, `runtime/select.go`), written for clarity, not speed.
//!
//! Every blocking operation is modelled as a select (a plain send or
//! receive is a select with one case, index 0). The model keeps, per
//! channel, the buffer, the closed flag and FIFO queues of blocked cases;
//! a blocked task's cases are queued in case order, and when one of them
//! fires all of that task's entries are removed at once (the real channel
//! may keep stale entries for a moment; the driver checks that none remain
//! once every woken party has run).
//!
//! Go leaves two choices open, and the model follows the real run in both:
//! which ready case a select takes (uniformly random: `ready_cases` lists
//! the candidates, the driver checks the real choice is one of them and
//! applies it here), and, when a blocked select has several cases on one
//! channel, which of its entries a partner meets (Go queues them in a random
//! order). A blocked task's entries on one queue are adjacent (queued under
//! one lock), so the model treats them as a group: a waking records every
//! case of the group as a candidate, and a receive from a group of send
//! cases takes the entry whose value the real receiver observed (values are
//! unique in the tests). On a buffered channel that value goes to the
//! buffer's tail unseen, so the model holds a placeholder there until the
//! woken sender reports its case (`resolve`), which the driver does within
//! the same step.

use std::collections::VecDeque;

/// One case of a modelled select.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MCase {
    /// Receive from channel `ch` (`None`: the nil channel).
    Recv(Option<usize>),
    /// Send `val` on channel `ch` (`None`: the nil channel).
    Send(Option<usize>, u32),
}

/// What a fired case did (mirrors `weft_chan::Outcome<u32>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MOut {
    Received(Option<u32>),
    Sent,
    SendClosed(u32),
}

#[derive(Default)]
struct MChan {
    cap: usize,
    buf: VecDeque<u32>,
    closed: bool,
    /// (task, case, value)
    sendq: VecDeque<(usize, usize, u32)>,
    /// (task, case)
    recvq: VecDeque<(usize, usize)>,
}

pub struct Model {
    chans: Vec<MChan>,
    /// The cases of each blocked task (`None`: not blocked).
    blocked: Vec<Option<Vec<MCase>>>,
    /// Outcomes delivered to blocked tasks and not yet collected: the
    /// candidates (case, outcome), one of which the real task must report.
    woken: Vec<Option<Vec<(usize, MOut)>>>,
    /// A buffer slot holding `PLACEHOLDER` for a woken sender's group:
    /// (task, channel, (case, value) of each entry).
    unresolved: Option<Unresolved>,
}

/// (task, channel, (case, value) of each entry of the woken group).
type Unresolved = (usize, usize, Vec<(usize, u32)>);

/// Stands in a buffer for a value not yet known (see the header).
const PLACEHOLDER: u32 = u32::MAX;

impl Model {
    pub fn new(caps: &[usize], tasks: usize) -> Self {
        Model {
            chans: caps
                .iter()
                .map(|&cap| MChan {
                    cap,
                    ..MChan::default()
                })
                .collect(),
            blocked: vec![None; tasks],
            woken: vec![None; tasks],
            unresolved: None,
        }
    }

    pub fn is_blocked(&self, task: usize) -> bool {
        self.blocked[task].is_some()
    }

    pub fn len(&self, ch: usize) -> usize {
        self.chans[ch].buf.len()
    }

    pub fn closed(&self, ch: usize) -> bool {
        self.chans[ch].closed
    }

    /// (sendq, recvq) lengths, as `Chan::queued` reports them.
    pub fn queued(&self, ch: usize) -> (usize, usize) {
        (self.chans[ch].sendq.len(), self.chans[ch].recvq.len())
    }

    /// The outcome delivered to `task` since the last call, if any.
    pub fn take_woken(&mut self, task: usize) -> Option<Vec<(usize, MOut)>> {
        self.woken[task].take()
    }

    /// The cases that can proceed now (Go's pass 1 readiness).
    pub fn ready_cases(&self, cases: &[MCase]) -> Vec<usize> {
        (0..cases.len())
            .filter(|&i| match cases[i] {
                MCase::Recv(Some(c)) => {
                    let ch = &self.chans[c];
                    ch.closed || !ch.buf.is_empty() || !ch.sendq.is_empty()
                }
                MCase::Send(Some(c), _) => {
                    let ch = &self.chans[c];
                    ch.closed || !ch.recvq.is_empty() || ch.buf.len() < ch.cap
                }
                MCase::Recv(None) | MCase::Send(None, _) => false,
            })
            .collect()
    }

    /// Fires ready case `i` of `cases` (the caller checked readiness);
    /// `seen` is what the real operation reported (used only to pick the
    /// entry within a group, see the header).
    pub fn fire(&mut self, cases: &[MCase], i: usize, seen: MOut) -> MOut {
        match cases[i] {
            MCase::Recv(Some(c)) => self.recv(c, seen),
            MCase::Send(Some(c), v) => self.send(c, v),
            MCase::Recv(None) | MCase::Send(None, _) => unreachable!("nil case fired"),
        }
    }

    /// Parks `task` on every non-nil case, in case order.
    pub fn block(&mut self, task: usize, cases: &[MCase]) {
        for (i, case) in cases.iter().enumerate() {
            match *case {
                MCase::Recv(Some(c)) => self.chans[c].recvq.push_back((task, i)),
                MCase::Send(Some(c), v) => self.chans[c].sendq.push_back((task, i, v)),
                MCase::Recv(None) | MCase::Send(None, _) => {}
            }
        }
        self.blocked[task] = Some(cases.to_vec());
    }

    /// A blocked task gives up (its future is dropped).
    pub fn cancel(&mut self, task: usize) {
        self.unqueue(task);
        self.blocked[task] = None;
    }

    /// `close(ch)`; `false` if it was already closed.
    pub fn close(&mut self, c: usize) -> bool {
        if self.chans[c].closed {
            return false;
        }
        self.chans[c].closed = true;
        while let Some(group) = self.pop_recv_group(c) {
            let t = group[0].0;
            self.wake(
                t,
                group
                    .iter()
                    .map(|&(_, i)| (i, MOut::Received(None)))
                    .collect(),
            );
        }
        while let Some(group) = self.pop_send_group(c) {
            let t = group[0].0;
            self.wake(
                t,
                group
                    .iter()
                    .map(|&(_, i, v)| (i, MOut::SendClosed(v)))
                    .collect(),
            );
        }
        true
    }

    /// Pops the entries of the task at the head of `recvq`.
    fn pop_recv_group(&mut self, c: usize) -> Option<Vec<(usize, usize)>> {
        let q = &mut self.chans[c].recvq;
        let t = q.front()?.0;
        let n = q.iter().take_while(|e| e.0 == t).count();
        Some(q.drain(..n).collect())
    }

    /// Pops the entries of the task at the head of `sendq`.
    fn pop_send_group(&mut self, c: usize) -> Option<Vec<(usize, usize, u32)>> {
        let q = &mut self.chans[c].sendq;
        let t = q.front()?.0;
        let n = q.iter().take_while(|e| e.0 == t).count();
        Some(q.drain(..n).collect())
    }

    fn recv(&mut self, c: usize, seen: MOut) -> MOut {
        let ch = &self.chans[c];
        if ch.closed && ch.buf.is_empty() {
            return MOut::Received(None);
        }
        if let Some(group) = self.pop_send_group(c) {
            let (t, i, v) = group
                .iter()
                .copied()
                .find(|&(_, _, v)| seen == MOut::Received(Some(v)))
                .unwrap_or(group[0]);
            let ch = &mut self.chans[c];
            if ch.cap == 0 {
                self.wake(t, vec![(i, MOut::Sent)]);
                return MOut::Received(Some(v));
            }
            let head = ch
                .buf
                .pop_front()
                .expect("a blocked sender implies a full buffer");
            if group.len() == 1 {
                ch.buf.push_back(v);
            } else {
                ch.buf.push_back(PLACEHOLDER);
                self.unresolved = Some((t, c, group.iter().map(|&(_, i, v)| (i, v)).collect()));
            }
            self.wake(t, group.iter().map(|&(_, i, _)| (i, MOut::Sent)).collect());
            return MOut::Received(Some(head));
        }
        let ch = &mut self.chans[c];
        MOut::Received(Some(
            ch.buf
                .pop_front()
                .expect("recv fired on a channel not ready"),
        ))
    }

    fn send(&mut self, c: usize, v: u32) -> MOut {
        if self.chans[c].closed {
            return MOut::SendClosed(v);
        }
        if let Some(group) = self.pop_recv_group(c) {
            let t = group[0].0;
            self.wake(
                t,
                group
                    .iter()
                    .map(|&(_, i)| (i, MOut::Received(Some(v))))
                    .collect(),
            );
            return MOut::Sent;
        }
        let ch = &mut self.chans[c];
        assert!(ch.buf.len() < ch.cap, "send fired on a channel not ready");
        ch.buf.push_back(v);
        MOut::Sent
    }

    /// One of `candidates` (case, outcome) of blocked `task` fired: record
    /// them, dequeue the rest.
    fn wake(&mut self, task: usize, candidates: Vec<(usize, MOut)>) {
        self.unqueue(task);
        self.blocked[task] = None;
        assert!(self.woken[task].is_none(), "task woken twice");
        self.woken[task] = Some(candidates);
    }

    /// Woken `task` reported that its case `case` fired: fill in the
    /// placeholder its group left in a buffer, if any.
    pub fn resolve(&mut self, task: usize, case: usize) {
        let Some((t, c, entries)) = self.unresolved.take() else {
            return;
        };
        if t != task {
            self.unresolved = Some((t, c, entries));
            return;
        }
        let v = entries
            .iter()
            .find(|e| e.0 == case)
            .map_or(PLACEHOLDER - 1, |e| e.1);
        if let Some(slot) = self.chans[c]
            .buf
            .iter_mut()
            .rev()
            .find(|x| **x == PLACEHOLDER)
        {
            *slot = v;
        }
    }

    fn unqueue(&mut self, task: usize) {
        for ch in &mut self.chans {
            ch.sendq.retain(|e| e.0 != task);
            ch.recvq.retain(|e| e.0 != task);
        }
    }
}
