//! The core's defaults as JavaScript sees them (`defaults()`): the worker and
//! connect options omitted by a caller take exactly these, filled in Rust,
//! and the tests check the documented values against them.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use echomq::defaults as core;

use crate::convert::{num, promise};

#[napi(object)]
pub struct DefaultsJs {
    pub concurrency: f64,
    pub lease_ms: f64,
    pub max_attempts: f64,
    pub backoff: String,
    pub backoff_base_ms: f64,
    pub backoff_cap_ms: f64,
    pub pump_interval_ms: f64,
    pub idle_max_ms: f64,
    pub shutdown_grace_ms: f64,
    pub handler_batch: f64,
    pub max_stalls: f64,
    pub wake_fallback_ms: f64,
    pub connect_timeout_ms: f64,
    pub response_timeout_ms: f64,
    pub max_payload: f64,
    pub browse_limit: f64,
    pub pump_limit: f64,
}

/// Every default the core defines for the Node-facing options.
#[napi]
pub fn defaults() -> DefaultsJs {
    DefaultsJs {
        concurrency: num(core::CONCURRENCY as u64),
        lease_ms: num(core::LEASE_MS),
        max_attempts: num(core::MAX_ATTEMPTS),
        backoff: core::BACKOFF.to_string(),
        backoff_base_ms: num(core::BACKOFF_BASE_MS),
        backoff_cap_ms: num(core::BACKOFF_CAP_MS),
        pump_interval_ms: num(core::PUMP_INTERVAL_MS),
        idle_max_ms: num(core::IDLE_MAX_MS),
        shutdown_grace_ms: num(core::SHUTDOWN_GRACE_MS),
        handler_batch: num(core::HANDLER_BATCH as u64),
        max_stalls: num(core::MAX_STALLS),
        wake_fallback_ms: num(core::WAKE_FALLBACK_MS),
        connect_timeout_ms: num(core::CONNECT_TIMEOUT_MS),
        response_timeout_ms: num(core::RESPONSE_TIMEOUT_MS),
        max_payload: num(core::MAX_PAYLOAD as u64),
        browse_limit: num(core::BROWSE_LIMIT),
        pump_limit: num(core::PUMP_LIMIT),
    }
}

/// Test-only: a Promise whose core future panics, to prove it rejects with
/// `EMQ_INTERNAL` (and the process can still exit) instead of hanging.
#[napi(js_name = "_panicInCoreForTests")]
pub fn panic_in_core_for_tests(env: &Env) -> Result<Object<'_>> {
    promise(
        env,
        async {
            panic!("injected by _panicInCoreForTests");
            #[allow(unreachable_code)]
            Ok(())
        },
        |_, ()| Ok(()),
    )
}
