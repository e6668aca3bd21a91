//! The pure helpers of docs/API.md: ids, the key grammar, the slot, the
//! protocol version. No server, no runtime.

use std::ffi::{c_char, CString};
use std::sync::OnceLock;

use emq_core::keys::{self, KeyClass, KeyType};
use emq_core::{id, BrandedId};

use crate::guard::*;
use crate::status::*;
use crate::types::*;

/// A per-queue key type (`EMQ_KEY_*`), for `emq_queue_key`.
pub type emq_key_type = i32;
pub const EMQ_KEY_PENDING: emq_key_type = 0;
pub const EMQ_KEY_ACTIVE: emq_key_type = 1;
pub const EMQ_KEY_SCHEDULE: emq_key_type = 2;
pub const EMQ_KEY_DEAD: emq_key_type = 3;
pub const EMQ_KEY_META: emq_key_type = 4;
/// `emq:{q}:limiter` (wire 2.1.0): the rate limit's window counter.
pub const EMQ_KEY_LIMITER: emq_key_type = 5;
/// `emq:{q}:repeat` (wire 2.1.0): the repeatable jobs' schedule.
pub const EMQ_KEY_REPEAT: emq_key_type = 6;
/// `emq:{q}:wake` (wire 2.1.0): wake tokens idle workers block on.
pub const EMQ_KEY_WAKE: emq_key_type = 7;

/// What a key is, by parse (`EMQ_CLASS_*`).
///
/// An answer-only enum: the library writes it, C reads it, so a Rust enum is
/// sound here (see docs/C.md, "Enums"). Appending a variant is compatible;
/// a value an older header does not name is still a valid `int32_t`.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum emq_key_class {
    /// `emq:{q}:<type>`
    EMQ_CLASS_QUEUE = 0,
    /// `emq:{q}:job:<id>`
    EMQ_CLASS_JOB = 1,
    /// `emq:{q}:metrics:<completed|failed>`
    EMQ_CLASS_METRIC = 2,
    /// `{emq}:<member>`
    EMQ_CLASS_RESERVE = 3,
    /// Anything the key grammar does not produce.
    EMQ_CLASS_UNCLASSIFIED = 4,
    /// `emq:{q}:de:<dedup id>` (wire 2.1.0; `key_type` `"de"`, `member` the dedup id)
    EMQ_CLASS_DEDUP = 5,
    /// `emq:{q}:repeat:<name>` (wire 2.1.0; `key_type` `"repeat"`, `member` the name)
    EMQ_CLASS_REPEAT = 6,
    /// `emq:{q}:job:<id>:logs` (wire 2.1.0; `key_type` `"logs"`, `id` the job's id)
    EMQ_CLASS_JOB_LOGS = 7,
    /// `emq:{q}:job:<id>:result` (wire 2.1.0; `key_type` `"result"`, `id` the job's id)
    EMQ_CLASS_JOB_RESULT = 8,
}
pub use emq_key_class::*;

/// The parts of a branded id, from `emq_parse_id`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct emq_id_parts {
    /// The 3-letter namespace, NUL-terminated (`"JOB"`).
    pub ns: [c_char; 4],
    pub node_id: u16,
    /// The 63-bit Snowflake.
    pub snowflake: u64,
    /// Unix milliseconds at which the id was minted.
    pub minted_at_ms: u64,
}

/// A classified key, from `emq_classify`; release with `emq_key_info_free`.
/// Every string is NUL-terminated and NULL when it does not apply.
#[repr(C)]
pub struct emq_key_info {
    /// One of `EMQ_CLASS_*`.
    pub key_class: emq_key_class,
    /// The queue (queue, job and metric keys, and `{emq}:migration:<q>`).
    pub queue: *const c_char,
    /// The suffix after `emq:{q}:` for queue keys (`"pending"`, ...) and metric
    /// keys (`"metrics:completed"`, `"metrics:failed"`).
    pub key_type: *const c_char,
    /// The id of a job key.
    pub id: *const c_char,
    /// The suffix after `{emq}:` of a reserve key (`"version"`, `"locks"`,
    /// `"bundle"`, `"migration:<q>"`); the dedup id of a dedup key.
    pub member: *const c_char,
}

fn parse_key_type(t: emq_key_type) -> FfiResult<KeyType> {
    Ok(match t {
        EMQ_KEY_PENDING => KeyType::Pending,
        EMQ_KEY_ACTIVE => KeyType::Active,
        EMQ_KEY_SCHEDULE => KeyType::Schedule,
        EMQ_KEY_DEAD => KeyType::Dead,
        EMQ_KEY_META => KeyType::Meta,
        EMQ_KEY_LIMITER => KeyType::Limiter,
        EMQ_KEY_REPEAT => KeyType::Repeat,
        EMQ_KEY_WAKE => KeyType::Wake,
        other => {
            return Err(Fail::invalid_argument(format!(
                "unknown key type {other}: expected one of EMQ_KEY_*"
            )))
        }
    })
}

/// Mint a fresh `JOB` id (strictly increasing per process) into `*out`.
/// `node_id` is 0..=1023, or -1 for the process default (`EMQ_NODE_ID`, else random).
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_mint_job_id(
    node_id: i32,
    out: *mut emq_id,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: `out` pointers are NULL or valid for writes (this function's `# Safety`).
        let out = unsafe { out_arg(out, "out") }?;
        // -1 is the process default; every other value must be a node id.
        let id = if node_id == -1 {
            id::mint_job_id()
        } else {
            id::mint_job_id_with(id::check_node_id(node_id)?)?
        };
        out.text = id_buf(&id);
        Ok(())
    })
}

/// Parse and validate an id into `*out`; `EMQ_ERR_INVALID_ID` when malformed.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_parse_id(
    text: *const c_char,
    out: *mut emq_id_parts,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: `out` pointers are NULL or valid for writes (this function's `# Safety`).
        let out = unsafe { out_arg(out, "out") }?;
        // SAFETY: string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
        let id = BrandedId::parse(unsafe { str_arg(text, "text") }?)?;
        let mut ns = [0 as c_char; 4];
        for (slot, byte) in ns.iter_mut().zip(id.namespace().bytes()) {
            *slot = byte as c_char;
        }
        *out = emq_id_parts {
            ns,
            node_id: id.node_id(),
            snowflake: id.snowflake(),
            minted_at_ms: id.minted_at_ms(),
        };
        Ok(())
    })
}

/// Whether `text` is a well-formed branded id, into `*out`.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_is_valid_id(
    text: *const c_char,
    out: *mut bool,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: `out` pointers are NULL or valid for writes (this function's `# Safety`).
        let out = unsafe { out_arg(out, "out") }?;
        // SAFETY: string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
        *out = id::is_valid_id(unsafe { str_arg(text, "text") }?);
        Ok(())
    })
}

/// The 14-byte id of a namespace (`[A-Z]{3}`) and a 63-bit snowflake, into `*out`.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_encode_id(
    ns: *const c_char,
    snowflake: u64,
    out: *mut emq_id,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: `out` pointers are NULL or valid for writes (this function's `# Safety`).
        let out = unsafe { out_arg(out, "out") }?;
        // SAFETY: string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
        out.text = id_buf(&BrandedId::new(unsafe { str_arg(ns, "ns") }?, snowflake)?);
        Ok(())
    })
}

/// The lex bound of an instant (`JOB` + base62((ms − epoch) ≪ 22)): every id
/// minted at or after `unix_ms` sorts at or after it. Into `*out`.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_lex_bound(
    unix_ms: u64,
    out: *mut emq_id,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: `out` pointers are NULL or valid for writes (this function's `# Safety`).
        unsafe { out_arg(out, "out") }?.text = text_buf(&id::lex_bound(unix_ms));
        Ok(())
    })
}

/// Whether `name` is a legal queue name (`[A-Za-z0-9._-]{1,128}`, not `emq`), into `*out`.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_is_valid_queue(
    name: *const c_char,
    out: *mut bool,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: `out` pointers are NULL or valid for writes (this function's `# Safety`).
        let out = unsafe { out_arg(out, "out") }?;
        // SAFETY: string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
        *out = keys::is_valid_queue(unsafe { str_arg(name, "name") }?);
        Ok(())
    })
}

/// `EMQ_OK` for a legal queue name, else `EMQ_ERR_INVALID_QUEUE` with the reason.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_validate_queue(
    name: *const c_char,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
        keys::validate_queue(unsafe { str_arg(name, "name") }?)?;
        Ok(())
    })
}

/// `emq:{queue}:<type>` for `type` one of `EMQ_KEY_*`. `*out` is a new string
/// released with `emq_string_free`.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_queue_key(
    queue: *const c_char,
    key_type: emq_key_type,
    out: *mut *mut c_char,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: `out` pointers are NULL or valid for writes (this function's `# Safety`).
        let out = unsafe { out_arg(out, "out") }?;
        *out = std::ptr::null_mut();
        *out = c_string_raw(&keys::queue_key(
            // SAFETY: string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
            unsafe { str_arg(queue, "queue") }?,
            parse_key_type(key_type)?,
        )?);
        Ok(())
    })
}

/// `emq:{queue}:job:<id>`. `*out` is a new string released with `emq_string_free`.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_job_key(
    queue: *const c_char,
    id: *const c_char,
    out: *mut *mut c_char,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: `out` pointers are NULL or valid for writes (this function's `# Safety`).
        let out = unsafe { out_arg(out, "out") }?;
        *out = std::ptr::null_mut();
        *out = c_string_raw(&keys::job_key(
            // SAFETY: string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
            unsafe { str_arg(queue, "queue") }?,
            // SAFETY: string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
            unsafe { str_arg(id, "id") }?,
        )?);
        Ok(())
    })
}

/// Classify any `key_len` bytes (need not be UTF-8). `*out` is a new record
/// released with `emq_key_info_free`.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_classify(
    key: *const u8,
    key_len: usize,
    out: *mut *mut emq_key_info,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: `out` pointers are NULL or valid for writes (this function's `# Safety`).
        let out = unsafe { out_arg(out, "out") }?;
        *out = std::ptr::null_mut();
        // SAFETY: the array is NULL or holds `len`/`count` elements (`# Safety`).
        let key = unsafe { slice_arg(key, key_len, "key") }?;
        let class = keys::classify_bytes(key);
        let f = class.fields();
        let s = |t: Option<String>| match t {
            Some(t) => c_string_raw(&t) as *const c_char,
            None => std::ptr::null(),
        };
        let key_class = match class {
            KeyClass::Queue { .. } => EMQ_CLASS_QUEUE,
            KeyClass::Job { .. } => EMQ_CLASS_JOB,
            KeyClass::Metric { .. } => EMQ_CLASS_METRIC,
            KeyClass::Dedup { .. } => EMQ_CLASS_DEDUP,
            KeyClass::JobLogs { .. } => EMQ_CLASS_JOB_LOGS,
            KeyClass::JobResult { .. } => EMQ_CLASS_JOB_RESULT,
            KeyClass::RepeatRecord { .. } => EMQ_CLASS_REPEAT,
            KeyClass::Reserve(_) => EMQ_CLASS_RESERVE,
            KeyClass::Unclassified => EMQ_CLASS_UNCLASSIFIED,
        };
        let info = emq_key_info {
            key_class,
            queue: s(f.queue),
            key_type: s(f.key_type),
            id: s(f.id),
            member: s(f.member),
        };
        *out = Box::into_raw(Box::new(info));
        Ok(())
    })
}

/// Release a record from `emq_classify` (NULL is a no-op).
///
/// # Safety
/// The argument is NULL or a value this library returned that has not been
/// freed; it must not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn emq_key_info_free(info: *mut emq_key_info) {
    guard_void(|| {
        if info.is_null() {
            return;
        }
        // SAFETY: a non-NULL pointer here came from this library (`Box::into_raw` / `CString::into_raw`) and is released exactly once (`# Safety`).
        let info = unsafe { Box::from_raw(info) };
        for p in [info.queue, info.key_type, info.id, info.member] {
            // SAFETY: the string was allocated by this library and is freed once (`# Safety`).
            unsafe { free_c_string(p as *mut c_char) };
        }
    })
}

/// The Redis Cluster slot of `key_len` bytes (CRC16/XMODEM of the hashtag
/// mod 16384), into `*out`.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_slot(
    key: *const u8,
    key_len: usize,
    out: *mut u16,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: `out` pointers are NULL or valid for writes (this function's `# Safety`).
        let out = unsafe { out_arg(out, "out") }?;
        // SAFETY: the array is NULL or holds `len`/`count` elements (`# Safety`).
        *out = emq_core::slot::slot(unsafe { slice_arg(key, key_len, "key") }?);
        Ok(())
    })
}

/// The wire protocol this library speaks (`"echomq:2.1.0"`, the value of
/// `{emq}:version`). Static storage: never free it.
#[no_mangle]
pub extern "C" fn emq_protocol_version() -> *const c_char {
    static VERSION: OnceLock<CString> = OnceLock::new();
    VERSION
        .get_or_init(|| c_string(emq_core::PROTOCOL_VERSION))
        .as_ptr()
}

/// This library's version (`"<major>.<minor>.<patch>"`): the workspace version that also
/// versions the Python wheel, the npm packages and `EMQ_VERSION_*` in this
/// header. Compare it with the macros to detect a header/library mismatch.
/// Static storage: never free it.
#[no_mangle]
pub extern "C" fn emq_version() -> *const c_char {
    static VERSION: OnceLock<CString> = OnceLock::new();
    VERSION
        .get_or_init(|| c_string(env!("CARGO_PKG_VERSION")))
        .as_ptr()
}
