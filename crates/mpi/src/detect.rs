//! The distributed deadlock detector: Safra's termination detection
//! (Dijkstra's EWD 998), with the verdict "every process is blocked" made
//! into a deadlock report (docs/distributed.md, "The deadlock detector").
//!
//! Each process counts the basic messages it sent minus those it received
//! (`c`), and how many collectives it joined and completed. A process is
//! *passive* when its runtime is quiescent (every task blocked, no timer
//! or I/O pending) and its messaging thread has nothing of its own left to
//! do. A passive process becomes active only through an event of its
//! messaging thread: a message received, a collective completed. Any event
//! makes the process *black*.
//!
//! A token goes round the ring 0 → N-1 → ... → 1 → 0. Rank 0 starts a
//! round when passive. Every other rank holds the token until it is
//! passive, then adds its counter, takes the minimum of its collective
//! counts, blackens the token if it is black, turns white, and passes it
//! on. Back at rank 0, passive: the program is terminated when the token
//! and rank 0 are white (rank 0 turns white at each decision), the
//! counters sum to zero, and no collective that every process joined is
//! still incomplete (`min done == min joined`). Otherwise rank 0 starts
//! another round, after a delay that grows while rounds keep failing.
//!
//! Why it is right: a white token means no process had an event between
//! its passes in the last two rounds; rank 0, none between its last two
//! decisions. Every process was therefore passive, with the counts it
//! reported, at the instant the round began; a zero sum at one instant
//! means no message was on its way; and `min done == min joined` means no
//! collective could complete. Nothing can happen after such an instant: a
//! deadlock (or, when every `main` returned, the end). A process starts
//! black, so the first round always fails. `detect.rs` is a pure state
//! machine; the model test at the bottom checks it against random
//! schedules of messages, collectives and tokens.

use crate::wire::Token;

/// What the messaging thread must do after [`Detector::step`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    /// Nothing now.
    Idle,
    /// Send the token to this rank (a control message).
    Pass(usize, Token),
    /// Every process is blocked: the program is deadlocked (rank 0 only).
    Verdict,
}

/// One process's part of the detection.
#[derive(Debug)]
pub(crate) struct Detector {
    rank: usize,
    size: usize,
    /// Basic messages sent minus received.
    c: i64,
    /// An event since the token last left (rank 0: since its last decision).
    black: bool,
    joined: u64,
    done: u64,
    /// The token, while this process holds it.
    token: Option<Token>,
    /// Rank 0: a round is under way.
    round: bool,
    /// Rank 0: rounds failed in a row while it stayed passive.
    failures: u32,
    /// Rank 0: no round starts before this time (microseconds).
    next_round_us: u64,
}

impl Detector {
    pub fn new(rank: usize, size: usize) -> Detector {
        Detector {
            rank,
            size: size.max(1),
            c: 0,
            black: true,
            joined: 0,
            done: 0,
            token: None,
            round: false,
            failures: 0,
            next_round_us: 0,
        }
    }

    /// A basic message was sent.
    pub fn sent(&mut self) {
        self.c += 1;
        self.black = true;
    }

    /// A basic message was received.
    pub fn received(&mut self) {
        self.c -= 1;
        self.black = true;
    }

    /// A task of this process joined a collective.
    pub fn joined(&mut self) {
        self.joined += 1;
        self.black = true;
    }

    /// A collective completed here.
    pub fn completed(&mut self) {
        self.done += 1;
        self.black = true;
    }

    /// The token arrived.
    pub fn on_token(&mut self, t: Token) {
        self.token = Some(t);
    }

    /// Rank 0: the delay before the next round after `failures` failed
    /// rounds in a row (50 µs doubling, at most 20 ms).
    fn delay_us(failures: u32) -> u64 {
        (50u64 << failures.min(9)).min(20_000)
    }

    /// Advances the detection; `passive` as defined in the module doc,
    /// `now_us` a monotonic clock.
    pub fn step(&mut self, passive: bool, now_us: u64) -> Action {
        if !passive {
            if self.rank == 0 {
                self.failures = 0;
                self.next_round_us = 0;
            }
            return Action::Idle;
        }
        if self.rank != 0 {
            let Some(mut t) = self.token.take() else {
                return Action::Idle;
            };
            t.q += self.c;
            t.black |= self.black;
            t.min_joined = t.min_joined.min(self.joined);
            t.min_done = t.min_done.min(self.done);
            self.black = false;
            return Action::Pass(self.rank - 1, t);
        }
        if let Some(t) = self.token.take() {
            self.round = false;
            let terminated = !t.black
                && !self.black
                && t.q + self.c == 0
                && t.min_done.min(self.done) == t.min_joined.min(self.joined);
            self.black = false;
            if terminated {
                return Action::Verdict;
            }
            self.failures = self.failures.saturating_add(1);
            self.next_round_us = now_us + Self::delay_us(self.failures);
            return Action::Idle;
        }
        if self.round || now_us < self.next_round_us {
            return Action::Idle;
        }
        self.round = true;
        let t = Token {
            q: 0,
            black: false,
            min_joined: u64::MAX,
            min_done: u64::MAX,
        };
        if self.size == 1 {
            self.token = Some(t);
            return Action::Idle;
        }
        Action::Pass(self.size - 1, t)
    }

    /// Rank 0, between failed rounds: the microseconds until the next may
    /// start (the messaging thread sleeps no longer than that).
    pub fn wait_us(&self, now_us: u64) -> Option<u64> {
        (self.rank == 0 && !self.round && self.token.is_none() && self.next_round_us > now_us)
            .then(|| self.next_round_us - now_us)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A simulated program of `n` processes. Active processes send basic
    /// messages, join collectives and go passive; messages, tokens and the
    /// completion of collectives that everyone joined arrive after random
    /// delays (any order: the detector must not need FIFO channels).
    struct Sim {
        n: usize,
        det: Vec<Detector>,
        active: Vec<bool>,
        /// Sends an active process still makes before it goes passive.
        budget: Vec<u32>,
        /// (to, message): `None` is a basic message, `Some` a token.
        flight: Vec<(usize, Option<Token>)>,
        joined: Vec<u64>,
        done: Vec<u64>,
        /// A joined collective blocks the joiner (passive) until done.
        waiting: Vec<bool>,
        verdict: bool,
        rng: u64,
        now: u64,
    }

    impl Sim {
        fn rand(&mut self, m: u64) -> u64 {
            self.rng ^= self.rng << 13;
            self.rng ^= self.rng >> 7;
            self.rng ^= self.rng << 17;
            self.rng % m.max(1)
        }

        fn terminated(&self) -> bool {
            let all_passive = self.active.iter().all(|a| !a);
            let no_basic = self.flight.iter().all(|(_, m)| m.is_some());
            let min_j = self.joined.iter().min().copied().unwrap_or(0);
            let completable = self.done.iter().any(|&d| d < min_j);
            all_passive && no_basic && !completable
        }

        /// One random step; returns false once nothing can happen.
        fn tick(&mut self) {
            self.now += 7;
            let choice = self.rand(4);
            match choice {
                // An active process acts.
                0 => {
                    let p = self.rand(self.n as u64) as usize;
                    if !self.active[p] {
                        return;
                    }
                    if self.budget[p] > 0 && self.rand(3) > 0 {
                        self.budget[p] -= 1;
                        let to = self.rand(self.n as u64) as usize;
                        self.det[p].sent();
                        self.flight.push((to, None));
                    } else if self.rand(4) == 0 && self.joined[p] < 3 {
                        self.joined[p] += 1;
                        self.det[p].joined();
                        self.waiting[p] = true;
                        self.active[p] = false;
                    } else {
                        self.active[p] = false;
                    }
                }
                // Something in flight arrives.
                1 => {
                    if self.flight.is_empty() {
                        return;
                    }
                    let i = self.rand(self.flight.len() as u64) as usize;
                    let (to, m) = self.flight.swap_remove(i);
                    match m {
                        None => {
                            self.det[to].received();
                            if !self.waiting[to] {
                                self.active[to] = true;
                                self.budget[to] = self.budget[to].saturating_add(1);
                            }
                        }
                        Some(t) => self.det[to].on_token(t),
                    }
                }
                // A collective everyone joined completes somewhere.
                2 => {
                    let min_j = self.joined.iter().min().copied().unwrap_or(0);
                    let p = self.rand(self.n as u64) as usize;
                    if self.done[p] < min_j {
                        self.done[p] += 1;
                        self.det[p].completed();
                        self.waiting[p] = false;
                        self.active[p] = true;
                    }
                }
                // Every detector steps.
                _ => {
                    for p in 0..self.n {
                        let passive = !self.active[p];
                        match self.det[p].step(passive, self.now) {
                            Action::Idle => {}
                            Action::Pass(to, t) => self.flight.push((to, Some(t))),
                            Action::Verdict => {
                                assert!(
                                    self.terminated(),
                                    "false verdict: active {:?} flight {:?} joined {:?} done {:?}",
                                    self.active,
                                    self.flight,
                                    self.joined,
                                    self.done
                                );
                                self.verdict = true;
                            }
                        }
                    }
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        /// Never a verdict before the program is terminated; always one
        /// soon after.
        #[test]
        fn verdict_exactly_when_terminated(n in 1usize..5, seed in 1u64..u64::MAX, budget in 0u32..6) {
            let mut sim = Sim {
                n,
                det: (0..n).map(|r| Detector::new(r, n)).collect(),
                active: vec![true; n],
                budget: vec![budget; n],
                flight: Vec::new(),
                joined: vec![0; n],
                done: vec![0; n],
                waiting: vec![false; n],
                verdict: false,
                rng: seed,
                now: 0,
            };
            let mut steps = 0u32;
            while !sim.verdict {
                sim.tick();
                steps += 1;
                prop_assert!(steps < 200_000, "no verdict: terminated={}", sim.terminated());
            }
        }
    }

    #[test]
    fn a_lone_process_decides_by_itself() {
        let mut d = Detector::new(0, 1);
        // Starts black: the first round fails.
        assert_eq!(d.step(true, 0), Action::Idle);
        assert_eq!(d.step(true, 0), Action::Idle);
        let wait = d.wait_us(0).unwrap_or(0);
        assert!(wait > 0);
        assert_eq!(Detector::new(0, 2).wait_us(0), None, "no round failed yet");
        assert_eq!(d.step(true, wait), Action::Idle);
        assert_eq!(d.step(true, wait), Action::Verdict);
    }

    #[test]
    fn a_joined_but_incomplete_collective_is_not_a_deadlock_while_all_joined() {
        let mut a = Detector::new(0, 2);
        let mut b = Detector::new(1, 2);
        a.joined();
        b.joined();
        let mut now = 0;
        for _ in 0..50 {
            now += 100_000;
            if let Action::Pass(1, t) = a.step(true, now) {
                b.on_token(t);
            }
            if let Action::Pass(0, t) = b.step(true, now) {
                a.on_token(t);
            }
            assert_ne!(a.step(true, now), Action::Verdict);
        }
        // Only one joined: rank 0 waits for a collective rank 1 never calls.
        let mut a = Detector::new(0, 2);
        let mut b = Detector::new(1, 2);
        a.joined();
        let mut verdict = false;
        for _ in 0..50 {
            now += 100_000;
            if let Action::Pass(1, t) = a.step(true, now) {
                b.on_token(t);
            }
            if let Action::Pass(0, t) = b.step(true, now) {
                a.on_token(t);
            }
            verdict |= a.step(true, now) == Action::Verdict;
        }
        assert!(verdict);
    }
}
