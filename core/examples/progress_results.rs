//! Progress, logs and kept results (echomq:2.1.0): a worker that reports
//! progress, logs, and keeps its return value for an hour; the producer waits
//! for the result.
//!
//!     EMQ_URL=redis://127.0.0.1:6379/ cargo run -p echomq --example progress_results

use std::time::Duration;

use echomq::{Client, ConnectOptions, Worker, WorkerOptions};

const QUEUE: &str = "thumbnails";

#[tokio::main]
async fn main() -> echomq::Result<()> {
    let url = std::env::var("EMQ_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379/".into());
    let client = Client::connect(&url, ConnectOptions::default()).await?;
    let options = WorkerOptions {
        keep_result_ms: 3_600_000,
        ..WorkerOptions::default()
    };
    let handler_client = client.clone();
    let worker = Worker::new_returning(client.clone(), QUEUE, options, move |job| {
        let client = handler_client.clone();
        async move {
            let id = job.id.to_string();
            client.log(QUEUE, &id, "resizing", None).await?;
            client.update_progress(QUEUE, &id, job.token, "50").await?;
            Ok(Some(
                format!("thumbnail of {} bytes", job.payload.len()).into_bytes(),
            ))
        }
    })?;
    let handle = worker.spawn();
    let id = client
        .enqueue(QUEUE, b"cat.png", Default::default())
        .await?
        .id
        .to_string();
    let result = client
        .wait_for_result(QUEUE, &id, Duration::from_secs(30))
        .await?;
    println!("result: {}", String::from_utf8_lossy(&result));
    println!("log: {:?}", client.logs(QUEUE, &id, 0, -1).await?);
    handle.stop();
    handle.join()
}
