//! Repeatable jobs (wire `echomq:2.1.0`): an interval and a cron schedule in a
//! time zone, fired by a worker's pump, one job per slot however many
//! workers run.
//!
//!     EMQ_URL=redis://127.0.0.1:6379/ cargo run -p echomq --example repeatable

use std::time::Duration;

use echomq::{repeat_job_id, Client, ConnectOptions, RepeatOptions, Worker, WorkerOptions};

#[tokio::main]
async fn main() -> echomq::Result<()> {
    let url = std::env::var("EMQ_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379/".into());
    let client = Client::connect(&url, ConnectOptions::default()).await?;
    let queue = "examples.repeat";

    // Every 200 ms, five times, then the repeat removes itself.
    let heartbeat = RepeatOptions {
        every_ms: Some(200),
        limit: Some(5),
        ..RepeatOptions::default()
    };
    let r = client
        .upsert_repeat(queue, "heartbeat", b"ping", &heartbeat)
        .await?;
    println!("heartbeat: first slot at {} (server clock)", r.next_run_ms);

    // Weekdays at 09:00 in Berlin (DST handled); upserting it again at every
    // start keeps its slot, so deploys do not push it back.
    let report = RepeatOptions {
        cron: Some("0 9 * * 1-5".into()),
        tz: Some("Europe/Berlin".into()),
        ..RepeatOptions::default()
    };
    let daily = client
        .upsert_repeat(queue, "daily-report", br#"{"report":"sales"}"#, &report)
        .await?;
    println!(
        "daily-report: next at {}, its job will be {}",
        daily.next_run_ms,
        repeat_job_id(queue, "daily-report", daily.next_run_ms)?
    );

    // The worker's pump fires due repeats every pump_interval_ms.
    let worker = Worker::new(
        client.clone(),
        queue,
        WorkerOptions {
            pump_interval_ms: 50,
            ..WorkerOptions::default()
        },
        |job| async move {
            // A repeat's job id carries its slot: minted_at_ms() is the slot time.
            println!("ran {} for slot {}", job.id, job.id.minted_at_ms());
            Ok(())
        },
    )?;
    let handle = worker.spawn();
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    handle.stop();
    handle.join()?;

    for r in client.list_repeats(queue).await? {
        println!("still scheduled: {} (fired {})", r.name, r.count);
    }
    client.remove_repeat(queue, "daily-report").await?;
    Ok(())
}
