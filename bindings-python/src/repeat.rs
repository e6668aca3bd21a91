//! Repeatable jobs (wire 2.1.0) on both Python clients: `upsert_repeat`,
//! `remove_repeat`, `list_repeats`, `fire_repeats`, and the `Repeat` answer.
//! Every check (exactly one of every_ms / cron, the cron pattern, the zone,
//! the name) is the core's.

use pyo3::prelude::*;

use pyo3::types::{PyBytes, PyList};

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
    pub fn new(py: Python<'_>, r: echomq::Repeat) -> Repeat {
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

pub fn repeat_list(py: Python<'_>, all: Vec<echomq::Repeat>) -> PyResult<Bound<'_, PyAny>> {
    let items = all
        .into_iter()
        .map(|r| Bound::new(py, Repeat::new(py, r)))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(PyList::new(py, items)?.into_any())
}
