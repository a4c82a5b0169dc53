//! The controlled executor (`weft test`'s, docs/testing-programs.md) run
//! from Rust: virtual time, the end of a run (deadlock, leaked tasks, the
//! step budget), every decision going through the chooser, waits that end
//! at quiescence, and tokens that replay a run step for step.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use weft_chan::Chan;
use weft_rt::explore::{self, RandomWalk, Recorder, Replayer, Token};
use weft_rt::{
    self as runtime, Chooser, Config, ControlConfig, ControlEnd, ControlRun, Objects, Op, OpKind,
    PickKind, Runtime, SchedPoint, SrcLoc, TaskEnd, WaitKind,
};

fn rt() -> Runtime {
    Runtime::new(Config {
        workers: 1,
        seed: 0,
        trace: None,
        max_tasks: None,
    })
}

fn run(
    main: impl std::future::Future<Output = TaskEnd> + Send + 'static,
    c: impl Chooser + 'static,
) -> ControlRun {
    rt().run_controlled(main, Rc::new(RefCell::new(c)), &ControlConfig::default())
}

fn loc(line: u32) -> SrcLoc {
    SrcLoc::new("c.weft", line, 1)
}

/// A send announced at a scheduling point, as the interpreter does.
async fn send(ch: &Chan<u32>, obj: u64, v: u32) {
    let mut objs = Objects::new();
    objs.push(obj);
    runtime::sched_point(Op::new(OpKind::Send, 0, objs)).await;
    runtime::set_wait(WaitKind::ChanSend, loc(obj as u32));
    ch.send(v).await.ok();
    runtime::clear_wait();
}

async fn recv(ch: &Chan<u32>, obj: u64) -> Option<u32> {
    let mut objs = Objects::new();
    objs.push(obj);
    runtime::sched_point(Op::new(OpKind::Recv, 0, objs)).await;
    runtime::set_wait(WaitKind::ChanRecv, loc(100 + obj as u32));
    let v = ch.recv().await;
    runtime::clear_wait();
    v
}

#[test]
fn time_is_virtual_and_timers_fire_in_deadline_order() {
    let r = run(
        async {
            let tx = Chan::new(4);
            for (i, ms) in [(1u32, 600_000u64), (2, 1_000), (3, 60_000)] {
                let tx = tx.clone();
                runtime::spawn(async move {
                    runtime::sleep(Duration::from_millis(ms)).await;
                    tx.try_send(i).ok();
                    TaskEnd::Returned
                })
                .unwrap();
            }
            let mut got = Vec::new();
            for _ in 0..3 {
                got.push((tx.recv().await.unwrap_or(0), runtime::now_ms()));
            }
            assert_eq!(got, vec![(2, 1_000.0), (3, 60_000.0), (1, 600_000.0)]);
            TaskEnd::Returned
        },
        explore::Ordinary::new(0),
    );
    assert_eq!(r.end, ControlEnd::Passed);
    assert_eq!(r.time_ms, 600_000.0);
    // Each quiescence's timers are one step of the run itself.
    assert_eq!(
        r.log.iter().filter(|s| s.op.kind == OpKind::Timer).count(),
        3
    );
}

#[test]
fn a_blocked_main_is_a_deadlock_and_other_tasks_left_are_leaked() {
    let r = run(
        async {
            let c: Chan<u32> = Chan::new(0);
            let c2 = c.clone();
            runtime::spawn(async move {
                recv(&c2, 1).await;
                TaskEnd::Returned
            })
            .unwrap();
            recv(&c, 1).await;
            TaskEnd::Returned
        },
        explore::Ordinary::new(0),
    );
    match r.end {
        ControlEnd::Deadlock(b) => {
            let tasks: Vec<(u64, WaitKind)> = b.iter().map(|b| (b.task, b.kind)).collect();
            assert_eq!(
                tasks,
                vec![(1, WaitKind::ChanRecv), (2, WaitKind::ChanRecv)]
            );
        }
        e => panic!("{e:?}"),
    }
    let r = run(
        async {
            let c: Chan<u32> = Chan::new(0);
            runtime::spawn(async move {
                send(&c, 1, 5).await;
                TaskEnd::Returned
            })
            .unwrap();
            TaskEnd::Returned
        },
        explore::Ordinary::new(0),
    );
    assert_eq!(
        r.end,
        ControlEnd::Leaked(vec![runtime::Leak {
            task: 2,
            kind: Some(WaitKind::ChanSend),
            loc: loc(1),
        }])
    );
}

#[test]
fn the_step_budget_ends_a_run_with_the_running_tasks_leaked() {
    let r = rt().run_controlled(
        async {
            runtime::spawn(async {
                loop {
                    runtime::sched_point(Op::local(OpKind::Yield, 0)).await;
                }
            })
            .unwrap();
            TaskEnd::Returned
        },
        Rc::new(RefCell::new(explore::Ordinary::new(0))),
        &ControlConfig { max_steps: 500 },
    );
    match r.end {
        ControlEnd::Leaked(l) => {
            assert_eq!(l.len(), 1);
            assert_eq!((l[0].task, l[0].kind), (2, None));
        }
        e => panic!("{e:?}"),
    }
    assert_eq!(r.log.len(), 500);
}

/// Counts the decisions it is asked for and takes the last ready task.
#[derive(Default)]
struct Last {
    tasks: u32,
    picks: u32,
}

impl Chooser for Last {
    fn pick_task(&mut self, p: &SchedPoint<'_>) -> Option<usize> {
        self.tasks += 1;
        Some(p.ready.len() - 1)
    }
    fn pick(&mut self, _: PickKind, n: usize) -> usize {
        self.picks += 1;
        n - 1
    }
    fn word(&mut self) -> u64 {
        7
    }
}

#[test]
fn every_decision_goes_through_the_chooser() {
    let last = Rc::new(RefCell::new(Last::default()));
    let r = rt().run_controlled(
        async {
            let c: Chan<u32> = Chan::new(3);
            for i in 0..3 {
                let c = c.clone();
                runtime::spawn(async move {
                    send(&c, 1, i).await;
                    TaskEnd::Returned
                })
                .unwrap();
            }
            let mut got = Vec::new();
            for _ in 0..3 {
                got.push(recv(&c, 1).await.unwrap_or(9));
            }
            // The last ready task always ran first: the tasks started last
            // sent first.
            assert_eq!(got, vec![2, 1, 0]);
            assert_eq!(runtime::choose(PickKind::Rand, 10), Some(9));
            assert_eq!(runtime::choose_word(), Some(7));
            TaskEnd::Returned
        },
        last.clone(),
        &ControlConfig::default(),
    );
    assert_eq!(r.end, ControlEnd::Passed);
    assert_eq!(last.borrow().tasks as usize, r.log.len());
    assert_eq!(last.borrow().picks, 1);
    // Outside a controlled run there is no chooser.
    assert_eq!(runtime::choose(PickKind::Rand, 10), None);
}

#[test]
fn a_delay_ends_when_its_condition_holds_or_at_quiescence() {
    let r = run(
        async {
            let c: Chan<u32> = Chan::new(1);
            let c2 = c.clone();
            let probe = c.clone();
            runtime::spawn(async move {
                send(&c2, 1, 1).await;
                TaskEnd::Returned
            })
            .unwrap();
            let met = runtime::delay_until(Box::new(move || probe.recv_ready())).await;
            assert!(met, "the send made the channel ready");
            assert_eq!(c.try_recv().ok(), Some(1));
            let never: Chan<u32> = Chan::new(0);
            let met = runtime::delay_until(Box::new(move || never.recv_ready())).await;
            assert!(!met, "nothing else can run: the wait ends");
            TaskEnd::Returned
        },
        explore::Ordinary::new(0),
    );
    assert_eq!(r.end, ControlEnd::Passed);
    assert!(r.log.iter().any(|s| s.op.kind == OpKind::Release));
}

/// A small program with several interleavings: four tasks sending on one
/// channel, main receiving them all.
async fn fan_in() -> TaskEnd {
    let c: Chan<u32> = Chan::new(0);
    for i in 0..4 {
        let c = c.clone();
        runtime::spawn(async move {
            send(&c, 1, i).await;
            send(&c, 1, 10 + i).await;
            TaskEnd::Returned
        })
        .unwrap();
    }
    for _ in 0..8 {
        recv(&c, 1).await;
    }
    TaskEnd::Returned
}

#[test]
fn a_token_replays_its_run_step_for_step() {
    for seed in 0..20 {
        let rec = Rc::new(RefCell::new(Recorder::new(RandomWalk::new(seed))));
        let first = rt().run_controlled(fan_in(), rec.clone(), &ControlConfig::default());
        let token: Token = rec.borrow().token();
        let text = token.to_string();
        let back: Token = text.parse().unwrap();
        let rep = Rc::new(RefCell::new(Replayer::new(back)));
        let again = rt().run_controlled(fan_in(), rep.clone(), &ControlConfig::default());
        rep.borrow().finish().unwrap();
        let steps = |r: &ControlRun| -> Vec<(u64, OpKind, bool)> {
            r.log
                .iter()
                .map(|s| (s.task, s.op.kind, s.preempted))
                .collect()
        };
        assert_eq!(steps(&first), steps(&again), "seed {seed}");
        assert_eq!(first.preemptions, again.preemptions);
    }
}

#[test]
fn a_replay_of_another_program_diverges() {
    let rec = Rc::new(RefCell::new(Recorder::new(RandomWalk::new(3))));
    rt().run_controlled(fan_in(), rec.clone(), &ControlConfig::default());
    let token = rec.borrow().token();
    // Another program: three senders instead of four.
    let rep = Rc::new(RefCell::new(Replayer::new(token)));
    rt().run_controlled(
        async {
            let c: Chan<u32> = Chan::new(0);
            for i in 0..3 {
                let c = c.clone();
                runtime::spawn(async move {
                    send(&c, 1, i).await;
                    send(&c, 1, 10 + i).await;
                    TaskEnd::Returned
                })
                .unwrap();
            }
            for _ in 0..6 {
                recv(&c, 1).await;
            }
            TaskEnd::Returned
        },
        rep.clone(),
        &ControlConfig::default(),
    );
    let d = rep.borrow().finish().unwrap_err();
    assert!(
        d.to_string().starts_with("replay divergence at decision"),
        "{d}"
    );
}
