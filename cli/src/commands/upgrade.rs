//! `emq upgrade`: move the deployment's `{emq}:version` forward (PROTOCOL.md
//! §8) with the core's `upgrade_protocol_with`, printing a line per step and
//! asking before the record moves. The order of the steps (check the record,
//! probe on a scratch queue, list older clients, compare-and-set) is the
//! core's; this file only finds out where the record stands, words it and asks.

use clap::Args;
use echomq::{ErrorKind, UpgradeReport, UpgradeStep, WireVersion};
use serde_json::{json, Value};

use super::Ctx;
use crate::fail::{Fail, EXIT_OK};
use crate::{out, parse_wire};

#[derive(Debug, Args)]
pub struct UpgradeArgs {
    /// The version the record must hold now (default: the one before --to).
    #[arg(long, value_name = "VERSION", value_parser = parse_wire)]
    pub from: Option<WireVersion>,
    /// The version to move the record to (default: this emq's newest).
    #[arg(long, value_name = "VERSION", value_parser = parse_wire)]
    pub to: Option<WireVersion>,
    /// Do not ask (required when not on a terminal).
    #[arg(long)]
    pub yes: bool,
    /// Check the record, run the probes and list older clients; move nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// The version just before `v`, if any.
fn previous(v: WireVersion) -> Option<WireVersion> {
    let at = WireVersion::ALL.iter().position(|&x| x == v)?;
    at.checked_sub(1).map(|i| WireVersion::ALL[i])
}

/// Where the record stands, found by connecting speaking `to` (the fence is
/// the check: it passes only when the record holds `to`, or claims a fresh
/// keyspace for `to`, as any client speaking `to` would).
enum Record {
    AlreadyAt,
    Holds(String),
}

async fn where_the_record_stands(ctx: &Ctx, to: WireVersion) -> Result<Record, Fail> {
    match echomq::Client::connect(&ctx.url, ctx.options(to)).await {
        Ok(client) => {
            client.close();
            Ok(Record::AlreadyAt)
        }
        Err(e) if e.kind() == ErrorKind::VersionFence => {
            Ok(Record::Holds(e.found().unwrap_or_default().to_string()))
        }
        Err(e) => Err(e.into()),
    }
}

pub async fn upgrade(ctx: &Ctx, a: UpgradeArgs) -> Result<i32, Fail> {
    let to = a.to.unwrap_or(WireVersion::NEWEST);
    let from = a.from.or_else(|| previous(to));
    if let Some(from) = from {
        if from >= to {
            return Err(Fail::input(format!(
                "an upgrade only moves forward: --from {from} --to {to}"
            )));
        }
    }
    let found = match where_the_record_stands(ctx, to).await? {
        Record::AlreadyAt => return already(ctx, from, to, a.dry_run),
        Record::Holds(found) => found,
    };
    let known = WireVersion::parse(&found).ok();
    if let Some(newer) = known.filter(|&v| v > to) {
        return Err(Fail::input(format!(
            "refusing to move {{emq}}:version backward: it holds {newer}, --to is {to} (an upgrade never moves the record back)"
        )));
    }
    let from = match from {
        Some(from) if from.as_str() == found => from,
        _ => {
            let expected = from.map_or("a version before it".to_string(), |f| f.to_string());
            let hint = match known {
                Some(v) if v < to => format!(": run emq upgrade --from {v} --to {to}"),
                _ => String::new(),
            };
            return Err(Fail::deployment(format!(
                "refusing to upgrade to {to}: {{emq}}:version holds {found:?}, not the expected {expected}{hint}"
            )));
        }
    };

    // Refuse before probing when the answer could only be "no".
    if !a.dry_run && !a.yes && !out::on_terminal() {
        return Err(Fail::input(format!(
            "moving {{emq}}:version from {from} to {to} needs --yes when not on a terminal; nothing changed \
             (--dry-run shows the checks)"
        )));
    }

    let human = !ctx.json;
    if human {
        println!(
            "upgrade   {{emq}}:version {from} -> {to}{}",
            if a.dry_run { " (dry run)" } else { "" }
        );
    }
    let client = ctx.connect_speaking(from).await?;
    let on_step = |step: UpgradeStep<'_>| {
        if human {
            print_step(step, to);
        }
    };
    let mut declined = None;
    let confirm = |report: &UpgradeReport| {
        let question = match (report.clients_known, report.older_clients.len()) {
            (true, 0) => format!("move {{emq}}:version from {from} to {to}?"),
            (true, n) => format!(
                "move {{emq}}:version from {from} to {to}? {n} connection(s) listed above still speak an older version and will be refused when they reconnect"
            ),
            (false, _) => format!(
                "move {{emq}}:version from {from} to {to}? Runtimes still speaking {from} are refused when they reconnect"
            ),
        };
        match out::confirm(&question, a.yes) {
            Ok(()) => true,
            Err(fail) => {
                declined = Some(fail);
                false
            }
        }
    };
    let report = client
        .upgrade_protocol_with(from, to, a.dry_run, on_step, confirm)
        .await;
    client.close();
    let report = report?;
    if let Some(fail) = declined {
        return Err(fail);
    }
    if report.already_current {
        // Moved by someone else between our two connections.
        return already(ctx, Some(from), to, a.dry_run);
    }
    if ctx.json {
        out::json(&report_json(&found, a.dry_run, &report));
    } else if !report.upgraded {
        println!("dry run   {{emq}}:version still holds {from}; run without --dry-run to move it");
    }
    Ok(EXIT_OK)
}

/// The record already holds `to`: say so, exit 0.
fn already(
    ctx: &Ctx,
    from: Option<WireVersion>,
    to: WireVersion,
    dry_run: bool,
) -> Result<i32, Fail> {
    if ctx.json {
        out::json(&json!({
            "from": from.map(WireVersion::as_str), "to": to.as_str(), "found": to.as_str(),
            "dry_run": dry_run, "already_current": true, "probes": [], "scratch_queue": null,
            "clients_known": null, "older_clients": [], "upgraded": false,
        }));
    } else {
        println!("{{emq}}:version already holds {to}: nothing to do");
    }
    Ok(EXIT_OK)
}

fn print_step(step: UpgradeStep<'_>, to: WireVersion) {
    match step {
        UpgradeStep::RecordChecked { found } => {
            println!("record    {{emq}}:version holds {found}, as expected")
        }
        UpgradeStep::ProbePassed { probe } => println!("probe     PASS  {probe}"),
        UpgradeStep::ScratchDeleted { queue, keys } => {
            println!("scratch   deleted the probes' queue {queue} ({keys} keys)")
        }
        UpgradeStep::ClientsListed { older, known } => {
            if !known {
                println!(
                    "clients   cannot tell which connected clients speak an older version: this \
                     server's CLIENT LIST shows no library names (Redis/Valkey before 7.2) — make \
                     sure every runtime speaks {to} first"
                );
            } else if older.is_empty() {
                println!(
                    "clients   no other connected EchoMQ client speaks a version older than {to}"
                );
            } else {
                println!(
                    "clients   {} connected EchoMQ client(s) still speak a version older than {to}:",
                    older.len()
                );
                for line in older {
                    println!("            {line}");
                }
            }
        }
        UpgradeStep::RecordSet => println!("record    {{emq}}:version now holds {to}"),
    }
}

fn report_json(found: &str, dry_run: bool, r: &UpgradeReport) -> Value {
    json!({
        "from": r.from.as_str(), "to": r.to.as_str(), "found": found, "dry_run": dry_run,
        "already_current": r.already_current, "probes": r.probes,
        "scratch_queue": r.scratch_queue, "clients_known": r.clients_known,
        "older_clients": r.older_clients, "upgraded": r.upgraded,
    })
}
