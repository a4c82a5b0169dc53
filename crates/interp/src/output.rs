//! The program's standard output, shared by every task of a run.
//!
//! Invariants (docs/language.md, "Errors and exit codes"):
//! - A line is written with one `write_all` under stdout's lock, so lines of
//!   different tasks never interleave and a line is never split.
//! - Each line goes straight to fd 1, as Go's `fmt.Println` does: `print`
//!   returns only once its line is the kernel's. Nothing printed waits in a
//!   process buffer, so lines reach a pipe or a file as they are printed and
//!   a run killed by any signal (`SIGKILL` included) loses no line it
//!   printed; the run's panic, deadlock or exit report on stderr comes after
//!   its last line. The price is one `write` system call per line (about
//!   0.5 µs; a million lines to a file cost about what Go's cost).

use std::io::Write;
use std::sync::Arc;

use weft_chan::loom::Mutex;

/// Where `print` writes.
pub enum Output {
    /// The process's stdout: one `write` per line, never held back.
    Stdout,
    /// An in-memory buffer (tests, embedding).
    Capture(Arc<Mutex<Vec<u8>>>),
}

impl Output {
    pub fn stdout() -> Output {
        Output::Stdout
    }

    /// Writes one whole line (the caller includes the newline): its bytes
    /// as they are, UTF-8 or not, as Go writes a string.
    pub fn write_line(&self, line: &[u8]) {
        match self {
            // `Stdout` is a `LineWriter`: a write that ends in a newline goes
            // to fd 1 at once, without a copy (and the flush finds nothing
            // to do). A closed stdout (e.g. a broken pipe) drops output; the
            // program goes on, as Go's print does.
            Output::Stdout => {
                let mut w = std::io::stdout().lock();
                let _ = w.write_all(line);
                let _ = w.flush();
            }
            Output::Capture(b) => b.lock().extend_from_slice(line),
        }
    }

    /// Makes sure everything written is out (a no-op while every write
    /// is a whole line; kept for the run's end).
    pub fn flush(&self) {
        if let Output::Stdout = self {
            let _ = std::io::stdout().lock().flush();
        }
    }
}
