//! Enqueue a few jobs and process them with a worker.
//!
//! `EMQ_URL=redis://127.0.0.1:6379/ cargo run -p echomq --example quickstart`

use std::time::Duration;

use echomq::{Client, ConnectOptions, HandlerError, Worker, WorkerOptions};

#[tokio::main]
async fn main() -> echomq::Result<()> {
    let url = std::env::var("EMQ_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379/".into());
    let client = Client::connect(&url, ConnectOptions::default()).await?;

    for i in 0..5 {
        let receipt = client.enqueue("emails", format!("hello #{i}")).await?;
        println!("enqueued {}", receipt.id);
    }

    let worker = Worker::new(
        client.clone(),
        "emails",
        WorkerOptions::default(),
        |job| async move {
            let text =
                String::from_utf8(job.payload).map_err(|e| HandlerError::fatal(e.to_string()))?;
            println!("{} (token {}): {text}", job.id, job.token);
            Ok(())
        },
    )?;
    let running = tokio::spawn({
        let worker = worker.clone();
        async move { worker.run().await }
    });
    while worker.stats().completed < 5 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    worker.stop();
    running.await.expect("worker task")?;
    println!("{:?}", client.counts("emails").await?);
    Ok(())
}
