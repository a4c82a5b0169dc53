//! Rendering how a run ended: the stderr text and exit code of
//! docs/language.md, "Errors and exit codes".

use weft_rt::{self as runtime, BlockedTask, SrcLoc};

use super::error::InternalError;

/// The exit code of a run the engine failed (an internal error: a bug in
/// Weft, not in the program); `EX_SOFTWARE` of BSD's `sysexits.h`.
pub const EXIT_INTERNAL: i32 = 70;

/// How a run ended: as the runtime ended it (`weft_rt::RunOutcome`), or
/// with an engine bug.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunOutcome {
    /// Main returned; other tasks were stopped.
    Returned,
    /// A task called `exit(code)`.
    Exit(i32),
    /// A task panicked (the first one to do so): `msg` is the
    /// `RuntimeError`'s message.
    Panic { task: u64, msg: String, loc: SrcLoc },
    /// Every task was blocked with no timer or I/O wait pending.
    Deadlock(Vec<BlockedTask>),
    /// Every task of every process was blocked (several processes; rank
    /// 0's report): `rank R task N [tag]: FILE:LINE:COL` lines, in rank
    /// then task order. The other processes end with `Exit(2)`.
    WorldDeadlock(Vec<String>),
    /// The engine failed: a bug in Weft, not in the program (the first
    /// one of the run, reported whatever else ended it). Exit code 70.
    Internal {
        task: u64,
        error: InternalError,
        loc: SrcLoc,
    },
}

impl From<runtime::RunOutcome> for RunOutcome {
    fn from(o: runtime::RunOutcome) -> Self {
        match o {
            runtime::RunOutcome::Returned => RunOutcome::Returned,
            runtime::RunOutcome::Exit(code) => RunOutcome::Exit(code),
            runtime::RunOutcome::Panic { task, msg, loc } => RunOutcome::Panic { task, msg, loc },
            runtime::RunOutcome::Deadlock(blocked) => RunOutcome::Deadlock(blocked),
        }
    }
}

/// The report of a run's end: what to write to stderr and the exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub stderr: String,
    pub code: i32,
}

/// The stderr text and exit code for `outcome`:
/// - main returned: nothing, 0;
/// - `exit(code)`: nothing, `code`;
/// - a panic: `panic: MESSAGE` and `    at FILE:LINE:COL (task N)`, 2;
/// - deadlock: `fatal error: all tasks are asleep - deadlock!` and one
///   `task N [kind]: FILE:LINE:COL` line per blocked task, in task order, 2;
/// - an engine bug: `weft: internal error: WHAT; this is a bug in Weft,
///   please report it` and `    at FILE:LINE:COL (task N)`, 70
///   (`EXIT_INTERNAL`).
pub fn render_outcome(outcome: &RunOutcome) -> Report {
    match outcome {
        RunOutcome::Returned => Report {
            stderr: String::new(),
            code: 0,
        },
        RunOutcome::Exit(code) => Report {
            stderr: String::new(),
            code: *code,
        },
        RunOutcome::Panic { task, msg, loc } => Report {
            stderr: format!("panic: {msg}\n    at {loc} (task {task})\n"),
            code: 2,
        },
        RunOutcome::Deadlock(blocked) => {
            let mut tasks: Vec<_> = blocked.iter().collect();
            tasks.sort_by_key(|b| b.task);
            let mut s = String::from("fatal error: all tasks are asleep - deadlock!\n");
            for b in tasks {
                s.push_str(&format!("task {} [{}]: {}\n", b.task, b.kind, b.loc));
            }
            Report { stderr: s, code: 2 }
        }
        RunOutcome::WorldDeadlock(lines) => {
            let mut s = String::from("fatal error: all tasks are asleep - deadlock!\n");
            for l in lines {
                s.push_str(l);
                s.push('\n');
            }
            Report { stderr: s, code: 2 }
        }
        RunOutcome::Internal { task, error, loc } => Report {
            stderr: format!(
                "weft: internal error: {error}; this is a bug in Weft, please report it\n    \
                 at {loc} (task {task})\n"
            ),
            code: EXIT_INTERNAL,
        },
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn loc() -> SrcLoc {
        SrcLoc {
            file: Arc::from("prog.weft"),
            line: 3,
            col: 5,
        }
    }

    /// An engine bug (which a verified program cannot cause, so it is
    /// built here directly) is reported as one: its own message and exit
    /// code 70, never as a program panic.
    #[test]
    fn internal_error_is_reported_as_a_bug() {
        let rep = render_outcome(&RunOutcome::Internal {
            task: 4,
            error: InternalError::LostInstruction("select"),
            loc: loc(),
        });
        assert_eq!(rep.code, 70);
        assert_eq!(rep.code, EXIT_INTERNAL);
        assert_eq!(
            rep.stderr,
            "weft: internal error: select: lost its instruction; this is a bug in Weft, \
             please report it\n    at prog.weft:3:5 (task 4)\n"
        );
        assert!(!rep.stderr.contains("panic"));
    }

    #[test]
    fn panic_and_deadlock_reports() {
        let rep = render_outcome(&RunOutcome::Panic {
            task: 1,
            msg: "integer divide by zero".into(),
            loc: loc(),
        });
        assert_eq!(
            rep,
            Report {
                stderr: "panic: integer divide by zero\n    at prog.weft:3:5 (task 1)\n".into(),
                code: 2,
            }
        );
        let rep = render_outcome(&RunOutcome::Deadlock(vec![
            weft_rt::BlockedTask {
                task: 2,
                kind: weft_rt::WaitKind::ChanSend,
                loc: loc(),
            },
            weft_rt::BlockedTask {
                task: 1,
                kind: weft_rt::WaitKind::ChanRecv,
                loc: loc(),
            },
        ]));
        assert_eq!(rep.code, 2);
        assert_eq!(
            rep.stderr,
            "fatal error: all tasks are asleep - deadlock!\n\
             task 1 [chan receive]: prog.weft:3:5\n\
             task 2 [chan send]: prog.weft:3:5\n"
        );
        assert_eq!(render_outcome(&RunOutcome::Exit(3)).code, 3);
        assert_eq!(render_outcome(&RunOutcome::Returned).code, 0);
    }
}
