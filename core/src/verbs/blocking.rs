//! A blocking facade over [`crate::Client`] for callers without an async
//! runtime (the C ABI, Python's sync API). Every call runs on the process's
//! one runtime; do not call it from inside a tokio runtime.

use crate::error::Result;
use crate::fence::BundleMismatch;
use crate::options::ConnectOptions;
use crate::runtime::runtime;

/// One queue of a blocking client: see [`crate::queue`].
pub use crate::queue::BlockingQueue as Queue;

/// The blocking client. Cheap to clone, `Send + Sync`.
#[derive(Clone, Debug)]
pub struct Client {
    inner: crate::Client,
}

fn wait<F: std::future::Future>(fut: F) -> F::Output {
    runtime().block_on(fut)
}

impl Client {
    /// Blocking [`Client::connect`](crate::Client::connect).
    pub fn connect(url: &str, options: ConnectOptions) -> Result<Client> {
        let inner = wait(crate::Client::connect(url, options))?;
        Ok(Client { inner })
    }

    /// Connect without naming a URL: `EMQ_URL` when set, else
    /// `redis://127.0.0.1:6379/` ([`crate::defaults::url`]).
    pub fn connect_default(options: ConnectOptions) -> Result<Client> {
        Client::connect(&crate::defaults::url(), options)
    }

    /// A handle on one queue (the name checked here, before any I/O).
    pub fn queue(&self, name: &str) -> Result<Queue> {
        Queue::new(self.inner.clone(), name)
    }

    /// The async client underneath (shares the connection).
    pub fn as_async(&self) -> &crate::Client {
        &self.inner
    }

    /// Wrap an async client; the two share one connection.
    pub fn from_async(inner: crate::Client) -> Client {
        Client { inner }
    }

    /// Blocking [`Client::node_id`](crate::Client::node_id).
    pub fn node_id(&self) -> u16 {
        self.inner.node_id()
    }

    /// Blocking [`Client::bundle_mismatches`](crate::Client::bundle_mismatches).
    pub fn bundle_mismatches(&self) -> Result<Vec<BundleMismatch>> {
        self.inner.bundle_mismatches()
    }

    /// [`Client::close`](crate::Client::close), then wait until
    /// [`Client::closed`](crate::Client::closed): the queue events of calls
    /// that answered before it are published (at most
    /// [`CLOSE_FLUSH`](crate::CLOSE_FLUSH)).
    /// Called on a thread of a tokio runtime (a callback), it cannot block
    /// there: it closes, and the flush goes on in the background. With
    /// nothing to flush (a forked child's inherited client) it never enters
    /// the runtime.
    pub fn close(&self) {
        let closed = self.inner.close_and_wait();
        if self.inner.flushing() && tokio::runtime::Handle::try_current().is_err() {
            wait(closed);
        }
    }
}
