//! `echomq._native`: the pyo3 layer of the `echomq` Python package. It only
//! converts types and errors; the Python package (`python/echomq`) adds the
//! exception classes, the asyncio coroutines and the worker's signal glue.

use pyo3::prelude::*;

mod aio;
mod args;
mod client;
mod defaults;
mod errors;
mod helpers;
mod interp;
mod observe;
mod option_schema;
mod progress;
mod queue;
mod repeat;
mod stall;
mod surface;
mod types;
mod worker;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<client::Client>()?;
    m.add_class::<aio::NativeAsyncClient>()?;
    m.add_class::<aio::Start>()?;
    m.add_class::<surface::NativeQueue>()?;
    m.add_class::<surface::NativeAsyncQueue>()?;
    m.add_class::<worker::NativeWorker>()?;
    m.add_class::<types::Enqueued>()?;
    m.add_class::<types::Job>()?;
    m.add_class::<types::Counts>()?;
    m.add_class::<types::JobInfo>()?;
    m.add_class::<types::BundleMismatch>()?;
    m.add_class::<types::WorkerStats>()?;
    m.add_class::<types::ParsedId>()?;
    m.add_class::<types::KeyClass>()?;
    m.add_class::<observe::WorkerEvent>()?;
    m.add_class::<observe::QueueEvent>()?;
    m.add_class::<observe::Settled>()?;
    m.add_class::<observe::Subscription>()?;
    m.add_class::<stall::Reaped>()?;
    observe::install_logging(m.py())?;
    m.add_class::<repeat::Repeat>()?;
    m.add_function(wrap_pyfunction!(client::connect, m)?)?;
    m.add_function(wrap_pyfunction!(aio::connect_async, m)?)?;
    m.add_function(wrap_pyfunction!(helpers::mint_job_id, m)?)?;
    m.add_function(wrap_pyfunction!(helpers::parse_id, m)?)?;
    m.add_function(wrap_pyfunction!(helpers::is_valid_id, m)?)?;
    m.add_function(wrap_pyfunction!(helpers::encode_id, m)?)?;
    m.add_function(wrap_pyfunction!(helpers::lex_bound, m)?)?;
    m.add_function(wrap_pyfunction!(helpers::is_valid_queue, m)?)?;
    m.add_function(wrap_pyfunction!(helpers::queue_key, m)?)?;
    m.add_function(wrap_pyfunction!(helpers::job_key, m)?)?;
    m.add_function(wrap_pyfunction!(helpers::classify, m)?)?;
    m.add_function(wrap_pyfunction!(helpers::slot, m)?)?;
    m.add_function(wrap_pyfunction!(helpers::protocol_version, m)?)?;
    m.add_function(wrap_pyfunction!(queue::check_queue, m)?)?;
    m.add_function(wrap_pyfunction!(surface::surface_verbs, m)?)?;
    m.add_function(wrap_pyfunction!(surface::surface_stub_rows, m)?)?;
    m.add_function(wrap_pyfunction!(defaults::defaults, m)?)?;
    m.add_function(wrap_pyfunction!(option_schema::option_schema, m)?)?;
    m.add_function(wrap_pyfunction!(errors::error_kinds, m)?)?;
    m.add_function(wrap_pyfunction!(errors::error_facts, m)?)?;
    m.add_function(wrap_pyfunction!(aio::_panic_in_core_for_tests, m)?)?;
    m.add_function(wrap_pyfunction!(interp::_at_exit, m)?)?;
    m.py()
        .import("atexit")?
        .call_method1("register", (m.getattr("_at_exit")?,))?;
    m.add_function(wrap_pyfunction!(interp::_after_fork_in_child, m)?)?;
    let kwargs = pyo3::types::PyDict::new(m.py());
    kwargs.set_item("after_in_child", m.getattr("_after_fork_in_child")?)?;
    m.py()
        .import("os")?
        .call_method("register_at_fork", (), Some(&kwargs))?;
    // A tuple: the one list of names, the core's, read-only as Python sees it.
    m.add(
        "WORKER_EVENTS",
        pyo3::types::PyTuple::new(m.py(), echomq::WorkerEvent::NAMES)?,
    )?;
    m.add("PROTOCOL_VERSION", echomq::PROTOCOL_VERSION)?;
    m.add("DEFAULT_MAX_PAYLOAD", echomq::DEFAULT_MAX_PAYLOAD)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
