//! A worker with concurrency, retries and a graceful shutdown on Ctrl-C.
//!
//! `EMQ_URL=redis://127.0.0.1:6379/ cargo run -p echomq --example worker`
//! (without `EMQ_URL` it connects to `redis://127.0.0.1:6379/`). It enqueues
//! a few jobs, some of which fail on their first attempt and are retried
//! with exponential back-off; press Ctrl-C to stop: in-flight handlers get
//! `shutdown_grace_ms` to finish, prefetched jobs are handed back.

use echomq::{Backoff, Client, ConnectOptions, HandlerError, Worker, WorkerOptions};

#[tokio::main]
async fn main() -> echomq::Result<()> {
    let client = Client::connect_default(ConnectOptions::default()).await?;
    let reports = client.queue("reports")?;
    for i in 0..20 {
        reports
            .enqueue(format!("report #{i}"), Default::default())
            .await?;
    }

    let options = WorkerOptions {
        concurrency: 4,
        max_attempts: 3,
        backoff: Backoff::Exponential,
        backoff_base_ms: 200,
        shutdown_grace_ms: 5_000,
        ..WorkerOptions::default()
    };
    let worker = Worker::new(client.clone(), "reports", options, |job| async move {
        let text =
            String::from_utf8(job.payload).map_err(|e| HandlerError::fatal(e.to_string()))?;
        // Every third job fails its first attempt: the retry is scheduled
        // with back-off, and the next attempt succeeds.
        let flaky = text.ends_with('0') || text.ends_with('3') || text.ends_with('6');
        if flaky && job.attempts == 1 {
            return Err(HandlerError::retry("transient failure, try again"));
        }
        println!("{} (attempt {}): {text}", job.id, job.attempts);
        Ok(())
    })?;

    let running = tokio::spawn({
        let worker = worker.clone();
        async move { worker.run().await }
    });
    println!("working; Ctrl-C to stop");
    tokio::signal::ctrl_c().await.expect("listen for Ctrl-C");
    println!("stopping: waiting for in-flight jobs");
    worker.stop();
    running.await.expect("worker task")?;
    println!("{:?}", worker.stats());
    println!("{:?}", reports.counts().await?);
    Ok(())
}
