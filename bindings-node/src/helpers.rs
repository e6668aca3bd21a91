//! The pure id / key / slot helpers (no server). Synchronous; errors throw the
//! same coded error objects as the client.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use echomq::id::{self, BrandedId};
use echomq::keys::{self, KeyType};

use crate::convert::uint;
use crate::error::{invalid_argument, to_js};

/// A node id given as a JS number, checked (and worded) by the core.
pub(crate) fn check_node_id(env: &Env, value: f64) -> Result<u16> {
    let n = if value.fract() == 0.0 && value.abs() < 1e15 {
        value as i64
    } else {
        i64::MAX
    };
    id::check_node_id(n).map_err(|e| to_js(env, &e))
}

fn node_id(env: &Env, value: Option<f64>) -> Result<u16> {
    match value {
        None => Ok(id::default_node_id()),
        Some(v) => check_node_id(env, v),
    }
}

/// A fresh `JOB` id (strictly increasing per process).
#[napi]
pub fn mint_job_id(env: &Env, node_id_value: Option<f64>) -> Result<String> {
    let n = node_id(env, node_id_value)?;
    id::mint_job_id_with(n)
        .map(|i| i.to_string())
        .map_err(|e| to_js(env, &e))
}

#[napi(object)]
pub struct ParsedId {
    pub namespace: String,
    /// 63-bit: a `bigint` (a `number` would round it).
    pub snowflake: BigInt,
    pub minted_at_ms: f64,
}

#[napi]
pub fn parse_id(env: &Env, text: String) -> Result<ParsedId> {
    let parsed = BrandedId::parse(&text).map_err(|e| to_js(env, &e))?;
    Ok(ParsedId {
        namespace: parsed.namespace().to_string(),
        snowflake: BigInt::from(parsed.snowflake()),
        minted_at_ms: parsed.minted_at_ms() as f64,
    })
}

#[napi]
pub fn is_valid_id(text: String) -> bool {
    id::is_valid_id(&text)
}

/// `snowflake` as a `bigint` (exact) or a safe-integer `number`.
#[napi]
pub fn encode_id(env: &Env, namespace: String, snowflake: Either<BigInt, f64>) -> Result<String> {
    let value = match snowflake {
        Either::A(big) => {
            let (negative, value, lossless) = big.get_u64();
            if negative || !lossless {
                return Err(invalid_argument(env, "snowflake must fit in 0..2^63"));
            }
            value
        }
        Either::B(n) => uint(env, "snowflake", n)?,
    };
    BrandedId::new(&namespace, value)
        .map(|i| i.to_string())
        .map_err(|e| to_js(env, &e))
}

#[napi]
pub fn lex_bound(env: &Env, unix_ms: f64) -> Result<String> {
    Ok(id::lex_bound(uint(env, "unixMs", unix_ms)?))
}

#[napi]
pub fn is_valid_queue(name: String) -> bool {
    keys::is_valid_queue(&name)
}

#[napi]
pub fn queue_key(env: &Env, queue: String, key_type: String) -> Result<String> {
    let t = KeyType::parse_arg(&key_type).map_err(|e| to_js(env, &e))?;
    keys::queue_key(&queue, t).map_err(|e| to_js(env, &e))
}

#[napi]
pub fn job_key(env: &Env, queue: String, id: String) -> Result<String> {
    keys::job_key(&queue, &id).map_err(|e| to_js(env, &e))
}

/// `{class, queue?, keyType?, id?, member?}`: the core's `KeyClass::fields()`.
#[napi(object)]
pub struct KeyClassJs {
    pub class: String,
    pub queue: Option<String>,
    pub key_type: Option<String>,
    pub id: Option<String>,
    pub member: Option<String>,
}

/// What a key is, by the closed grammar (the one flat shape from core:
/// `keyType` = the suffix after `emq:{q}:`, `member` = the suffix after `{emq}:`).
#[napi]
pub fn classify(key: Either<String, Buffer>) -> KeyClassJs {
    let class = match &key {
        Either::A(s) => keys::classify(s),
        Either::B(b) => keys::classify_bytes(b),
    };
    let f = class.fields();
    KeyClassJs {
        class: f.class.to_string(),
        queue: f.queue,
        key_type: f.key_type,
        id: f.id,
        member: f.member,
    }
}

/// CRC16/XMODEM of the key's hashtag, mod 16384.
#[napi]
pub fn slot(key: Either<String, Buffer>) -> u32 {
    let bytes: &[u8] = match &key {
        Either::A(s) => s.as_bytes(),
        Either::B(b) => b,
    };
    echomq::slot::slot(bytes) as u32
}

#[napi]
pub fn protocol_version() -> &'static str {
    echomq::PROTOCOL_VERSION
}
