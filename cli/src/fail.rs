//! How `emq` fails: one line on stderr and an exit code, never a panic.
//!
//! Exit codes: 0 success; 1 the input or the data refused the command (bad
//! queue name or id, no such job, not dead, declined confirmation); 2 the
//! deployment could not be used (connection, timeout, version fence, server).
//! `emq doctor` answers 0/1/2 for PASS/WARN/FAIL on its own.

use echomq::{Error, ErrorKind, WireVersion};

/// The URL with its password replaced by `***` (`redis://user:***@host/`):
/// the core's redaction, so `emq` and every binding hide the same parts.
pub use echomq::redact::redact_url;

pub const EXIT_OK: i32 = 0;
pub const EXIT_INPUT: i32 = 1;
pub const EXIT_DEPLOYMENT: i32 = 2;

/// A failed command: its exit code and one line of explanation.
#[derive(Debug)]
pub struct Fail {
    pub code: i32,
    pub message: String,
    /// The failure is the connection's: name the (redacted) URL.
    pub names_url: bool,
    /// A version fence refused the connection: the value found, worded with
    /// what to do once the version this emq spoke is known ([`Fail::report`]).
    pub fence_found: Option<String>,
}

impl Fail {
    pub fn input(message: impl Into<String>) -> Fail {
        Fail {
            code: EXIT_INPUT,
            message: message.into(),
            names_url: false,
            fence_found: None,
        }
    }

    /// Exit 2 with this message (the deployment cannot be used as asked).
    pub fn deployment(message: impl Into<String>) -> Fail {
        Fail {
            code: EXIT_DEPLOYMENT,
            ..Fail::input(message)
        }
    }

    pub fn no_such_job(queue: &str, id: &str) -> Fail {
        Fail::input(format!("no such job: {id} in queue {queue}"))
    }

    /// Print the line (the URL's password never shown) and answer the code.
    /// `speaks` is the wire version this emq spoke (`--wire`).
    pub fn report(self, url: &str, speaks: WireVersion) -> i32 {
        let shown = redact_url(url);
        let message = match &self.fence_found {
            Some(found) => fence_message(found, speaks),
            None => self.message,
        };
        let mut message = scrub(&message, url);
        if self.names_url {
            message = format!("cannot use {shown}: {message}");
        }
        eprintln!("emq: {}", message.replace('\n', " "));
        self.code
    }
}

impl From<Error> for Fail {
    fn from(e: Error) -> Fail {
        let (code, names_url) = match e.kind() {
            ErrorKind::Connection | ErrorKind::Timeout | ErrorKind::Closed => {
                (EXIT_DEPLOYMENT, true)
            }
            ErrorKind::VersionFence
            | ErrorKind::Server
            | ErrorKind::Protocol
            | ErrorKind::BundleMismatch => (EXIT_DEPLOYMENT, false),
            _ => (EXIT_INPUT, false),
        };
        let fence_found = match e.kind() {
            ErrorKind::VersionFence => e.found().map(str::to_string),
            _ => None,
        };
        Fail {
            code,
            message: e.message().to_string(),
            names_url,
            fence_found,
        }
    }
}

/// The fence refusal, naming the value found and what to do: speak it with
/// `--wire` when this emq knows it, and, when it is older than the newest
/// version, move it forward with `emq upgrade`.
pub fn fence_message(found: &str, speaks: WireVersion) -> String {
    let head = format!(
        "version fence: the deployment's {{emq}}:version is {found:?}, this emq speaks {:?}",
        speaks.as_str()
    );
    let newest = WireVersion::NEWEST;
    match WireVersion::parse(found) {
        Ok(v) if v < newest => format!(
            "{head}: run with --wire {v} (or EMQ_WIRE) to operate it as it is, or move it to {newest} \
             with `emq upgrade` once every runtime speaks {newest}"
        ),
        Ok(v) => format!("{head}: run with --wire {v} (or without --wire / EMQ_WIRE)"),
        Err(_) => format!(
            "{head}, and knows only {}: use a client that speaks {found:?} (run `emq doctor` for details)",
            WireVersion::ALL.map(WireVersion::as_str).join(" and ")
        ),
    }
}

impl From<std::io::Error> for Fail {
    fn from(e: std::io::Error) -> Fail {
        Fail::input(e.to_string())
    }
}

/// A clap error: `--help` / `--version` print and succeed; a usage error is
/// its first line and exit 1.
pub fn usage(e: clap::Error) -> i32 {
    use clap::error::ErrorKind as K;
    match e.kind() {
        K::DisplayHelp | K::DisplayVersion | K::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            if e.kind() == K::DisplayHelpOnMissingArgumentOrSubcommand {
                EXIT_INPUT
            } else {
                EXIT_OK
            }
        }
        _ => {
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or("invalid arguments");
            let first = first.strip_prefix("error: ").unwrap_or(first);
            eprintln!("emq: {first} (see emq --help)");
            EXIT_INPUT
        }
    }
}

/// Remove the URL's password from a message that may quote the URL.
fn scrub(message: &str, url: &str) -> String {
    match password_span(url) {
        Some((start, end)) if end > start => message.replace(&url[start..end], "***"),
        _ => message.to_string(),
    }
}

/// Byte range of the password in `scheme://user:password@host...`.
fn password_span(url: &str) -> Option<(usize, usize)> {
    let auth_start = url.find("://")? + 3;
    let rest = &url[auth_start..];
    let auth_len = rest.find('/').unwrap_or(rest.len());
    let at = rest[..auth_len].rfind('@')?;
    let colon = rest[..at].find(':')?;
    Some((auth_start + colon + 1, auth_start + at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_show() {
        assert_eq!(
            redact_url("redis://:s3cret@host:6379/0"),
            "redis://:***@host:6379/0"
        );
        assert_eq!(
            redact_url("rediss://me:p@ss@host/"),
            "rediss://me:***@host/"
        );
        assert_eq!(redact_url("redis://host:6379/"), "redis://host:6379/");
        assert_eq!(redact_url("redis://me@host/"), "redis://me@host/");
        assert_eq!(
            scrub("bad url redis://:s3cret@h", "redis://:s3cret@h"),
            "bad url redis://:***@h"
        );
    }
}
