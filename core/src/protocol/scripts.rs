//! The Lua bundle: one `.lua` file per script under `core/lua/`, embedded at
//! build time, hashed once. The bytes are the contract between runtimes.

use std::sync::OnceLock;

use crate::wire::WireVersion;

/// One script of the bundle.
#[derive(Debug)]
pub struct Script {
    /// The script's name in `{emq}:bundle` (its file name without `.lua`).
    pub name: &'static str,
    /// The Lua source, byte for byte.
    pub source: &'static str,
    /// The wire version that registered this script; a client speaking an
    /// older one neither records nor runs it.
    pub since: WireVersion,
    sha: OnceLock<String>,
}

impl Script {
    const fn new(name: &'static str, source: &'static str) -> Self {
        Script::since(WireVersion::V2_0_0, name, source)
    }

    const fn since(since: WireVersion, name: &'static str, source: &'static str) -> Self {
        Script {
            name,
            source,
            since,
            sha: OnceLock::new(),
        }
    }

    /// Refuse a `SCRIPT LOAD` answer that is not our SHA (the server would run
    /// other bytes than the ones we ship).
    pub(crate) fn check_loaded(&self, answered: &str) -> crate::Result<()> {
        if answered == self.sha1() {
            return Ok(());
        }
        Err(crate::Error::new(
            crate::ErrorKind::Protocol,
            format!(
                "SCRIPT LOAD of {} answered {answered}, expected {}",
                self.name,
                self.sha1()
            ),
        ))
    }

    /// SHA1 of the source bytes, hex, as `SCRIPT LOAD` answers it.
    pub fn sha1(&self) -> &str {
        self.sha
            .get_or_init(|| sha1_smol::Sha1::from(self.source).digest().to_string())
    }
}

/// Writes a job row and pushes its id to pending.
pub static ENQUEUE: Script = Script::new("enqueue", include_str!("../../lua/enqueue.lua"));
/// Writes a job row and schedules its id for a run-at time.
pub static SCHEDULE: Script = Script::new("schedule", include_str!("../../lua/schedule.lua"));
/// Moves the next pending id to active under a lease and a fresh token.
pub static CLAIM: Script = Script::new("claim", include_str!("../../lua/claim.lua"));
/// Settles a leased job as completed (fenced by its token).
pub static COMPLETE: Script = Script::new("complete", include_str!("../../lua/complete.lua"));
/// [`COMPLETE`] for a batch of jobs, one answer per job.
pub static COMPLETE_MANY: Script =
    Script::new("complete_many", include_str!("../../lua/complete_many.lua"));
/// Settles a leased job as failed: scheduled again, or dead at max attempts.
pub static RETRY: Script = Script::new("retry", include_str!("../../lua/retry.lua"));
/// Moves scheduled ids whose run-at time has come to pending.
pub static PROMOTE: Script = Script::new("promote", include_str!("../../lua/promote.lua"));
/// Returns active ids whose lease lapsed to pending.
pub static REAP: Script = Script::new("reap", include_str!("../../lua/reap.lua"));
/// Pushes a leased job's lease deadline out (fenced by its token).
pub static EXTEND: Script = Script::new("extend", include_str!("../../lua/extend.lua"));
/// Moves one dead job back to pending.
pub static REQUEUE_DEAD: Script =
    Script::new("requeue_dead", include_str!("../../lua/requeue_dead.lua"));
/// Deletes a job that is not active, from its row and every set.
pub static REMOVE: Script = Script::new("remove", include_str!("../../lua/remove.lua"));
/// Hands a held job back to pending, unrun (a stopping worker's prefetched jobs).
pub static RELEASE: Script = Script::new("release", include_str!("../../lua/release.lua"));
/// Publishes a batch of queue events on one channel, only when someone listens.
pub static PUBLISH: Script = Script::new("publish", include_str!("../../lua/publish.lua"));

/// Deletes the oldest members of a waiting set (pending or schedule) with their rows.
pub static DRAIN: Script = Script::new("drain", include_str!("../../lua/drain.lua"));
/// Deletes the oldest dead jobs, by age or beyond a length to keep.
pub static PURGE_DEAD: Script = Script::new("purge_dead", include_str!("../../lua/purge_dead.lua"));
/// Returns up to N of the oldest dead jobs to pending, as [`REQUEUE_DEAD`] does.
pub static REQUEUE_DEAD_MANY: Script = Script::new(
    "requeue_dead_many",
    include_str!("../../lua/requeue_dead_many.lua"),
);

// echomq:2.1.0 registrations. New behaviour lives in new scripts, never in a
// changed 2.0.0 body: a changed body would change its SHA in `{emq}:bundle`
// and a 2.0.0 peer sharing the deployment would see a per-script mismatch.
/// [`REAP`] with the stall cap: a job stalled too often is dead-lettered.
pub static REAP_STALLED: Script = Script::since(
    WireVersion::V2_1_0,
    "reap_stalled",
    include_str!("../../lua/reap_stalled.lua"),
);
/// [`CLAIM`] behind the 2.1.0 guards (global concurrency, rate limit), checked atomically.
pub static CLAIM_GUARDED: Script = Script::since(
    WireVersion::V2_1_0,
    "claim_guarded",
    include_str!("../../lua/claim_guarded.lua"),
);
/// A handler's rate-limit request: pauses claims on the queue and parks the held job.
pub static RATE_LIMIT: Script = Script::since(
    WireVersion::V2_1_0,
    "rate_limit",
    include_str!("../../lua/rate_limit.lua"),
);
/// [`ENQUEUE`] under a deduplication id: a live duplicate answers the existing job.
pub static ENQUEUE_DEDUP: Script = Script::since(
    WireVersion::V2_1_0,
    "enqueue_dedup",
    include_str!("../../lua/enqueue_dedup.lua"),
);
/// Creates or replaces a repeatable job's record and next slot.
pub static REPEAT_UPSERT: Script = Script::since(
    WireVersion::V2_1_0,
    "repeat_upsert",
    include_str!("../../lua/repeat_upsert.lua"),
);
/// Fires due repeatable jobs, one job per slot under an id derived from name and slot.
pub static REPEAT_FIRE: Script = Script::since(
    WireVersion::V2_1_0,
    "repeat_fire",
    include_str!("../../lua/repeat_fire.lua"),
);
/// Deletes a repeatable job's record and schedule entry.
pub static REPEAT_REMOVE: Script = Script::since(
    WireVersion::V2_1_0,
    "repeat_remove",
    include_str!("../../lua/repeat_remove.lua"),
);
/// Reads repeatable jobs (due or all) with their records and the server clock; writes nothing.
pub static REPEAT_READ: Script = Script::since(
    WireVersion::V2_1_0,
    "repeat_read",
    include_str!("../../lua/repeat_read.lua"),
);
/// The idle worker's pump planner (issue #16): when promote, reap and the
/// repeat pump are next due; reads only.
pub static NEXT_DUE: Script = Script::since(
    WireVersion::V2_1_0,
    "next_due",
    include_str!("../../lua/next_due.lua"),
);
/// Moves the deployment's wire version forward (compare-and-set, never backward).
pub static UPGRADE_VERSION: Script = Script::since(
    WireVersion::V2_1_0,
    "upgrade_version",
    include_str!("../../lua/upgrade_version.lua"),
);

// echomq:2.1.0: progress, logs and results (issue #13 §2, §4).
/// The holder writes a job's row field `progress` (token- and state-checked).
pub static UPDATE_PROGRESS: Script = Script::since(
    WireVersion::V2_1_0,
    "update_progress",
    include_str!("../../lua/update_progress.lua"),
);
/// Appends a line to a job's log while its row exists, keeping the newest lines.
pub static ADD_LOG: Script = Script::since(
    WireVersion::V2_1_0,
    "add_log",
    include_str!("../../lua/add_log.lua"),
);
/// `complete` at 2.1.0: the same checks and answers, deleting the job's log too.
pub static COMPLETE_RESULT: Script = Script::since(
    WireVersion::V2_1_0,
    "complete_result",
    include_str!("../../lua/complete_result.lua"),
);
/// `complete_many` at 2.1.0: deletes each log, or keeps each result and log with a TTL.
pub static COMPLETE_MANY_RESULT: Script = Script::since(
    WireVersion::V2_1_0,
    "complete_many_result",
    include_str!("../../lua/complete_many_result.lua"),
);
/// `remove` at 2.1.0: the same checks and answers, deleting the log and kept result too.
pub static REMOVE_CASCADE: Script = Script::since(
    WireVersion::V2_1_0,
    "remove_cascade",
    include_str!("../../lua/remove_cascade.lua"),
);

/// `drain` at 2.1.0: the same, deleting each deleted job's dedup key too.
pub static DRAIN_CASCADE: Script = Script::since(
    WireVersion::V2_1_0,
    "drain_cascade",
    include_str!("../../lua/drain_cascade.lua"),
);
/// `purge_dead` at 2.1.0: the same, deleting each purged job's dedup key too.
pub static PURGE_DEAD_CASCADE: Script = Script::since(
    WireVersion::V2_1_0,
    "purge_dead_cascade",
    include_str!("../../lua/purge_dead_cascade.lua"),
);
/// [`REQUEUE_DEAD`] for a fresh run: `attempts` and `stalled` reset, so the
/// 2.1.0 claim's attempts cap does not dead-letter the job straight back.
pub static REQUEUE_FRESH: Script = Script::since(
    WireVersion::V2_1_0,
    "requeue_fresh",
    include_str!("../../lua/requeue_fresh.lua"),
);
/// [`REQUEUE_DEAD_MANY`] as [`REQUEUE_FRESH`] does it.
pub static REQUEUE_FRESH_MANY: Script = Script::since(
    WireVersion::V2_1_0,
    "requeue_fresh_many",
    include_str!("../../lua/requeue_fresh_many.lua"),
);

// echomq:2.1.0: nothing half-written (issue #39). A script that fails a
// command keeps the writes it made before it; these are the 2.0.0 scripts a
// client speaking 2.1.0 still sends, with every key type proved before their
// first write (the 2.0.0 bodies keep their bytes, as above).
/// [`ENQUEUE`] writing pending first: a pending key of another type leaves no row.
pub static ENQUEUE_CHECKED: Script = Script::since(
    WireVersion::V2_1_0,
    "enqueue_checked",
    include_str!("../../lua/enqueue_checked.lua"),
);
/// [`SCHEDULE`] writing the schedule first, as [`ENQUEUE_CHECKED`] does.
pub static SCHEDULE_CHECKED: Script = Script::since(
    WireVersion::V2_1_0,
    "schedule_checked",
    include_str!("../../lua/schedule_checked.lua"),
);
/// [`RETRY`] with the type guard before its first write.
pub static RETRY_CHECKED: Script = Script::since(
    WireVersion::V2_1_0,
    "retry_checked",
    include_str!("../../lua/retry_checked.lua"),
);
/// [`RELEASE`] with the type guard before its first write.
pub static RELEASE_CHECKED: Script = Script::since(
    WireVersion::V2_1_0,
    "release_checked",
    include_str!("../../lua/release_checked.lua"),
);
/// [`PROMOTE`] with every row and pending checked before its first write.
pub static PROMOTE_CHECKED: Script = Script::since(
    WireVersion::V2_1_0,
    "promote_checked",
    include_str!("../../lua/promote_checked.lua"),
);
/// [`REAP`] with every row and pending checked before its first write.
pub static REAP_CHECKED: Script = Script::since(
    WireVersion::V2_1_0,
    "reap_checked",
    include_str!("../../lua/reap_checked.lua"),
);

// echomq:2.2.0: priorities (issue #34 item 3). A prioritized job waits in
// `emq:{q}:prio` (scored `-priority`) instead of pending; its row records
// `priority`, and every script that puts a job back where it waits routes by
// it (decision P.2). The 2.1.0 scripts keep their bytes: a client speaking
// 2.2.0 sends these instead (`Client::routed`).
/// [`ENQUEUE_CHECKED`] for a job with a priority: it waits in `prio`, scored `-priority`.
pub static ENQUEUE_PRIORITY: Script = Script::since(
    WireVersion::V2_2_0,
    "enqueue_priority",
    include_str!("../../lua/enqueue_priority.lua"),
);
/// [`SCHEDULE_CHECKED`] for a job with a priority: the row records it for the promote.
pub static SCHEDULE_PRIORITY: Script = Script::since(
    WireVersion::V2_2_0,
    "schedule_priority",
    include_str!("../../lua/schedule_priority.lua"),
);
/// [`ENQUEUE_DEDUP`] for a job with a priority.
pub static ENQUEUE_DEDUP_PRIORITY: Script = Script::since(
    WireVersion::V2_2_0,
    "enqueue_dedup_priority",
    include_str!("../../lua/enqueue_dedup_priority.lua"),
);
/// [`CLAIM_GUARDED`] serving `prio` (highest priority first) before pending.
pub static CLAIM_PRIORITY: Script = Script::since(
    WireVersion::V2_2_0,
    "claim_priority",
    include_str!("../../lua/claim_priority.lua"),
);
/// [`PROMOTE_CHECKED`] routing each job to where it waits (prio or pending) by its row.
pub static PROMOTE_ROUTED: Script = Script::since(
    WireVersion::V2_2_0,
    "promote_routed",
    include_str!("../../lua/promote_routed.lua"),
);
/// [`REAP_CHECKED`] routing each job back to where it waits by its row.
pub static REAP_ROUTED: Script = Script::since(
    WireVersion::V2_2_0,
    "reap_routed",
    include_str!("../../lua/reap_routed.lua"),
);
/// [`REAP_STALLED`] routing each recovered job back to where it waits by its row.
pub static REAP_STALLED_ROUTED: Script = Script::since(
    WireVersion::V2_2_0,
    "reap_stalled_routed",
    include_str!("../../lua/reap_stalled_routed.lua"),
);
/// [`RELEASE_CHECKED`] handing the job back to where it waits by its row.
pub static RELEASE_ROUTED: Script = Script::since(
    WireVersion::V2_2_0,
    "release_routed",
    include_str!("../../lua/release_routed.lua"),
);
/// [`REQUEUE_FRESH`] returning the job to where it waits by its row.
pub static REQUEUE_FRESH_ROUTED: Script = Script::since(
    WireVersion::V2_2_0,
    "requeue_fresh_routed",
    include_str!("../../lua/requeue_fresh_routed.lua"),
);
/// [`REQUEUE_FRESH_MANY`] returning each job to where it waits by its row.
pub static REQUEUE_FRESH_MANY_ROUTED: Script = Script::since(
    WireVersion::V2_2_0,
    "requeue_fresh_many_routed",
    include_str!("../../lua/requeue_fresh_many_routed.lua"),
);
/// [`REMOVE_CASCADE`], the id leaving `prio` too.
pub static REMOVE_ROUTED: Script = Script::since(
    WireVersion::V2_2_0,
    "remove_routed",
    include_str!("../../lua/remove_routed.lua"),
);

/// Every script, in name order (the order the bundle hash concatenates them).
pub fn all() -> Vec<&'static Script> {
    let mut all = vec![
        &ENQUEUE,
        &SCHEDULE,
        &CLAIM,
        &COMPLETE,
        &COMPLETE_MANY,
        &RETRY,
        &PROMOTE,
        &REAP,
        &EXTEND,
        &REQUEUE_DEAD,
        &REMOVE,
        &RELEASE,
        &PUBLISH,
        &DRAIN,
        &PURGE_DEAD,
        &REQUEUE_DEAD_MANY,
        &UPDATE_PROGRESS,
        &ADD_LOG,
        &COMPLETE_RESULT,
        &COMPLETE_MANY_RESULT,
        &REMOVE_CASCADE,
        &DRAIN_CASCADE,
        &PURGE_DEAD_CASCADE,
        &REAP_STALLED,
        &CLAIM_GUARDED,
        &RATE_LIMIT,
        &ENQUEUE_DEDUP,
        &UPGRADE_VERSION,
        &REPEAT_UPSERT,
        &REPEAT_FIRE,
        &REPEAT_REMOVE,
        &REPEAT_READ,
        &NEXT_DUE,
        &REQUEUE_FRESH,
        &REQUEUE_FRESH_MANY,
        &ENQUEUE_CHECKED,
        &SCHEDULE_CHECKED,
        &RETRY_CHECKED,
        &RELEASE_CHECKED,
        &PROMOTE_CHECKED,
        &REAP_CHECKED,
        &ENQUEUE_PRIORITY,
        &SCHEDULE_PRIORITY,
        &ENQUEUE_DEDUP_PRIORITY,
        &CLAIM_PRIORITY,
        &PROMOTE_ROUTED,
        &REAP_ROUTED,
        &REAP_STALLED_ROUTED,
        &RELEASE_ROUTED,
        &REQUEUE_FRESH_ROUTED,
        &REQUEUE_FRESH_MANY_ROUTED,
        &REMOVE_ROUTED,
    ];
    all.sort_by_key(|s| s.name);
    all
}

/// The scripts a client speaking `version` records and loads, in name order.
/// A client speaking 2.0.0 records exactly the 2.0.0 bundle, so it shows no
/// mismatch against 2.0.0 runtimes of this project.
pub fn for_version(version: WireVersion) -> Vec<&'static Script> {
    all().into_iter().filter(|s| s.since <= version).collect()
}

/// SHA1 of the per-script SHAs (of the newest version's bundle) concatenated
/// in name order: the `bundle` field of `{emq}:bundle`.
pub fn bundle_sha1() -> &'static str {
    bundle_sha1_for(WireVersion::NEWEST)
}

/// The `bundle` field a client speaking `version` records.
pub fn bundle_sha1_for(version: WireVersion) -> &'static str {
    static BUNDLES: [OnceLock<String>; WireVersion::ALL.len()] =
        [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let at = WireVersion::ALL
        .iter()
        .position(|v| *v == version)
        .expect("every version is in ALL");
    BUNDLES[at].get_or_init(|| {
        let joined: String = for_version(version).iter().map(|s| s.sha1()).collect();
        sha1_smol::Sha1::from(joined).digest().to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enqueue_is_the_seed_script_byte_for_byte() {
        assert_eq!(ENQUEUE.sha1(), "a5980be13628669477e64a5afad5370194ea6f1c");
        assert!(ENQUEUE.source.ends_with("return 1\n") && !ENQUEUE.source.ends_with("\n\n"));
    }

    #[test]
    fn names_are_unique_and_sorted() {
        let names: Vec<_> = all().iter().map(|s| s.name).collect();
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(names, sorted);
        assert_eq!(bundle_sha1().len(), 40);
    }

    #[test]
    fn a_2_0_0_client_records_exactly_the_sixteen_2_0_0_scripts() {
        // The twelve seed scripts plus the additive `publish` (#12) and the
        // operator scripts `drain`, `purge_dead`, `requeue_dead_many` (#14),
        // which main's 2.0.0 runtimes already record.
        let old = for_version(WireVersion::V2_0_0);
        assert_eq!(old.len(), 16);
        assert!(old.iter().all(|s| s.since == WireVersion::V2_0_0));
        assert!(for_version(WireVersion::V2_1_0).len() > old.len());
        assert_ne!(
            bundle_sha1_for(WireVersion::V2_0_0),
            bundle_sha1_for(WireVersion::V2_1_0)
        );
        // 2.2.0 adds scripts and changes none: every 2.1.0 script is recorded
        // with the same bytes.
        assert_eq!(for_version(WireVersion::V2_1_0).len(), 41);
        assert_eq!(for_version(WireVersion::V2_2_0).len(), 41 + 11);
    }
}
