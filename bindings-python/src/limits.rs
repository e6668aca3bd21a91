//! Global concurrency and rate limits on both Python clients:
//! `set_concurrency`, `set_rate_limit`, and a handler's `rate_limit`.

use pyo3::prelude::*;

use crate::interp::Detach;

use crate::args::{Count, Ms};

use crate::aio::{future_into_py, NativeAsyncClient};
use crate::client::Client;
use crate::errors::err;

fn none(py: Python<'_>, _: ()) -> PyResult<Bound<'_, PyAny>> {
    Ok(py.None().into_bound(py))
}

#[pymethods]
impl Client {
    fn set_concurrency(&self, py: Python<'_>, queue: String, n: Count) -> PyResult<()> {
        let n = n.0;
        let c = &self.inner;
        py.detach_or_park(|| c.set_concurrency(&queue, n))
            .map_err(err)
    }

    fn set_rate_limit(
        &self,
        py: Python<'_>,
        queue: String,
        max: Count,
        per_ms: Ms,
    ) -> PyResult<()> {
        let max = max.0;
        let per_ms = per_ms.0;
        let c = &self.inner;
        py.detach_or_park(|| c.set_rate_limit(&queue, max, per_ms))
            .map_err(err)
    }

    fn rate_limit(
        &self,
        py: Python<'_>,
        queue: String,
        id: String,
        token: Count,
        ms: Ms,
    ) -> PyResult<()> {
        let token = token.0;
        let ms = ms.0;
        let c = &self.inner;
        py.detach_or_park(|| c.rate_limit(&queue, &id, token, ms))
            .map_err(err)
    }
}

#[pymethods]
impl NativeAsyncClient {
    fn set_concurrency<'py>(
        &self,
        py: Python<'py>,
        queue: String,
        n: Count,
    ) -> PyResult<Bound<'py, PyAny>> {
        let n = n.0;
        let c = self.inner.clone();
        future_into_py(py, async move { c.set_concurrency(&queue, n).await }, none)
    }

    fn set_rate_limit<'py>(
        &self,
        py: Python<'py>,
        queue: String,
        max: Count,
        per_ms: Ms,
    ) -> PyResult<Bound<'py, PyAny>> {
        let max = max.0;
        let per_ms = per_ms.0;
        let c = self.inner.clone();
        future_into_py(
            py,
            async move { c.set_rate_limit(&queue, max, per_ms).await },
            none,
        )
    }

    fn rate_limit<'py>(
        &self,
        py: Python<'py>,
        queue: String,
        id: String,
        token: Count,
        ms: Ms,
    ) -> PyResult<Bound<'py, PyAny>> {
        let token = token.0;
        let ms = ms.0;
        let c = self.inner.clone();
        future_into_py(
            py,
            async move { c.rate_limit(&queue, &id, token, ms).await },
            none,
        )
    }
}
