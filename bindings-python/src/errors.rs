//! `echomq::Error` → the Python exception class of its kind. The classes live
//! in `echomq/_errors.py`; this side only hands over (code, message, detail).

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

static FROM_NATIVE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static UNRECOVERABLE: PyOnceLock<Py<pyo3::types::PyType>> = PyOnceLock::new();

/// The exception instance for a core error (an `EchoMQError` subclass).
pub fn exception<'py>(py: Python<'py>, e: &echomq::Error) -> Bound<'py, PyAny> {
    let detail = e
        .found()
        .or_else(|| e.class_word())
        .or_else(|| e.last_error())
        .or_else(|| e.job_id())
        .map(String::from)
        .or_else(|| e.retry_after_ms().map(|ms| ms.to_string()));
    let made = FROM_NATIVE
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(
                py.import("echomq._errors")?
                    .getattr("_from_native")?
                    .unbind(),
            )
        })
        .and_then(|make| {
            // A partial batch carries each item's (id, state), in input order.
            let items: Option<Vec<(String, &str)>> = e.batch_items().map(|items| {
                items
                    .iter()
                    .map(|i| (i.id.to_string(), i.state.as_str()))
                    .collect()
            });
            make.bind(py).call1((e.code(), e.message(), detail, items))
        });
    match made {
        Ok(value) => value,
        // Only if the package is broken; still never lose the message.
        Err(import_failure) => import_failure.into_value(py).into_bound(py).into_any(),
    }
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
