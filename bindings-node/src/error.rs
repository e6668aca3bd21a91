//! `echomq::Error` → a JavaScript `Error` with `code`, `status` and, as
//! properties, the facts its kind declares in the core (`ErrorKind::facts`,
//! camelCase: `jobId`, `found`, `word`, `lastError`, `retryAfterMs`, `items`).

use napi::bindgen_prelude::*;
use napi_derive::napi;

use echomq::{Error as EmqError, ErrorKind, FactValue};

/// Build the JS error object for a core error. On the (unlikely) failure to
/// build it, fall back to a plain napi error so nothing is swallowed.
pub(crate) fn to_js(env: &Env, e: &EmqError) -> Error {
    build(env, e).unwrap_or_else(|fallback| fallback)
}

fn build(env: &Env, e: &EmqError) -> Result<Error> {
    let mut obj = env.create_error(Error::new(Status::GenericFailure, e.message()))?;
    obj.set("code", e.code())?;
    obj.set("status", e.kind().status())?;
    // Every fact the kind declares is a property; one this error does not
    // hold (a dead job with no last_error) is `null`.
    for fact in e.kind().facts() {
        let name = fact.camel_name();
        match e.fact(*fact) {
            None => obj.set(name, Null)?,
            Some(FactValue::Text(text)) => obj.set(name, text)?,
            Some(FactValue::Number(n)) => obj.set(name, n as f64)?,
            Some(FactValue::Items(items)) => {
                // A partial batch: `[{id, state}]` per payload, in input order.
                let list: Vec<BatchItemJs> = items
                    .iter()
                    .map(|i| BatchItemJs {
                        id: i.id.to_string(),
                        state: i.state.as_str().to_string(),
                    })
                    .collect();
                obj.set(name, list)?
            }
        }
    }
    Ok(Error::from(obj.to_unknown()))
}

/// One item of a batch cut short: its id and `written` / `not_written` / `unknown`.
#[napi(object)]
pub struct BatchItemJs {
    pub id: String,
    pub state: String,
}

/// A core error of kind `InvalidArgument`, as a JS error.
pub(crate) fn invalid_argument(env: &Env, message: impl Into<String>) -> Error {
    to_js(env, &EmqError::new(ErrorKind::InvalidArgument, message))
}

/// One row of the error table.
#[napi(object)]
pub struct ErrorKindInfo {
    /// `UPPER_SNAKE` name of the kind (`STALE`, `LEASE_LOST`, ...).
    pub name: String,
    /// The stable string code (`EMQSTALE`, `EMQ_LEASE_LOST`, ...).
    pub code: String,
    /// The C status number.
    pub status: i32,
    /// The properties this kind's errors carry (camelCase fact names).
    pub facts: Vec<String>,
}

fn upper_snake(kind: ErrorKind) -> String {
    let camel = format!("{kind:?}");
    let mut out = String::with_capacity(camel.len() + 4);
    for (i, ch) in camel.chars().enumerate() {
        if ch.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(ch.to_ascii_uppercase());
    }
    out
}

/// Every error kind of the core, in code order (`ErrorKind::ALL`).
#[napi]
pub fn error_kinds() -> Vec<ErrorKindInfo> {
    ErrorKind::ALL
        .iter()
        .map(|k| ErrorKindInfo {
            name: upper_snake(*k),
            code: k.code().to_string(),
            status: k.status(),
            facts: k
                .facts()
                .iter()
                .map(|f| f.camel_name().to_string())
                .collect(),
        })
        .collect()
}
