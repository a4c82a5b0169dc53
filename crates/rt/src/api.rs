//! The runtime's public value types: configuration, source locations, wait
//! reasons, how a task ended and how a run ended: the interface between the
//! runtime and the interpreter (docs/architecture.md). The interpreter
//! builds them and the CLI renders them.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

/// How a run is set up.
#[derive(Clone, Debug)]
pub struct Config {
    /// Worker threads; the thread calling `Runtime::run` is worker 0. At least 1.
    pub workers: usize,
    /// Seed of the run: victim order for stealing and `run_seed()` for `rand`.
    pub seed: u64,
    /// Where to write a Chrome trace-event timeline, if anywhere.
    pub trace: Option<PathBuf>,
    /// Most tasks alive at once (main included); `spawn` fails past it.
    pub max_tasks: Option<usize>,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            seed: 0,
            trace: None,
            max_tasks: None,
        }
    }
}

/// A position in a source file. Display: `file:line:col`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SrcLoc {
    pub file: Arc<str>,
    pub line: u32,
    pub col: u32,
}

impl SrcLoc {
    /// A location; `file` is the path as given on the command line.
    pub fn new(file: impl Into<Arc<str>>, line: u32, col: u32) -> SrcLoc {
        SrcLoc {
            file: file.into(),
            line,
            col,
        }
    }
}

impl fmt::Display for SrcLoc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.col)
    }
}

/// Why a task is blocked, as recorded by `set_wait`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WaitKind {
    ChanSend,
    ChanRecv,
    Select,
    NilChan,
    Sleep,
    /// A member of a collective group waiting for the others
    /// (docs/language.md, "Collectives").
    Collective,
}

impl fmt::Display for WaitKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            WaitKind::ChanSend => "chan send",
            WaitKind::ChanRecv => "chan receive",
            WaitKind::Select => "select",
            WaitKind::NilChan => "nil chan",
            WaitKind::Sleep => "sleep",
            WaitKind::Collective => "collective",
        })
    }
}

/// How one task's future ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TaskEnd {
    /// The task returned. Ends the run when the task is main (task 1).
    Returned,
    /// The task panicked; ends the run.
    Panic { msg: String, loc: SrcLoc },
    /// The task called `exit(code)`; ends the run.
    Exit(i32),
}

/// One line of a deadlock report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockedTask {
    pub task: u64,
    pub kind: WaitKind,
    pub loc: SrcLoc,
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunOutcome {
    /// Main returned; other tasks were stopped.
    Returned,
    /// A task called `exit(code)`.
    Exit(i32),
    /// A task panicked (the first one to do so).
    Panic { task: u64, msg: String, loc: SrcLoc },
    /// Every task was blocked with no timer or I/O wait pending. Tasks that
    /// recorded a wait with `set_wait`, in task-number order.
    Deadlock(Vec<BlockedTask>),
}

/// Why `spawn` refused to start a task.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SpawnError {
    #[error("too many tasks: the limit is {limit} tasks alive at once (--max-tasks)")]
    Limit { limit: usize },
    #[error("spawn called outside a weft runtime task")]
    NoRuntime,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_match_docs_language() {
        assert_eq!(SrcLoc::new("a.weft", 3, 7).to_string(), "a.weft:3:7");
        let kinds = [
            (WaitKind::ChanSend, "chan send"),
            (WaitKind::ChanRecv, "chan receive"),
            (WaitKind::Select, "select"),
            (WaitKind::NilChan, "nil chan"),
            (WaitKind::Sleep, "sleep"),
            (WaitKind::Collective, "collective"),
        ];
        for (k, s) in kinds {
            assert_eq!(k.to_string(), s);
        }
        assert!(SpawnError::Limit { limit: 5 }.to_string().contains("5"));
    }
}
