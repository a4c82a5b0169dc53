//! A run with a quiescence hook (one process of several): where a run
//! would end as a deadlock, it tells the hook and waits; a wake from
//! outside makes it go on (and tells the hook), and `RunControl::end`
//! ends it with the outcome the caller chooses.

use std::sync::{Arc, Condvar, Mutex};

use weft_chan::Chan;
use weft_rt::{
    self as runtime, BlockedTask, Config, Quiescence, RunControl, RunOutcome, Runtime, SrcLoc,
    TaskEnd, WaitKind,
};

fn cfg(workers: usize) -> Config {
    Config {
        workers,
        seed: 7,
        trace: None,
        max_tasks: None,
    }
}

/// Records what the runtime tells; `wait_for` blocks until a state.
#[derive(Default)]
struct Hook {
    told: Mutex<Vec<bool>>,
    cv: Condvar,
}

impl Quiescence for Hook {
    fn changed(&self, quiescent: bool) {
        self.told.lock().unwrap().push(quiescent);
        self.cv.notify_all();
    }
}

impl Hook {
    fn wait_for(&self, state: bool) {
        let mut t = self.told.lock().unwrap();
        while t.last() != Some(&state) {
            t = self.cv.wait(t).unwrap();
        }
    }
}

#[test]
fn a_quiescent_run_waits_and_ends_when_told() {
    for workers in [1, 2, 3] {
        let hook = Arc::new(Hook::default());
        let control: Arc<Mutex<Option<RunControl>>> = Arc::default();
        let ender = {
            let (hook, control) = (hook.clone(), control.clone());
            std::thread::spawn(move || {
                hook.wait_for(true);
                let c = control.lock().unwrap().clone().expect("main set it");
                let blocked = c.blocked_tasks();
                c.end(RunOutcome::Deadlock(blocked));
            })
        };
        let rt = Runtime::new(cfg(workers)).with_quiescence(hook.clone());
        let out = rt.run(async move {
            *control.lock().unwrap() = runtime::run_control();
            let never = Chan::<u8>::new(0);
            runtime::set_wait(WaitKind::ChanRecv, SrcLoc::new("q.weft", 3, 5));
            never.recv().await;
            TaskEnd::Returned
        });
        ender.join().unwrap();
        assert_eq!(
            out,
            RunOutcome::Deadlock(vec![BlockedTask {
                task: 1,
                kind: WaitKind::ChanRecv,
                loc: SrcLoc::new("q.weft", 3, 5),
            }])
        );
    }
}

#[test]
fn a_wake_from_outside_leaves_quiescence_and_the_run_goes_on() {
    for workers in [1, 2] {
        let hook = Arc::new(Hook::default());
        let chan = Chan::<u32>::new(0);
        let waker = {
            let (hook, chan) = (hook.clone(), chan.clone());
            std::thread::spawn(move || {
                hook.wait_for(true);
                chan.send_blocking(41).unwrap();
                // The send woke main: the runtime left quiescence first.
                assert_eq!(hook.told.lock().unwrap().last(), Some(&false));
            })
        };
        let rt = Runtime::new(cfg(workers)).with_quiescence(hook.clone());
        let out = rt.run(async move {
            let v = chan.recv().await;
            assert_eq!(v, Some(41));
            TaskEnd::Returned
        });
        waker.join().unwrap();
        assert_eq!(out, RunOutcome::Returned);
        let told = hook.told.lock().unwrap().clone();
        assert_eq!(told[..2], [true, false]);
    }
}
