//! The program's standard output, shared by every task of a run.
//!
//! Invariant: a line is written with one `write_all` under the lock, so lines
//! of different tasks never interleave. Stdout is buffered (and, like C's
//! stdio, flushed after every line when it is a terminal, so progress shows
//! as it happens); the run flushes it when it ends, before any panic,
//! deadlock or exit report is written.

use std::io::{BufWriter, IsTerminal, Stdout, Write};
use std::sync::Arc;

use parking_lot::Mutex;

/// Where `print` writes.
pub enum Output {
    /// The process's stdout, buffered; flushed per line when `line` is set.
    Stdout {
        w: Mutex<BufWriter<Stdout>>,
        line: bool,
    },
    /// An in-memory buffer (tests, embedding).
    Capture(Arc<Mutex<Vec<u8>>>),
}

impl Output {
    pub fn stdout() -> Output {
        let out = std::io::stdout();
        Output::Stdout {
            line: out.is_terminal(),
            w: Mutex::new(BufWriter::with_capacity(1 << 16, out)),
        }
    }

    /// Writes one whole line (the caller includes the newline).
    pub fn write_line(&self, line: &str) {
        match self {
            // A closed stdout (e.g. a broken pipe) drops output; the program
            // goes on, as Go's print does.
            Output::Stdout { w, line: per_line } => {
                let mut w = w.lock();
                let _ = w.write_all(line.as_bytes());
                if *per_line {
                    let _ = w.flush();
                }
            }
            Output::Capture(b) => b.lock().extend_from_slice(line.as_bytes()),
        }
    }

    pub fn flush(&self) {
        if let Output::Stdout { w, .. } = self {
            let _ = w.lock().flush();
        }
    }
}
