//! `echomq::Error` → the Python exception class of its kind. The classes live
//! in `echomq/_errors.py`; this side hands over the code, the message and the
//! facts the kind declares (`ErrorKind::facts`), each as its own typed value
//! keyed by the fact's name: the attribute the exception gets.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList};

use echomq::{ErrorKind, Fact, FactValue};

static FROM_NATIVE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static UNRECOVERABLE: PyOnceLock<Py<pyo3::types::PyType>> = PyOnceLock::new();

/// `{fact name: value}` for every fact the error's kind declares; a declared
/// fact this error does not hold is `None`.
fn facts<'py>(py: Python<'py>, e: &echomq::Error) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for fact in e.kind().facts() {
        let value: Bound<'py, PyAny> = match e.fact(*fact) {
            None => py.None().into_bound(py),
            Some(FactValue::Text(text)) => text.into_pyobject(py)?.into_any(),
            Some(FactValue::Number(n)) => n.into_pyobject(py)?.into_any(),
            // A partial batch: one `(id, state)` per item, in input order.
            Some(FactValue::Items(items)) => PyList::new(
                py,
                items.iter().map(|i| (i.id.to_string(), i.state.as_str())),
            )?
            .into_any(),
        };
        out.set_item(fact.name(), value)?;
    }
    Ok(out)
}

/// The exception instance for a core error (an `EchoMQError` subclass).
pub fn exception<'py>(py: Python<'py>, e: &echomq::Error) -> Bound<'py, PyAny> {
    let made = FROM_NATIVE
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(
                py.import("echomq._errors")?
                    .getattr("_from_native")?
                    .unbind(),
            )
        })
        .and_then(|make| make.bind(py).call1((e.code(), e.message(), facts(py, e)?)));
    match made {
        Ok(value) => value,
        // Only if the package is broken; still never lose the message.
        Err(import_failure) => import_failure.into_value(py).into_bound(py).into_any(),
    }
}

/// The core's error table: one `(code, status, facts)` per kind, in code
/// order; `facts` are the attribute names the kind's exception carries.
/// The package's classes and the guides' tables are checked against it.
#[pyfunction]
pub fn error_kinds() -> Vec<(&'static str, i32, Vec<&'static str>)> {
    ErrorKind::ALL
        .iter()
        .map(|k| {
            (
                k.code(),
                k.status(),
                k.facts().iter().map(|f| f.name()).collect(),
            )
        })
        .collect()
}

/// Every fact name, in declaration order.
#[pyfunction]
pub fn error_facts() -> Vec<&'static str> {
    Fact::ALL.iter().map(|f| f.name()).collect()
}

/// The `PyErr` for a core error.
pub fn to_py(py: Python<'_>, e: &echomq::Error) -> PyErr {
    PyErr::from_value(exception(py, e))
}

/// For `map_err`: attaches to the interpreter (a no-op when already attached).
pub fn err(e: echomq::Error) -> PyErr {
    Python::attach(|py| to_py(py, &e))
}

/// `echomq.UnrecoverableError`, the handler's "no more attempts" signal.
pub fn is_unrecoverable(py: Python<'_>, e: &PyErr) -> bool {
    UNRECOVERABLE
        .import(py, "echomq._errors", "UnrecoverableError")
        .map(|t| e.is_instance(py, t))
        .unwrap_or(false)
}
