//! The core's defaults, as Python sees them: `echomq.defaults()` answers them
//! (the tests check the documented values against it), and every omitted
//! keyword (`None`) is filled from them here, never from a Python literal.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use echomq::defaults as core;

/// Every default the core defines for the Python-facing options.
#[pyfunction]
pub fn defaults(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("concurrency", core::CONCURRENCY)?;
    d.set_item("lease_ms", core::LEASE_MS)?;
    d.set_item("max_attempts", core::MAX_ATTEMPTS)?;
    d.set_item("backoff", core::BACKOFF)?;
    d.set_item("backoff_base_ms", core::BACKOFF_BASE_MS)?;
    d.set_item("backoff_cap_ms", core::BACKOFF_CAP_MS)?;
    d.set_item("pump_interval_ms", core::PUMP_INTERVAL_MS)?;
    d.set_item("idle_max_ms", core::IDLE_MAX_MS)?;
    d.set_item("shutdown_grace_ms", core::SHUTDOWN_GRACE_MS)?;
    d.set_item("prefetch", py.None())?;
    d.set_item("handler_batch", core::HANDLER_BATCH)?;
    d.set_item("max_stalls", core::MAX_STALLS)?;
    d.set_item("wake_fallback_ms", core::WAKE_FALLBACK_MS)?;
    d.set_item("connect_timeout_ms", core::CONNECT_TIMEOUT_MS)?;
    d.set_item("response_timeout_ms", core::RESPONSE_TIMEOUT_MS)?;
    d.set_item("max_payload", core::MAX_PAYLOAD)?;
    d.set_item("browse_limit", core::BROWSE_LIMIT)?;
    d.set_item("pump_limit", core::PUMP_LIMIT)?;
    Ok(d)
}

/// An optional integer keyword: `None` takes `default`; an int outside
/// 0..2**64 is the typed `InvalidArgumentError` naming the option, not a bare
/// `OverflowError` (the core then checks the option's own range).
pub fn uint_or(name: &str, value: Option<&Bound<'_, PyAny>>, default: u64) -> PyResult<u64> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(default);
    };
    crate::args::non_negative(value, name)
}

/// [`uint_or`] for a count (`usize`).
pub fn count_or(name: &str, value: Option<&Bound<'_, PyAny>>, default: usize) -> PyResult<usize> {
    let n = uint_or(name, value, default as u64)?;
    usize::try_from(n).map_err(|_| {
        crate::errors::err(echomq::Error::new(
            echomq::ErrorKind::InvalidArgument,
            format!("{name} is {n}, out of range"),
        ))
    })
}

/// [`uint_or`] for a duration keyword (`*_ms`): also a `datetime.timedelta`.
pub fn ms_or(name: &str, value: Option<&Bound<'_, PyAny>>, default: u64) -> PyResult<u64> {
    match value.filter(|v| !v.is_none()) {
        Some(v) if !v.is_instance_of::<pyo3::types::PyInt>() => {
            Ok(v.extract::<crate::args::Ms>()?.0)
        }
        other => uint_or(name, other, default),
    }
}
