//! Errors of channel operations. Messages are Go's panic messages where Go
//! panics (`send on closed channel`, `close of closed channel`).

use std::fmt;

/// `close` of a channel that is already closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("close of closed channel")]
pub struct CloseError;

/// A send on a closed channel; the value comes back.
#[derive(Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("send on closed channel")]
pub struct SendError<T>(pub T);

impl<T> fmt::Debug for SendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SendError(..)")
    }
}

/// Why `try_send` did not send; the value comes back.
#[derive(Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TrySendError<T> {
    /// No receiver is waiting and the buffer is full.
    #[error("send on full channel")]
    Full(T),
    /// The channel is closed.
    #[error("send on closed channel")]
    Closed(T),
}

impl<T> TrySendError<T> {
    /// The value that was not sent.
    pub fn into_inner(self) -> T {
        match self {
            TrySendError::Full(v) | TrySendError::Closed(v) => v,
        }
    }
}

impl<T> fmt::Debug for TrySendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrySendError::Full(_) => f.write_str("Full(..)"),
            TrySendError::Closed(_) => f.write_str("Closed(..)"),
        }
    }
}

/// Why `try_recv` did not receive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TryRecvError {
    /// Nothing buffered and no sender waiting.
    #[error("receive on empty channel")]
    Empty,
    /// Closed and drained: a blocking receive would return `None` now.
    #[error("receive on closed channel")]
    Closed,
}
