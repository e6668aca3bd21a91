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
//! A thread's connection is opened in the background, on a short-lived
//! thread, from the thread's second call; until it is open (and for
//! [`RETRY_AFTER`] after a failed attempt) the calls take the shared path.
//! So no call waits behind a connect and its fence (the first enqueue of a
//! web handler's thread costs what a shared-path call costs, not a
//! connection set-up), and a thread that calls once and ends (a thread per
//! request) never opens a connection only to close it.
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

use std::cell::RefCell;
use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use crate::client::Client;
use crate::error::{Error, ErrorKind, Result};
use crate::options::ConnectOptions;
use crate::runtime::{runtime, set_direct_call_active};
use crate::spin_wait::{spin_then_park, SpinBudget};
use crate::transport::{Companion, Transport};

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

impl Companion for Slot {
    fn close(&self) {
        Slot::close(self)
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
}

/// Mark this thread as one whose tasks must go to the process runtime (the
/// caller thread's runtime serves calls, not the tasks they leave behind).
pub(crate) fn mark_active() {
    set_direct_call_active(true);
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
    set_direct_call_active(true);
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
    set_direct_call_active(false);
    drop(guard);
    if slot.transport.is_closed() {
        slot.close(); // the client closed during the call
    }
    answer
}

/// This thread's slot for `shared`, or `None` (take the shared path) while
/// it has none yet: opened in the background from the thread's second call.
fn find(shared: &Arc<Transport>) -> Option<Arc<Slot>> {
    lookup(shared).or_else(|| ready(shared, Start::SecondCall, open_on_a_thread))
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

/// When a thread's calls for a client start opening its connection.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Start {
    /// With the first call: a thread that serves many callers (the caller
    /// thread).
    FirstCall,
    /// With the second: a thread that calls once and ends (a thread per
    /// request) never opens a connection only to close it.
    SecondCall,
}

/// How long after a failed attempt to open a thread's connection its calls
/// keep taking the shared path before the next attempt.
pub(crate) const RETRY_AFTER: Duration = Duration::from_secs(1);

/// An attempt to open a thread's connection for a client, in the
/// background: a connect (with its fence) never holds up a call, which
/// takes the shared path meanwhile, so a first call costs no more than it
/// did there and a server that is down costs nothing more than it costs
/// the shared path.
pub(crate) struct Opening {
    shared: Weak<Transport>,
    /// Where the thread that asked picks the outcome up, on its next call.
    outcome: Arc<OnceLock<Outcome>>,
}

/// The slot, or when the attempt failed.
type Outcome = std::result::Result<Arc<Slot>, Instant>;

impl Opening {
    /// The URL and options to connect with, `None` when the client is gone.
    pub(crate) fn target(&self) -> Option<(String, ConnectOptions)> {
        let shared = self.shared.upgrade()?;
        Some((shared.url().to_string(), shared.options().clone()))
    }

    /// Hand the opened connection (and the runtime its driver runs on when
    /// the asking thread drives it in its calls only) to that thread; `None`
    /// when it could not be opened. From any thread.
    pub(crate) fn finish(self, opened: Option<(Arc<Transport>, Option<tokio::runtime::Runtime>)>) {
        let outcome = match (opened, self.shared.upgrade()) {
            (Some((transport, runtime)), Some(shared)) => {
                let slot = new_slot(transport, runtime);
                shared.adopt(&slot);
                // A close that took the companions before the adoption.
                if shared.is_closed() {
                    slot.close();
                }
                Ok(slot)
            }
            (Some((transport, runtime)), None) => {
                new_slot(transport, runtime).close(); // the client is gone
                Err(Instant::now())
            }
            (None, _) => Err(Instant::now()),
        };
        let _ = self.outcome.set(outcome);
    }
}

/// Where this thread stands with a client it has no connection for yet.
enum Pending {
    /// Called once (on the shared path).
    Seen,
    /// Being opened.
    Opening(Arc<OnceLock<Outcome>>),
    /// The last attempt failed then.
    Failed(Instant),
}

struct PendingEntry {
    pid: u32,
    shared: Weak<Transport>,
    state: Pending,
}

thread_local! {
    static PENDING: RefCell<Vec<PendingEntry>> = const { RefCell::new(Vec::new()) };
}

/// This thread's slot for `shared` once its background open has finished
/// (recording it as the thread's), else `None`, handing a new attempt to
/// `begin` when one is due.
pub(crate) fn ready(
    shared: &Arc<Transport>,
    start: Start,
    begin: fn(Opening),
) -> Option<Arc<Slot>> {
    let pid = std::process::id();
    let mut begun = None;
    let slot = PENDING.with(|p| {
        let mut pending = p.try_borrow_mut().ok()?;
        // A forked child's copies (their attempts run in the parent), and
        // clients that are gone.
        pending.retain(|e| e.pid == pid && e.shared.strong_count() > 0);
        let at = pending
            .iter()
            .position(|e| std::ptr::eq(e.shared.as_ptr(), Arc::as_ptr(shared)));
        let Some(at) = at else {
            let state = if start == Start::FirstCall {
                let (opening, outcome) = attempt(shared);
                begun = Some(opening);
                Pending::Opening(outcome)
            } else {
                Pending::Seen
            };
            pending.push(PendingEntry {
                pid,
                shared: Arc::downgrade(shared),
                state,
            });
            return None;
        };
        let entry = &mut pending[at];
        match &entry.state {
            Pending::Opening(outcome) => match outcome.get()? {
                Ok(slot) => {
                    let slot = slot.clone();
                    pending.remove(at);
                    Some(slot)
                }
                Err(failed) => {
                    entry.state = Pending::Failed(*failed);
                    None
                }
            },
            Pending::Failed(failed) if failed.elapsed() < RETRY_AFTER => None,
            Pending::Seen | Pending::Failed(_) => {
                let (opening, outcome) = attempt(shared);
                begun = Some(opening);
                entry.state = Pending::Opening(outcome);
                None
            }
        }
    });
    if let Some(opening) = begun {
        begin(opening);
    }
    let slot = slot?;
    if slot.transport.is_closed() {
        return None; // the shared path answers `Closed`
    }
    enter(shared, slot.clone());
    Some(slot)
}

fn attempt(shared: &Arc<Transport>) -> (Opening, Arc<OnceLock<Outcome>>) {
    let outcome = Arc::new(OnceLock::new());
    let opening = Opening {
        shared: Arc::downgrade(shared),
        outcome: outcome.clone(),
    };
    (opening, outcome)
}

/// A blocking caller's connection: a current-thread runtime and a
/// transport opened on it, on a short-lived thread of its own (the caller's
/// thread drives that runtime inside its calls only, so cannot open it
/// without waiting).
fn open_on_a_thread(opening: Opening) {
    let outcome = opening.outcome.clone();
    let open = move || {
        let opened = opening.target().and_then(|(url, options)| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| log::debug!("echomq: no runtime for direct calls: {e}"))
                .ok()?;
            let transport = runtime
                .block_on(Transport::connect(&url, options))
                .map_err(|e| log::debug!("echomq: no direct connection, using the shared one: {e}"))
                .ok()?;
            Some((transport, Some(runtime)))
        });
        opening.finish(opened);
    };
    if let Err(e) = std::thread::Builder::new()
        .name("echomq-direct-open".into())
        .spawn(open)
    {
        // The opening went with the closure: fail it here, so the calls
        // try again after `RETRY_AFTER` rather than wait for it forever.
        log::debug!("echomq: no thread to open a direct connection: {e}");
        let _ = outcome.set(Err(Instant::now()));
    }
}

fn new_slot(transport: Arc<Transport>, runtime: Option<tokio::runtime::Runtime>) -> Arc<Slot> {
    Arc::new(Slot {
        pid: std::process::id(),
        transport,
        runtime: Mutex::new(runtime),
        spin: SpinBudget::new(),
    })
}

/// Make `slot` this thread's connection for `shared`'s client.
fn enter(shared: &Arc<Transport>, slot: Arc<Slot>) {
    let entry = Direct {
        shared: Arc::downgrade(shared),
        slot,
    };
    ENTRIES.with(|e| {
        if let Ok(mut entries) = e.try_borrow_mut() {
            entries.push(entry);
        }
    });
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
