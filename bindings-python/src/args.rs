//! Typed numeric arguments. A plain `u64` parameter answers a negative
//! integer with the builtin `OverflowError`, which a caller catching
//! `echomq.EchoMQError` misses; these answer `InvalidArgumentError` (as Node
//! and C do). Durations also take a `datetime.timedelta` and times a
//! `datetime.datetime`, beside integers of milliseconds. Conversion only:
//! the core still checks each value's own range.
//!
//! The package is abi3, where pyo3 has no `datetime` types, so the two
//! classes are looked up in the `datetime` module and read by attribute.

use pyo3::exceptions::{PyOverflowError, PyTypeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

static TIMEDELTA: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static DATETIME: PyOnceLock<Py<PyType>> = PyOnceLock::new();

fn invalid(message: String) -> PyErr {
    crate::errors::err(echomq::Error::new(
        echomq::ErrorKind::InvalidArgument,
        message,
    ))
}

/// A non-negative integer; negative or beyond 2**64 is `InvalidArgumentError`.
/// The one conversion every unsigned integer argument goes through (the
/// newtypes below, `defaults::uint_or`, `(id, token)` pairs): a plain `u64`
/// parameter would answer a negative int with pyo3's builtin `OverflowError`.
pub(crate) fn non_negative(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<u64> {
    obj.extract::<u64>().map_err(|e| {
        if e.is_instance_of::<PyOverflowError>(obj.py()) {
            invalid(format!("{what} must be an integer in 0..2**64, not {obj}"))
        } else {
            PyTypeError::new_err(format!(
                "{what} must be an int, not {}",
                obj.get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            ))
        }
    })
}

/// A `timedelta` in whole milliseconds (exact: read from its integer parts).
fn timedelta_ms(obj: &Bound<'_, PyAny>) -> PyResult<u64> {
    let days: i64 = obj.getattr("days")?.extract()?;
    let seconds: i64 = obj.getattr("seconds")?.extract()?;
    let micros: i64 = obj.getattr("microseconds")?.extract()?;
    let ms = (days as i128 * 86_400_000) + (seconds as i128 * 1000) + (micros as i128 / 1000);
    u64::try_from(ms).map_err(|_| invalid(format!("a duration must not be negative, not {obj}")))
}

/// A `datetime` as unix milliseconds (`datetime.timestamp()`: a naive
/// datetime is local time, as everywhere in Python).
fn datetime_ms(obj: &Bound<'_, PyAny>) -> PyResult<u64> {
    let seconds: f64 = obj.call_method0("timestamp")?.extract()?;
    let ms = (seconds * 1000.0).round();
    if ms < 0.0 || !ms.is_finite() {
        return Err(invalid(format!(
            "a time before 1970 is not a unix time: {obj}"
        )));
    }
    Ok(ms as u64)
}

fn is_a(obj: &Bound<'_, PyAny>, cell: &'static PyOnceLock<Py<PyType>>, name: &str) -> bool {
    cell.import(obj.py(), "datetime", name)
        .map(|t| obj.is_instance(t).unwrap_or(false))
        .unwrap_or(false)
}

/// A count (`limit`, `max`, a token, ...): a non-negative `int`.
#[derive(Clone, Copy, Debug)]
pub struct Count(pub u64);

impl<'a, 'py> FromPyObject<'a, 'py> for Count {
    type Error = PyErr;
    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        non_negative(&obj, "a count").map(Count)
    }
}

/// A duration: an `int` of milliseconds or a `datetime.timedelta`.
#[derive(Clone, Copy, Debug)]
pub struct Ms(pub u64);

impl<'a, 'py> FromPyObject<'a, 'py> for Ms {
    type Error = PyErr;
    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        if is_a(&obj, &TIMEDELTA, "timedelta") {
            return timedelta_ms(&obj).map(Ms);
        }
        non_negative(&obj, "a duration (ms or timedelta)").map(Ms)
    }
}

/// A time: an `int` of unix milliseconds or a `datetime.datetime`.
#[derive(Clone, Copy, Debug)]
pub struct UnixMs(pub u64);

impl<'a, 'py> FromPyObject<'a, 'py> for UnixMs {
    type Error = PyErr;
    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        if is_a(&obj, &DATETIME, "datetime") {
            return datetime_ms(&obj).map(UnixMs);
        }
        non_negative(&obj, "a time (unix ms or datetime)").map(UnixMs)
    }
}

/// A job priority (wire 2.2.0): a non-negative `int`; `0` is none. The core
/// checks the range (`1..=MAX_PRIORITY`); this only refuses what its `u32`
/// cannot hold, with the same `InvalidArgumentError`.
#[derive(Clone, Copy, Debug)]
pub struct Priority(pub u32);

impl<'a, 'py> FromPyObject<'a, 'py> for Priority {
    type Error = PyErr;
    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let p = non_negative(&obj, "a priority")?;
        u32::try_from(p).map(Priority).map_err(|_| {
            invalid(format!(
                "priority {p} is out of range: 1..={} (0 or none: no priority)",
                echomq::MAX_PRIORITY
            ))
        })
    }
}

/// `Option<Count>` → `Option<u64>`, and the same for the others.
pub fn opt<T: Into<u64>>(value: Option<T>) -> Option<u64> {
    value.map(Into::into)
}

impl From<Count> for u64 {
    fn from(v: Count) -> u64 {
        v.0
    }
}

impl From<Ms> for u64 {
    fn from(v: Ms) -> u64 {
        v.0
    }
}

impl From<UnixMs> for u64 {
    fn from(v: UnixMs) -> u64 {
        v.0
    }
}
