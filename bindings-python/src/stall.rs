//! The stall cap's verb on both Python clients: `reap_stalled` and its answer.

use pyo3::prelude::*;

use crate::interp::Detach;

use crate::args::Count;

use crate::aio::{future_into_py, NativeAsyncClient};
use crate::client::Client;
use crate::errors::err;

/// What one stall-capped reap did: ids returned to pending, ids dead-lettered.
#[pyclass(frozen, get_all, eq, module = "echomq")]
#[derive(Clone, PartialEq, Eq)]
pub struct Reaped {
    pub recovered: Vec<String>,
    pub dead: Vec<String>,
}

#[pymethods]
impl Reaped {
    fn __repr__(&self) -> String {
        format!(
            "Reaped(recovered={:?}, dead={:?})",
            self.recovered, self.dead
        )
    }
}

impl From<echomq::Reaped> for Reaped {
    fn from(r: echomq::Reaped) -> Self {
        let text = |ids: Vec<echomq::BrandedId>| ids.iter().map(|i| i.to_string()).collect();
        Reaped {
            recovered: text(r.recovered),
            dead: text(r.dead),
        }
    }
}

#[pymethods]
impl Client {
    fn reap_stalled(
        &self,
        py: Python<'_>,
        queue: String,
        limit: Count,
        max_stalls: Count,
    ) -> PyResult<Reaped> {
        let limit = limit.0;
        let max_stalls = max_stalls.0;
        let c = &self.inner;
        Ok(py
            .detach_or_park(|| c.reap_stalled(&queue, limit, max_stalls))
            .map_err(err)?
            .into())
    }
}

#[pymethods]
impl NativeAsyncClient {
    fn reap_stalled<'py>(
        &self,
        py: Python<'py>,
        queue: String,
        limit: Count,
        max_stalls: Count,
    ) -> PyResult<Bound<'py, PyAny>> {
        let limit = limit.0;
        let max_stalls = max_stalls.0;
        let c = self.inner.clone();
        future_into_py(
            py,
            async move { c.reap_stalled(&queue, limit, max_stalls).await },
            |py, r| Ok(Bound::new(py, Reaped::from(r))?.into_any()),
        )
    }
}
