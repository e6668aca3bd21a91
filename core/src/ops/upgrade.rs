//! Moving a deployment's wire version forward (PROTOCOL.md §8), the core of
//! the CLI's `emq upgrade`, and the probes of the `echomq:2.1.0`
//! registrations (each exercises one registration against the live server).
//!
//! The order: check the record holds the expected older version; run the new
//! version's probes on a scratch queue (deleted afterwards, pass or fail);
//! list the connections `CLIENT LIST` shows still speaking an older version;
//! then compare-and-set the record. Never backward.
//!
//! [`Client::upgrade_protocol_with`] reports each step as it finishes and
//! asks a caller-supplied confirmation before the compare-and-set, so an
//! operator's tool (the CLI) can show progress and ask "really?" while the
//! order of the steps stays here, once.

use std::time::Duration;

use crate::client::Client;
use crate::error::{Error, ErrorKind, Result};
use crate::id::{self, BrandedId};
use crate::keys::{self, QueueKeys, BUNDLE_KEY, VERSION_KEY};
use crate::repeat::{repeat_job_id, RepeatOptions};
use crate::scripts;
use crate::transport::LIB_NAME;
use crate::types::{JobState, UpgradeReport, UpgradeStep};
use crate::wire::WireVersion;
use crate::EnqueueOptions;

/// One probe: its registration and the check it runs on the scratch queue.
const PROBES: [&str; 9] = [
    "row field stalled + reap_stalled",
    "claim_guarded: the attempts cap",
    "key de:<dedup_id> + enqueue_dedup",
    "meta.concurrency, meta.max + meta.duration, key limiter, class EMQRATE, rate_limit + meta.rate_limited_until",
    "keys repeat, repeat:<name> + repeat_upsert, repeat_read, repeat_fire, repeat_remove",
    "row field progress + update_progress",
    "key job:<id>:logs + add_log, complete_result",
    "key job:<id>:result + complete_many_result, remove_cascade",
    "key wake + the claim's wake upkeep + next_due",
];

/// The probes of the `echomq:2.2.0` registrations, run after 2.1.0's.
const PROBES_2_2_0: [&str; 1] = [
    "key prio, row field priority + enqueue_priority, schedule_priority, claim_priority, promote_routed, release_routed, remove_routed",
];

fn probe_failed(probe: &str, what: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorKind::Server,
        format!("upgrade probe {probe:?} failed: {what}"),
    )
}

impl Client {
    /// Move `{emq}:version` from `from` to `to` (see the module docs). With
    /// `dry_run`, everything but the final compare-and-set. A record holding
    /// neither `from` nor `to` is a version-fence error carrying the value.
    pub async fn upgrade_protocol(
        &self,
        from: WireVersion,
        to: WireVersion,
        dry_run: bool,
    ) -> Result<UpgradeReport> {
        self.upgrade_protocol_with(from, to, dry_run, |_| {}, |_| true)
            .await
    }

    /// [`Client::upgrade_protocol`], calling `on_step` as each step finishes
    /// and `confirm` (with the report so far: probes passed, older clients)
    /// right before the compare-and-set; `confirm` answering false leaves the
    /// record as it is (`upgraded` false). `confirm` is not called on a dry
    /// run or when the record already holds `to`.
    pub async fn upgrade_protocol_with(
        &self,
        from: WireVersion,
        to: WireVersion,
        dry_run: bool,
        mut on_step: impl FnMut(UpgradeStep<'_>),
        confirm: impl FnOnce(&UpgradeReport) -> bool,
    ) -> Result<UpgradeReport> {
        if to <= from {
            return Err(Error::invalid_argument(format!(
                "an upgrade only moves forward: {from} -> {to}"
            )));
        }
        let found: Option<String> = self
            .transport
            .query(redis::cmd("GET").arg(VERSION_KEY))
            .await?;
        let found = found.unwrap_or_default();
        let mut report = UpgradeReport {
            from,
            to,
            probes: Vec::new(),
            older_clients: Vec::new(),
            clients_known: false,
            upgraded: false,
            already_current: false,
            scratch_queue: None,
        };
        if found == to.as_str() {
            report.already_current = true;
            return Ok(report);
        }
        if found != from.as_str() {
            return Err(Error::version_fence(&found, from.as_str()));
        }
        on_step(UpgradeStep::RecordChecked { found: &found });
        let scratch = scratch_queue_name(self.node_id())?;
        report.scratch_queue = Some(scratch.clone());
        report.probes = self.probes_on(to, &scratch, &mut on_step).await?;
        (report.older_clients, report.clients_known) = self.older_clients(to).await?;
        on_step(UpgradeStep::ClientsListed {
            older: &report.older_clients,
            known: report.clients_known,
        });
        if dry_run || !confirm(&report) {
            return Ok(report);
        }
        let mut args: Vec<Vec<u8>> = vec![
            from.as_str().into(),
            to.as_str().into(),
            scripts::bundle_sha1_for(from).into(),
            scripts::bundle_sha1_for(to).into(),
        ];
        for script in scripts::for_version(to) {
            args.push(script.name.into());
            args.push(script.sha1().into());
        }
        let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
        let answer = self
            .transport
            .script(&scripts::UPGRADE_VERSION, &[VERSION_KEY, BUNDLE_KEY], &refs)
            .await?;
        let (moved, value): (u64, String) = redis::from_redis_value(answer)?;
        if moved != 1 {
            // Another operator (or runtime) changed the record under us.
            return Err(Error::version_fence(&value, from.as_str()));
        }
        report.upgraded = true;
        on_step(UpgradeStep::RecordSet);
        log::info!("echomq: upgraded {{emq}}:version from {from} to {to}");
        Ok(report)
    }

    /// Run the probes of every registration up to `version` on a fresh
    /// scratch queue, deleting it afterwards whatever happened. Answers the
    /// probes that passed (all of them, or the first failure as an error).
    pub async fn run_probes(&self, version: WireVersion) -> Result<Vec<String>> {
        let scratch = scratch_queue_name(self.node_id())?;
        self.probes_on(version, &scratch, &mut |_| {}).await
    }

    /// The probes on `scratch`, reporting each pass and the deletion.
    async fn probes_on(
        &self,
        version: WireVersion,
        scratch: &str,
        on_step: &mut impl FnMut(UpgradeStep<'_>),
    ) -> Result<Vec<String>> {
        if version < WireVersion::V2_1_0 {
            return Ok(Vec::new());
        }
        let probe = Client {
            wire: version,
            ..self.clone()
        };
        let mut touched = Vec::new();
        let mut passed = Vec::new();
        let mut pass = |p: &'static str| {
            on_step(UpgradeStep::ProbePassed { probe: p });
            passed.push(p.to_string());
        };
        let mut outcome = probe.probes_2_1_0(scratch, &mut touched, &mut pass).await;
        if outcome.is_ok() && version >= WireVersion::V2_2_0 {
            outcome = probe.probes_2_2_0(scratch, &mut touched, &mut pass).await;
        }
        let keys = QueueKeys::new(scratch)?;
        let mut del = redis::cmd("DEL");
        del.arg(&keys.pending)
            .arg(&keys.active)
            .arg(&keys.schedule)
            .arg(&keys.dead)
            .arg(&keys.meta)
            .arg(&keys.completed)
            .arg(&keys.failed)
            .arg(&keys.prio)
            .arg(&touched);
        let deleted: u64 = self.transport.query(&del).await?;
        on_step(UpgradeStep::ScratchDeleted {
            queue: scratch,
            keys: deleted,
        });
        outcome?;
        Ok(passed)
    }

    async fn probes_2_1_0(
        &self,
        scratch: &str,
        touched: &mut Vec<String>,
        passed: &mut impl FnMut(&'static str),
    ) -> Result<()> {
        let keys = QueueKeys::new(scratch)?;
        let row_of = |id: &BrandedId| -> Result<redis::Cmd> {
            let mut cmd = redis::cmd("HMGET");
            cmd.arg(keys.job(id))
                .arg("state")
                .arg("stalled")
                .arg("last_error");
            Ok(cmd)
        };

        // Row field `stalled` + reap_stalled: a lapsed lease at a cap of 1
        // is dead-lettered with last_error 'stalled' and reported as dead.
        let p = PROBES[0];
        let job = self
            .enqueue(scratch, b"probe", Default::default())
            .await?
            .id;
        touched.push(keys.job(&job));
        self.claim(scratch, 1).await?;
        tokio::time::sleep(Duration::from_millis(5)).await;
        let reaped = self.reap_stalled(scratch, 10, 1).await?;
        if reaped.dead != [job] {
            return Err(probe_failed(p, format!("reaped {reaped:?}")));
        }
        let row: Vec<Option<String>> = self.transport.query(&row_of(&job)?).await?;
        if row
            != [
                Some("dead".into()),
                Some("1".into()),
                Some("stalled".into()),
            ]
        {
            return Err(probe_failed(p, format!("row holds {row:?}")));
        }
        passed(p);

        // claim_guarded: a job reaped back after its last attempt is dead-lettered.
        let p = PROBES[1];
        let job = self
            .enqueue(scratch, b"probe", Default::default())
            .await?
            .id;
        touched.push(keys.job(&job));
        let held = self.claim(scratch, 60_000).await?;
        let token = held.map(|j| j.token).unwrap_or(0);
        self.release_many(scratch, &[(job.as_str(), token)])
            .await?
            .remove(0)?;
        let claimed = self.claim_capped(scratch, 10, 60_000, 1).await?;
        let info = self.job(scratch, job.as_str()).await?;
        if !claimed.is_empty() || info.map(|i| i.state) != Some(JobState::Dead) {
            return Err(probe_failed(p, format!("claimed {claimed:?}")));
        }
        passed(p);

        // Key de:<dedup_id> + enqueue_dedup: one job per live dedup id.
        let p = PROBES[2];
        let options = EnqueueOptions {
            dedup_id: Some("probe".into()),
            dedup_ttl_ms: Some(60_000),
            ..EnqueueOptions::default()
        };
        let dedup_key = keys::dedup_key(scratch, "probe")?;
        touched.push(dedup_key.clone());
        let first = self.enqueue(scratch, b"probe", options.clone()).await?;
        touched.push(keys.job(&first.id));
        let second = self.enqueue(scratch, b"probe", options.clone()).await?;
        let holder: Option<String> = self
            .transport
            .query(redis::cmd("GET").arg(&dedup_key))
            .await?;
        if first.duplicate
            || !second.duplicate
            || second.id != first.id
            || holder.as_deref() != Some(first.id.as_str())
        {
            return Err(probe_failed(p, format!("{first:?} then {second:?}")));
        }
        // The key goes with its job (issue #39 item 5): removing the job
        // deletes it.
        self.remove(scratch, first.id.as_str()).await?;
        let left: bool = self
            .transport
            .query(redis::cmd("EXISTS").arg(&dedup_key))
            .await?;
        if left {
            return Err(probe_failed(p, "the removed job's dedup key is left"));
        }
        passed(p);

        // Limits: the concurrency ceiling and the rate limit refuse inside the
        // claim with EMQRATE (and its wait); rate_limit parks a held job.
        let p = PROBES[3];
        touched.push(keys.limiter.clone());
        self.transport
            .query::<i64>(redis::cmd("DEL").arg(&keys.pending))
            .await?;
        for _ in 0..2 {
            let id = self
                .enqueue(scratch, b"probe", Default::default())
                .await?
                .id;
            touched.push(keys.job(&id));
        }
        self.set_concurrency(scratch, 1).await?;
        let held = self.claim_many(scratch, 2, 60_000).await?;
        let ceiling = self.claim_many(scratch, 1, 60_000).await;
        if held.len() != 1 || ceiling.as_ref().map_err(|e| e.retry_after_ms()) != Err(Some(0)) {
            return Err(probe_failed(p, format!("{held:?} then {ceiling:?}")));
        }
        self.set_concurrency(scratch, 0).await?;
        self.set_rate_limit(scratch, 1, 60_000).await?;
        let second = self.claim_many(scratch, 2, 60_000).await?;
        let limited = self.claim_many(scratch, 1, 60_000).await;
        let waited = limited
            .as_ref()
            .map_err(|e| e.retry_after_ms().unwrap_or(0));
        if second.len() != 1 || !matches!(waited, Err(w) if w > 0) {
            return Err(probe_failed(p, format!("{second:?} then {limited:?}")));
        }
        self.set_rate_limit(scratch, 0, 0).await?;
        let job = &second[0];
        self.rate_limit(scratch, job.id.as_str(), job.token, 60_000)
            .await?;
        let parked = self.job(scratch, job.id.as_str()).await?;
        let paused = self.claim_many(scratch, 1, 60_000).await;
        if parked.map(|j| (j.state, j.attempts)) != Some((JobState::Scheduled, 0))
            || paused.map_err(|e| e.kind()).err() != Some(ErrorKind::RateLimited)
        {
            return Err(probe_failed(
                p,
                "rate_limit did not park the job and pause claims",
            ));
        }
        passed(p);

        // Repeats: a due slot fires one job under its derived id, a second
        // fire of the same slot makes none, and remove deletes the record.
        let p = PROBES[4];
        touched.push(keys.repeat.clone());
        touched.push(keys::repeat_record_key(scratch, "probe")?);
        self.transport
            .query::<i64>(redis::cmd("DEL").arg(&keys.pending))
            .await?;
        let every = RepeatOptions {
            every_ms: Some(1),
            // In the past: the first slot is the first grid point at or
            // after the server's now, i.e. now.
            start_at: Some(id::EPOCH_MS),
            ..RepeatOptions::default()
        };
        let repeat = self
            .upsert_repeat(scratch, "probe", b"probe", &every)
            .await?;
        let slot = repeat.next_run_ms;
        let fired_at = |id: &BrandedId| keys.job(id);
        let job = repeat_job_id(scratch, "probe", slot)?;
        touched.push(fired_at(&job));
        // Wait for the slot (at most a millisecond or so past the upsert).
        let mut fired = 0;
        for _ in 0..100 {
            fired += self.fire_repeats(scratch, 10).await?;
            if fired > 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let queued: Vec<String> = self
            .transport
            .query(redis::cmd("ZRANGE").arg(&keys.pending).arg(0).arg(-1))
            .await?;
        self.transport
            .query::<i64>(redis::cmd("ZADD").arg(&keys.repeat).arg(slot).arg("probe"))
            .await?;
        let refired = self.fire_repeats(scratch, 10).await?;
        let removed = self.remove_repeat(scratch, "probe").await?;
        if fired != 1 || refired != 0 || queued != [job.to_string()] || !removed {
            return Err(probe_failed(
                p,
                format!("fired {fired} then {refired}, pending {queued:?}, removed {removed}"),
            ));
        }
        passed(p);
        // The rate_limit probe paused claims on the scratch queue.
        self.transport
            .query::<i64>(redis::cmd("DEL").arg(&keys.pending).arg(&keys.meta))
            .await?;
        self.probes_2_1_0_job_data(scratch, touched, passed).await
    }

    /// The probes of progress, logs and kept results (decisions 13b.*).
    async fn probes_2_1_0_job_data(
        &self,
        scratch: &str,
        touched: &mut Vec<String>,
        passed: &mut impl FnMut(&'static str),
    ) -> Result<()> {
        let keys = QueueKeys::new(scratch)?;
        let field = |id: &BrandedId, name: &str| {
            let mut cmd = redis::cmd("HGET");
            cmd.arg(keys.job(id)).arg(name);
            cmd
        };

        // The limits probe's rate_limit left claims paused for a minute
        // (meta.rate_limited_until): lift it, or every claim below answers
        // EMQRATE.
        self.transport
            .query::<i64>(redis::cmd("DEL").arg(&keys.meta))
            .await?;

        // Row field progress + update_progress: the holder writes it, a
        // stale token is refused and leaves it as it was.
        let p = PROBES[5];
        let id = self
            .enqueue(scratch, b"probe", Default::default())
            .await?
            .id;
        touched.push(keys.job(&id));
        touched.push(keys.job_logs(&id));
        touched.push(keys.job_result(&id));
        let held = self.claim(scratch, 60_000).await?;
        let token = held.map(|j| j.token).unwrap_or(0);
        self.update_progress(scratch, id.as_str(), token, "{\"p\":1}")
            .await?;
        let stale = self
            .update_progress(scratch, id.as_str(), token + 1, "2")
            .await;
        let stored: Option<String> = self.transport.query(&field(&id, "progress")).await?;
        if stored.as_deref() != Some("{\"p\":1}")
            || stale.map_err(|e| e.kind()) != Err(ErrorKind::Stale)
        {
            return Err(probe_failed(p, format!("progress holds {stored:?}")));
        }
        passed(p);

        // Key job:<id>:logs + add_log: capped to the newest lines, and
        // completing the job (complete_result) deletes the log with the row.
        let p = PROBES[6];
        for line in ["a", "b", "c"] {
            self.log(scratch, id.as_str(), line, Some(2)).await?;
        }
        let lines = self.logs(scratch, id.as_str(), 0, -1).await?;
        self.complete(scratch, id.as_str(), token).await?;
        let left: i64 = self
            .transport
            .query(
                redis::cmd("EXISTS")
                    .arg(keys.job_logs(&id))
                    .arg(keys.job(&id)),
            )
            .await?;
        if lines != ["b", "c"] || left != 0 {
            return Err(probe_failed(p, format!("log {lines:?}, {left} keys left")));
        }
        passed(p);

        // Key job:<id>:result + complete_many_result: the value is kept with
        // its TTL in the completing script; remove_cascade deletes it.
        let p = PROBES[7];
        let id = self
            .enqueue(scratch, b"probe", Default::default())
            .await?
            .id;
        touched.push(keys.job(&id));
        touched.push(keys.job_logs(&id));
        touched.push(keys.job_result(&id));
        let held = self.claim(scratch, 60_000).await?;
        let token = held.map(|j| j.token).unwrap_or(0);
        self.log(scratch, id.as_str(), "kept", None).await?;
        self.complete_many_kept(scratch, &[(id.as_str(), token, b"value")], 60_000)
            .await?
            .remove(0)?;
        let kept = self.result(scratch, id.as_str()).await?;
        let ttl: i64 = self
            .transport
            .query(redis::cmd("PTTL").arg(keys.job_result(&id)))
            .await?;
        self.enqueue(
            scratch,
            b"again",
            crate::EnqueueOptions::default().id(id.as_str()),
        )
        .await?;
        self.remove(scratch, id.as_str()).await?;
        let left: i64 = self
            .transport
            .query(
                redis::cmd("EXISTS")
                    .arg(keys.job_result(&id))
                    .arg(keys.job_logs(&id))
                    .arg(keys.job(&id)),
            )
            .await?;
        if kept.as_deref() != Some(&b"value"[..]) || !(1..=60_000).contains(&ttl) || left != 0 {
            return Err(probe_failed(
                p,
                format!("kept {kept:?} for {ttl} ms, {left} keys left after remove"),
            ));
        }
        passed(p);
        self.probes_2_1_0_wake(scratch, touched, passed).await
    }

    /// The probe of priorities (echomq:2.2.0, decisions P.*): a plain job
    /// and two prioritized ones are claimed highest priority first; the row
    /// and `prio` hold the priority; a release routes the job back into
    /// `prio`; a scheduled prioritized job is promoted into `prio` (not
    /// pending); removing it leaves `prio` empty.
    async fn probes_2_2_0(
        &self,
        scratch: &str,
        touched: &mut Vec<String>,
        passed: &mut impl FnMut(&'static str),
    ) -> Result<()> {
        let keys = QueueKeys::new(scratch)?;
        let p = PROBES_2_2_0[0];
        self.transport
            .query::<i64>(
                redis::cmd("DEL")
                    .arg(&keys.pending)
                    .arg(&keys.prio)
                    .arg(&keys.active)
                    .arg(&keys.schedule),
            )
            .await?;
        let mut ids = Vec::new();
        for priority in [0, 5, 9] {
            let id = self
                .enqueue(
                    scratch,
                    b"probe",
                    EnqueueOptions::default().priority(priority),
                )
                .await?
                .id;
            touched.push(keys.job(&id));
            ids.push(id);
        }
        let (plain, five, nine) = (ids[0], ids[1], ids[2]);
        let field: Option<String> = self
            .transport
            .query(redis::cmd("HGET").arg(keys.job(&five)).arg("priority"))
            .await?;
        let score: Option<f64> = self
            .transport
            .query(redis::cmd("ZSCORE").arg(&keys.prio).arg(five.as_str()))
            .await?;
        let held = self.claim_many(scratch, 3, 60_000).await?;
        let order: Vec<BrandedId> = held.iter().map(|j| j.id).collect();
        if field.as_deref() != Some("5") || score != Some(-5.0) || order != [nine, five, plain] {
            return Err(probe_failed(
                p,
                format!("priority field {field:?}, score {score:?}, claimed {order:?}"),
            ));
        }
        self.release_many(scratch, &[(nine.as_str(), held[0].token)])
            .await?
            .into_iter()
            .collect::<Result<Vec<()>>>()?;
        let back: Option<f64> = self
            .transport
            .query(redis::cmd("ZSCORE").arg(&keys.prio).arg(nine.as_str()))
            .await?;
        let later = self
            .enqueue(
                scratch,
                b"probe",
                EnqueueOptions::default().priority(3).delay_ms(1),
            )
            .await?
            .id;
        touched.push(keys.job(&later));
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while self.promote(scratch, 10).await? == 0 && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let promoted: Option<f64> = self
            .transport
            .query(redis::cmd("ZSCORE").arg(&keys.prio).arg(later.as_str()))
            .await?;
        self.remove(scratch, later.as_str()).await?;
        let left: Option<f64> = self
            .transport
            .query(redis::cmd("ZSCORE").arg(&keys.prio).arg(later.as_str()))
            .await?;
        if back != Some(-9.0) || promoted != Some(-3.0) || left.is_some() {
            return Err(probe_failed(
                p,
                format!(
                    "released into {back:?}, promoted into {promoted:?}, {left:?} after remove"
                ),
            ));
        }
        passed(p);
        Ok(())
    }

    /// The probe of the wake key and the pumps' planner (decisions 16.*).
    async fn probes_2_1_0_wake(
        &self,
        scratch: &str,
        touched: &mut Vec<String>,
        passed: &mut impl FnMut(&'static str),
    ) -> Result<()> {
        let keys = QueueKeys::new(scratch)?;
        // Key wake: an enqueue leaves one token, the claim that empties
        // pending drops it, and next_due sees the claim's lease (and no
        // repeat: the repeat probe removed its record).
        let p = PROBES[8];
        touched.push(keys.wake.clone());
        self.transport
            .query::<i64>(redis::cmd("DEL").arg(&keys.pending).arg(&keys.wake))
            .await?;
        let job = self
            .enqueue(scratch, b"probe", Default::default())
            .await?
            .id;
        touched.push(keys.job(&job));
        let tokens: i64 = self
            .transport
            .query(redis::cmd("LLEN").arg(&keys.wake))
            .await?;
        let held = self.claim_many(scratch, 1, 60_000).await?;
        let left: i64 = self
            .transport
            .query(redis::cmd("EXISTS").arg(&keys.wake))
            .await?;
        let due = self.next_due(scratch).await?;
        if tokens != 1
            || held.len() != 1
            || left != 0
            || due.lease_ms.is_none()
            || due.repeat_ms.is_some()
        {
            return Err(probe_failed(
                p,
                format!("{tokens} tokens, claimed {held:?}, {left} left, {due:?}"),
            ));
        }
        self.complete(scratch, job.as_str(), held[0].token).await?;
        passed(p);
        Ok(())
    }

    /// Connections `CLIENT LIST` shows as this client's speaking a version
    /// older than `to`, and whether the server shows library info at all.
    /// The upgrader's own connection (which speaks `from`) is left out: it is
    /// the one doing the upgrade, not a runtime left behind.
    async fn older_clients(&self, to: WireVersion) -> Result<(Vec<String>, bool)> {
        let own: i64 = self.transport.query(redis::cmd("CLIENT").arg("ID")).await?;
        let own = own.to_string();
        let listing: String = self
            .transport
            .query(redis::cmd("CLIENT").arg("LIST"))
            .await?;
        let mut known = false;
        let mut older = Vec::new();
        for line in listing.lines() {
            let field = |name: &str| {
                line.split(' ')
                    .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
                    .unwrap_or("")
            };
            if line.contains(" lib-name=") {
                known = true;
            }
            if field("lib-name") != LIB_NAME || field("id") == own {
                continue;
            }
            let speaks = WireVersion::parse(field("lib-ver"));
            if speaks.map(|v| v < to).unwrap_or(true) {
                older.push(format!(
                    "id={} addr={} name={} lib-ver={}",
                    field("id"),
                    field("addr"),
                    field("name"),
                    field("lib-ver")
                ));
            }
        }
        Ok((older, known))
    }
}

/// A fresh scratch queue name: `emq-probe-<job id>`, unique per run.
fn scratch_queue_name(node_id: u16) -> Result<String> {
    Ok(format!("emq-probe-{}", id::mint_job_id_with(node_id)?))
}

impl crate::blocking::Client {
    /// See [`Client::upgrade_protocol_with`].
    pub fn upgrade_protocol_with(
        &self,
        from: WireVersion,
        to: WireVersion,
        dry_run: bool,
        on_step: impl FnMut(UpgradeStep<'_>),
        confirm: impl FnOnce(&UpgradeReport) -> bool,
    ) -> Result<UpgradeReport> {
        crate::runtime::runtime().block_on(
            self.as_async()
                .upgrade_protocol_with(from, to, dry_run, on_step, confirm),
        )
    }
}
