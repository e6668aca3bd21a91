//! Direct calls: a blocking caller's one-in-flight verb (an enqueue from a
//! Python web handler, from C) driven on the caller's own thread, on a
//! connection of that thread's own (issue #16 §3, decision 16.8).
//!
//! Through the shared multiplexed connection every blocking call crossed
//! threads twice: the caller woke a runtime worker, which owned the socket,
//! and the worker woke the caller with the answer. That pair of hand-offs
//! bounded one-at-a-time enqueue from the bindings. Here each (client,
//! thread) pair owns a current-thread runtime and a [`Transport`] opened on
//! it, and `block_on` on the caller's thread writes the request, waits in
//! epoll and reads the reply itself: nothing else is woken.
//!
//! The connection is a [`Transport`] like the shared one, so everything a
//! connection promises holds: fenced and labelled when it opens and after
//! every reconnect, the same retries of transient states, the same typed
//! errors. Only request/response verbs come here: anything that leaves a
//! task behind (a subscription, a worker, the event publisher) must live on
//! the process runtime, which runs between calls; this thread's runtime runs
//! only inside a call. The client's event publisher therefore stays the
//! shared one ([`active`] tells it where to start its task).
//!
//! The shared path is kept (and used) for a cluster client (a per-thread
//! cluster client would hold a connection to every master), inside a tokio
//! runtime (a blocking call there is the caller's bug, reported by tokio as
//! before), when the thread's connection cannot be opened (the shared path
//! then answers with its own typed error and retries), and when
//! `EMQ_DIRECT_CALLS=0`. An entry made before a `fork()` is leaked in the
//! child, never used: its socket and epoll descriptor are the parent's.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::sync::{Arc, OnceLock, Weak};

use crate::client::Client;
use crate::error::{Error, ErrorKind, Result};
use crate::runtime::runtime;
use crate::transport::Transport;

/// One thread's connection for one client.
struct Direct {
    pid: u32,
    /// The client's shared transport: the entry's identity, and its life
    /// (a dropped or closed client retires the entry).
    shared: Weak<Transport>,
    /// The client with this thread's transport (drop before the runtime).
    client: Client,
    runtime: tokio::runtime::Runtime,
}

thread_local! {
    static ENTRIES: RefCell<Vec<Direct>> = const { RefCell::new(Vec::new()) };
    static ACTIVE: Cell<bool> = const { Cell::new(false) };
}

/// Whether this thread is inside a direct call: a task started now must go
/// to the process runtime, not to the thread's, which stops with the call.
pub(crate) fn active() -> bool {
    ACTIVE.with(Cell::get)
}

/// `EMQ_DIRECT_CALLS`, read once: anything but `0`/`false`/`off` is on.
fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| {
        !matches!(
            std::env::var("EMQ_DIRECT_CALLS")
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
                .as_str(),
            "0" | "false" | "off"
        )
    })
}

/// Run `call` to completion on this thread, on its own connection to the
/// client's server when it can, else on the process runtime and the shared
/// connection. Never call it from inside a tokio runtime.
pub(crate) fn call<T, F, Fut>(client: &Client, call: F) -> Result<T>
where
    F: FnOnce(Client) -> Fut,
    Fut: Future<Output = Result<T>>,
{
    let shared = client.transport_arc();
    if shared.is_closed() {
        return Err(Error::new(ErrorKind::Closed, "client is closed"));
    }
    if !enabled() || shared.is_cluster() || tokio::runtime::Handle::try_current().is_ok() {
        return runtime().block_on(call(client.clone()));
    }
    let Some(entry) = take(client, &shared) else {
        return runtime().block_on(call(client.clone()));
    };
    ACTIVE.with(|a| a.set(true));
    // This runtime ran nothing while the thread was away: let the
    // connection's driver read an end the server sent meanwhile (an idle
    // timeout, a restart), so the call reconnects before sending instead
    // of meeting the end after it. The first yield polls the socket (a
    // zero-timeout epoll), the second lets the woken driver run.
    entry.runtime.block_on(async {
        tokio::task::yield_now().await;
        tokio::task::yield_now().await;
    });
    let answer = entry.runtime.block_on(call(entry.client.clone()));
    ACTIVE.with(|a| a.set(false));
    // Put back (a call made from inside this one, by a log handler say,
    // opened its own entry meanwhile; both are kept).
    ENTRIES.with(|e| e.borrow_mut().push(entry));
    answer
}

/// This thread's entry for `shared`, taken out of the list for the call
/// (so a nested call cannot find it borrowed), opening one if there is none.
/// Retires the entries of clients that are gone or closed on the way.
fn take(client: &Client, shared: &Arc<Transport>) -> Option<Direct> {
    let pid = std::process::id();
    let found = ENTRIES.with(|e| {
        let mut entries = e.borrow_mut();
        let mut i = 0;
        let mut found = None;
        while i < entries.len() {
            let entry = &entries[i];
            if entry.pid != pid {
                // Inherited across fork(): the parent's socket and epoll fd.
                std::mem::forget(entries.swap_remove(i));
                continue;
            }
            match entry.shared.upgrade() {
                Some(t) if Arc::ptr_eq(&t, shared) && found.is_none() => {
                    found = Some(entries.swap_remove(i));
                }
                Some(t) if !t.is_closed() => i += 1,
                _ => drop(entries.swap_remove(i)),
            }
        }
        found
    });
    found.or_else(|| open(client, shared, pid))
}

/// A current-thread runtime and a transport opened on it, fenced as every
/// connection is; `None` (logged at debug) when either cannot be had.
fn open(client: &Client, shared: &Arc<Transport>, pid: u32) -> Option<Direct> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| log::debug!("echomq: no runtime for direct calls: {e}"))
        .ok()?;
    let transport = runtime
        .block_on(Transport::connect(shared.url(), shared.options().clone()))
        .map_err(|e| log::debug!("echomq: no direct connection, using the shared one: {e}"))
        .ok()?;
    Some(Direct {
        pid,
        shared: Arc::downgrade(shared),
        client: client.with_transport(transport),
        runtime,
    })
}

/// How many direct connections this thread holds (tests, diagnostics).
pub fn thread_connections() -> usize {
    ENTRIES.with(|e| e.borrow().len())
}
