//! The core's defaults, as Python sees them: `echomq.defaults()` answers them
//! (the tests check the documented values against it), and every omitted
//! keyword (`None`) is filled from them here, never from a Python literal.

use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Every default the core declares: each option's from the options schema
/// (`None` for an unset one), then the verbs' limits.
#[pyfunction]
pub fn defaults(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    for (name, default) in echomq::option_schema::defaults() {
        d.set_item(name, crate::option_schema::default_value(py, default)?)?;
    }
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
