//! The closed key grammar from hostile bytes: classification never panics,
//! every key it accepts is rebuilt byte for byte by the builders, and every
//! per-queue key hashes to its queue's slot.
#![no_main]

use echomq::keys::{self, KeyClass, KeyType};
use echomq::slot;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let class = keys::classify_bytes(data);
    let fields = class.fields();
    let _ = class.to_string();
    let (rebuilt, queue) = match &class {
        KeyClass::Queue { queue, key_type } => {
            (keys::queue_key(queue, *key_type), Some(queue))
        }
        KeyClass::Job { queue, id } => (keys::job_key(queue, id.as_str()), Some(queue)),
        KeyClass::Metric { queue, metric } => (keys::metric_key(queue, *metric), Some(queue)),
        KeyClass::Dedup { queue, dedup_id } => (keys::dedup_key(queue, dedup_id), Some(queue)),
        KeyClass::RepeatRecord { queue, name } => (keys::repeat_record_key(queue, name), Some(queue)),
        KeyClass::JobLogs { queue, id } => (keys::job_logs_key(queue, id.as_str()), Some(queue)),
        KeyClass::JobResult { queue, id } => (keys::job_result_key(queue, id.as_str()), Some(queue)),
        KeyClass::Reserve(member) => (keys::reserve_key(member), None),
        KeyClass::Unclassified => {
            assert_eq!(fields, KeyClass::Unclassified.fields());
            return;
        }
    };
    let rebuilt = rebuilt.expect("a classified key's parts build a key");
    assert_eq!(rebuilt.as_bytes(), data);
    assert_eq!(fields.queue.as_ref(), queue.or(fields.queue.as_ref()));
    if let Some(queue) = queue {
        // The hashtag is the queue: one slot for every key of a queue.
        let pending = keys::queue_key(queue, KeyType::Pending).unwrap();
        assert_eq!(slot::slot(data), slot::slot(pending.as_bytes()));
        assert_eq!(slot::hashtag(data), queue.as_bytes());
    } else {
        // The reserve lives in the `{emq}` slot.
        assert_eq!(slot::hashtag(data), b"emq");
    }
    if let Ok(text) = std::str::from_utf8(data) {
        assert_eq!(keys::classify(text), class);
    }
});
