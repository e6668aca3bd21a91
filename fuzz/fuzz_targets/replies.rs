//! Every reply decoder of the core from hostile bytes: the bytes are parsed as
//! RESP (what a server, or something posing as one, could send) and handed to
//! each decoder, which answers a value or a typed error and never panics.
#![no_main]

use echomq::id::BrandedId;
use echomq::replies;
use libfuzzer_sys::fuzz_target;
use redis::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(value) = redis::parse_redis_value(data) else {
        return;
    };
    let id = BrandedId::parse("JOB0000000000A").unwrap();
    let reply = replies::from_wire(value.clone());

    let _ = replies::completed(&id, reply.clone());
    let _ = replies::extended(&id, reply.clone());
    let _ = replies::released(reply.clone());
    let Ok(value) = reply else {
        return;
    };
    let _ = replies::created(value.clone());
    // Counts and tokens are the server's integers: never above i64::MAX (a
    // wrapped negative would be), and a claim hands back every triple.
    if let Ok(jobs) = replies::claimed(value.clone()) {
        if let Value::Array(items) = &value {
            assert_eq!(jobs.len() * 3, items.len());
        }
        assert!(jobs.iter().all(|j| j.token <= i64::MAX as u64));
    }
    if let Ok(n) = replies::moved(value.clone()) {
        assert!(n <= i64::MAX as u64);
    }
    let _ = replies::retried(value.clone());
    let _ = replies::requeued(&id, value.clone());
    let _ = replies::removed(&id, value.clone());
    let _ = replies::job_row(&id, value.clone());
    let _ = replies::browsed(value.clone());
    // The echomq:2.1.0 replies.
    let _ = replies::reaped(value.clone());
    let _ = replies::deduped(value.clone());
    let _ = replies::rate_limited(value.clone());
    let _ = replies::progressed(value.clone());
    if let Ok(n) = replies::logged(&id, value.clone()) {
        assert!(n <= i64::MAX as u64);
    }
    let _ = replies::log_lines(value.clone());
    let _ = replies::repeats(value.clone());
    let _ = replies::repeat_upserted(value.clone());
    let _ = replies::repeat_removed(value.clone());
    if let Value::Array(items) = &value {
        // One id per verdict (reaching the verdict words), and one too many.
        for n in [items.len(), items.len() + 1] {
            let ids = vec![id; n];
            if let Ok(verdicts) = replies::completed_many(&ids, value.clone()) {
                assert_eq!(verdicts.len(), n);
            }
        }
        // A result wait's two answers: a kept value is handed back whole.
        if let Ok(Some(kept)) = replies::result_wait(&id, items.clone()) {
            assert!(matches!(&items[1], Value::BulkString(b) if *b == kept));
        }
        // One verdict per repeat sent, and one too many.
        for n in [items.len(), items.len() + 1] {
            if let Ok(fires) = replies::repeats_fired(value.clone(), n) {
                assert_eq!(fires.len(), n);
            }
        }
        if let Ok(c) = replies::counts(items.clone()) {
            assert!(c.pending.max(c.failed) <= i64::MAX as u64);
        }
    }
});
