//! The stall cap's verb on both Python clients: `reap_stalled` and its answer.

use pyo3::prelude::*;

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
