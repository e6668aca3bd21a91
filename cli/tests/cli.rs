//! The built `emq` binary against real redis-servers, on queues filled by the
//! Python package (`tests/fill.py`, run by the interpreter in
//! `EMQ_TEST_PYTHON`, which `scripts/test-cli.sh` provides). Output is
//! checked (the `--json` shapes of docs/CLI.md), wire state is asserted with
//! raw commands, and every bad-input case is checked for code and message.

#[path = "../../core/tests/common/mod.rs"]
mod common;

use std::process::{Child, Command as Proc, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use common::{free_port, Server};
use redis::Commands;
use serde_json::Value;

const Q: &str = "orders";

fn emq(server_url: &str) -> Command {
    let mut cmd = Command::cargo_bin("emq").unwrap();
    cmd.env("EMQ_URL", server_url)
        .env_remove("RUST_BACKTRACE")
        .env_remove("EMQ_WIRE");
    cmd
}

/// Run `emq args…`; answer (exit code, stdout, stderr).
fn run(url: &str, args: &[&str]) -> (i32, String, String) {
    let out = emq(url).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json(url: &str, args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let (code, out, err) = run(url, &all);
    assert_eq!(code, 0, "emq {args:?}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

/// One line on stderr, no panic text, no backtrace.
fn assert_one_line_error(err: &str) {
    assert_eq!(err.lines().count(), 1, "one line expected: {err:?}");
    assert!(err.starts_with("emq: "), "{err:?}");
    assert!(
        !err.contains("panicked") && !err.contains("backtrace"),
        "{err:?}"
    );
}

/// The ids `fill.py` made: 2 dead, 1 active, 3 pending, 1 scheduled.
struct Filled {
    pending: Vec<String>,
    dead: Vec<String>,
    active: String,
    scheduled: String,
}

fn fill(server: &Server) -> Filled {
    let python = std::env::var("EMQ_TEST_PYTHON")
        .expect("set EMQ_TEST_PYTHON to a python with echomq installed (scripts/test-cli.sh does)");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fill.py");
    let out = Proc::new(python)
        .args([script, &server.url(), Q])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "fill.py: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let list = |k: &str| -> Vec<String> {
        v[k].as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    };
    Filled {
        pending: list("pending"),
        dead: list("dead"),
        active: v["active"].as_str().unwrap().to_string(),
        scheduled: list("scheduled").remove(0),
    }
}

fn zcard(server: &Server, set: &str) -> u64 {
    server.raw().zcard(format!("emq:{{{Q}}}:{set}")).unwrap()
}

fn row_exists(server: &Server, id: &str) -> bool {
    server
        .raw()
        .exists(format!("emq:{{{Q}}}:job:{id}"))
        .unwrap()
}

#[test]
fn version_names_the_package_and_the_wire() {
    let (code, out, _) = run("redis://127.0.0.1:1/", &["--version"]);
    assert_eq!(code, 0);
    assert_eq!(
        out.trim(),
        format!("emq {} (wire echomq:2.1.0)", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn queues_and_stats_show_every_queue_with_depths() {
    let server = Server::start();
    let url = server.url();
    fill(&server);
    let (code, _, _) = run(&url, &["pause", "idle"]);
    assert_eq!(code, 0);

    let v = json(&url, &["queues"]);
    let list = v.as_array().unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(list[0]["queue"], "idle");
    assert_eq!(list[0]["paused"], true);
    let o = &list[1];
    assert_eq!(
        (
            &o["queue"],
            &o["pending"],
            &o["active"],
            &o["scheduled"],
            &o["dead"],
            &o["failed"]
        ),
        (
            &Value::from("orders"),
            &Value::from(3),
            &Value::from(1),
            &Value::from(1),
            &Value::from(2),
            &Value::from(2)
        )
    );
    let (code, out, _) = run(&url, &["queues"]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("QUEUE") && lines[0].ends_with("PAUSED"));
    let cells: Vec<&str> = lines[2].split_whitespace().collect();
    assert_eq!(cells, ["orders", "3", "1", "1", "2", "0", "2", "no"]);

    let v = json(&url, &["stats", Q]);
    assert_eq!(v[0]["pending"], 3);
    assert!(v[0]["completed_per_s"].is_null());
    // --watch: one JSON line per refresh, rates from the second on.
    let (code, out, _) = run(
        &url,
        &[
            "--json",
            "stats",
            Q,
            "--watch",
            "--count",
            "2",
            "--interval",
            "100ms",
        ],
    );
    assert_eq!(code, 0);
    let frames: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(frames.len(), 2);
    assert!(frames[0]["queues"][0]["completed_per_s"].is_null());
    assert_eq!(frames[1]["queues"][0]["completed_per_s"], 0.0);
}

#[test]
fn jobs_dead_and_job_show_rows_sets_and_payloads() {
    let server = Server::start();
    let url = server.url();
    let f = fill(&server);

    let v = json(&url, &["jobs", Q]);
    let ids: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        f.pending.iter().map(String::as_str).collect::<Vec<_>>()
    );
    assert_eq!(v[0]["state"], "pending");
    assert_eq!(v[0]["attempts"], 0);
    let v = json(&url, &["jobs", Q, "--newest", "--limit", "1"]);
    assert_eq!(v[0]["id"], f.pending[2].as_str());

    let v = json(&url, &["dead", Q]);
    assert_eq!(v.as_array().unwrap().len(), 2);
    assert_eq!(v[0]["id"], f.dead[0].as_str());
    assert_eq!(v[0]["last_error"], "boom doomed 0");
    assert_eq!(v[0]["attempts"], 1);
    let (_, out, _) = run(&url, &["dead", Q]);
    assert!(out.contains("boom doomed 1"), "{out}");

    let v = json(&url, &["jobs", Q, "--state", "active"]);
    assert_eq!(v[0]["id"], f.active.as_str());
    assert!(v[0]["lease_deadline_ms"].as_u64().unwrap() > v[0]["minted_at_ms"].as_u64().unwrap());
    let (_, out, _) = run(&url, &["jobs", Q, "--state", "scheduled"]);
    assert!(
        out.contains(&f.scheduled) && out.contains("runs in 59m"),
        "{out}"
    );
    // --since/--until filter by mint time: nothing is from the future.
    let v = json(&url, &["jobs", Q, "--since", "4000000000000"]);
    assert!(v.as_array().unwrap().is_empty());
    let v = json(
        &url,
        &["jobs", Q, "--since", "1h", "--until", "4000000000000"],
    );
    assert_eq!(v.as_array().unwrap().len(), 3);

    let v = json(&url, &["job", Q, &f.pending[1]]);
    assert_eq!(v["state"], "pending");
    assert_eq!(v["found_in"][0]["set"], "pending");
    assert_eq!(v["payload"], r#"{"order": 1}"#);
    assert_eq!(v["fields"]["attempts"], "0");
    let (code, out, _) = run(&url, &["job", Q, &f.pending[1], "--payload", "json"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("found in  pending") && out.contains("\"order\": 1"),
        "{out}"
    );
    let raw = emq(&url)
        .args(["job", Q, &f.active, "--payload", "raw"])
        .output()
        .unwrap();
    assert_eq!(raw.stdout, b"busy");
    let (code, _, err) = run(&url, &["job", Q, &f.active, "--payload", "json"]);
    assert_eq!(code, 1);
    assert!(err.contains("is not JSON"), "{err}");
    assert_one_line_error(&err);
}

#[test]
fn bad_input_is_one_line_and_exit_1() {
    let server = Server::start();
    let url = server.url();
    let missing = "JOB0NgWEfAEJfs";
    let cases: &[(&[&str], &str)] = &[
        (&["job", Q, missing], "no such job"),
        (&["job", Q, "JOB123"], "invalid branded id"),
        (&["job", "bad queue", missing], "invalid queue name"),
        (&["jobs", "emq"], "invalid queue name"),
        (&["stats", "a}b"], "invalid queue name"),
        (&["requeue", Q, "nope"], "invalid branded id"),
        (&["requeue", Q, missing], "no such job"),
        (&["remove", Q, missing, "--yes"], "no such job"),
        (
            &["jobs", Q, "--limit", "0"],
            "--limit must be greater than zero",
        ),
        (
            &["jobs", Q, "--since", "soon"],
            "cannot read \"soon\" as a time",
        ),
        (&["jobs"], "required"),
        (
            &["purge-dead", Q, "--older-than", "forever", "--yes"],
            "--older-than",
        ),
        (&["enqueue", Q], "give a payload"),
        (&["enqueue", Q, "x", "--at", "5m"], "absolute time"),
        (
            &["enqueue", Q, "x", "--in", "1m", "--id", missing],
            "cannot be used with",
        ),
        (&["frobnicate"], "unrecognized subcommand"),
        (
            &["--wire", "echomq:3.0.0", "queues"],
            "unknown wire version",
        ),
        (
            &["upgrade", "--from", "echomq:2.1.0", "--yes"],
            "an upgrade only moves forward",
        ),
    ];
    for (args, want) in cases {
        let (code, out, err) = run(&url, args);
        assert_eq!(code, 1, "emq {args:?}: {out} {err}");
        assert!(err.contains(want), "emq {args:?}: {err:?} lacks {want:?}");
        assert_one_line_error(&err);
    }
}

#[test]
fn a_refused_connection_is_exit_2_naming_the_url_without_its_password() {
    let url = format!("redis://:hunter2@127.0.0.1:{}/", free_port());
    for args in [
        &["queues"][..],
        &["doctor"][..],
        &["job", Q, "JOB0NgWEfAEJfs"][..],
    ] {
        let (code, _, err) = run(&url, args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains("redis://:***@127.0.0.1:"), "{err}");
        assert!(!err.contains("hunter2"), "{err}");
        assert_one_line_error(&err);
    }
    let (code, _, err) = run("redis://:hunter2@[bad", &["queues"]);
    assert_eq!(code, 1, "{err}");
    assert!(!err.contains("hunter2"), "{err}");
}

#[test]
fn a_fence_mismatch_is_exit_2_naming_the_value_found() {
    let server = Server::start();
    let _: () = server.raw().set("{emq}:version", "echomq:9.9.9").unwrap();
    let (code, _, err) = run(&server.url(), &["queues"]);
    assert_eq!(code, 2);
    assert!(err.contains("\"echomq:9.9.9\""), "{err}");
    assert_one_line_error(&err);
    let (code, out, _) = run(&server.url(), &["doctor", "--sample", "10ms"]);
    assert_eq!(code, 2);
    assert!(
        out.contains("FAIL  fence") && out.contains("echomq:9.9.9"),
        "{out}"
    );
}

fn version_record(server: &Server) -> String {
    server.raw().get("{emq}:version").unwrap()
}

/// Every key of the deployment (SCAN), sorted.
fn all_keys(server: &Server) -> Vec<String> {
    let mut raw = server.raw();
    let mut keys: Vec<String> = raw.scan().unwrap().map(Result::unwrap).collect();
    keys.sort();
    keys
}

/// A deployment fenced at echomq:2.0.0, filled by `emq --wire echomq:2.0.0`.
fn deployment_at_2_0_0(server: &Server) {
    let url = server.url();
    for payload in ["a", "b", "c"] {
        let (code, _, err) = run(&url, &["--wire", "echomq:2.0.0", "enqueue", Q, payload]);
        assert_eq!(code, 0, "{err}");
    }
    assert_eq!(version_record(server), "echomq:2.0.0");
}

#[test]
fn wire_2_0_0_operates_a_deployment_not_yet_upgraded() {
    let server = Server::start();
    let url = server.url();
    deployment_at_2_0_0(&server);

    // This emq's default (2.1.0) is fenced off, and told what to do.
    let (code, _, err) = run(&url, &["stats", Q]);
    assert_eq!(code, 2, "{err}");
    assert_one_line_error(&err);
    assert!(err.contains("{emq}:version is \"echomq:2.0.0\""), "{err}");
    assert!(
        err.contains("--wire echomq:2.0.0") && err.contains("emq upgrade"),
        "{err}"
    );
    // --wire / EMQ_WIRE speak 2.0.0: stats work, the record stays.
    let v = json(&url, &["--wire", "echomq:2.0.0", "stats", Q]);
    assert_eq!(v[0]["pending"], 3, "{v}");
    let out = emq(&url)
        .env("EMQ_WIRE", "2.0.0")
        .args(["--json", "stats", Q])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v[0]["pending"], 3, "{v}");
    assert_eq!(version_record(&server), "echomq:2.0.0");

    // The doctor names the version and warns: run emq upgrade. The queue
    // checks still run (at the record's version).
    let (code, out, _) = run(&url, &["doctor", "--sample", "10ms"]);
    assert_eq!(code, 1, "{out}");
    let fence = out.lines().find(|l| l.contains("fence")).unwrap();
    assert!(
        fence.starts_with("WARN  fence")
            && fence.contains("fenced at echomq:2.0.0")
            && fence.contains("run emq upgrade"),
        "{out}"
    );
    assert!(out.contains("PASS  queues            1 queue(s)"), "{out}");
    assert!(!out.contains("FAIL"), "{out}");
}

#[test]
fn upgrade_moves_a_2_0_0_deployment_forward_after_its_probes() {
    let server = Server::start();
    let url = server.url();
    deployment_at_2_0_0(&server);
    let before = all_keys(&server);

    // Off a terminal without --yes: refused, nothing changed.
    let (code, out, err) = run(&url, &["upgrade"]);
    assert_eq!(code, 1, "{out} {err}");
    assert_one_line_error(&err);
    assert!(
        err.contains("needs --yes") && err.contains("nothing changed"),
        "{err}"
    );
    assert_eq!(version_record(&server), "echomq:2.0.0");
    assert_eq!(all_keys(&server), before);

    // A dry run checks and probes, and leaves the record (and no scratch
    // keys). A 2.0.0 runtime left behind (an `emq pump`) is running.
    let bystander = Proc::new(assert_cmd::cargo::cargo_bin("emq"))
        .env("EMQ_URL", &url)
        .env("EMQ_WIRE", "echomq:2.0.0")
        .args(["pump", Q])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until(|| {
        let list: String = redis::cmd("CLIENT")
            .arg("LIST")
            .query(&mut server.raw())
            .unwrap();
        list.contains("name=emq")
    });
    let v = json(&url, &["upgrade", "--dry-run"]);
    stop(bystander);
    assert_eq!(
        (
            &v["from"],
            &v["to"],
            &v["found"],
            &v["dry_run"],
            &v["upgraded"]
        ),
        (
            &Value::from("echomq:2.0.0"),
            &Value::from("echomq:2.1.0"),
            &Value::from("echomq:2.0.0"),
            &Value::from(true),
            &Value::from(false)
        ),
        "{v}"
    );
    assert_eq!(v["already_current"], false);
    assert_eq!(v["probes"].as_array().unwrap().len(), 9, "{v}");
    let scratch = v["scratch_queue"].as_str().unwrap().to_string();
    assert!(scratch.starts_with("emq-probe-"), "{v}");
    // Redis 7.0 cannot tell library versions; Valkey / Redis 7.2 can (and
    // the upgrader's own connection is not listed).
    let older = v["older_clients"].as_array().unwrap();
    if v["clients_known"] == true {
        assert_eq!(older.len(), 1, "{v}");
        let line = older[0].as_str().unwrap();
        assert!(
            line.contains("name=emq") && line.contains("lib-ver=echomq:2.0.0"),
            "{v}"
        );
    } else {
        assert_eq!(v["clients_known"], false, "{v}");
        assert!(older.is_empty(), "{v}");
    }
    assert_eq!(version_record(&server), "echomq:2.0.0");
    assert!(
        !all_keys(&server).iter().any(|k| k.contains("emq-probe-")),
        "{:?}",
        all_keys(&server)
    );

    // --yes: a progress line per step, then the record moves.
    let (code, out, err) = run(&url, &["upgrade", "--yes"]);
    assert_eq!(code, 0, "{out} {err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0], "upgrade   {emq}:version echomq:2.0.0 -> echomq:2.1.0",
        "{out}"
    );
    assert_eq!(
        lines[1],
        "record    {emq}:version holds echomq:2.0.0, as expected"
    );
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.starts_with("probe     PASS  "))
            .count(),
        9,
        "{out}"
    );
    let scratch_line = lines.iter().find(|l| l.starts_with("scratch   ")).unwrap();
    assert!(
        scratch_line.contains("deleted the probes' queue emq-probe-"),
        "{out}"
    );
    assert!(lines.iter().any(|l| l.starts_with("clients   ")), "{out}");
    assert_eq!(
        *lines.last().unwrap(),
        "record    {emq}:version now holds echomq:2.1.0"
    );
    // On the wire: the record, the 2.1.0 bundle, the jobs untouched, no scratch keys.
    assert_eq!(version_record(&server), "echomq:2.1.0");
    let bundle: String = server.raw().hget("{emq}:bundle", "bundle").unwrap();
    assert_eq!(
        bundle,
        echomq::scripts::bundle_sha1_for(echomq::WireVersion::V2_1_0)
    );
    assert_eq!(zcard(&server, "pending"), 3);
    let after = all_keys(&server);
    assert!(!after.iter().any(|k| k.contains("emq-probe-")), "{after:?}");
    assert_eq!(after, before);

    // Now the default emq works and 2.0.0 is the one refused, told to use 2.1.0.
    let v = json(&url, &["stats", Q]);
    assert_eq!(v[0]["pending"], 3);
    let (code, _, err) = run(&url, &["--wire", "echomq:2.0.0", "stats", Q]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("\"echomq:2.1.0\"") && err.contains("--wire echomq:2.1.0"),
        "{err}"
    );
    let (code, out, _) = run(&url, &["doctor", "--sample", "10ms"]);
    assert!(
        out.contains("PASS  fence             fenced at echomq:2.1.0"),
        "{code} {out}"
    );

    // Already there: says so and exits 0, with or without --yes.
    let (code, out, err) = run(&url, &["upgrade"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.trim(),
        "{emq}:version already holds echomq:2.1.0: nothing to do"
    );
    let v = json(&url, &["upgrade", "--yes"]);
    assert_eq!(v["already_current"], true, "{v}");
    assert_eq!(v["upgraded"], false, "{v}");

    // Never backward: one line, exit 1, the record stays.
    let (code, _, err) = run(&url, &["upgrade", "--to", "echomq:2.0.0", "--yes"]);
    assert_eq!(code, 1, "{err}");
    assert_one_line_error(&err);
    assert!(
        err.contains("backward") && err.contains("echomq:2.1.0"),
        "{err}"
    );
    assert_eq!(version_record(&server), "echomq:2.1.0");
}

#[test]
fn upgrade_refuses_a_record_holding_another_version() {
    let server = Server::start();
    let url = server.url();
    let _: () = server.raw().set("{emq}:version", "echomq:9.9.9").unwrap();
    let before = all_keys(&server);
    for args in [&["upgrade", "--yes"][..], &["upgrade", "--dry-run"][..]] {
        let (code, out, err) = run(&url, args);
        assert_eq!(code, 2, "{args:?}: {out} {err}");
        assert_one_line_error(&err);
        assert!(
            err.contains("\"echomq:9.9.9\"") && err.contains("echomq:2.0.0"),
            "{err}"
        );
        assert!(out.is_empty(), "{out}");
    }
    assert_eq!(version_record(&server), "echomq:9.9.9");
    assert_eq!(all_keys(&server), before);
}

#[test]
fn requeue_remove_and_purge_change_the_wire_and_say_so() {
    let server = Server::start();
    let url = server.url();
    let f = fill(&server);

    let (code, out, _) = run(&url, &["requeue", Q, &f.dead[0]]);
    assert_eq!(
        (code, out.trim()),
        (0, format!("requeued {}", f.dead[0]).as_str())
    );
    assert_eq!(zcard(&server, "dead"), 1);
    // Not dead (any more): refused, exit 1, the other id still done.
    let (code, out, err) = run(&url, &["requeue", Q, &f.dead[0], &f.dead[1]]);
    assert_eq!(code, 1);
    assert!(out.contains(&format!("requeued {}", f.dead[1])), "{out}");
    assert!(err.contains("not in dead"), "{err}");
    assert_eq!(zcard(&server, "dead"), 0);
    assert_eq!(zcard(&server, "pending"), 5);

    // remove: destructive, so not without --yes off a terminal.
    let (code, _, err) = run(&url, &["remove", Q, &f.pending[0]]);
    assert_eq!(code, 1);
    assert!(err.contains("refusing without --yes"), "{err}");
    assert!(row_exists(&server, &f.pending[0]));
    // One removable and one active job: the first goes, the second is refused (exit 1).
    let (code, out, err) = run(
        &url,
        &["--json", "remove", Q, &f.pending[0], &f.active, "--yes"],
    );
    assert_eq!(code, 1);
    assert!(err.contains("is active"), "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["removed"][0], f.pending[0].as_str());
    assert_eq!(v["refused"][0]["id"], f.active.as_str());
    assert!(!row_exists(&server, &f.pending[0]));
    assert!(row_exists(&server, &f.active));
}

#[test]
fn requeue_all_and_purge_dead_work_in_batches() {
    let server = Server::start();
    let url = server.url();
    let f = fill(&server);
    let (code, _, err) = run(&url, &["requeue", Q, "--all"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("Requeue all 2 dead jobs") && err.contains("--yes"),
        "{err}"
    );
    assert_eq!(zcard(&server, "dead"), 2);
    let (code, out, _) = run(&url, &["requeue", Q, "--all", "--yes"]);
    assert_eq!((code, out.trim()), (0, "requeued 2 dead jobs of orders"));
    assert_eq!(zcard(&server, "dead"), 0);
    let row: std::collections::HashMap<String, String> = server
        .raw()
        .hgetall(format!("emq:{{{Q}}}:job:{}", f.dead[0]))
        .unwrap();
    assert_eq!(row["state"], "pending");
    assert!(!row.contains_key("last_error"));

    // Kill them again (with a log line each), then purge.
    let mut raw = server.raw();
    for id in &f.dead {
        let _: () = raw.zrem(format!("emq:{{{Q}}}:pending"), id).unwrap();
        let _: () = raw.zadd(format!("emq:{{{Q}}}:dead"), id, 0).unwrap();
        let _: () = raw
            .hset(format!("emq:{{{Q}}}:job:{id}"), "state", "dead")
            .unwrap();
        let _: () = raw
            .rpush(format!("emq:{{{Q}}}:job:{id}:logs"), "line")
            .unwrap();
    }
    let (code, out, _) = run(&url, &["purge-dead", Q, "--older-than", "1d", "--yes"]);
    assert_eq!((code, out.trim()), (0, "deleted 0 dead jobs of orders"));
    let (code, _, err) = run(&url, &["purge-dead", Q]);
    assert_eq!(code, 1);
    assert!(err.contains("Delete all 2 dead jobs"), "{err}");
    let v = json(&url, &["purge-dead", Q, "--yes"]);
    assert_eq!(v, serde_json::json!({"queue": Q, "deleted": 2}));
    for id in &f.dead {
        assert!(!row_exists(&server, id));
        let logs: bool = raw.exists(format!("emq:{{{Q}}}:job:{id}:logs")).unwrap();
        assert!(!logs);
    }
}

#[test]
fn drain_pause_resume_and_enqueue() {
    let server = Server::start();
    let url = server.url();
    let f = fill(&server);

    let (code, out, _) = run(&url, &["pause", Q]);
    assert_eq!((code, out.trim()), (0, "paused orders"));
    let paused: bool = server
        .raw()
        .hexists(format!("emq:{{{Q}}}:meta"), "paused")
        .unwrap();
    assert!(paused);
    let (code, out, _) = run(&url, &["resume", Q]);
    assert_eq!((code, out.trim()), (0, "resumed orders"));
    let paused: bool = server
        .raw()
        .hexists(format!("emq:{{{Q}}}:meta"), "paused")
        .unwrap();
    assert!(!paused);

    let (code, _, err) = run(&url, &["drain", Q]);
    assert_eq!(code, 1);
    assert!(
        err.contains("Delete 3 pending jobs of orders? (1 active jobs are kept)"),
        "{err}"
    );
    assert_eq!(zcard(&server, "pending"), 3);
    let (code, out, _) = run(&url, &["drain", Q, "--yes"]);
    assert_eq!((code, out.trim()), (0, "deleted 3 waiting jobs of orders"));
    assert_eq!(zcard(&server, "pending"), 0);
    assert_eq!(zcard(&server, "schedule"), 1);
    assert!(row_exists(&server, &f.active));
    let (code, out, _) = run(&url, &["drain", Q, "--include-scheduled", "--yes"]);
    assert_eq!((code, out.trim()), (0, "deleted 1 waiting jobs of orders"));
    assert_eq!(zcard(&server, "schedule"), 0);

    // enqueue: an argument, a file, stdin, a delay, an id (idempotent).
    let v = json(&url, &["enqueue", Q, "hello"]);
    assert_eq!(
        (&v["state"], &v["duplicate"]),
        (&Value::from("pending"), &Value::from(false))
    );
    let id = v["id"].as_str().unwrap().to_string();
    assert_eq!(
        server
            .raw()
            .hget::<_, _, Vec<u8>>(format!("emq:{{{Q}}}:job:{id}"), "payload")
            .unwrap(),
        b"hello"
    );
    let dir = std::env::temp_dir().join(format!("emq-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("payload.bin");
    std::fs::write(&file, b"\x00\xfffile").unwrap();
    let v = json(&url, &["enqueue", Q, "--file", file.to_str().unwrap()]);
    let fid = v["id"].as_str().unwrap().to_string();
    let out = emq(&url)
        .args(["job", Q, &fid, "--payload", "raw"])
        .output()
        .unwrap();
    assert_eq!(out.stdout, b"\x00\xfffile");
    let out = emq(&url)
        .args(["enqueue", Q, "-"])
        .write_stdin("from stdin")
        .output()
        .unwrap();
    let sid = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let v = json(&url, &["job", Q, &sid]);
    assert_eq!(v["payload"], "from stdin");
    let v = json(&url, &["enqueue", Q, "later", "--in", "1h"]);
    assert_eq!(v["state"], "scheduled");
    assert_eq!(zcard(&server, "schedule"), 1);
    let (code, out, _) = run(&url, &["enqueue", Q, "again", "--id", &id]);
    assert_eq!(code, 0);
    assert!(out.contains("duplicate"), "{out}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn pause_resume_and_enqueue_publish_their_queue_events_before_exiting() {
    let server = Server::start();
    let url = server.url();
    let mut conn = redis::Client::open(url.as_str())
        .unwrap()
        .get_connection()
        .unwrap();
    let mut events = conn.as_pubsub();
    events.subscribe(format!("emq:{{{Q}}}:events")).unwrap();
    events
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut next = || {
        let payload: String = events.get_message().unwrap().get_payload().unwrap();
        let v: Value = serde_json::from_str(&payload).unwrap();
        v["event"].as_str().unwrap().to_string()
    };
    // Each process exits right after its change: its event must be out first.
    assert_eq!(run(&url, &["pause", Q]).0, 0);
    assert_eq!(next(), "paused");
    assert_eq!(run(&url, &["resume", Q]).0, 0);
    assert_eq!(next(), "resumed");
    assert_eq!(run(&url, &["enqueue", Q, "hello"]).0, 0);
    assert_eq!(next(), "added");
}

#[test]
fn drain_of_more_than_one_batch() {
    let server = Server::start();
    let url = server.url();
    let mut raw = server.raw();
    // 1,203 rows as the enqueue script writes them, in one pipeline.
    let mut pipe = redis::pipe();
    for _ in 0..1_203 {
        let id = echomq::id::mint_job_id();
        pipe.hset_multiple(
            format!("emq:{{{Q}}}:job:{id}"),
            &[("state", "pending"), ("attempts", "0"), ("payload", "x")],
        )
        .ignore()
        .zadd(format!("emq:{{{Q}}}:pending"), id.as_str(), 0)
        .ignore();
    }
    let _: () = pipe.query(&mut raw).unwrap();
    let (code, out, _) = run(&url, &["drain", Q, "--yes"]);
    assert_eq!(
        (code, out.trim()),
        (0, "deleted 1203 waiting jobs of orders")
    );
    let rows: Vec<String> = raw.keys(format!("emq:{{{Q}}}:job:*")).unwrap();
    assert!(rows.is_empty());
}

#[test]
fn watch_off_a_terminal_prints_plain_frames() {
    let server = Server::start();
    let url = server.url();
    fill(&server);
    let (code, out, _) = run(&url, &["watch", "--count", "2", "--interval", "100ms"]);
    assert_eq!(code, 0);
    assert_eq!(out.matches("OLDEST").count(), 2, "{out}");
    let line = out.lines().rfind(|l| l.starts_with("orders")).unwrap();
    let cells: Vec<&str> = line.split_whitespace().collect();
    // queue, pending 3, active 1, scheduled 1, dead 2, done/s, failed/s, fail%, oldest age
    assert_eq!(&cells[..5], ["orders", "3", "1", "1", "2"]);
    assert_eq!(cells[5], "0.0");
}

/// Start `emq pump …` as a child process.
fn spawn_pump(url: &str, args: &[&str]) -> Child {
    Proc::new(assert_cmd::cargo::cargo_bin("emq"))
        .env("EMQ_URL", url)
        .arg("pump")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn wait_until(mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(Instant::now() < deadline, "condition not reached in 20 s");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn pump_promotes_reaps_trims_and_stops_on_sigterm() {
    let server = Server::start();
    let url = server.url();
    let f = fill(&server);
    let mut raw = server.raw();
    // Make the scheduled job due and the active lease lapsed.
    let _: () = raw
        .zadd(format!("emq:{{{Q}}}:schedule"), &f.scheduled, 1)
        .unwrap();
    let _: () = raw
        .zadd(format!("emq:{{{Q}}}:active"), &f.active, 1)
        .unwrap();
    let pump = spawn_pump(&url, &[Q, "--interval", "50ms", "--dead-max-len", "1"]);
    wait_until(|| zcard(&server, "pending") == 5 && zcard(&server, "dead") == 1);
    assert_eq!(zcard(&server, "schedule"), 0);
    assert_eq!(zcard(&server, "active"), 0);
    // The newer dead job is the one kept.
    let left: Vec<String> = raw.zrange(format!("emq:{{{Q}}}:dead"), 0, -1).unwrap();
    assert_eq!(left, vec![f.dead[1].clone()]);
    let status = Proc::new("kill")
        .args(["-TERM", &pump.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = pump.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("promoted 1, reaped 1, dead trimmed 1"),
        "{err}"
    );
    assert!(err.trim_end().ends_with("emq pump: stopped"), "{err}");
}

#[test]
fn pump_dead_letters_a_lapsed_job_at_max_stalls() {
    let server = Server::start();
    let url = server.url();
    let f = fill(&server);
    let mut raw = server.raw();
    // The active job's holder died: its lease lapsed. A cap of 1 forgives no stall.
    let _: () = raw
        .zadd(format!("emq:{{{Q}}}:active"), &f.active, 1)
        .unwrap();
    let pump = spawn_pump(&url, &[Q, "--interval", "50ms", "--max-stalls", "1"]);
    wait_until(|| zcard(&server, "dead") == 3);
    assert_eq!(zcard(&server, "active"), 0);
    assert_eq!(zcard(&server, "pending"), 3);
    let row: std::collections::HashMap<String, String> = raw
        .hgetall(format!("emq:{{{Q}}}:job:{}", f.active))
        .unwrap();
    assert_eq!(row["state"], "dead");
    assert_eq!(row["last_error"], "stalled");
    assert_eq!(row["stalled"], "1");
    let status = Proc::new("kill")
        .args(["-TERM", &pump.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = pump.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("reaped 1 (1 at the stall cap went dead)"),
        "{err}"
    );
    // A cap of zero is refused before any I/O.
    let (code, _, err) = run(&url, &["pump", Q, "--max-stalls", "0"]);
    assert_eq!(code, 1, "{err}");
}

#[test]
fn pump_fires_repeatable_jobs_one_job_per_slot() {
    let server = Server::start();
    let url = server.url();
    let client =
        echomq::blocking::Client::connect(&url, echomq::ConnectOptions::default()).unwrap();
    let every = echomq::RepeatOptions {
        every_ms: Some(50),
        limit: Some(3),
        ..echomq::RepeatOptions::default()
    };
    client.upsert_repeat(Q, "tick", b"t", &every).unwrap();
    // Two pumps race on the one repeat: still one job per slot.
    let pumps = [
        spawn_pump(&url, &[Q, "--interval", "20ms"]),
        spawn_pump(&url, &[Q, "--interval", "20ms"]),
    ];
    wait_until(|| client.list_repeats(Q).unwrap().is_empty());
    let mut fired = 0;
    for pump in pumps {
        let status = Proc::new("kill")
            .args(["-TERM", &pump.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let out = pump.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        let err = String::from_utf8_lossy(&out.stderr);
        fired += err
            .lines()
            .filter_map(|l| {
                l.rsplit_once("repeats fired ")
                    .map(|(_, n)| n.parse::<u64>().unwrap())
            })
            .sum::<u64>();
    }
    assert_eq!((fired, zcard(&server, "pending")), (3, 3));
}

/// A redis-server with extra arguments (the doctor's configurations).
struct Configured {
    port: u16,
    child: Child,
    dir: std::path::PathBuf,
}

impl Configured {
    fn start(extra: &[&str]) -> Configured {
        let port = free_port();
        let dir = std::env::temp_dir().join(format!("emq-doctor-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let child = Proc::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--dir", dir.to_str().unwrap()])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let url = format!("redis://127.0.0.1:{port}/");
        wait_until(|| {
            redis::Client::open(url.as_str())
                .and_then(|c| c.get_connection())
                .and_then(|mut c| redis::cmd("PING").query::<String>(&mut c))
                .is_ok()
        });
        Configured { port, child, dir }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }
}

impl Drop for Configured {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn doctor_fails_on_an_evicting_server() {
    let server = Configured::start(&[
        "--maxmemory",
        "100mb",
        "--maxmemory-policy",
        "allkeys-lru",
        "--appendonly",
        "yes",
    ]);
    let (code, out, _) = run(&server.url(), &["doctor", "--sample", "10ms"]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("FAIL  maxmemory-policy  allkeys-lru can silently evict jobs"),
        "{out}"
    );
}

#[test]
fn doctor_passes_on_noeviction_with_aof() {
    let server = Configured::start(&[
        "--maxmemory-policy",
        "noeviction",
        "--appendonly",
        "yes",
        "--save",
        "",
    ]);
    let url = server.url();
    let (code, out, _) = run(&url, &["enqueue", Q, "x"]);
    assert_eq!(code, 0, "{out}");
    let (code, out, _) = run(&url, &["doctor", "--sample", "10ms"]);
    // The latency check measures this host, not the deployment: on a loaded
    // machine one PING may well take more than 50 ms. It must run and give
    // a verdict with the round trip; every other check must pass.
    let latency = out
        .lines()
        .find(|l| l.contains("  latency  "))
        .unwrap_or_else(|| panic!("no latency line: {out}"));
    let latency_warned = latency.starts_with("WARN  ");
    assert!(
        (latency.starts_with("PASS  ") || latency_warned) && latency.contains("round trip "),
        "{out}"
    );
    assert_eq!(code, i32::from(latency_warned), "{out}");
    for line in out.lines().filter(|l| *l != latency) {
        assert!(line.starts_with("PASS  "), "{out}");
    }
    for name in [
        "server",
        "fence",
        "bundle",
        "maxmemory-policy",
        "persistence",
        "keyspace-events",
        "cluster",
        "clock",
        "queues",
        "leases",
        "repeats",
        "dead sets",
    ] {
        assert!(out.contains(&format!("PASS  {name:<16}")), "{name}: {out}");
    }
    assert!(out.contains("Redis ") && out.contains("AOF on"), "{out}");
    // The test server publishes no keyspace events: the doctor says how to.
    assert!(
        out.contains("CONFIG SET notify-keyspace-events Kz"),
        "{out}"
    );
    let (_, out, _) = run(&url, &["--json", "doctor", "--sample", "10ms"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    let checks = v["checks"].as_array().unwrap();
    for c in checks {
        if c["check"] != "latency" {
            assert_eq!(c["status"], "PASS", "{v}");
        }
    }
    let worst = if checks.iter().all(|c| c["status"] == "PASS") {
        "PASS"
    } else {
        "WARN"
    };
    assert_eq!(v["status"], worst, "{v}");
    assert_eq!(v["server"], "redis");
}

#[test]
fn doctor_warns_on_no_persistence_stuck_leases_and_growing_dead_sets() {
    use std::io::BufRead;
    let server = Server::start();
    let url = server.url();
    let client = echomq::blocking::Client::connect(&url, Default::default()).unwrap();
    client.enqueue(Q, b"stuck", Default::default()).unwrap();
    let stuck = client.claim(Q, 60_000).unwrap().unwrap();
    // Its holder died long ago: the lease lapsed at 1 ms after the epoch.
    let _: () = server
        .raw()
        .zadd(format!("emq:{{{Q}}}:active"), stuck.id.as_str(), 1)
        .unwrap();
    // The doctor says on stderr when its first reading of the dead sets is
    // taken; a dead-letter after that line is inside the sample, however
    // slow the host. (It ends the sample at the first growth it sees.)
    let mut doctor = Proc::new(assert_cmd::cargo::cargo_bin("emq"))
        .env("EMQ_URL", &url)
        .args(["doctor", "--sample", "5m"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = String::new();
    std::io::BufReader::new(doctor.stderr.take().unwrap())
        .read_line(&mut said)
        .unwrap();
    assert!(
        said.starts_with("emq doctor: watching 1 dead set(s)"),
        "{said}"
    );
    client.enqueue(Q, b"x", Default::default()).unwrap();
    let job = client.claim(Q, 60_000).unwrap().unwrap();
    client
        .retry(Q, job.id.as_str(), job.token, 0, 1, "late")
        .unwrap();
    let out = doctor.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let out = String::from_utf8_lossy(&out.stdout).into_owned();
    let lines: Vec<&str> = out.lines().collect();
    let line = |name: &str| -> &str {
        lines
            .iter()
            .find(|l| l[6..].starts_with(&format!("{name:<16}")))
            .unwrap_or_else(|| panic!("no {name} line: {out}"))
    };
    assert!(
        line("persistence").starts_with("WARN  persistence       no AOF and no RDB"),
        "{out}"
    );
    assert!(
        line("leases").starts_with("WARN") && line("leases").contains("orders (1)"),
        "{out}"
    );
    assert!(
        line("dead sets").starts_with("WARN") && line("dead sets").contains("orders (+1)"),
        "{out}"
    );
    assert!(!out.contains("FAIL"), "{out}");
    // Without a dead-letter the whole window passes quietly.
    let (_, out, err) = run(&url, &["doctor", "--sample", "10ms"]);
    assert!(
        out.contains("PASS  dead sets         no dead set grew in 10ms"),
        "{out}"
    );
    assert!(
        err.starts_with("emq doctor: watching 1 dead set(s) for 10ms"),
        "{err}"
    );
}

/// Start `emq ARGS…` serving HTTP; answer the child and the address its
/// first stdout line names (`… http://ADDR/…`).
fn spawn_server(url: &str, args: &[&str]) -> (Child, String) {
    use std::io::BufRead;
    let mut child = Proc::new(assert_cmd::cargo::cargo_bin("emq"))
        .env("EMQ_URL", url)
        .env_remove("EMQ_DASHBOARD_TOKEN")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let addr = first
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .unwrap_or_else(|| panic!("no address in {first:?}"))
        .to_string();
    (child, addr)
}

/// A plain HTTP/1.0 GET: the status code and the body.
fn http_get(addr: &str, path: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    write!(stream, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response[9..12].parse().unwrap();
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b)
        .unwrap_or("");
    (status, body.to_string())
}

fn stop(child: Child) {
    let status = Proc::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn metrics_serves_prometheus_text_equal_to_the_sets() {
    let server = Server::start();
    let url = server.url();
    fill(&server);
    let (child, addr) = spawn_server(&url, &["metrics", "--listen", "127.0.0.1:0"]);
    let (status, body) = http_get(&addr, "/metrics");
    assert_eq!(status, 200, "{body}");
    for (metric, set) in [
        ("echomq_pending_jobs", "pending"),
        ("echomq_active_jobs", "active"),
        ("echomq_scheduled_jobs", "schedule"),
        ("echomq_dead_jobs", "dead"),
    ] {
        let line = format!("{metric}{{queue=\"{Q}\"}} {}", zcard(&server, set));
        assert!(body.lines().any(|l| l == line), "{line} not in\n{body}");
    }
    let (status, _) = http_get(&addr, "/nothing-here");
    assert_eq!(status, 404);
    stop(child);
}

#[test]
fn dashboard_serves_the_page_and_every_queue_when_none_is_named() {
    let server = Server::start();
    let url = server.url();
    fill(&server);
    let (child, addr) = spawn_server(&url, &["dashboard", "--listen", "127.0.0.1:0"]);
    let (status, page) = http_get(&addr, "/");
    assert_eq!(status, 200);
    assert!(page.contains("<html"), "{page}");
    // The overview fills in after the dashboard's first sample.
    let named = format!("\"{Q}\"");
    wait_until(|| {
        let (status, overview) = http_get(&addr, "/api/overview");
        status == 200 && overview.contains(&named)
    });
    stop(child);
    // A public address without a token is refused before anything listens.
    let (code, _, err) = run(&url, &["dashboard", "--listen", "0.0.0.0:0", Q]);
    assert_eq!(code, 1);
    assert_one_line_error(&err);
}

/// A loopback 3+3 cluster from scripts/cluster.sh (free ports), stopped on drop.
struct LoopbackCluster {
    dir: std::path::PathBuf,
    url: String,
    first_port: String,
}

impl LoopbackCluster {
    fn script() -> &'static str {
        concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/cluster.sh")
    }

    fn start() -> LoopbackCluster {
        let dir = std::env::temp_dir().join(format!("emq-cli-cluster-{}", std::process::id()));
        let out = Proc::new("bash")
            .arg(Self::script())
            .arg("start")
            .arg(&dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "cluster.sh: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let url = String::from_utf8(out.stdout).unwrap().trim().to_string();
        let first_port = std::fs::read_to_string(dir.join("ports"))
            .unwrap()
            .lines()
            .next()
            .unwrap()
            .to_string();
        LoopbackCluster {
            dir,
            url,
            first_port,
        }
    }
}

impl Drop for LoopbackCluster {
    fn drop(&mut self) {
        let _ = Proc::new("bash")
            .arg(Self::script())
            .arg("stop")
            .arg(&self.dir)
            .status();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn doctor_reports_cluster_mode_and_names_the_fix_for_a_url_of_the_wrong_kind() {
    let cluster = LoopbackCluster::start();
    let (code, out, err) = run(&cluster.url, &["enqueue", Q, "x"]);
    assert_eq!(code, 0, "{out}{err}");
    // No persistence on the loopback nodes: a warning, not a failure.
    let (code, out, _) = run(&cluster.url, &["doctor", "--sample", "10ms"]);
    assert_eq!(code, 1, "{out}");
    let line = |status: &str, name: &str, detail: &str| format!("{status}  {name:<16}  {detail}");
    for (name, detail) in [
        ("cluster", "cluster mode: 3 master(s), cluster_state ok"),
        ("server", "Redis "),
        ("fence", "fenced at echomq:2.1.0"),
        ("queues", "1 queue(s)"),
    ] {
        assert!(out.contains(&line("PASS", name, detail)), "{name}: {out}");
    }

    // A standalone URL at a cluster node.
    let node = format!("redis://127.0.0.1:{}/", cluster.first_port);
    let (code, out, _) = run(&node, &["doctor", "--sample", "10ms"]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("FAIL  cluster") && out.contains("use redis+cluster://"),
        "{out}"
    );
    let (code, _, err) = run(&node, &["stats"]);
    assert_ne!(code, 0);
    assert_one_line_error(&err);
    assert!(err.contains("redis+cluster://"), "{err}");

    // A cluster URL at a standalone server.
    let server = Server::start();
    let wrong = format!("redis+cluster://127.0.0.1:{}/", server.port);
    let (code, out, _) = run(&wrong, &["doctor", "--sample", "10ms"]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("FAIL  cluster") && out.contains("use redis://"),
        "{out}"
    );
    let (code, _, err) = run(&wrong, &["stats"]);
    assert_ne!(code, 0);
    assert_one_line_error(&err);
    assert!(err.contains("redis://"), "{err}");
}

/// A blocking client of the test's server (for setups without `fill.py`).
fn client_of(url: &str) -> echomq::blocking::Client {
    echomq::blocking::Client::connect(url, echomq::ConnectOptions::default()).unwrap()
}

#[test]
fn watch_with_json_prints_one_object_per_refresh() {
    let server = Server::start();
    let url = server.url();
    let client = client_of(&url);
    client.enqueue(Q, b"a", Default::default()).unwrap();
    client.enqueue(Q, b"b", Default::default()).unwrap();
    let (code, out, err) = run(
        &url,
        &["--json", "watch", "--count", "2", "--interval", "100ms"],
    );
    assert_eq!(code, 0, "{err}");
    let frames: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {out}")))
        .collect();
    assert_eq!(frames.len(), 2, "{out}");
    for f in &frames {
        assert!(f["at_ms"].as_u64().unwrap() > 0, "{f}");
        let q = &f["queues"][0];
        assert_eq!(
            (&q["queue"], &q["pending"]),
            (&Value::from(Q), &Value::from(2))
        );
        assert_eq!(q["paused"], false);
        assert!(q["oldest_pending_age_ms"].is_u64(), "{f}");
        assert!(q["fail_ratio"].is_null(), "{f}");
    }
    assert!(frames[0]["queues"][0]["completed_per_s"].is_null());
    assert_eq!(frames[1]["queues"][0]["completed_per_s"], 0.0);
    assert_eq!(frames[1]["queues"][0]["failed_per_s"], 0.0);
}

#[test]
fn pump_with_json_prints_one_object_per_tick() {
    use std::io::BufRead;
    let server = Server::start();
    let url = server.url();
    let client = client_of(&url);
    let later = client
        .enqueue(
            Q,
            b"x",
            echomq::EnqueueOptions::default().delay_ms(3_600_000),
        )
        .unwrap();
    // Due now: the first tick promotes it.
    let _: () = server
        .raw()
        .zadd(format!("emq:{{{Q}}}:schedule"), later.id.as_str(), 1)
        .unwrap();
    let mut pump = Proc::new(assert_cmd::cargo::cargo_bin("emq"))
        .env("EMQ_URL", &url)
        .args(["--json", "pump", Q, "--interval", "50ms"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Lines are read on a thread so a silent pump fails the test in a minute
    // instead of hanging it.
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = pump.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                return;
            }
        }
    });
    let mut ticks: Vec<Value> = Vec::new();
    while ticks.len() < 3 {
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("a tick line within a minute");
        ticks.push(serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}")));
    }
    stop(pump);
    for t in &ticks {
        assert!(t["at_ms"].as_u64().unwrap() > 0, "{t}");
        assert_eq!(t["queues"].as_array().unwrap().len(), 1, "{t}");
        assert_eq!(t["queues"][0]["queue"], Q, "{t}");
    }
    let first = &ticks[0]["queues"][0];
    assert_eq!(
        serde_json::json!({
            "queue": Q, "promoted": 1, "reaped": 0, "stall_dead": 0,
            "repeats_fired": 0, "dead_trimmed": 0,
        }),
        *first
    );
    // Quiet ticks are reported too.
    assert_eq!(ticks[2]["queues"][0]["promoted"], 0, "{}", ticks[2]);
    assert_eq!(zcard(&server, "pending"), 1);
    assert_eq!(zcard(&server, "schedule"), 0);
}

#[test]
fn metrics_and_dashboard_with_json_announce_their_url_as_json() {
    use std::io::BufRead;
    let server = Server::start();
    let url = server.url();
    client_of(&url)
        .enqueue(Q, b"x", Default::default())
        .unwrap();
    for (args, path) in [
        (
            &["--json", "metrics", "--listen", "127.0.0.1:0"][..],
            "/metrics",
        ),
        (
            &["--json", "dashboard", "--listen", "127.0.0.1:0", Q][..],
            "/",
        ),
    ] {
        let mut child = Proc::new(assert_cmd::cargo::cargo_bin("emq"))
            .env("EMQ_URL", &url)
            .env_remove("EMQ_DASHBOARD_TOKEN")
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut first = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        let v: Value = serde_json::from_str(&first).unwrap_or_else(|e| panic!("{e}: {first}"));
        let served = v["url"].as_str().unwrap();
        let addr = served
            .strip_prefix("http://")
            .and_then(|rest| rest.strip_suffix(path))
            .unwrap_or_else(|| panic!("{served}"));
        // What is served does not change: Prometheus text, the page.
        let (status, body) = http_get(addr, path);
        assert_eq!(status, 200, "{body}");
        if path == "/metrics" {
            assert!(
                body.lines()
                    .any(|l| l == format!("echomq_pending_jobs{{queue=\"{Q}\"}} 1")),
                "{body}"
            );
        } else {
            assert!(body.contains("<html"), "{body}");
        }
        stop(child);
    }
}

#[test]
fn upgrade_dry_run_says_dry_run_when_the_record_is_already_current() {
    let server = Server::start();
    let url = server.url();
    client_of(&url)
        .enqueue(Q, b"x", Default::default())
        .unwrap();
    let v = json(&url, &["upgrade", "--dry-run"]);
    assert_eq!(
        (&v["already_current"], &v["dry_run"], &v["upgraded"]),
        (&Value::from(true), &Value::from(true), &Value::from(false)),
        "{v}"
    );
    let v = json(&url, &["upgrade", "--yes"]);
    assert_eq!(
        (&v["already_current"], &v["dry_run"]),
        (&Value::from(true), &Value::from(false))
    );
    assert_eq!(version_record(&server), "echomq:2.1.0");
}

/// A repeat record's field, read raw.
fn repeat_field(server: &Server, name: &str, field: &str) -> Option<String> {
    server
        .raw()
        .hget(format!("emq:{{{Q}}}:repeat:{name}"), field)
        .unwrap()
}

#[test]
fn doctor_warns_when_another_pump_advanced_a_repeat_off_its_grid() {
    let server = Server::start();
    let url = server.url();
    let client = client_of(&url);
    let hour = 3_600_000u64;
    // Far in the future: no pump fires them during the test.
    let start = client.server_now_ms().unwrap() + 24 * hour;
    let hourly = echomq::RepeatOptions {
        every_ms: Some(hour),
        start_at: Some(start),
        ..Default::default()
    };
    let nightly = echomq::RepeatOptions {
        cron: Some("0 3 * * *".into()),
        start_at: Some(start),
        ..Default::default()
    };
    client.upsert_repeat(Q, "hourly", b"h", &hourly).unwrap();
    client.upsert_repeat(Q, "nightly", b"n", &nightly).unwrap();
    let repeats_line = |out: &str| -> String {
        out.lines()
            .find(|l| l[6..].starts_with("repeats "))
            .unwrap_or_else(|| panic!("no repeats line: {out}"))
            .to_string()
    };
    // As EchoMQ's pump leaves a fired record: count 1, the last slot one
    // interval before the next.
    let slot: u64 = server
        .raw()
        .zscore(format!("emq:{{{Q}}}:repeat"), "hourly")
        .unwrap();
    let _: () = server
        .raw()
        .hset_multiple(
            format!("emq:{{{Q}}}:repeat:hourly"),
            &[
                ("count", "1".to_string()),
                ("last_slot", (slot - hour).to_string()),
            ],
        )
        .unwrap();
    let (_, out, _) = run(&url, &["doctor", "--sample", "10ms"]);
    let line = repeats_line(&out);
    assert!(line.starts_with("PASS  repeats "), "{out}");
    assert!(!line[24..].contains("  "), "one sentence: {line}");
    assert!(
        line.contains("orders/nightly (cron: it deletes the record)")
            && !line.contains("orders/hourly"),
        "{line}"
    );
    // As the reference's pump leaves it: its host's now + every_ms, count and
    // last_slot untouched.
    let _: () = server
        .raw()
        .zadd(format!("emq:{{{Q}}}:repeat"), "hourly", slot + 1_234)
        .unwrap();
    let (code, out, _) = run(&url, &["doctor", "--sample", "10ms"]);
    assert_eq!(code, 1, "{out}");
    let line = repeats_line(&out);
    assert!(line.starts_with("WARN  repeats "), "{out}");
    assert!(!line[24..].contains("  "), "one sentence: {line}");
    assert!(
        line.contains("advanced orders/hourly off its grid") && line.contains("orders/nightly"),
        "{line}"
    );
    let (_, out, _) = run(&url, &["--json", "doctor", "--sample", "10ms"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    let check = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "repeats")
        .unwrap();
    assert_eq!(check["status"], "WARN", "{v}");
    // The doctor only reads: the records are as planted.
    assert_eq!(
        repeat_field(&server, "hourly", "count").as_deref(),
        Some("1")
    );
    assert!(repeat_field(&server, "nightly", "cron").is_some());
}

#[test]
fn pump_stops_on_sigterm_while_a_round_waits_on_the_server() {
    use std::io::BufRead;
    let server = Server::start();
    let url = server.url();
    let mut pump = Proc::new(assert_cmd::cargo::cargo_bin("emq"))
        .env("EMQ_URL", &url)
        .args(["--json", "pump", Q, "--interval", "50ms"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut first = String::new();
    let mut lines = std::io::BufReader::new(pump.stdout.take().unwrap());
    lines.read_line(&mut first).unwrap();
    assert!(first.contains("\"promoted\":0"), "{first}");
    // The server stops answering scripts (as a server gone or overloaded
    // does); wait until the pump's script is the one held.
    let mut raw = server.raw();
    let _: () = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(120_000)
        .arg("WRITE")
        .query(&mut raw)
        .unwrap();
    wait_until(|| {
        let list: String = redis::cmd("CLIENT").arg("LIST").query(&mut raw).unwrap();
        list.lines()
            .any(|l| l.contains("name=emq ") && l.contains("flags=b") && l.contains("cmd=evalsha"))
    });
    let status = Proc::new("kill")
        .args(["-TERM", &pump.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    // Generous: a pump that waits for its round to end takes 30 s (the
    // response timeout) or until the pause is over.
    let deadline = Instant::now() + Duration::from_secs(20);
    let code = loop {
        if let Some(status) = pump.try_wait().unwrap() {
            break status.code();
        }
        if Instant::now() > deadline {
            let _ = pump.kill();
            let _ = pump.wait();
            panic!("emq pump still running 20 s after SIGTERM, its round held by the server");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(code, Some(0));
}
