//! The library's one error type: what went wrong, worded as the CLI words it.

use std::fmt;

/// What kind of failure an [`Error`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The arguments were wrong (an unknown key name, a bad regex, an
    /// empty input, a selection that mixes `top` and `start`); the message
    /// says how.
    Invalid,
    /// The program has exited: its session can be read, not acted on.
    Exited,
    /// No session of that name (a [`Client`](crate::Client) call).
    NoSession,
    /// The daemon or a server answered with a JSON-RPC error; see
    /// [`Error::code`].
    Rpc,
    /// Anything else: a spawn that failed, a socket that could not be
    /// bound or reached, a daemon that is not running.
    Failed,
}

/// A failed call: a kind to match on and the message a user should read.
#[derive(Clone, Debug)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    code: Option<i64>,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
            code: None,
        }
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message, as the `ptybroker` command shows it.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The JSON-RPC error code, when a daemon or server answered with one
    /// (`-32602` for invalid params, `-32000` for a server error, ...).
    pub fn code(&self) -> Option<i64> {
        self.code
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl From<crate::manager::Error> for Error {
    fn from(e: crate::manager::Error) -> Error {
        use crate::manager::Error as E;
        let kind = match &e {
            E::Invalid(_) => ErrorKind::Invalid,
            E::Exited => ErrorKind::Exited,
            E::NoSession(_) => ErrorKind::NoSession,
            E::Running(..) | E::Failed(_) => ErrorKind::Failed,
        };
        Error::new(kind, e.to_string())
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        if crate::session::is_exited(&e) {
            Error::new(ErrorKind::Exited, crate::session::EXITED)
        } else {
            Error::new(ErrorKind::Failed, e.to_string())
        }
    }
}

impl From<crate::client::CallError> for Error {
    fn from(e: crate::client::CallError) -> Error {
        let kind = match e.code {
            Some(crate::jsonrpc::INVALID_PARAMS) => ErrorKind::Invalid,
            Some(_) if e.message.starts_with("no session ") => ErrorKind::NoSession,
            Some(_) if e.message == crate::session::EXITED => ErrorKind::Exited,
            Some(_) => ErrorKind::Rpc,
            None => ErrorKind::Failed,
        };
        Error {
            kind,
            message: e.message,
            code: e.code,
        }
    }
}

/// A `Result` whose error is [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
