//! The core's options schema as Python sees it (`echomq.option_schema()`):
//! one dict per connect and worker option. `echomq.defaults()` is derived
//! from it, and the tests check the signatures and the docs against it.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use echomq::option_schema::{OptionDefault, OptionType, OPTIONS};

/// A default as Python sees it: an int, a bool, a str, or `None` (unset).
pub fn default_value<'py>(py: Python<'py>, default: OptionDefault) -> PyResult<Bound<'py, PyAny>> {
    Ok(match default {
        OptionDefault::Int(n) => n.into_pyobject(py)?.into_any(),
        OptionDefault::Bool(b) => pyo3::types::PyBool::new(py, b).to_owned().into_any(),
        OptionDefault::Text(t) => t.into_pyobject(py)?.into_any(),
        OptionDefault::Unset => py.None().into_bound(py),
    })
}

/// Every connect and worker option: `{name, group, type, values, default,
/// min, max, doc}` (`values`: an `enum`'s names; `min`/`max`: the range the
/// core checks, or `None`).
#[pyfunction]
pub fn option_schema(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let list = PyList::empty(py);
    for o in OPTIONS {
        let d = PyDict::new(py);
        d.set_item("name", o.name)?;
        d.set_item("group", o.group.as_str())?;
        d.set_item("type", o.kind.as_str())?;
        match o.kind {
            OptionType::OneOf(names) => d.set_item("values", names.to_vec())?,
            _ => d.set_item("values", py.None())?,
        }
        d.set_item("default", default_value(py, o.default)?)?;
        d.set_item("min", o.min)?;
        d.set_item("max", o.max)?;
        d.set_item("doc", o.doc)?;
        list.append(d)?;
    }
    Ok(list)
}
