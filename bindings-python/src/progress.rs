//! Progress, logs and kept results (echomq:2.1.0) for both clients and the
//! handler's `Job`. Conversion only: a progress value is any JSON-able Python
//! value (sent as its `json.dumps` text), a log line a `str`, a result `bytes`.

use std::time::Duration;

use pyo3::prelude::*;

use crate::interp::Detach;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyBytes;

use crate::aio::{future_into_py, NativeAsyncClient};
use crate::args::{opt, Count, Ms};
use crate::client::Client;
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

fn bytes_or_none(py: Python<'_>, value: Option<Vec<u8>>) -> Py<PyAny> {
    match value {
        Some(v) => PyBytes::new(py, &v).into_any().unbind(),
        None => py.None(),
    }
}

#[pymethods]
impl Client {
    /// The holder records how far job `id` got: any JSON-able value.
    fn update_progress(
        &self,
        py: Python<'_>,
        queue: String,
        id: String,
        token: Count,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let json = progress_json(value)?;
        let c = &self.inner;
        py.detach_or_park(|| c.update_progress(&queue, &id, token.0, &json))
            .map_err(err)
    }

    /// Append a line to job `id`'s log (the newest `max_lines` are kept);
    /// answers the log's length.
    #[pyo3(signature = (queue, id, line, max_lines=None))]
    fn log(
        &self,
        py: Python<'_>,
        queue: String,
        id: String,
        line: String,
        max_lines: Option<Count>,
    ) -> PyResult<u64> {
        let c = &self.inner;
        py.detach_or_park(|| c.log(&queue, &id, &line, opt(max_lines)))
            .map_err(err)
    }

    /// Lines `start..=end` of job `id`'s log (LRANGE indexes).
    #[pyo3(signature = (queue, id, start=0, end=-1))]
    fn logs(
        &self,
        py: Python<'_>,
        queue: String,
        id: String,
        start: i64,
        end: i64,
    ) -> PyResult<Vec<String>> {
        let c = &self.inner;
        py.detach_or_park(|| c.logs(&queue, &id, start, end))
            .map_err(err)
    }

    /// The kept result of job `id`, or `None`.
    fn result(&self, py: Python<'_>, queue: String, id: String) -> PyResult<Py<PyAny>> {
        let c = &self.inner;
        let value = py.detach_or_park(|| c.result(&queue, &id)).map_err(err)?;
        Ok(bytes_or_none(py, value))
    }

    /// Wait up to `timeout_ms` for job `id`'s kept result.
    fn wait_for_result(
        &self,
        py: Python<'_>,
        queue: String,
        id: String,
        timeout_ms: Ms,
    ) -> PyResult<Py<PyBytes>> {
        let c = &self.inner;
        let value = py
            .detach_or_park(|| c.wait_for_result(&queue, &id, Duration::from_millis(timeout_ms.0)))
            .map_err(err)?;
        Ok(PyBytes::new(py, &value).unbind())
    }
}

#[pymethods]
impl NativeAsyncClient {
    fn update_progress<'py>(
        &self,
        py: Python<'py>,
        queue: String,
        id: String,
        token: Count,
        value: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let json = progress_json(value)?;
        let c = self.inner.clone();
        future_into_py(
            py,
            async move { c.update_progress(&queue, &id, token.0, &json).await },
            |py, ()| Ok(py.None().into_bound(py)),
        )
    }

    #[pyo3(signature = (queue, id, line, max_lines=None))]
    fn log<'py>(
        &self,
        py: Python<'py>,
        queue: String,
        id: String,
        line: String,
        max_lines: Option<Count>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let c = self.inner.clone();
        future_into_py(
            py,
            async move { c.log(&queue, &id, &line, opt(max_lines)).await },
            |py, n| Ok(n.into_pyobject(py)?.into_any()),
        )
    }

    #[pyo3(signature = (queue, id, start=0, end=-1))]
    fn logs<'py>(
        &self,
        py: Python<'py>,
        queue: String,
        id: String,
        start: i64,
        end: i64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let c = self.inner.clone();
        future_into_py(
            py,
            async move { c.logs(&queue, &id, start, end).await },
            |py, lines| Ok(lines.into_pyobject(py)?.into_any()),
        )
    }

    fn result<'py>(
        &self,
        py: Python<'py>,
        queue: String,
        id: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        let c = self.inner.clone();
        future_into_py(
            py,
            async move { c.result(&queue, &id).await },
            |py, value| Ok(bytes_or_none(py, value).into_bound(py)),
        )
    }

    fn wait_for_result<'py>(
        &self,
        py: Python<'py>,
        queue: String,
        id: String,
        timeout_ms: Ms,
    ) -> PyResult<Bound<'py, PyAny>> {
        let c = self.inner.clone();
        future_into_py(
            py,
            async move {
                c.wait_for_result(&queue, &id, Duration::from_millis(timeout_ms.0))
                    .await
            },
            |py, value| Ok(PyBytes::new(py, &value).into_any()),
        )
    }
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
