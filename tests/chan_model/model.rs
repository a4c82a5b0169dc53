//! A sequential reference model of Go's channel rules (spec section 6;
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
//! Which ready case a select takes is the one choice Go leaves open
//! (uniformly random): `ready_cases` lists the candidates and the driver
//! checks the real choice against it, then applies that same case here.

use std::collections::VecDeque;

/// One case of a modelled select.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MCase {
    /// Receive from channel `ch` (`None`: the nil channel).
    Recv(Option<usize>),
    /// Send `val` on channel `ch` (`None`: the nil channel).
    Send(Option<usize>, u32),
}

/// What a fired case did (mirrors `weft::chan::Outcome<u32>`).
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
    /// Outcomes delivered to blocked tasks and not yet collected.
    woken: Vec<Option<(usize, MOut)>>,
}

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
    pub fn take_woken(&mut self, task: usize) -> Option<(usize, MOut)> {
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

    /// Fires ready case `i` of `cases` (the caller checked readiness).
    pub fn fire(&mut self, cases: &[MCase], i: usize) -> MOut {
        match cases[i] {
            MCase::Recv(Some(c)) => self.recv(c),
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
        while let Some((t, i)) = self.chans[c].recvq.pop_front() {
            self.wake(t, i, MOut::Received(None));
        }
        while let Some((t, i, v)) = self.chans[c].sendq.pop_front() {
            self.wake(t, i, MOut::SendClosed(v));
        }
        true
    }

    fn recv(&mut self, c: usize) -> MOut {
        let ch = &mut self.chans[c];
        if ch.closed && ch.buf.is_empty() {
            return MOut::Received(None);
        }
        if let Some((t, i, v)) = ch.sendq.pop_front() {
            let got = if ch.cap == 0 {
                v
            } else {
                let head = ch
                    .buf
                    .pop_front()
                    .expect("a blocked sender implies a full buffer");
                ch.buf.push_back(v);
                head
            };
            self.wake(t, i, MOut::Sent);
            return MOut::Received(Some(got));
        }
        MOut::Received(Some(
            ch.buf
                .pop_front()
                .expect("recv fired on a channel not ready"),
        ))
    }

    fn send(&mut self, c: usize, v: u32) -> MOut {
        let ch = &mut self.chans[c];
        if ch.closed {
            return MOut::SendClosed(v);
        }
        if let Some((t, i)) = ch.recvq.pop_front() {
            self.wake(t, i, MOut::Received(Some(v)));
            return MOut::Sent;
        }
        assert!(ch.buf.len() < ch.cap, "send fired on a channel not ready");
        ch.buf.push_back(v);
        MOut::Sent
    }

    /// Case `i` of blocked `task` fired with `out`: record it, dequeue the rest.
    fn wake(&mut self, task: usize, i: usize, out: MOut) {
        self.unqueue(task);
        self.blocked[task] = None;
        assert!(self.woken[task].is_none(), "task woken twice");
        self.woken[task] = Some((i, out));
    }

    fn unqueue(&mut self, task: usize) {
        for ch in &mut self.chans {
            ch.sendq.retain(|e| e.0 != task);
            ch.recvq.retain(|e| e.0 != task);
        }
    }
}
