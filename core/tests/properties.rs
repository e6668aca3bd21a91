//! Property tests for the pure layer: round trips hold for every valid input,
//! and nothing panics on arbitrary bytes.

use echomq::id::{decode_base62, encode_base62, BrandedId};
use echomq::keys::{self, classify_bytes, KeyClass, KeyType, ReserveKey};
use echomq::slot::slot;
use proptest::prelude::*;

fn queue_name() -> impl Strategy<Value = String> {
    "[A-Za-z0-9._-]{1,128}".prop_filter("emq is reserved", |q| q != "emq")
}

fn namespace() -> impl Strategy<Value = String> {
    "[A-Z]{3}"
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn base62_round_trips(v in 0u64..=i64::MAX as u64) {
        prop_assert_eq!(decode_base62(&encode_base62(v)), Some(v));
    }

    #[test]
    fn base62_order_is_numeric_order(a in 0u64..=i64::MAX as u64, b in 0u64..=i64::MAX as u64) {
        prop_assert_eq!(encode_base62(a).cmp(&encode_base62(b)), a.cmp(&b));
    }

    #[test]
    fn ids_round_trip(ns in namespace(), v in 0u64..=i64::MAX as u64) {
        let id = BrandedId::new(&ns, v).unwrap();
        let back = BrandedId::parse(id.as_str()).unwrap();
        prop_assert_eq!(back.namespace(), ns.as_str());
        prop_assert_eq!(back.snowflake(), v);
    }

    #[test]
    fn job_keys_round_trip(q in queue_name(), ns in namespace(), v in 0u64..=i64::MAX as u64) {
        let id = BrandedId::new(&ns, v).unwrap();
        let key = keys::job_key(&q, id.as_str()).unwrap();
        prop_assert_eq!(classify_bytes(key.as_bytes()), KeyClass::Job { queue: q.clone(), id });
        prop_assert_eq!(slot(key.as_bytes()), slot(keys::queue_key(&q, KeyType::Pending).unwrap().as_bytes()));
    }

    #[test]
    fn queue_keys_round_trip(q in queue_name(), t in 0usize..KeyType::ALL.len()) {
        // Every key type, the 2.1.0 ones (limiter, repeat, wake) included.
        let key_type = KeyType::ALL[t];
        let key = keys::queue_key(&q, key_type).unwrap();
        prop_assert_eq!(classify_bytes(key.as_bytes()), KeyClass::Queue { queue: q.clone(), key_type });
        let migration = keys::reserve_key(&ReserveKey::Migration(q.clone())).unwrap();
        prop_assert_eq!(classify_bytes(migration.as_bytes()), KeyClass::Reserve(ReserveKey::Migration(q)));
    }

    #[test]
    fn parsing_never_panics(raw in proptest::collection::vec(any::<u8>(), 0..64)) {
        let _ = BrandedId::parse_bytes(&raw);
        let _ = classify_bytes(&raw);
        let _ = slot(&raw);
        let mut prefixed = b"emq:{".to_vec();
        prefixed.extend_from_slice(&raw);
        let _ = classify_bytes(&prefixed);
        let mut reserve = b"{emq}:".to_vec();
        reserve.extend_from_slice(&raw);
        let _ = classify_bytes(&reserve);
    }

    #[test]
    fn classified_keys_rebuild_exactly(raw in "(emq:\\{|\\{emq\\}:)[A-Za-z0-9._:{}-]{0,40}") {
        let rebuilt = match classify_bytes(raw.as_bytes()) {
            KeyClass::Queue { queue, key_type } => Some(keys::queue_key(&queue, key_type).unwrap()),
            KeyClass::Job { queue, id } => Some(keys::job_key(&queue, id.as_str()).unwrap()),
            KeyClass::Metric { queue, metric } => Some(keys::metric_key(&queue, metric).unwrap()),
            KeyClass::Dedup { queue, dedup_id } => Some(keys::dedup_key(&queue, &dedup_id).unwrap()),
            KeyClass::JobLogs { queue, id } => Some(keys::job_logs_key(&queue, id.as_str()).unwrap()),
            KeyClass::JobResult { queue, id } => Some(keys::job_result_key(&queue, id.as_str()).unwrap()),
            KeyClass::RepeatRecord { queue, name } => Some(keys::repeat_record_key(&queue, &name).unwrap()),
            KeyClass::Reserve(member) => Some(keys::reserve_key(&member).unwrap()),
            KeyClass::Unclassified => None,
        };
        if let Some(rebuilt) = rebuilt {
            prop_assert_eq!(rebuilt, raw);
        }
    }
}
