//! The caller thread: direct calls for callers that must not block (Node's
//! JS thread, an asyncio loop), issue #16 §3, decision 16.11.
//!
//! A blocking caller drives its own call ([`crate::direct`]). A caller that
//! must not block hands the call to another thread and is told the answer.
//! Through the process runtime that costs three thread wake-ups per call:
//! the caller wakes a parked runtime worker, the worker parks while the
//! server answers and is woken by the reply, and the caller is woken with
//! the answer. Here one dedicated thread per process, on a current-thread
//! runtime, runs those calls on a connection of its own per client, and
//! while it is busy — a call in flight, or one answered a moment ago — it
//! polls its channel and its sockets instead of parking (as a direct call
//! does, [`crate::spin_wait`]). A caller issuing one call after another
//! therefore finds the thread awake and is answered without it ever
//! sleeping: what remains is the caller's own wake-up for the answer.
//!
//! The thread spins only while it pays: for at most 1.5 × its typical call
//! (at most [`crate::spin_wait::CAP`]) after the last request or answer, and
//! not at all while calls typically take longer than that (a remote server).
//! Idle, it parks like any runtime.
//!
//! Requests are started in the order they are handed over, pipelined on the
//! client's connection of this thread; their answers are handed to `done` on
//! this thread. Whatever cannot take this path takes the process runtime and
//! the shared connection, exactly as before: a cluster client, a closed
//! client, `EMQ_DIRECT_CALLS=0`, a client whose connection of this thread is
//! still being opened (in the background; its first call starts that) or
//! could not be (the shared path then answers with its own typed error), a
//! thread that cannot be started.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::mpsc::{self, error::TryRecvError, UnboundedReceiver, UnboundedSender};
use tokio::sync::Notify;

use crate::client::Client;
use crate::direct::{self, Opening, Slot, Start};
use crate::error::Result;
use crate::runtime::{caught, runtime};
use crate::spin_wait::SpinBudget;
use crate::transport::Transport;

/// A call, given the client it is to use, returning once it has answered.
type Job = Box<dyn FnOnce(Client) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send>;

struct Request {
    client: Client,
    job: Job,
}

/// The caller thread's channel, and the process that started it (a forked
/// child has no such thread and starts its own).
static CALLER: Mutex<Option<(u32, UnboundedSender<Request>)>> = Mutex::new(None);

/// Run `call` on the caller thread and hand its outcome to `done`, there;
/// or on the process runtime when it cannot go there (see the module docs).
/// Returns at once. A panic inside `call` is answered as an internal error.
pub fn spawn<T, F, Fut, D>(client: &Client, call: F, done: D)
where
    T: Send + 'static,
    F: FnOnce(Client) -> Fut + Send + 'static,
    Fut: Future<Output = Result<T>> + Send + 'static,
    D: FnOnce(Result<T>) + Send + 'static,
{
    let job: Job = Box::new(move |c| Box::pin(async move { done(caught(call(c)).await) }));
    let shared = client.transport_arc();
    if !direct::enabled() || shared.is_cluster() || shared.is_closed() {
        return on_the_runtime(client.clone(), job);
    }
    let request = Request {
        client: client.clone(),
        job,
    };
    match sender() {
        Ok(tx) => {
            if let Err(mpsc::error::SendError(request)) = tx.send(request) {
                on_the_runtime(request.client, request.job); // the thread ended
            }
        }
        Err(()) => on_the_runtime(request.client, request.job),
    }
}

fn on_the_runtime(client: Client, job: Job) {
    runtime().spawn(job(client));
}

/// This process's caller thread's channel, starting the thread if needed
/// (`Err` when it cannot be started).
fn sender() -> std::result::Result<UnboundedSender<Request>, ()> {
    let pid = std::process::id();
    let mut slot = CALLER.lock().unwrap_or_else(|p| p.into_inner());
    match slot.take() {
        Some((owner, tx)) if owner == pid && !tx.is_closed() => {
            *slot = Some((owner, tx.clone()));
            return Ok(tx);
        }
        // A forked child's copy of the parent's channel: its receiver and
        // the runtime behind it are the parent's. Leak it, never drop it
        // (dropping the last sender would signal the parent's runtime).
        Some((owner, tx)) if owner != pid => std::mem::forget(tx),
        _ => {}
    }
    let (tx, rx) = mpsc::unbounded_channel();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| log::debug!("echomq: no runtime for the caller thread: {e}"))?;
    std::thread::Builder::new()
        .name("echomq-caller".into())
        .spawn(move || {
            direct::mark_active();
            runtime.block_on(serve(rx));
        })
        .map_err(|e| log::debug!("echomq: no caller thread: {e}"))?;
    *slot = Some((pid, tx.clone()));
    Ok(tx)
}

/// When the thread last had something to do, and how long its calls take.
struct Pace {
    last: Cell<Instant>,
    calls: SpinBudget,
}

thread_local! {
    static PACE: Pace = Pace { last: Cell::new(Instant::now()), calls: SpinBudget::new() };
}

impl Pace {
    fn touch(&self) {
        self.last.set(Instant::now());
    }

    /// Busy recently enough that the next request or reply is worth
    /// waiting for awake.
    fn spinning(&self) -> bool {
        let budget = self.calls.budget();
        !budget.is_zero() && self.last.get().elapsed() < budget
    }
}

/// The caller thread's loop: take requests in order, start each on its
/// client's connection of this thread, spin while busy, park when idle.
async fn serve(mut requests: UnboundedReceiver<Request>) {
    let progress = Arc::new(Notify::new());
    loop {
        let request = match requests.try_recv() {
            Ok(request) => request,
            Err(TryRecvError::Disconnected) => return,
            Err(TryRecvError::Empty) => {
                if PACE.with(Pace::spinning) {
                    // Defers this task: the scheduler polls the sockets with
                    // a zero timeout, runs whatever they woke, comes back.
                    tokio::task::yield_now().await;
                    continue;
                }
                let request = tokio::select! {
                    request = requests.recv() => match request {
                        Some(request) => request,
                        None => return,
                    },
                    // An answer arrived: spin again, for the next request.
                    () = progress.notified() => continue,
                };
                // Woken from a park: the same wake-up may carry the end of a
                // connection the server closed while this thread slept (an
                // idle timeout, a restart, CLIENT KILL). Let its driver read
                // it first, so the request goes out on a reopened connection
                // instead of meeting the end after it (as direct calls do).
                // Only here: a busy thread already yields between requests.
                tokio::task::yield_now().await;
                tokio::task::yield_now().await;
                request
            }
        };
        PACE.with(Pace::touch);
        let Some(slot) = slot_for(&request.client) else {
            on_the_runtime(request.client, request.job);
            continue;
        };
        let client = request.client.with_transport(slot.transport.clone());
        let progress = progress.clone();
        let job = request.job;
        tokio::spawn(async move {
            let started = Instant::now();
            job(client).await;
            PACE.with(|pace| {
                pace.calls.observe(started.elapsed());
                pace.touch();
            });
            progress.notify_one();
        });
    }
}

/// This thread's connection for `client`, or `None` (take the shared path)
/// while it is being opened, fenced, in the background (its first call
/// starts that, [`direct::ready`]): requests never wait behind a connect.
fn slot_for(client: &Client) -> Option<Arc<Slot>> {
    let shared = client.transport_arc();
    if shared.is_closed() {
        return None; // the shared path answers `Closed`
    }
    if let Some(slot) = direct::lookup(&shared) {
        return (!slot.transport.is_closed()).then_some(slot);
    }
    direct::ready(&shared, Start::FirstCall, open_here)
}

/// Open the connection on this thread's runtime, which always runs.
fn open_here(opening: Opening) {
    tokio::spawn(async move {
        let opened = match opening.target() {
            Some((url, options)) => Transport::connect(&url, options)
                .await
                .map_err(|e| {
                    log::debug!("echomq: no caller-thread connection, using the shared one: {e}")
                })
                .ok(),
            None => None,
        };
        opening.finish(opened.map(|transport| (transport, None)));
    });
}
