//! The operator verbs (`queues`, `drain`, `purge_dead`, `requeue_all_dead`)
//! on both clients. (The `emq` command is its own executable, shipped in the
//! wheel beside this module: docs/INSTALL.md.)

use pyo3::prelude::*;

use crate::interp::Detach;

use crate::args::{self, Count, Ms};
use pyo3::types::PyList;

use crate::aio::{future_into_py, NativeAsyncClient};
use crate::client::Client;
use crate::errors::err;

fn count(py: Python<'_>, n: u64) -> PyResult<Bound<'_, PyAny>> {
    Ok(n.into_pyobject(py)?.into_any())
}

#[pymethods]
impl Client {
    fn queues(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let c = &self.inner;
        py.detach_or_park(|| c.queues()).map_err(err)
    }

    #[pyo3(signature = (queue, include_scheduled=false, limit=None))]
    fn drain(
        &self,
        py: Python<'_>,
        queue: String,
        include_scheduled: bool,
        limit: Option<Count>,
    ) -> PyResult<u64> {
        let limit = args::opt(limit);
        let c = &self.inner;
        py.detach_or_park(|| c.drain(&queue, include_scheduled, limit))
            .map_err(err)
    }

    #[pyo3(signature = (queue, older_than_ms=None, limit=None))]
    fn purge_dead(
        &self,
        py: Python<'_>,
        queue: String,
        older_than_ms: Option<Ms>,
        limit: Option<Count>,
    ) -> PyResult<u64> {
        let older_than_ms = args::opt(older_than_ms);
        let limit = args::opt(limit);
        let c = &self.inner;
        py.detach_or_park(|| c.purge_dead(&queue, older_than_ms, limit))
            .map_err(err)
    }

    #[pyo3(signature = (queue, limit=None))]
    fn requeue_all_dead(
        &self,
        py: Python<'_>,
        queue: String,
        limit: Option<Count>,
    ) -> PyResult<u64> {
        let limit = args::opt(limit);
        let c = &self.inner;
        py.detach_or_park(|| c.requeue_all_dead(&queue, limit))
            .map_err(err)
    }
}

#[pymethods]
impl NativeAsyncClient {
    fn queues<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let c = self.inner.clone();
        future_into_py(py, async move { c.queues().await }, |py, names| {
            Ok(PyList::new(py, names)?.into_any())
        })
    }

    #[pyo3(signature = (queue, include_scheduled=false, limit=None))]
    fn drain<'py>(
        &self,
        py: Python<'py>,
        queue: String,
        include_scheduled: bool,
        limit: Option<Count>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let limit = args::opt(limit);
        let c = self.inner.clone();
        future_into_py(
            py,
            async move { c.drain(&queue, include_scheduled, limit).await },
            count,
        )
    }

    #[pyo3(signature = (queue, older_than_ms=None, limit=None))]
    fn purge_dead<'py>(
        &self,
        py: Python<'py>,
        queue: String,
        older_than_ms: Option<Ms>,
        limit: Option<Count>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let older_than_ms = args::opt(older_than_ms);
        let limit = args::opt(limit);
        let c = self.inner.clone();
        future_into_py(
            py,
            async move { c.purge_dead(&queue, older_than_ms, limit).await },
            count,
        )
    }

    #[pyo3(signature = (queue, limit=None))]
    fn requeue_all_dead<'py>(
        &self,
        py: Python<'py>,
        queue: String,
        limit: Option<Count>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let limit = args::opt(limit);
        let c = self.inner.clone();
        future_into_py(
            py,
            async move { c.requeue_all_dead(&queue, limit).await },
            count,
        )
    }
}
