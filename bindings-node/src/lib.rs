//! `echomq` for Node.js: a thin napi-rs translation of the Rust core.
//!
//! Nothing here knows the protocol. Each verb converts its arguments, runs the
//! core future on the process's one tokio runtime (`echomq::runtime::runtime()`),
//! and settles a JavaScript Promise from there through one threadsafe function
//! per environment (`bridge.rs`). Errors
//! become `Error` objects carrying the core's stable `code` (plus `found` /
//! `word` where the kind has them). `index.js` is the public face: it names the
//! verbs, turns these errors into `EchoMQError`, and wraps the worker handler.

#![deny(unsafe_op_in_unsafe_fn)]

mod admin;
mod bridge;
mod client;
mod convert;
mod defaults;
mod enqueue;
mod error;
mod features;
mod helpers;
mod observe;
mod progress;
mod repeat;
mod worker;

pub use client::*;
pub use defaults::*;
pub use enqueue::*;
pub use error::*;
pub use features::*;
pub use helpers::*;
pub use observe::*;
pub use worker::*;
