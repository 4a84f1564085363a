//! ptybroker keeps interactive terminal programs alive in pseudo-terminals so
//! that callers which cannot hold a terminal open can drive them.
//!
//! The library is the core every front end shares: [`vt`] (bytes to screen),
//! [`session`] (a program in a PTY with its screen, transcript and waits) and
//! [`manager`] (the named sessions of one process).

pub mod keys;
pub mod vt;
