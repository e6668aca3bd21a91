//! Branded ids: a 3-letter namespace and an 11-character base62 Snowflake,
//! 14 ASCII bytes whose byte order is mint order (PROTOCOL.md §1).

use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

pub use crate::branded::{
    decode_base62, encode_base62, BrandedId, EPOCH_MS, ID_LEN, JOB_NAMESPACE, MAX_NODE_ID,
};
use crate::branded::{SEQ_BITS, TS_SHIFT};
use crate::error::{Error, ErrorKind, Result};

impl BrandedId {
    /// Build an id from a namespace (`[A-Z]{3}`) and a 63-bit snowflake.
    pub fn new(namespace: &str, snowflake: u64) -> Result<Self> {
        let ns = namespace.as_bytes();
        if ns.len() != 3 || !ns.iter().all(u8::is_ascii_uppercase) {
            return Err(invalid_id(namespace, "namespace must be three letters A-Z"));
        }
        if snowflake > i64::MAX as u64 {
            return Err(invalid_id(namespace, "snowflake exceeds 2^63-1"));
        }
        let mut bytes = [0u8; ID_LEN];
        bytes[..3].copy_from_slice(ns);
        bytes[3..].copy_from_slice(&encode_base62(snowflake));
        Ok(BrandedId::from_checked(bytes))
    }

    /// Parse and validate a 14-byte branded id.
    pub fn parse(text: &str) -> Result<Self> {
        Self::parse_bytes(text.as_bytes())
    }

    /// Parse and validate raw bytes (anything, including non-UTF-8).
    pub fn parse_bytes(raw: &[u8]) -> Result<Self> {
        let shown = String::from_utf8_lossy(raw);
        if raw.len() != ID_LEN {
            return Err(invalid_id(&shown, "must be exactly 14 bytes"));
        }
        if !raw[..3].iter().all(u8::is_ascii_uppercase) {
            return Err(invalid_id(&shown, "namespace must be three letters A-Z"));
        }
        decode_base62(&raw[3..])
            .ok_or_else(|| invalid_id(&shown, "body is not base62 ≤ 2^63-1"))?;
        let mut bytes = [0u8; ID_LEN];
        bytes.copy_from_slice(raw);
        Ok(BrandedId::from_checked(bytes))
    }
}

impl FromStr for BrandedId {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        BrandedId::parse(s)
    }
}

fn invalid_id(shown: &str, why: &str) -> Error {
    Error::new(
        ErrorKind::InvalidId,
        format!("invalid branded id {shown:?}: {why}"),
    )
}

/// Is `text` a well-formed branded id?
pub fn is_valid_id(text: &str) -> bool {
    BrandedId::parse(text).is_ok()
}

/// The lex bound for an instant: `JOB` + base62((ms - epoch) << 22). Every
/// `JOB` id minted at or after `unix_ms` sorts at or after this string.
pub fn lex_bound(unix_ms: u64) -> String {
    let offset = unix_ms
        .saturating_sub(EPOCH_MS)
        .min((i64::MAX as u64) >> TS_SHIFT);
    let body = encode_base62(offset << TS_SHIFT);
    let mut s = String::with_capacity(ID_LEN);
    s.push_str(JOB_NAMESPACE);
    s.push_str(std::str::from_utf8(&body).expect("ascii"));
    s
}

/// The process-wide logical clock: one atomic cell holding `ts << 12 | seq`.
/// Each mint stores `max(now << 12, last + 1)`, so ids are strictly
/// monotonic per process, a burst borrows from the next millisecond, and a
/// clock stepping back keeps minting from the logical clock.
static CLOCK: AtomicU64 = AtomicU64::new(0);

fn now_offset_ms() -> u64 {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(EPOCH_MS);
    now.saturating_sub(EPOCH_MS)
}

fn next_tick() -> u64 {
    let now = now_offset_ms() << SEQ_BITS;
    let mut last = CLOCK.load(Ordering::Relaxed);
    loop {
        let next = now.max(last + 1);
        match CLOCK.compare_exchange_weak(last, next, Ordering::AcqRel, Ordering::Relaxed) {
            Ok(_) => return next,
            Err(seen) => last = seen,
        }
    }
}

/// `EMQ_NODE_ID` as it is set right now: `None` when unset or empty, a typed
/// invalid-argument error when it is not a number in 0..=1023. Read at
/// every connect, so a value set in a forked child is honoured.
pub fn env_node_id() -> Result<Option<u16>> {
    let Ok(text) = std::env::var("EMQ_NODE_ID") else {
        return Ok(None);
    };
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    match text.parse::<i64>() {
        Ok(n) => check_node_id(n).map(Some),
        Err(_) => Err(Error::invalid_argument(format!(
            "EMQ_NODE_ID {text:?} is not a node id: {}",
            node_id_range()
        ))),
    }
}

/// The process's default node id: `EMQ_NODE_ID` when set and valid, else a
/// value drawn from the pid, the time and a random seed. Cached per
/// process id: a child forked after the draw redraws (avoiding the
/// parent's value), so forked producers do not mint the same ids. (A minted
/// id that still collides is re-minted by `enqueue`; see
/// docs/PROTOCOL-DECISIONS.md.)
///
/// Found without a lock: every enqueue asks for it, so a lock would be held
/// by one of the parent's threads at some `fork()`, for ever in the child,
/// whose first enqueue would hang.
pub fn default_node_id() -> u16 {
    /// `pid << 16 | node`, 0 before the first draw (no process has pid 0).
    static NODE: AtomicU64 = AtomicU64::new(0);
    let pid = std::process::id();
    let mut seen = NODE.load(Ordering::Acquire);
    loop {
        let (owner, node) = ((seen >> 16) as u32, seen as u16);
        if seen != 0 && owner == pid {
            return node;
        }
        let inherited = (seen != 0).then_some(node);
        let node = env_node_id()
            .ok()
            .flatten()
            .unwrap_or_else(|| draw_node_id(pid, inherited));
        let mine = (u64::from(pid) << 16) | u64::from(node);
        // Another thread of this process may have drawn first: all of them
        // use the one value that won.
        match NODE.compare_exchange(seen, mine, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return node,
            Err(now) => seen = now,
        }
    }
}

/// A random node id for process `pid`, never `avoid` (the parent's, in a
/// forked child).
fn draw_node_id(pid: u32, avoid: Option<u16>) -> u16 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(pid);
    h.write_u64(now_offset_ms());
    let node = (h.finish() % (MAX_NODE_ID as u64 + 1)) as u16;
    if Some(node) == avoid {
        (node + 1) % (MAX_NODE_ID + 1)
    } else {
        node
    }
}

/// The one wording of the node-id range, for every binding's messages.
pub fn node_id_range() -> String {
    format!("a node id is an integer in 0..={MAX_NODE_ID}")
}

/// Validate a node id option given as any integer (a binding's number).
pub fn check_node_id(node_id: impl TryInto<u16> + Copy + fmt::Display) -> Result<u16> {
    match node_id.try_into() {
        Ok(n) if n <= MAX_NODE_ID => Ok(n),
        _ => Err(Error::invalid_argument(format!(
            "node id {node_id} is out of range: {}",
            node_id_range()
        ))),
    }
}

/// Mint an id in `namespace` with an explicit node id.
pub fn mint_with(namespace: &str, node_id: u16) -> Result<BrandedId> {
    let node_id = check_node_id(node_id)?;
    let tick = next_tick();
    let ts = tick >> SEQ_BITS;
    let seq = tick & ((1 << SEQ_BITS) - 1);
    BrandedId::new(
        namespace,
        (ts << TS_SHIFT) | ((node_id as u64) << SEQ_BITS) | seq,
    )
}

/// Mint a `JOB` id with the given node id.
pub fn mint_job_id_with(node_id: u16) -> Result<BrandedId> {
    mint_with(JOB_NAMESPACE, node_id)
}

/// Mint a `JOB` id with the process's default node id.
pub fn mint_job_id() -> BrandedId {
    mint_job_id_with(default_node_id()).expect("default node id is in range")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_vectors() {
        let a = BrandedId::parse("USR0KHTOWnGLuC").unwrap();
        assert_eq!(a.namespace(), "USR");
        assert_eq!(a.snowflake(), 274_557_032_793_636_864);
        assert_eq!(
            BrandedId::new("USR", 274_557_032_793_636_864)
                .unwrap()
                .as_str(),
            "USR0KHTOWnGLuC"
        );
        let b = BrandedId::parse("USR0NgWEfAEJfs").unwrap();
        assert_eq!(b.snowflake(), 320_636_799_581_945_856);
        assert_eq!(
            BrandedId::parse("ORD0NgWEfAEJfs").unwrap().minted_at_ms(),
            1_780_512_970_164
        );
        assert_eq!(
            BrandedId::parse("USRzzzzzzzzzzz").unwrap_err().kind(),
            ErrorKind::InvalidId
        );
    }

    #[test]
    fn base62_bounds() {
        assert_eq!(&encode_base62(i64::MAX as u64), b"AzL8n0Y58m7");
        assert_eq!(decode_base62(b"AzL8n0Y58m7"), Some(i64::MAX as u64));
        assert_eq!(decode_base62(b"AzL8n0Y58m8"), None);
        assert_eq!(decode_base62(b"00000000000"), Some(0));
        assert!(BrandedId::new("JOB", i64::MAX as u64 + 1).is_err());
        for bad in [
            "JOB0000000000",
            "JOB000000000000",
            "job00000000000",
            "JOB0000000000-",
            "JÖB0000000000",
        ] {
            assert!(BrandedId::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn minting_is_strictly_monotonic_and_unique() {
        let ids: Vec<_> = (0..20_000).map(|_| mint_job_id()).collect();
        for pair in ids.windows(2) {
            assert!(pair[0] < pair[1]);
            assert!(pair[0].as_str() < pair[1].as_str());
        }
    }

    #[test]
    fn lex_bound_brackets_mint_time() {
        let id = mint_job_id_with(7).unwrap();
        let t = id.minted_at_ms();
        assert!(lex_bound(t).as_str() <= id.as_str());
        assert!(lex_bound(t + 1).as_str() > id.as_str());
        assert_eq!(id.node_id(), 7);
        assert!(mint_job_id_with(1024).is_err());
    }
}
