//! ptybroker keeps interactive terminal programs alive in pseudo-terminals so
//! that callers which cannot hold a terminal open can drive them.
//!
//! As a library it offers four things, named after the JSON-RPC protocol's
//! programmatic API (`readScreen`, `wait`, `write`, `createPtyServer`):
//!
//! - [`Session`]: a program in a pseudo-terminal of this process. Read its
//!   screen ([`Session::read_screen`], [`Session::screen`]), wait for text
//!   ([`Session::wait`]), type and wait until it answers
//!   ([`Session::step_line`]), write, send keys, resize, signal, kill.
//! - [`PtyServer`]: one program served on a Unix or TCP socket, JSON-RPC
//!   2.0 with one request per line, while this process drives it too.
//! - [`Client`]: the per-user daemon that `ptybroker start` talks to, here
//!   or on another machine ([`Target`]), with typed answers.
//! - [`vt`]: the terminal emulator alone, for rendering bytes you already
//!   have; [`Screen`] turns it into rows, cursor, title and styled cells.
//!
//! Rows and columns in [`Cursor`] and [`Selection`] count from 1, as the
//! protocol counts them; [`Screen::cells`] and the [`vt`] module count
//! from 0. Linux only.
//!
//! Drive a REPL:
//!
//! ```
//! use ptybroker::{Session, SessionOptions};
//!
//! let py = Session::spawn(&SessionOptions::new(["python3", "-q"]))?;
//! py.step(&[])?; // wait for the first prompt
//! let answer = py.step_line("6 * 7")?;
//! assert!(answer.output.contains("42"), "{}", answer.output);
//! py.kill();
//! # Ok::<(), ptybroker::Error>(())
//! ```
//!
//! Render captured bytes:
//!
//! ```
//! use ptybroker::{vt, Screen};
//!
//! let mut term = vt::Screen::new(40, 5, 100);
//! term.feed(b"\x1b[1mbuild\x1b[0m: 10%\r\x1b[Kbuild: done\r\n$ ");
//! let shot = Screen::from(&term);
//! assert_eq!(shot.rows[0], "build: done");
//! assert_eq!((shot.cursor.row, shot.cursor.col), (2, 3));
//! ```
//!
//! Host a server (seed 000's `createPtyServer`):
//!
//! ```
//! use ptybroker::{Endpoint, PtyServer, SessionOptions, Until};
//!
//! let path = std::env::temp_dir().join(format!("ptyb-front-{}.sock", std::process::id()));
//! let server = PtyServer::bind(Endpoint::unix(&path), &SessionOptions::shell("bash --norc"))?;
//! println!("listening on {}", server.address()); // clients send JSON-RPC here
//! let s = server.session();
//! assert_eq!(s.write("echo hello\r")?, 11);
//! assert!(s.wait(Until::regex("^hello$")?).matched);
//! server.close(true)?;
//! # Ok::<(), ptybroker::Error>(())
//! ```

#![warn(missing_docs)]
// The internal modules (public but hidden, for the binary and the tests)
// link to one another for `cargo doc --document-private-items`.
#![allow(rustdoc::private_intra_doc_links)]

mod api;
pub use api::*;

mod attach;
mod auth;
#[doc(hidden)]
pub mod cli;
mod client;
#[doc(hidden)]
pub mod driver;
mod frame;
#[doc(hidden)]
pub mod guide;
mod install;
mod json;
mod jsonrpc;
#[doc(hidden)]
pub mod keys;
#[doc(hidden)]
pub mod limits;
#[doc(hidden)]
pub mod lines;
#[doc(hidden)]
pub mod manager;
#[doc(hidden)]
pub mod mcp;
mod ops;
mod params;
mod procstat;
mod proxy;
#[doc(hidden)]
pub mod pty;
mod record;
mod relay;
mod remote;
mod replay;
#[doc(hidden)]
pub mod rpc;
#[doc(hidden)]
pub mod server;
mod session;
#[doc(hidden)]
pub mod settle;
#[doc(hidden)]
pub mod status;
mod sync;
#[doc(hidden)]
pub mod text;
#[doc(hidden)]
pub mod transcript;
mod turns;
mod vecmap;
pub use ptybroker_vt as vt;
