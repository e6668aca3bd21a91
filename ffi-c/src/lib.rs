//! The C ABI of EchoMQ: `libechomq.so`, `libechomq.a` and `include/echomq.h`
//! (generated from this crate by cbindgen; see `ffi-c/cbindgen.toml`).
//!
//! Thin by design: every function converts its C arguments, calls the core's
//! blocking client (`echomq::blocking::Client`), the worker or a pure helper,
//! and converts the answer back. Protocol logic lives in the core only.
//!
//! The boundary rules, written once and applied by every function:
//! - every fallible function runs inside [`guard::guard`]: it catches panics,
//!   maps errors to an `emq_status` and an optional `emq_error`;
//! - NULL pointers, non-UTF-8 strings and bad lengths are status codes;
//! - everything handed to C is released by its matching `emq_*_free`.
//!
//! The functions are `unsafe extern "C"`: their safety contract (valid or
//! NULL pointers, NUL-terminated strings, lengths that match their buffers)
//! is stated in the header's preamble and, per function, in its `# Safety`
//! section. Inside an `unsafe fn`, every unsafe operation still sits in its
//! own `unsafe` block with a `// SAFETY:` note.
#![allow(non_camel_case_types)]
#![deny(unsafe_op_in_unsafe_fn, clippy::missing_safety_doc)]

mod client;
mod features;
mod guard;
mod observe;
mod pure;
mod repeat;
mod sized;
mod status;
mod types;
mod worker;
// Last, so the generated header keeps its order and only grows at the end.
mod admin;
mod progress;

#[cfg(test)]
mod tests;

pub use admin::*;
pub use client::*;
pub use features::*;
pub use observe::*;
pub use progress::*;
pub use pure::*;
pub use repeat::*;
pub use status::*;
pub use types::*;
pub use worker::*;
