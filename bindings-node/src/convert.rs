//! Argument and result conversions shared by the client, helpers and worker.

use napi::bindgen_prelude::*;

use crate::error::invalid_argument;

/// Payload bytes from a `Buffer` / `Uint8Array` or a `string` (UTF-8). Copied:
/// the core future runs on another thread.
pub(crate) fn payload(env: &Env, value: Unknown<'_>) -> Result<Vec<u8>> {
    match value.get_type()? {
        ValueType::String => Ok(String::from_unknown(value)?.into_bytes()),
        ValueType::Object => match Uint8Array::from_unknown(value) {
            Ok(bytes) => Ok(bytes.to_vec()),
            Err(_) => Err(bad_payload(env)),
        },
        _ => Err(bad_payload(env)),
    }
}

fn bad_payload(env: &Env) -> Error {
    invalid_argument(env, "payload must be a Buffer, a Uint8Array or a string")
}

/// A non-negative integer argument given as a JS number (exact up to 2^53).
pub(crate) fn uint(env: &Env, name: &str, value: f64) -> Result<u64> {
    if value.is_finite() && value >= 0.0 && value.fract() == 0.0 && value <= 9_007_199_254_740_991.0
    {
        Ok(value as u64)
    } else {
        Err(invalid_argument(
            env,
            format!("{name} must be a non-negative integer, got {value}"),
        ))
    }
}

/// [`uint`] for an optional argument: `undefined` takes the core's `default`.
pub(crate) fn uint_or(env: &Env, name: &str, value: Option<f64>, default: u64) -> Result<u64> {
    value.map_or(Ok(default), |v| uint(env, name, v))
}

/// A u64 result as a JS number.
pub(crate) fn num(value: u64) -> f64 {
    value as f64
}

pub(crate) use crate::bridge::{promise, promise_direct};
