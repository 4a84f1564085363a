//! ptybroker keeps interactive terminal programs alive in pseudo-terminals so
//! that callers which cannot hold a terminal open can drive them.
//!
//! The library is the core every front end shares: [`vt`] (bytes to screen),
//! [`session`] (a program in a PTY with its screen, transcript and waits),
//! [`manager`] (the named sessions of one process) and [`ops`] (the
//! operations every front end translates its protocol onto).
//!
//! Embedding without a daemon:
//!
//! ```
//! use std::time::Duration;
//! use ptybroker::session::{Options, Session, Until};
//!
//! let s = Session::start(&Options::new(vec!["sh".into(), "-c".into(), "read x; echo got $x".into()]))?;
//! s.write(b"hi\r")?;
//! let until = Until { text: Some("got hi".into()), ..Until::default() };
//! let (reason, _waited) = s.wait(&until, Duration::from_secs(10));
//! assert_eq!(reason.as_str(), "matched");
//! let screen = s.with_screen(|scr| scr.row_text(1));
//! assert_eq!(screen, "got hi");
//! # Ok::<(), std::io::Error>(())
//! ```

pub mod attach;
mod auth;
mod blocks;
pub mod cli;
pub mod client;
pub mod driver;
pub mod frame;
pub mod guide;
pub mod install;
mod json;
pub mod jsonrpc;
pub mod keys;
pub mod limits;
pub mod lines;
pub mod manager;
pub mod mcp;
pub mod ops;
pub mod params;
mod procstat;
pub mod proxy;
pub mod pty;
pub mod record;
pub mod relay;
pub mod remote;
pub mod replay;
pub mod rpc;
pub mod server;
pub mod session;
pub mod settle;
pub mod status;
mod sync;
pub mod text;
pub mod transcript;
pub mod vt;
