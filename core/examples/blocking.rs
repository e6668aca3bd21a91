//! The blocking client: enqueue, claim, complete, counts — no async runtime
//! in the caller (the client runs its own).
//!
//! `EMQ_URL=redis://127.0.0.1:6379/ cargo run -p echomq --example blocking`
//! (without `EMQ_URL` it connects to `redis://127.0.0.1:6379/`).

use echomq::blocking::Client;
use echomq::ConnectOptions;

fn main() -> echomq::Result<()> {
    let client = Client::connect_default(ConnectOptions::default())?;
    let invoices = client.queue("invoices")?;

    for i in 0..3 {
        let receipt = invoices.enqueue(format!("invoice #{i}"), Default::default())?;
        println!("enqueued {}", receipt.id);
    }

    // Claim with a 30 s lease; the token fences the settle, so a worker whose
    // lease lapsed (and whose job another worker claimed) cannot complete it.
    while let Some(job) = invoices.claim(30_000)? {
        println!(
            "claimed {} (attempt {}): {}",
            job.id,
            job.attempts,
            String::from_utf8_lossy(&job.payload)
        );
        invoices.complete(job.id.as_str(), job.token)?;
    }

    println!("{:?}", invoices.counts()?);
    client.close();
    Ok(())
}
