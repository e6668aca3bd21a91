//! The pure helpers of docs/API.md (no server): ids, keys, slot.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use echomq::keys::{self, KeyType};
use echomq::{id, BrandedId};

use crate::args::{Count, UnixMs};
use crate::errors::err;
use crate::types::{KeyClass, ParsedId};

fn key_bytes(key: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(b) = key.cast::<PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    if let Ok(s) = key.cast::<PyString>() {
        return Ok(s.to_cow()?.as_bytes().to_vec());
    }
    Err(PyTypeError::new_err("key must be str or bytes"))
}

#[pyfunction]
#[pyo3(signature = (node_id=None))]
pub fn mint_job_id(node_id: Option<i64>) -> PyResult<String> {
    let minted = match node_id {
        Some(n) => id::mint_job_id_with(id::check_node_id(n).map_err(err)?).map_err(err)?,
        None => id::mint_job_id(),
    };
    Ok(minted.to_string())
}

#[pyfunction]
pub fn parse_id(text: String) -> PyResult<ParsedId> {
    let id = BrandedId::parse(&text).map_err(err)?;
    Ok(ParsedId {
        namespace: id.namespace().to_string(),
        snowflake: id.snowflake(),
        minted_at_ms: id.minted_at_ms(),
    })
}

#[pyfunction]
pub fn is_valid_id(text: &Bound<'_, PyAny>) -> bool {
    text.extract::<String>()
        .map(|t| id::is_valid_id(&t))
        .unwrap_or(false)
}

#[pyfunction]
pub fn encode_id(namespace: String, snowflake: Count) -> PyResult<String> {
    Ok(BrandedId::new(&namespace, snowflake.0)
        .map_err(err)?
        .to_string())
}

#[pyfunction]
pub fn lex_bound(unix_ms: UnixMs) -> String {
    id::lex_bound(unix_ms.0)
}

#[pyfunction]
pub fn is_valid_queue(name: &Bound<'_, PyAny>) -> bool {
    name.extract::<String>()
        .map(|n| keys::is_valid_queue(&n))
        .unwrap_or(false)
}

#[pyfunction]
#[pyo3(name = "queue_key")]
pub fn queue_key(queue: String, r#type: String) -> PyResult<String> {
    let key_type = KeyType::parse_arg(&r#type).map_err(err)?;
    keys::queue_key(&queue, key_type).map_err(err)
}

#[pyfunction]
pub fn job_key(queue: String, id: String) -> PyResult<String> {
    keys::job_key(&queue, &id).map_err(err)
}

#[pyfunction]
pub fn classify(key: &Bound<'_, PyAny>) -> PyResult<KeyClass> {
    let raw = key_bytes(key)?;
    let f = keys::classify_bytes(&raw).fields();
    Ok(KeyClass {
        class_: f.class.to_string(),
        queue: f.queue,
        key_type: f.key_type,
        id: f.id,
        member: f.member,
    })
}

#[pyfunction]
pub fn slot(key: &Bound<'_, PyAny>) -> PyResult<u16> {
    Ok(echomq::slot::slot(&key_bytes(key)?))
}

#[pyfunction]
pub fn protocol_version() -> &'static str {
    echomq::PROTOCOL_VERSION
}
