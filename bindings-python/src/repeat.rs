//! Repeatable jobs (wire 2.1.0) on both Python clients: `upsert_repeat`,
//! `remove_repeat`, `list_repeats`, `fire_repeats`, and the `Repeat` answer.
//! Every check (exactly one of every_ms / cron, the cron pattern, the zone,
//! the name) is the core's.

use pyo3::prelude::*;

use crate::interp::Detach;
use pyo3::types::{PyBytes, PyList};

use crate::aio::{future_into_py, NativeAsyncClient};
use crate::args::{opt, Count, Ms, UnixMs};
use crate::client::Client;
use crate::errors::err;

/// A repeatable job as stored.
#[pyclass(frozen, get_all, module = "echomq")]
pub struct Repeat {
    pub name: String,
    pub every_ms: Option<u64>,
    pub cron: Option<String>,
    pub tz: Option<String>,
    /// The payload every fired job carries.
    pub payload: Py<PyBytes>,
    /// The slot it waits for: unix ms, server clock.
    pub next_run_ms: u64,
    pub start_at: Option<u64>,
    pub end_at: Option<u64>,
    pub limit: Option<u64>,
    pub count: u64,
    pub last_run_ms: Option<u64>,
    pub last_id: Option<String>,
}

#[pymethods]
impl Repeat {
    fn __repr__(&self) -> String {
        let schedule = match (&self.every_ms, &self.cron) {
            (Some(ms), _) => format!("every_ms={ms}"),
            (None, Some(c)) => format!("cron={c:?}, tz={:?}", self.tz.as_deref().unwrap_or("UTC")),
            (None, None) => String::new(),
        };
        format!(
            "Repeat(name={:?}, {schedule}, next_run_ms={}, count={})",
            self.name, self.next_run_ms, self.count
        )
    }
}

impl Repeat {
    fn new(py: Python<'_>, r: echomq::Repeat) -> Repeat {
        Repeat {
            name: r.name,
            every_ms: r.every_ms,
            cron: r.cron,
            tz: r.tz,
            payload: PyBytes::new(py, &r.payload).unbind(),
            next_run_ms: r.next_run_ms,
            start_at: r.start_at,
            end_at: r.end_at,
            limit: r.limit,
            count: r.count,
            last_run_ms: r.last_run_ms,
            last_id: r.last_id.map(|id| id.to_string()),
        }
    }
}

/// The keyword arguments of `upsert_repeat`, as the core's options.
fn options(
    every_ms: Option<u64>,
    cron: Option<String>,
    tz: Option<String>,
    start_at: Option<u64>,
    end_at: Option<u64>,
    limit: Option<u64>,
) -> echomq::RepeatOptions {
    echomq::RepeatOptions {
        every_ms,
        cron,
        tz,
        start_at,
        end_at,
        limit,
    }
}

fn repeat_list(py: Python<'_>, all: Vec<echomq::Repeat>) -> PyResult<Bound<'_, PyAny>> {
    let items = all
        .into_iter()
        .map(|r| Bound::new(py, Repeat::new(py, r)))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(PyList::new(py, items)?.into_any())
}

#[pymethods]
impl Client {
    #[pyo3(signature = (queue, name, *, every_ms=None, cron=None, tz=None, payload=None, start_at=None, end_at=None, limit=None))]
    #[allow(clippy::too_many_arguments)]
    fn upsert_repeat(
        &self,
        py: Python<'_>,
        queue: String,
        name: String,
        every_ms: Option<Ms>,
        cron: Option<String>,
        tz: Option<String>,
        payload: Option<&Bound<'_, PyAny>>,
        start_at: Option<UnixMs>,
        end_at: Option<UnixMs>,
        limit: Option<Count>,
    ) -> PyResult<Repeat> {
        let payload = match payload {
            Some(p) => crate::types::payload(p)?.as_ref().to_vec(),
            None => Vec::new(),
        };
        let options = options(
            opt(every_ms),
            cron,
            tz,
            opt(start_at),
            opt(end_at),
            opt(limit),
        );
        let c = &self.inner;
        let repeat = py
            .detach_or_park(|| c.upsert_repeat(&queue, &name, &payload, &options))
            .map_err(err)?;
        Ok(Repeat::new(py, repeat))
    }

    fn remove_repeat(&self, py: Python<'_>, queue: String, name: String) -> PyResult<bool> {
        let c = &self.inner;
        py.detach_or_park(|| c.remove_repeat(&queue, &name))
            .map_err(err)
    }

    fn list_repeats<'py>(&self, py: Python<'py>, queue: String) -> PyResult<Bound<'py, PyAny>> {
        let c = &self.inner;
        let all = py.detach_or_park(|| c.list_repeats(&queue)).map_err(err)?;
        repeat_list(py, all)
    }

    #[pyo3(signature = (queue, limit=None))]
    fn fire_repeats(&self, py: Python<'_>, queue: String, limit: Option<Count>) -> PyResult<u64> {
        let c = &self.inner;
        let limit = opt(limit).unwrap_or(echomq::defaults::PUMP_LIMIT);
        py.detach_or_park(|| c.fire_repeats(&queue, limit))
            .map_err(err)
    }
}

#[pymethods]
impl NativeAsyncClient {
    #[pyo3(signature = (queue, name, *, every_ms=None, cron=None, tz=None, payload=None, start_at=None, end_at=None, limit=None))]
    #[allow(clippy::too_many_arguments)]
    fn upsert_repeat<'py>(
        &self,
        py: Python<'py>,
        queue: String,
        name: String,
        every_ms: Option<Ms>,
        cron: Option<String>,
        tz: Option<String>,
        payload: Option<&Bound<'_, PyAny>>,
        start_at: Option<UnixMs>,
        end_at: Option<UnixMs>,
        limit: Option<Count>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let payload = match payload {
            Some(p) => crate::types::payload(p)?.as_ref().to_vec(),
            None => Vec::new(),
        };
        let options = options(
            opt(every_ms),
            cron,
            tz,
            opt(start_at),
            opt(end_at),
            opt(limit),
        );
        let c = self.inner.clone();
        future_into_py(
            py,
            async move { c.upsert_repeat(&queue, &name, &payload, &options).await },
            |py, r| Ok(Bound::new(py, Repeat::new(py, r))?.into_any()),
        )
    }

    fn remove_repeat<'py>(
        &self,
        py: Python<'py>,
        queue: String,
        name: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        let c = self.inner.clone();
        future_into_py(
            py,
            async move { c.remove_repeat(&queue, &name).await },
            |py, removed| Ok(pyo3::types::PyBool::new(py, removed).to_owned().into_any()),
        )
    }

    fn list_repeats<'py>(&self, py: Python<'py>, queue: String) -> PyResult<Bound<'py, PyAny>> {
        let c = self.inner.clone();
        future_into_py(py, async move { c.list_repeats(&queue).await }, repeat_list)
    }

    #[pyo3(signature = (queue, limit=None))]
    fn fire_repeats<'py>(
        &self,
        py: Python<'py>,
        queue: String,
        limit: Option<Count>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let c = self.inner.clone();
        let limit = opt(limit).unwrap_or(echomq::defaults::PUMP_LIMIT);
        future_into_py(
            py,
            async move { c.fire_repeats(&queue, limit).await },
            |py, n| Ok(n.into_pyobject(py)?.into_any()),
        )
    }
}
