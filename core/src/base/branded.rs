//! The branded id as a value: its 14-byte layout, the base62 codec, what
//! an id says (namespace, snowflake, minting time, node) and how it prints.
//! Nothing here can fail. Making and checking ids (which answer an
//! [`Error`](crate::Error)) is [`crate::id`]'s, which re-exports all of
//! this: an [`Error`](crate::Error) carries ids ([`crate::BatchItem`]), so
//! the id's value sits below the error and its checks above it.

use std::fmt;

/// 2024-01-01T00:00:00Z in unix milliseconds.
pub const EPOCH_MS: u64 = 1_704_067_200_000;
/// Bytes in a branded id.
pub const ID_LEN: usize = 14;
/// The namespace every job id carries (the enqueue script admits only this one).
pub const JOB_NAMESPACE: &str = "JOB";

const ALPHABET: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const BODY_LEN: usize = 11;
pub(crate) const SEQ_BITS: u32 = 12;
const NODE_BITS: u32 = 10;
pub(crate) const TS_SHIFT: u32 = SEQ_BITS + NODE_BITS;
/// The largest node id (10 bits).
pub const MAX_NODE_ID: u16 = (1 << NODE_BITS) - 1;

/// A validated branded id. Cheap to copy: the 14 bytes live inline.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BrandedId([u8; ID_LEN]);

impl BrandedId {
    /// The id of 14 bytes already checked (by [`BrandedId::new`] or
    /// [`BrandedId::parse_bytes`]): ASCII, a namespace of three letters A-Z,
    /// a base62 body of at most 2^63-1.
    pub(crate) const fn from_checked(bytes: [u8; ID_LEN]) -> Self {
        BrandedId(bytes)
    }

    /// The whole id as text.
    pub fn as_str(&self) -> &str {
        // Validated ASCII on construction.
        std::str::from_utf8(&self.0).expect("branded ids are ASCII")
    }

    /// The namespace prefix (e.g. `JOB`).
    pub fn namespace(&self) -> &str {
        &self.as_str()[..3]
    }

    /// The snowflake the id encodes.
    pub fn snowflake(&self) -> u64 {
        decode_base62(&self.0[3..]).expect("validated on construction")
    }

    /// Unix milliseconds at which the id was minted.
    pub fn minted_at_ms(&self) -> u64 {
        (self.snowflake() >> TS_SHIFT) + EPOCH_MS
    }

    /// The node id the minter that made it ran as.
    pub fn node_id(&self) -> u16 {
        ((self.snowflake() >> SEQ_BITS) & MAX_NODE_ID as u64) as u16
    }
}

impl fmt::Display for BrandedId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for BrandedId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BrandedId({})", self.as_str())
    }
}

impl AsRef<str> for BrandedId {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

/// Fixed-width, zero-padded base62 of a 63-bit value.
pub fn encode_base62(mut value: u64) -> [u8; BODY_LEN] {
    let mut out = [b'0'; BODY_LEN];
    for slot in out.iter_mut().rev() {
        *slot = ALPHABET[(value % 62) as usize];
        value /= 62;
    }
    out
}

/// Decode an 11-character base62 body; `None` when malformed or above 2^63-1.
pub fn decode_base62(body: &[u8]) -> Option<u64> {
    if body.len() != BODY_LEN {
        return None;
    }
    let mut value: u64 = 0;
    for &b in body {
        let digit = match b {
            b'0'..=b'9' => b - b'0',
            b'A'..=b'Z' => b - b'A' + 10,
            b'a'..=b'z' => b - b'a' + 36,
            _ => return None,
        } as u64;
        value = value.checked_mul(62)?.checked_add(digit)?;
    }
    (value <= i64::MAX as u64).then_some(value)
}
