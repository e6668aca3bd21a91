//! The small typed values the Python API hands back, and the argument
//! conversions (payloads, job lists, connect options). Conversion only.

use std::time::Duration;

use pyo3::exceptions::PyTypeError;

use crate::defaults::{count_or, ms_or, uint_or};
use pyo3::prelude::*;
use pyo3::pybacked::{PyBackedBytes, PyBackedStr};
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyMemoryView, PyString, PyTuple};

use crate::args::{Ms, Priority, UnixMs};

// ---- payloads --------------------------------------------------------------

/// A payload borrowed from Python (`bytes`, `str` as UTF-8) or copied
/// (`bytearray`, `memoryview`). `Send`, so it can cross a GIL release.
pub enum Payload {
    Bytes(PyBackedBytes),
    Str(PyBackedStr),
    Owned(Vec<u8>),
}

impl AsRef<[u8]> for Payload {
    fn as_ref(&self) -> &[u8] {
        match self {
            Payload::Bytes(b) => b.as_ref(),
            Payload::Str(s) => s.as_bytes(),
            Payload::Owned(v) => v,
        }
    }
}

/// Convert one payload; anything else is a `TypeError` before any I/O.
pub fn payload(obj: &Bound<'_, PyAny>) -> PyResult<Payload> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Payload::Bytes(PyBackedBytes::from(b.clone())));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Payload::Str(PyBackedStr::try_from(s.clone())?));
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(Payload::Owned(b.to_vec()));
    }
    if obj.cast::<PyMemoryView>().is_ok() {
        let bytes = obj.call_method0("tobytes")?;
        return Ok(Payload::Bytes(PyBackedBytes::from(
            bytes.cast_into::<PyBytes>()?,
        )));
    }
    Err(PyTypeError::new_err(format!(
        "payload must be bytes, str, bytearray or memoryview, not {}",
        type_name(obj)
    )))
}

/// The keys an `enqueue_many` item's options may hold: `enqueue`'s keywords.
pub const ENQUEUE_OPTIONS: [&str; 6] = [
    "id",
    "run_at_ms",
    "delay_ms",
    "dedup_id",
    "dedup_ttl_ms",
    "priority",
];

/// The items of `enqueue_many`: each a payload, or a `(payload, options)`
/// tuple whose dict holds `enqueue`'s keywords (a `None` value: not given).
/// Every item is converted before any I/O; a bad one is a `TypeError` (or
/// `InvalidArgumentError` for a negative number) whose message starts
/// `item N: `, as the core's own refusals of an item do.
pub fn enqueue_items(obj: &Bound<'_, PyAny>) -> PyResult<Vec<(Payload, echomq::EnqueueOptions)>> {
    if obj.is_instance_of::<PyBytes>() || obj.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(
            "items must be a sequence of payloads or (payload, options) tuples, not a single bytes or str",
        ));
    }
    obj.try_iter()?
        .enumerate()
        .map(|(i, item)| enqueue_item(&item?).map_err(|e| item_error(obj.py(), i, e)))
        .collect()
}

fn enqueue_item(item: &Bound<'_, PyAny>) -> PyResult<(Payload, echomq::EnqueueOptions)> {
    let Ok(pair) = item.cast::<PyTuple>() else {
        return Ok((payload(item)?, echomq::EnqueueOptions::default()));
    };
    let options = match pair.len() {
        2 => pair.get_item(1)?,
        _ => {
            return Err(PyTypeError::new_err(format!(
                "a (payload, options) tuple has 2 items, not {}",
                pair.len()
            )))
        }
    };
    let options = options.cast::<PyDict>().map_err(|_| {
        PyTypeError::new_err(format!(
            "an item's options must be a dict, not {}",
            type_name(&options)
        ))
    })?;
    let mut out = echomq::EnqueueOptions::default();
    for (key, value) in options.iter() {
        let key: String = key
            .extract()
            .map_err(|_| PyTypeError::new_err("an item's option names must be str"))?;
        if value.is_none() {
            continue;
        }
        match key.as_str() {
            "id" => out.id = Some(value.extract()?),
            "run_at_ms" => out.run_at_ms = Some(value.extract::<UnixMs>()?.0),
            "delay_ms" => out.delay_ms = Some(value.extract::<Ms>()?.0),
            "dedup_id" => out.dedup_id = Some(value.extract()?),
            "dedup_ttl_ms" => out.dedup_ttl_ms = Some(value.extract::<Ms>()?.0),
            "priority" => out.priority = Some(value.extract::<Priority>()?.0),
            other => {
                return Err(PyTypeError::new_err(format!(
                    "unknown enqueue option {other:?} (one of {})",
                    ENQUEUE_OPTIONS.join(", ")
                )))
            }
        }
    }
    Ok((payload(&pair.get_item(0)?)?, out))
}

/// The same error, its message prefixed with the item's index.
fn item_error(py: Python<'_>, i: usize, e: PyErr) -> PyErr {
    let message = e
        .value(py)
        .getattr("message")
        .and_then(|m| m.extract::<String>())
        .unwrap_or_else(|_| e.value(py).to_string());
    if e.is_instance_of::<PyTypeError>(py) {
        return PyTypeError::new_err(format!("item {i}: {message}"));
    }
    match e
        .value(py)
        .getattr("code")
        .and_then(|c| c.extract::<String>())
    {
        Ok(code) if code == echomq::ErrorKind::InvalidArgument.code() => crate::errors::to_py(
            py,
            &echomq::Error::new(
                echomq::ErrorKind::InvalidArgument,
                format!("item {i}: {message}"),
            ),
        ),
        _ => e,
    }
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// `(id, token)` pairs from tuples or claimed `Job` objects.
pub fn id_tokens(obj: &Bound<'_, PyAny>) -> PyResult<Vec<(String, u64)>> {
    obj.try_iter()?
        .map(|item| {
            let item = item?;
            if let Ok(job) = item.cast::<Job>() {
                let job = job.get();
                return Ok((job.id.clone(), job.token));
            }
            let (id, token) = item.extract::<(String, Bound<'_, PyAny>)>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "expected a Job or an (id, token) tuple, not {}",
                    type_name(&item)
                ))
            })?;
            Ok((id, crate::args::non_negative(&token, "a token")?))
        })
        .collect()
}

pub fn as_refs(pairs: &[(String, u64)]) -> Vec<(&str, u64)> {
    pairs.iter().map(|(id, t)| (id.as_str(), *t)).collect()
}

// ---- connect options -----------------------------------------------------------

/// The connect keywords; `None` takes the core's default.
#[allow(clippy::too_many_arguments)] // one per connect keyword, as in `connect`
pub fn connect_options(
    node_id: Option<&Bound<'_, PyAny>>,
    client_name: Option<String>,
    connect_timeout_ms: Option<&Bound<'_, PyAny>>,
    response_timeout_ms: Option<&Bound<'_, PyAny>>,
    max_payload: Option<&Bound<'_, PyAny>>,
    strict_bundle: bool,
    publish_events: bool,
    wire_version: Option<&str>,
    (wait_replicas, wait_timeout_ms): (Option<&Bound<'_, PyAny>>, Option<&Bound<'_, PyAny>>),
) -> PyResult<echomq::ConnectOptions> {
    use echomq::defaults as core;
    let node_id = match node_id.filter(|n| !n.is_none()) {
        Some(n) => Some(
            echomq::id::check_node_id(n.extract::<i64>().unwrap_or(i64::MAX))
                .map_err(crate::errors::err)?,
        ),
        None => None,
    };
    let response_ms = ms_or(
        "response_timeout_ms",
        response_timeout_ms,
        core::RESPONSE_TIMEOUT_MS,
    )?;
    let wire_version = match wire_version {
        Some(v) => echomq::WireVersion::parse(v).map_err(crate::errors::err)?,
        None => echomq::WireVersion::NEWEST,
    };
    Ok(echomq::ConnectOptions {
        node_id,
        client_name,
        connect_timeout: Duration::from_millis(ms_or(
            "connect_timeout_ms",
            connect_timeout_ms,
            core::CONNECT_TIMEOUT_MS,
        )?),
        response_timeout: core::timeout_from_ms(response_ms),
        max_payload: count_or("max_payload", max_payload, core::MAX_PAYLOAD)?,
        strict_bundle,
        publish_events,
        wire_version,
        // Beyond u32 no cluster has that many replicas: it can only answer NotDurable.
        wait_replicas: u32::try_from(uint_or("wait_replicas", wait_replicas, 0)?)
            .unwrap_or(u32::MAX),
        wait_timeout_ms: ms_or("wait_timeout_ms", wait_timeout_ms, 1000)?,
    })
}

// ---- answers ---------------------------------------------------------------

fn repr_of(py: Python<'_>, obj: &Py<PyBytes>) -> String {
    let text = obj
        .bind(py)
        .repr()
        .map(|r| r.to_string())
        .unwrap_or_default();
    if text.chars().count() > 60 {
        let cut: String = text.chars().take(57).collect();
        format!("{cut}...")
    } else {
        text
    }
}

fn opt_repr(v: &Option<String>) -> String {
    match v {
        Some(s) => format!("{s:?}").replace('"', "'"),
        None => "None".into(),
    }
}

/// The answer to an enqueue: the id (the producer's receipt) and whether a
/// row with that id already existed.
#[pyclass(frozen, get_all, eq, hash, module = "echomq")]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Enqueued {
    pub id: String,
    pub duplicate: bool,
}

#[pymethods]
impl Enqueued {
    fn __repr__(&self) -> String {
        let dup = if self.duplicate { "True" } else { "False" };
        format!("Enqueued(id='{}', duplicate={dup})", self.id)
    }
}

impl From<echomq::Enqueued> for Enqueued {
    fn from(e: echomq::Enqueued) -> Self {
        Enqueued {
            id: e.id.to_string(),
            duplicate: e.duplicate,
        }
    }
}

/// A claimed job: settle it with its `id` and `token`. A job handed out by a
/// claim or a worker also knows its client and queue, for
/// `job.update_progress(value)` and `job.log(line)`. `attempts` is which
/// attempt this is (1 on the first claim).
#[pyclass(frozen, module = "echomq")]
pub struct Job {
    #[pyo3(get)]
    pub id: String,
    #[pyo3(get)]
    pub payload: Py<PyBytes>,
    #[pyo3(get)]
    pub token: u64,
    /// The client that claimed it and its queue.
    held: Option<(echomq::Client, String)>,
    /// Which attempt this is (1 on the first claim).
    #[pyo3(get)]
    pub attempts: u64,
}

#[pymethods]
impl Job {
    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "Job(id='{}', token={}, attempts={}, payload={})",
            self.id,
            self.token,
            self.attempts,
            repr_of(py, &self.payload)
        )
    }

    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> bool {
        match other.cast::<Job>() {
            Ok(o) => {
                let o = o.get();
                o.id == self.id
                    && o.token == self.token
                    && o.payload.bind(py).as_bytes() == self.payload.bind(py).as_bytes()
            }
            Err(_) => false,
        }
    }
}

impl Job {
    pub fn new(py: Python<'_>, job: &echomq::Job) -> Job {
        Job {
            id: job.id.to_string(),
            payload: PyBytes::new(py, &job.payload).unbind(),
            token: job.token,
            held: None,
            attempts: job.attempts,
        }
    }

    /// A job `client` claimed from `queue`.
    pub fn held(py: Python<'_>, job: &echomq::Job, client: &echomq::Client, queue: &str) -> Job {
        Job {
            held: Some((client.clone(), queue.to_string())),
            ..Job::new(py, job)
        }
    }

    /// The client and queue of a claimed job.
    pub fn context(&self) -> PyResult<(&echomq::Client, &str)> {
        match &self.held {
            Some((client, queue)) => Ok((client, queue)),
            None => Err(pyo3::exceptions::PyTypeError::new_err(
                "this Job was not handed out by a claim or a worker; use the client's verbs",
            )),
        }
    }
}

/// Sizes of a queue's four sets and its two counters.
#[pyclass(frozen, get_all, eq, hash, module = "echomq")]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Counts {
    pub pending: u64,
    pub active: u64,
    pub scheduled: u64,
    pub dead: u64,
    pub completed: u64,
    pub failed: u64,
}

#[pymethods]
impl Counts {
    fn __repr__(&self) -> String {
        format!(
            "Counts(pending={}, active={}, scheduled={}, dead={}, completed={}, failed={})",
            self.pending, self.active, self.scheduled, self.dead, self.completed, self.failed
        )
    }
}

impl From<echomq::Counts> for Counts {
    fn from(c: echomq::Counts) -> Self {
        Counts {
            pending: c.pending,
            active: c.active,
            scheduled: c.scheduled,
            dead: c.dead,
            completed: c.completed,
            failed: c.failed,
        }
    }
}

/// A job row as stored.
#[pyclass(frozen, get_all, module = "echomq")]
pub struct JobInfo {
    pub id: String,
    /// `pending`, `active`, `scheduled`, `dead`, or `unknown` for a state
    /// another runtime wrote (the word itself is `raw_state`).
    pub state: String,
    /// The `state` field as stored.
    pub raw_state: String,
    pub attempts: u64,
    pub payload: Py<PyBytes>,
    pub last_error: Option<String>,
    /// The last progress the holder wrote (echomq:2.1.0), as a Python value.
    pub progress: Py<PyAny>,
}

#[pymethods]
impl JobInfo {
    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "JobInfo(id='{}', state='{}', attempts={}, payload={}, last_error={}, progress={})",
            self.id,
            self.state,
            self.attempts,
            repr_of(py, &self.payload),
            opt_repr(&self.last_error),
            self.progress
                .bind(py)
                .repr()
                .map(|r| r.to_string())
                .unwrap_or_default()
        )
    }
}

impl JobInfo {
    pub fn new(py: Python<'_>, info: echomq::JobInfo) -> JobInfo {
        JobInfo {
            id: info.id.to_string(),
            state: info.state.as_str().to_string(),
            raw_state: info.state.raw().to_string(),
            attempts: info.attempts,
            payload: PyBytes::new(py, &info.payload).unbind(),
            last_error: info.last_error,
            progress: crate::progress::progress_value(py, info.progress),
        }
    }
}

/// A field of `{emq}:bundle` another runtime recorded with a different SHA.
#[pyclass(frozen, get_all, eq, hash, module = "echomq")]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct BundleMismatch {
    pub field: String,
    pub ours: String,
    pub theirs: String,
}

#[pymethods]
impl BundleMismatch {
    fn __repr__(&self) -> String {
        format!(
            "BundleMismatch(field='{}', ours='{}', theirs='{}')",
            self.field, self.ours, self.theirs
        )
    }
}

impl From<echomq::BundleMismatch> for BundleMismatch {
    fn from(m: echomq::BundleMismatch) -> Self {
        BundleMismatch {
            field: m.field,
            ours: m.ours,
            theirs: m.theirs,
        }
    }
}

/// A worker's counters.
#[pyclass(frozen, get_all, eq, hash, module = "echomq")]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct WorkerStats {
    pub claimed: u64,
    pub completed: u64,
    pub retried: u64,
    pub dead: u64,
    pub lease_lost: u64,
    pub in_flight: u64,
    pub claim_failures: u64,
    pub heartbeat_failures: u64,
    pub settle_failures: u64,
    pub released: u64,
}

#[pymethods]
impl WorkerStats {
    fn __repr__(&self) -> String {
        format!(
            "WorkerStats(claimed={}, completed={}, retried={}, dead={}, lease_lost={}, \
             in_flight={}, claim_failures={}, heartbeat_failures={}, settle_failures={}, \
             released={})",
            self.claimed,
            self.completed,
            self.retried,
            self.dead,
            self.lease_lost,
            self.in_flight,
            self.claim_failures,
            self.heartbeat_failures,
            self.settle_failures,
            self.released
        )
    }
}

impl From<echomq::WorkerStats> for WorkerStats {
    fn from(s: echomq::WorkerStats) -> Self {
        WorkerStats {
            claimed: s.claimed,
            completed: s.completed,
            retried: s.retried,
            dead: s.dead,
            lease_lost: s.lease_lost,
            claim_failures: s.claim_failures,
            heartbeat_failures: s.heartbeat_failures,
            settle_failures: s.settle_failures,
            released: s.released,
            in_flight: s.in_flight,
        }
    }
}

/// The parts of a branded id.
#[pyclass(frozen, get_all, eq, hash, module = "echomq")]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ParsedId {
    pub namespace: String,
    pub snowflake: u64,
    pub minted_at_ms: u64,
}

#[pymethods]
impl ParsedId {
    fn __repr__(&self) -> String {
        format!(
            "ParsedId(namespace='{}', snowflake={}, minted_at_ms={})",
            self.namespace, self.snowflake, self.minted_at_ms
        )
    }
}

/// What a key is, by the key grammar. `class_` is `queue`, `job`, `metric`,
/// `reserve` or `unclassified`.
#[pyclass(frozen, get_all, eq, hash, module = "echomq")]
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct KeyClass {
    pub class_: String,
    pub queue: Option<String>,
    pub key_type: Option<String>,
    pub id: Option<String>,
    pub member: Option<String>,
}

#[pymethods]
impl KeyClass {
    fn __repr__(&self) -> String {
        format!(
            "KeyClass(class_='{}', queue={}, key_type={}, id={}, member={})",
            self.class_,
            opt_repr(&self.queue),
            opt_repr(&self.key_type),
            opt_repr(&self.id),
            opt_repr(&self.member)
        )
    }
}
