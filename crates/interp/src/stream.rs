//! `tick(ms)` and `lines(path)` (docs/language.md, "Time" and "Input and
//! output"): channels that something other than a Weft task fills, so a
//! `select` waits on them together with timers and other channels.
//!
//! - `tick` is Go's `time.Tick`: a channel of capacity 1 and a runtime
//!   timer (`weft_rt::after`) that re-arms itself every period on the
//!   schedule `start + n × period`, sending the tick's number `n` with
//!   `try_send`: a tick that finds the buffer full is dropped, and a tick
//!   the run was too late for is skipped, so a slow receiver sees gaps
//!   (1, 2, 5, ...), never a backlog. The timer stays pending while the run
//!   lives, so, as in Go, a program waiting on a tick is never reported as
//!   deadlocked; it does not keep a run alive past `main`'s return.
//! - `lines` opens the file at the call (failure: the panic `lines: PATH:
//!   REASON` there) and starts a reader task that sends each line, without
//!   its `\n` (nor a `\r` before it, as Go's `bufio.ScanLines`), on a
//!   buffered `chan string`, and closes it at the end. Standard input
//!   (`"-"`), pipes, terminals and sockets are read without blocking and
//!   waited for on the run's epoll poller (`weft_rt::register_io`), so the
//!   reader holds no thread while it waits and the run is not a deadlock
//!   meanwhile. Regular files are read with plain reads in the reader task
//!   itself: epoll refuses them (`EPERM`) because they are always ready,
//!   and a read from one waits only for the disk, as in Go. Standard input
//!   is reopened through `/proc/self/fd/0` so that making it non-blocking
//!   does not change the file description the shell shares. A read error
//!   ends the reader: it leaves `lines: PATH: REASON` in the channel
//!   value's `read_err` and closes the channel, and the receive that finds
//!   it closed and drained panics with that message, in the receiving
//!   task at the receive (`ChanVal::closed_error`). The reader is a task of the run (it takes the next task
//!   number) and blocks in `chan send` when the consumer lags.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::unix::SourceFd;
use weft_chan::Chan;
use weft_rt::memlimit::Ceiling;
use weft_rt::{self as runtime, Objects, Op, OpKind, SrcLoc, TaskEnd, WaitKind};

use super::error::RuntimeError;
use super::lib_ops::{os_path, reason};
use super::ops::lossy;
use super::state::Shared;
use super::value::{ChanVal, ReadErr, Ty, Value, VALUE_BYTES};

/// What the memory ceiling counts for the channel and timer or reader of
/// a `tick` or `lines`.
const STREAM_BYTES: usize = 1024;
/// The lines `lines` reads ahead of its consumer.
const LINES_BUFFER: usize = 64;
/// The bytes one read asks for.
const CHUNK: usize = 64 << 10;

/// `tick(period)`: a `chan int` receiving 1, 2, 3, ... once per period
/// (a nil channel for a period of 0, as Go's `time.Tick`).
pub fn tick(sh: &Shared, period: Duration) -> Result<Value, RuntimeError> {
    if period.is_zero() {
        return Ok(Value::Chan(Arc::new(ChanVal {
            ch: None,
            elem: sh.int_ty.clone(),
            far: None,
            read_err: None,
        })));
    }
    sh.mem.check(STREAM_BYTES)?;
    let c: Chan<Value> = Chan::new(1);
    arm(c.clone(), Instant::now(), period, 1);
    Ok(Value::Chan(Arc::new(ChanVal {
        ch: Some(c),
        elem: sh.int_ty.clone(),
        far: None,
        read_err: None,
    })))
}

/// Sets the timer of tick `n` (due at `start + n × period`).
fn arm(c: Chan<Value>, start: Instant, period: Duration, n: u64) {
    let due = start + period.saturating_mul(n.min(u32::MAX as u64) as u32);
    let delay = due.saturating_duration_since(Instant::now());
    runtime::after(delay, move || {
        // A full buffer: the receiver has not taken the last tick; drop this one.
        let _ = c.try_send(Value::Int(n as i64));
        let elapsed = start.elapsed().as_nanos();
        let next = (elapsed / period.as_nanos().max(1)) as u64 + 1;
        arm(c, start, period, next.max(n + 1));
    });
}

/// A source of bytes for `lines`.
enum Source {
    /// A regular file (or a device epoll refuses): plain reads.
    Plain(File),
    /// A pipe, terminal or socket, non-blocking, on the poller.
    Polled(runtime::IoSource<Fd>),
}

/// An open file as a `mio` source (registered by its descriptor).
struct Fd(File);

impl mio::event::Source for Fd {
    fn register(
        &mut self,
        registry: &mio::Registry,
        token: mio::Token,
        interests: mio::Interest,
    ) -> io::Result<()> {
        SourceFd(&self.0.as_raw_fd()).register(registry, token, interests)
    }

    fn reregister(
        &mut self,
        registry: &mio::Registry,
        token: mio::Token,
        interests: mio::Interest,
    ) -> io::Result<()> {
        SourceFd(&self.0.as_raw_fd()).reregister(registry, token, interests)
    }

    fn deregister(&mut self, registry: &mio::Registry) -> io::Result<()> {
        SourceFd(&self.0.as_raw_fd()).deregister(registry)
    }
}

impl Source {
    async fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Source::Plain(f) => loop {
                match (&*f).read(buf) {
                    // A device opened non-blocking that the poller refused.
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => runtime::yield_now().await,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    r => return r,
                }
            },
            Source::Polled(io) => io.read_with(|fd| (&fd.0).read(buf)).await,
        }
    }
}

/// Opens `path` (`-`: standard input) for `lines`.
fn open(path: &[u8]) -> io::Result<Source> {
    use std::os::unix::fs::OpenOptionsExt;
    let nonblocking = |p: &std::path::Path| {
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(p)
    };
    let file = if path == b"-" {
        match nonblocking(std::path::Path::new("/proc/self/fd/0")) {
            Ok(f) => f,
            // No /proc, or a socket: share the descriptor, blocking.
            Err(_) => {
                use std::os::fd::AsFd;
                return Ok(Source::Plain(File::from(
                    io::stdin().as_fd().try_clone_to_owned()?,
                )));
            }
        }
    } else {
        nonblocking(os_path(path))?
    };
    if file.metadata()?.is_file() {
        return Ok(Source::Plain(file));
    }
    let polled = file.try_clone()?;
    match runtime::register_io(Fd(polled)) {
        Ok(io) => Ok(Source::Polled(io)),
        Err(_) => Ok(Source::Plain(file)),
    }
}

/// `lines(path)`: opens the file and starts its reader task.
pub fn lines(sh: &Arc<Shared>, path: &[u8], loc: Option<SrcLoc>) -> Result<Value, RuntimeError> {
    let name: Box<str> = lossy(path);
    let src = open(path)
        .map_err(|e| RuntimeError::Builtin(format!("lines: {name}: {}", reason(&e)).into()))?;
    sh.mem
        .check(STREAM_BYTES + CHUNK + LINES_BUFFER * (VALUE_BYTES + 8))?;
    let c: Chan<Value> = Chan::new(LINES_BUFFER);
    let loc = loc.unwrap_or_else(|| SrcLoc::new("?", 0, 0));
    // In a controlled run (`weft test`) the reader announces its sends and
    // its close on the channel's number like any task.
    let num = sh.test.as_ref().map(|t| t.chan_number(&c, &loc));
    let err: Arc<ReadErr> = Arc::default();
    let task = reader(src, c.clone(), err.clone(), sh.mem, name, loc, num);
    runtime::spawn(task).map_err(RuntimeError::spawn)?;
    Ok(Value::Chan(Arc::new(ChanVal {
        ch: Some(c),
        elem: Arc::new(Ty::Str),
        far: None,
        read_err: Some(err),
    })))
}

/// The reader task of `lines`.
async fn reader(
    src: Source,
    c: Chan<Value>,
    err: Arc<ReadErr>,
    mem: Ceiling,
    name: Box<str>,
    loc: SrcLoc,
    num: Option<u64>,
) -> TaskEnd {
    let point = |kind: OpKind| async move {
        if let Some(n) = num {
            let mut objs = Objects::new();
            objs.push(n);
            runtime::sched_point(Op::new(kind, 0, objs)).await;
        }
    };
    let fail = |msg: String, loc: &SrcLoc| TaskEnd::Panic {
        msg,
        loc: loc.clone(),
    };
    let mut buf = vec![0u8; CHUNK];
    let mut pending: Vec<u8> = Vec::new();
    let mut eof = false;
    while !eof {
        let n = match src.read(&mut buf).await {
            Ok(n) => n,
            Err(e) => {
                // For the receiver that finds the channel closed: set
                // before the close, which publishes it.
                let _ = err.set(format!("lines: {name}: {}", reason(&e)).into());
                break;
            }
        };
        eof = n == 0;
        pending.extend_from_slice(&buf[..n]);
        let mut start = 0;
        loop {
            let line = match pending[start..].iter().position(|&b| b == b'\n') {
                Some(k) => {
                    let l = &pending[start..start + k];
                    start += k + 1;
                    l.strip_suffix(b"\r").unwrap_or(l)
                }
                None if eof && start < pending.len() => {
                    let l = &pending[start..];
                    start = pending.len();
                    l
                }
                None => break,
            };
            if let Err(e) = mem.check(line.len() + VALUE_BYTES) {
                return fail(RuntimeError::from(e).to_string(), &loc);
            }
            let v = Value::bytes(line);
            point(OpKind::Send).await;
            let sent = match c.try_send(v) {
                Ok(()) => true,
                Err(weft_chan::TrySendError::Full(v)) => {
                    runtime::set_wait(WaitKind::ChanSend, loc.clone());
                    let r = c.send(v).await.is_ok();
                    runtime::clear_wait();
                    r
                }
                Err(weft_chan::TrySendError::Closed(_)) => false,
            };
            if !sent {
                // The program closed the channel: nobody wants the rest.
                return TaskEnd::Returned;
            }
        }
        pending.drain(..start);
    }
    point(OpKind::Close).await;
    let _ = c.close();
    TaskEnd::Returned
}
