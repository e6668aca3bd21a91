//! Job features of wire `echomq:2.1.0`: deduplication, the stall cap, and
//! speaking 2.0.0 next to older runtimes.
//!
//!     EMQ_URL=redis://127.0.0.1:6379/ cargo run -p echomq --example job_features

use echomq::{Client, ConnectOptions, EnqueueOptions, ErrorKind, WireVersion};

#[tokio::main]
async fn main() -> echomq::Result<()> {
    let url = std::env::var("EMQ_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379/".into());
    let client = Client::connect(&url, ConnectOptions::default()).await?;
    let queue = "examples.features";

    // One live job per dedup id.
    let once = EnqueueOptions {
        dedup_id: Some("welcome-user-42".into()),
        dedup_ttl_ms: None,
        ..EnqueueOptions::default()
    };
    let first = client.enqueue(queue, "welcome", once.clone()).await?;
    let again = client.enqueue(queue, "welcome", once.clone()).await?;
    assert!(again.duplicate && again.id == first.id);
    println!("dedup: one job {}", first.id);

    // A lapsed lease counts a stall; at the cap the job is dead, "stalled".
    // (A Worker does this in its reap pump: WorkerOptions::max_stalls, default 2.)
    let job = client.claim(queue, 1).await?;
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let reaped = client.reap_stalled(queue, 100, 1).await?;
    println!("claimed {:?}, reaped {reaped:?}", job.map(|j| j.id));

    // Speaking 2.0.0 (a deployment not yet upgraded): 2.1.0 verbs refuse before any I/O.
    let old = ConnectOptions {
        wire_version: WireVersion::V2_0_0,
        ..ConnectOptions::default()
    };
    if let Err(e) = Client::connect(&url, old).await {
        // This deployment is fenced at 2.1.0, so a 2.0.0 client is refused.
        assert_eq!(e.kind(), ErrorKind::VersionFence);
        println!("a 2.0.0 client is fenced out: {e}");
    }

    for id in reaped.dead.iter().chain(reaped.recovered.iter()) {
        let _ = client.remove(queue, id.as_str()).await;
    }
    let _ = client.remove(queue, first.id.as_str()).await;
    Ok(())
}
