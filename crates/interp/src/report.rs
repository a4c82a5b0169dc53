//! Rendering how a run ended: the stderr text and exit code of spec
//! section 9.

use weft_rt::RunOutcome;

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
///   `task N [kind]: FILE:LINE:COL` line per blocked task, in task order, 2.
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
    }
}
