//! Enqueue a few jobs and process them with a worker.
//!
//! `EMQ_URL=redis://127.0.0.1:6379/ cargo run -p echomq --example quickstart`
//! (without `EMQ_URL` it connects to `redis://127.0.0.1:6379/`).

use std::time::Duration;

use echomq::{Client, ConnectOptions, EnqueueOptions, HandlerError, Worker, WorkerOptions};

#[tokio::main]
async fn main() -> echomq::Result<()> {
    let client = Client::connect_default(ConnectOptions::default()).await?;
    let emails = client.queue("emails")?;

    for i in 0..5 {
        let receipt = emails
            .enqueue(format!("hello #{i}"), EnqueueOptions::default())
            .await?;
        println!("enqueued {}", receipt.id);
    }
    let later = EnqueueOptions::default().delay_ms(60_000);
    println!(
        "scheduled {}",
        emails.enqueue("in a minute", later).await?.id
    );

    let worker = Worker::new(
        client.clone(),
        "emails",
        WorkerOptions::default(),
        |job| async move {
            let text =
                String::from_utf8(job.payload).map_err(|e| HandlerError::fatal(e.to_string()))?;
            println!("{} (attempt {}): {text}", job.id, job.attempts);
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
    println!("{:?}", emails.counts().await?);
    Ok(())
}
