//! Progress, logs and kept results (echomq:2.1.0) for both clients and the
//! handler's `Job`. Conversion only: a progress value is any JSON-able Python
//! value (sent as its `json.dumps` text), a log line a `str`, a result `bytes`.

use pyo3::prelude::*;

use crate::interp::Detach;
use pyo3::sync::PyOnceLock;

use crate::args::{opt, Count};
use crate::errors::err;
use crate::types::Job;

static DUMPS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static LOADS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// A progress value's JSON text (compact): what the core stores.
pub fn progress_json(value: &Bound<'_, PyAny>) -> PyResult<String> {
    let py = value.py();
    let dumps = DUMPS.import(py, "json", "dumps")?;
    let kwargs = pyo3::types::PyDict::new(py);
    kwargs.set_item("separators", (",", ":"))?;
    dumps.call((value,), Some(&kwargs))?.extract()
}

/// A stored progress text as a Python value (its text when another writer
/// stored something that is not JSON).
pub fn progress_value(py: Python<'_>, text: Option<String>) -> Py<PyAny> {
    let Some(text) = text else {
        return py.None();
    };
    LOADS
        .import(py, "json", "loads")
        .and_then(|loads| loads.call1((text.as_str(),)))
        .map(Bound::unbind)
        .unwrap_or_else(|_| pyo3::types::PyString::new(py, &text).into_any().unbind())
}

#[pymethods]
impl Job {
    /// Record this job's progress (any JSON-able value), as its holder.
    /// Blocks for one round trip (from an `async def` handler prefer
    /// `await client.update_progress(queue, job.id, job.token, value)`).
    fn update_progress(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let json = progress_json(value)?;
        let (client, queue) = self.context()?;
        py.detach_or_park(|| {
            echomq::runtime::runtime()
                .block_on(client.update_progress(queue, &self.id, self.token, &json))
        })
        .map_err(err)
    }

    /// Append a line to this job's log; answers the log's length. Blocks
    /// for one round trip, like `update_progress`.
    #[pyo3(signature = (line, max_lines=None))]
    fn log(&self, py: Python<'_>, line: String, max_lines: Option<Count>) -> PyResult<u64> {
        let (client, queue) = self.context()?;
        py.detach_or_park(|| {
            echomq::runtime::runtime().block_on(client.log(queue, &self.id, &line, opt(max_lines)))
        })
        .map_err(err)
    }
}
