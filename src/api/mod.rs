//! The public library: thin wrappers over the core every front end shares,
//! named after seed 000's programmatic API. Re-exported at the crate root.

mod client;
mod error;
mod screen;
mod server;
mod session;

pub use client::{Client, Started, Target};
pub use error::{Error, ErrorKind, Result};
pub use screen::{Cell, Color, Cursor, Screen, Size, Style};
pub use server::{Endpoint, PtyServer};
pub use session::{
    Exit, Input, Output, ReadResult, Reason, Selection, Session, SessionOptions, Signal, Status,
    StepResult, Until, WaitResult,
};
