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
//! epoll and reads the reply itself: nothing else is woken. While a reply is
//! typically fast (a loopback or same-rack server) the wait spins
//! briefly before parking ([`crate::spin_wait`]), saving the wake-up.
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
//!
//! Closing or dropping the client closes every thread's connection at once,
//! from whichever thread does it (the shared transport keeps a weak list of
//! its companions' [`Slot`]s); a slot in the middle of a call is closed by
//! its own thread when the call returns.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Instant;

use crate::client::Client;
use crate::error::{Error, ErrorKind, Result};
use crate::runtime::runtime;
use crate::spin_wait::{spin_then_park, SpinBudget};
use crate::transport::Transport;

/// One thread's connection for one client, shared (weakly) with the
/// client's shared transport so closing the client can close it.
pub(crate) struct Slot {
    /// The process that opened it (a forked child must not touch it).
    pid: u32,
    /// This thread's transport.
    pub(crate) transport: Arc<Transport>,
    /// The current-thread runtime its connection's driver runs on; `None`
    /// once closed, and always for the caller thread's connections (their
    /// driver runs on that thread's own, always-running runtime). Locked by
    /// the owning thread for the length of a call.
    runtime: Mutex<Option<tokio::runtime::Runtime>>,
    /// How long this connection's calls spin before parking.
    spin: SpinBudget,
}

impl Slot {
    /// Close the connection: from any thread, inside a runtime or not.
    /// Busy (a call of the owning thread is running): that thread closes
    /// it when the call returns, seeing the transport closed.
    pub(crate) fn close(&self) {
        self.transport.close();
        if let Ok(mut runtime) = self.runtime.try_lock() {
            if let Some(runtime) = runtime.take() {
                if self.pid == std::process::id() {
                    // Drops the connection's driver task, and so the socket,
                    // without waiting (allowed inside another runtime).
                    runtime.shutdown_background();
                } else {
                    // A forked child closing an inherited client: the epoll
                    // descriptor is shared with the parent, so deregistering
                    // the socket would silence the parent's connection.
                    std::mem::forget(runtime);
                }
            }
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        // In a forked child (its thread's entries are dropped when it exits)
        // the runtime holds the parent's socket and epoll descriptor: leak it.
        if self.pid != std::process::id() {
            let runtime = self.runtime.get_mut().unwrap_or_else(|p| p.into_inner());
            if let Some(runtime) = runtime.take() {
                std::mem::forget(runtime);
            }
        }
    }
}

/// A thread's entry: whose it is and its slot.
struct Direct {
    /// The client's shared transport: the entry's identity. Weak: an entry
    /// never keeps a dropped client's connection open.
    shared: Weak<Transport>,
    slot: Arc<Slot>,
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

/// Mark this thread as one whose tasks must go to the process runtime (the
/// caller thread's runtime serves calls, not the tasks they leave behind).
pub(crate) fn mark_active() {
    ACTIVE.with(|a| a.set(true));
}

/// `EMQ_DIRECT_CALLS`, read once: anything but `0`/`false`/`off` is on.
pub(crate) fn enabled() -> bool {
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
    let Some(slot) = find(&shared) else {
        return runtime().block_on(call(client.clone()));
    };
    let guard = slot.runtime.lock().unwrap_or_else(|p| p.into_inner());
    let Some(runtime) = guard.as_ref() else {
        // Closed by the client from another thread just now.
        return Err(Error::new(ErrorKind::Closed, "client is closed"));
    };
    ACTIVE.with(|a| a.set(true));
    // This runtime ran nothing while the thread was away: let the
    // connection's driver read an end the server sent meanwhile (an idle
    // timeout, a restart), so the call reconnects before sending instead
    // of meeting the end after it. The first yield polls the socket (a
    // zero-timeout epoll), the second lets the woken driver run.
    runtime.block_on(async {
        tokio::task::yield_now().await;
        tokio::task::yield_now().await;
    });
    let started = Instant::now();
    let call = call(client.with_transport(slot.transport.clone()));
    let answer = runtime.block_on(spin_then_park(call, slot.spin.budget()));
    slot.spin.observe(started.elapsed());
    ACTIVE.with(|a| a.set(false));
    drop(guard);
    if slot.transport.is_closed() {
        slot.close(); // the client closed during the call
    }
    answer
}

/// This thread's slot for `shared`, opening one if there is none.
fn find(shared: &Arc<Transport>) -> Option<Arc<Slot>> {
    lookup(shared).or_else(|| open(shared))
}

/// This thread's slot for `shared`, if it has one. Drops the entries of
/// clients that are gone or closed on the way.
pub(crate) fn lookup(shared: &Arc<Transport>) -> Option<Arc<Slot>> {
    let pid = std::process::id();
    ENTRIES.with(|e| {
        let mut entries = e.try_borrow_mut().ok()?;
        let mut found = None;
        entries.retain_mut(|entry| {
            if entry.slot.pid != pid {
                return false; // inherited across fork(): Slot's drop leaks its runtime
            }
            match entry.shared.upgrade() {
                Some(t) if Arc::ptr_eq(&t, shared) => {
                    found = Some(entry.slot.clone());
                    true
                }
                Some(t) => !t.is_closed(),
                None => false,
            }
        });
        found
    })
}

/// A current-thread runtime and a transport opened on it, fenced as every
/// connection is; `None` (logged at debug) when either cannot be had.
fn open(shared: &Arc<Transport>) -> Option<Arc<Slot>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| log::debug!("echomq: no runtime for direct calls: {e}"))
        .ok()?;
    let transport = runtime
        .block_on(Transport::connect(shared.url(), shared.options().clone()))
        .map_err(|e| log::debug!("echomq: no direct connection, using the shared one: {e}"))
        .ok()?;
    Some(register(shared, transport, Some(runtime)))
}

/// Record `transport` as this thread's connection for `shared`'s client,
/// closed with it. `runtime` is the one its driver runs on when the thread
/// owns it for calls only; `None` on the caller thread, whose runtime
/// always runs ([`crate::caller`]).
pub(crate) fn register(
    shared: &Arc<Transport>,
    transport: Arc<Transport>,
    runtime: Option<tokio::runtime::Runtime>,
) -> Arc<Slot> {
    let slot = Arc::new(Slot {
        pid: std::process::id(),
        transport,
        runtime: Mutex::new(runtime),
        spin: SpinBudget::new(),
    });
    shared.adopt(&slot);
    let entry = Direct {
        shared: Arc::downgrade(shared),
        slot: slot.clone(),
    };
    ENTRIES.with(|e| {
        if let Ok(mut entries) = e.try_borrow_mut() {
            entries.push(entry);
        }
    });
    slot
}

/// How many direct connections this thread holds open (tests, diagnostics).
pub fn thread_connections() -> usize {
    ENTRIES.with(|e| {
        e.borrow()
            .iter()
            .filter(|d| !d.slot.transport.is_closed())
            .count()
    })
}
