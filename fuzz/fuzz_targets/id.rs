//! Branded ids from hostile bytes: parsing never panics, and whatever it
//! accepts round-trips byte for byte through its parts.
#![no_main]

use echomq::id::{self, BrandedId, JOB_NAMESPACE};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let parsed = BrandedId::parse_bytes(data);
    if let Ok(id) = &parsed {
        assert_eq!(id.as_str().as_bytes(), data);
        let rebuilt = BrandedId::new(id.namespace(), id.snowflake()).unwrap();
        assert_eq!(&rebuilt, id);
        let minted = id.minted_at_ms();
        assert!(id.node_id() <= id::MAX_NODE_ID);
        if id.namespace() == JOB_NAMESPACE {
            // The lex bound of an id's own mint instant never sorts after it.
            assert!(id::lex_bound(minted).as_str() <= id.as_str());
        }
    }
    if let Ok(text) = std::str::from_utf8(data) {
        assert_eq!(id::is_valid_id(text), parsed.is_ok());
        assert_eq!(text.parse::<BrandedId>().is_ok(), parsed.is_ok());
    }

    // A base62 body the decoder accepts re-encodes to the same bytes.
    if let Some(value) = id::decode_base62(data) {
        assert_eq!(&id::encode_base62(value), data);
    }
    // Any 63-bit value round-trips; any instant has a lex bound.
    if let Some(word) = data.get(..8) {
        let raw = u64::from_le_bytes(word.try_into().unwrap());
        let value = raw & i64::MAX as u64;
        assert_eq!(id::decode_base62(&id::encode_base62(value)), Some(value));
        assert_eq!(id::lex_bound(raw).len(), id::ID_LEN);
    }
});
