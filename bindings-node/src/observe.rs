//! Observability for Node: core log records to a JS handler (or stderr),
//! worker events to the `Worker` EventEmitter, queue event subscriptions,
//! `waitFor` and `metricsText`. Every crossing to the JS thread is a
//! non-blocking call of a threadsafe function: the core never waits for JS.

use std::sync::Arc;
use std::time::Duration;

use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;

use echomq::{QueueEvent, Settled, SubscriptionCloser, WorkerEvent};

use crate::client::NativeClient;
use crate::convert::{num, promise, uint};
use crate::error::{invalid_argument, to_js};
use crate::worker::NativeWorker;

/// A JS callback the core's threads call without waiting. Weak ones never
/// keep the process alive by themselves.
type Callback<T, const WEAK: bool> = ThreadsafeFunction<T, (), T, Status, false, WEAK>;

// ---- logs ---------------------------------------------------------------------

/// One core log record.
#[napi(object)]
pub struct LogRecordJs {
    /// `error`, `warn`, `info`, `debug` or `trace`.
    pub level: String,
    /// The Rust module that logged (`echomq::worker::run`, ...).
    pub target: String,
    pub message: String,
}

fn level_filter(env: &Env, level: Option<String>) -> Result<log::LevelFilter> {
    match level.as_deref().unwrap_or("warn") {
        "off" => Ok(log::LevelFilter::Off),
        "error" => Ok(log::LevelFilter::Error),
        "warn" => Ok(log::LevelFilter::Warn),
        "info" => Ok(log::LevelFilter::Info),
        "debug" => Ok(log::LevelFilter::Debug),
        "trace" => Ok(log::LevelFilter::Trace),
        other => Err(invalid_argument(
            env,
            format!("unknown log level {other:?}: expected off, error, warn, info, debug or trace"),
        )),
    }
}

/// Route core log records at or above `minLevel` (default `warn`) to
/// `handler(record)`, called on the JS thread soon after (never blocking the
/// core). `null` restores the default: warnings and errors to stderr.
#[napi]
pub fn set_log_handler(
    env: &Env,
    handler: Option<Function<'_, LogRecordJs, ()>>,
    min_level: Option<String>,
) -> Result<()> {
    let min = level_filter(env, min_level)?;
    let Some(handler) = handler else {
        echomq::logging::set_forwarding(None, min);
        return Ok(());
    };
    let tsfn: Callback<LogRecordJs, true> = handler
        .build_threadsafe_function::<LogRecordJs>()
        .callee_handled::<false>()
        .weak::<true>()
        .build()?;
    let tsfn = Arc::new(tsfn);
    let sink: echomq::logging::LogSink = Arc::new(move |level, target, message| {
        let record = LogRecordJs {
            level: level.as_str().to_ascii_lowercase(),
            target: target.to_string(),
            message: message.to_string(),
        };
        tsfn.call(record, ThreadsafeFunctionCallMode::NonBlocking);
    });
    echomq::logging::set_forwarding(Some(sink), min);
    Ok(())
}

/// At load: warnings and errors go to stderr until `setLogHandler` says otherwise.
#[napi_derive::module_init]
fn install_default_logging() {
    echomq::logging::install_forwarding();
}

// ---- worker events --------------------------------------------------------------

/// One worker event; the fields that do not fit the event are absent.
#[napi(object)]
pub struct WorkerEventJs {
    /// `active`, `completed`, `failed`, `dead`, `lease_lost`, `stalled`,
    /// `error`, `drained` or `closed`.
    pub name: String,
    pub id: Option<String>,
    pub token: Option<f64>,
    pub error: Option<String>,
    /// `code` of an `error` event (`EMQ_CONNECTION`, ...).
    pub code: Option<String>,
    /// `failed`: ms until the next attempt; absent when the job went dead.
    pub retry_in_ms: Option<f64>,
    pub duration_ms: Option<f64>,
    pub count: Option<f64>,
}

impl From<&WorkerEvent> for WorkerEventJs {
    fn from(e: &WorkerEvent) -> Self {
        WorkerEventJs {
            name: e.name().to_string(),
            id: e.job().map(|(id, _)| id.to_string()),
            token: e.job().map(|(_, token)| num(token)),
            error: e.error().map(str::to_string),
            code: e.error_kind().map(|k| k.code().to_string()),
            retry_in_ms: e.retry_in_ms().map(num),
            duration_ms: e.duration_ms(),
            count: e.count().map(num),
        }
    }
}

#[napi]
impl NativeWorker {
    /// Send this worker's events named in `names` to `listener` (the others
    /// never cross to JS). Weak: it never keeps the process alive; a pending
    /// `run()` does. Set once, before `run()`.
    #[napi]
    pub fn on_event(
        &self,
        env: &Env,
        names: Vec<String>,
        listener: Function<'_, WorkerEventJs, ()>,
    ) -> Result<()> {
        let tsfn: Callback<WorkerEventJs, true> = listener
            .build_threadsafe_function::<WorkerEventJs>()
            .callee_handled::<false>()
            .weak::<true>()
            .build()?;
        self.inner
            .on_events(names, move |e| {
                tsfn.call(
                    WorkerEventJs::from(e),
                    ThreadsafeFunctionCallMode::NonBlocking,
                );
            })
            .map_err(|e| to_js(env, &e))
    }
}

// ---- queue events ----------------------------------------------------------------

/// One message of `emq:{q}:events`.
#[napi(object)]
pub struct QueueEventJs {
    pub queue: String,
    pub event: String,
    /// The job id; `''` for queue-wide events (`paused`, `resumed`).
    pub job: String,
    /// Every other field, all strings.
    pub fields: std::collections::HashMap<String, String>,
}

impl From<QueueEvent> for QueueEventJs {
    fn from(e: QueueEvent) -> Self {
        QueueEventJs {
            queue: e.queue,
            event: e.event,
            job: e.job,
            fields: e.fields.into_iter().collect(),
        }
    }
}

/// A live subscription; `index.js` wraps it as `Subscription`.
#[napi]
pub struct NativeSubscription {
    closer: Option<SubscriptionCloser>,
}

#[napi]
impl NativeSubscription {
    /// Unsubscribe; `onEnd` runs once the subscription has stopped.
    #[napi]
    pub fn close(&self) {
        if let Some(closer) = &self.closer {
            closer.close();
        }
    }
}

#[napi(object)]
pub struct SettledJs {
    /// `completed` or `dead`.
    pub state: String,
    pub error: Option<String>,
}

#[napi]
impl NativeClient {
    /// Subscribe to the queue's events; `onEvent(event)` per message,
    /// `onEnd()` once closed. Resolves once the server confirmed the
    /// subscription. The callbacks keep the process alive until `close()`,
    /// like an open socket.
    #[napi]
    pub fn subscribe<'env>(
        &self,
        env: &'env Env,
        queue: String,
        on_event: Function<'_, QueueEventJs, ()>,
        on_end: Function<'_, (), ()>,
    ) -> Result<PromiseRaw<'env, NativeSubscription>> {
        let events: Callback<QueueEventJs, false> = on_event
            .build_threadsafe_function::<QueueEventJs>()
            .callee_handled::<false>()
            .build()?;
        let end: Callback<(), false> = on_end
            .build_threadsafe_function::<()>()
            .callee_handled::<false>()
            .build()?;
        let c = self.inner.clone();
        promise(
            env,
            async move {
                let mut sub = c.subscribe(&queue).await?;
                let closer = sub.closer();
                echomq::runtime::runtime().spawn(async move {
                    while let Some(event) = sub.next().await {
                        events.call(event.into(), ThreadsafeFunctionCallMode::NonBlocking);
                    }
                    drop(events);
                    end.call((), ThreadsafeFunctionCallMode::NonBlocking);
                });
                Ok(closer)
            },
            |_, closer| {
                Ok(NativeSubscription {
                    closer: Some(closer),
                })
            },
        )
    }

    /// Wait up to `timeoutMs` for job `id` to complete or go dead.
    #[napi]
    pub fn wait_for<'env>(
        &self,
        env: &'env Env,
        queue: String,
        id: String,
        timeout_ms: f64,
    ) -> Result<PromiseRaw<'env, SettledJs>> {
        let timeout = Duration::from_millis(uint(env, "timeoutMs", timeout_ms)?);
        let c = self.inner.clone();
        promise(
            env,
            async move { c.wait_for(&queue, &id, timeout).await },
            |_, settled| {
                Ok(match settled {
                    Settled::Completed => SettledJs {
                        state: "completed".into(),
                        error: None,
                    },
                    Settled::Dead { error } => SettledJs {
                        state: "dead".into(),
                        error,
                    },
                })
            },
        )
    }

    /// Prometheus text exposition for `queues`.
    #[napi]
    pub fn metrics_text<'env>(
        &self,
        env: &'env Env,
        queues: Vec<String>,
    ) -> Result<PromiseRaw<'env, String>> {
        let c = self.inner.clone();
        promise(
            env,
            async move {
                let refs: Vec<&str> = queues.iter().map(String::as_str).collect();
                c.metrics_text(&refs).await
            },
            |_, text| Ok(text),
        )
    }
}
