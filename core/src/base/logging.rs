//! The core logs through the [`log`] crate, with targets under `echomq`
//! (`echomq::worker::run`, `echomq::queue_events`, ...). A Rust program sees
//! the records with whatever `log` implementation it installs (`env_logger`,
//! `tracing-log`, ...); Python's binding bridges them into `logging` with
//! `pyo3-log`.
//!
//! For runtimes without such a bridge (Node, C) this module is a forwarding
//! logger: records at or above a minimum level go to one sink (a callback the
//! binding installs), and with no sink, warnings and errors go to stderr, so a
//! failure is never silent. The sink is called on whichever thread logged
//! (the core's runtime threads): it must not block.

use std::sync::{Arc, Once, RwLock};

use log::{Level, LevelFilter, Log, Metadata, Record};

/// Where forwarded records go: `(level, target, message)`.
pub type LogSink = Arc<dyn Fn(Level, &str, &str) + Send + Sync>;

struct Route {
    sink: Option<LogSink>,
    min: LevelFilter,
}

static ROUTE: RwLock<Route> = RwLock::new(Route {
    sink: None,
    min: LevelFilter::Warn,
});

struct Forwarding;

impl Log for Forwarding {
    fn enabled(&self, metadata: &Metadata) -> bool {
        let route = ROUTE.read().unwrap_or_else(|p| p.into_inner());
        metadata.level() <= route.min
    }

    fn log(&self, record: &Record) {
        let sink = {
            let route = ROUTE.read().unwrap_or_else(|p| p.into_inner());
            if record.level() > route.min {
                return;
            }
            route.sink.clone()
        };
        let message = record.args().to_string();
        match sink {
            Some(sink) => sink(record.level(), record.target(), &message),
            None => eprintln!("[echomq {}] {}: {message}", record.level(), record.target()),
        }
    }

    fn flush(&self) {}
}

/// Install the forwarding logger as the process's `log` logger (once; a
/// no-op when another logger was installed first). Until a sink is set,
/// warnings and errors go to stderr.
pub fn install_forwarding() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        if log::set_logger(&Forwarding).is_ok() {
            log::set_max_level(LevelFilter::Warn);
        }
    });
}

/// Route records at or above `min` to `sink`, or with `None` to stderr (the
/// default is `None` at `Warn`); `LevelFilter::Off` silences everything.
pub fn set_forwarding(sink: Option<LogSink>, min: LevelFilter) {
    install_forwarding();
    *ROUTE.write().unwrap_or_else(|p| p.into_inner()) = Route { sink, min };
    log::set_max_level(min);
}
