//! ptybroker keeps interactive terminal programs alive in pseudo-terminals so
//! that callers which cannot hold a terminal open can drive them.
//!
//! The library is the core every front end shares: [`vt`] (bytes to screen),
//! [`session`] (a program in a PTY with its screen, transcript and waits),
//! [`manager`] (the named sessions of one process) and [`ops`] (the
//! operations every front end translates its protocol onto).

pub mod cli;
pub mod client;
pub mod keys;
pub mod limits;
pub mod manager;
pub mod ops;
pub mod pty;
pub mod rpc;
pub mod server;
pub mod session;
pub mod settle;
pub mod status;
pub mod text;
pub mod transcript;
pub mod vt;
