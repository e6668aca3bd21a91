//! The EchoMQ Rust driver for bench/run.py; the contract is bench/DRIVERS.md.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use echomq::{Client, ConnectOptions, WireVersion, Worker, WorkerOptions};

struct Args {
    workload: String,
    url: String,
    queue: String,
    n: usize,
    concurrency: usize,
    rate: f64,
    payload_size: usize,
    /// `--events off`: connect with `publish_events: false`.
    events: bool,
    /// `--listeners on`: a no-op worker event listener.
    listeners: bool,
    /// `idle`: seconds the worker sits idle before the pickups (the
    /// orchestrator counts the server's commands meanwhile).
    idle_seconds: f64,
    /// Durable writes (`ConnectOptions::wait_replicas`); 0 = off.
    wait_replicas: u32,
}

fn parse_args() -> Args {
    let mut it = std::env::args().skip(1);
    let workload = it
        .next()
        .expect("usage: echomq-bench <workload> --url U --n N ...");
    let mut a = Args {
        workload,
        url: "redis://127.0.0.1:6379/".into(),
        queue: "bench".into(),
        n: 20_000,
        concurrency: 50,
        rate: 2_000.0,
        payload_size: 100,
        events: true,
        listeners: false,
        idle_seconds: 10.0,
        wait_replicas: 0,
    };
    while let Some(flag) = it.next() {
        let value = it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--url" => a.url = value,
            "--queue" => a.queue = value,
            "--n" => a.n = value.parse().expect("--n"),
            "--concurrency" => a.concurrency = value.parse().expect("--concurrency"),
            "--rate" => a.rate = value.parse().expect("--rate"),
            "--payload-size" => a.payload_size = value.parse().expect("--payload-size"),
            "--events" => a.events = value == "on",
            "--listeners" => a.listeners = value == "on",
            "--idle-seconds" => a.idle_seconds = value.parse().expect("--idle-seconds"),
            "--wait-replicas" => a.wait_replicas = value.parse().expect("--wait-replicas"),
            other => panic!("unknown flag {other}"),
        }
    }
    a
}

fn now_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

/// `{"i":…,"t":…,"pad":"xxx…"}` padded to `size` bytes.
fn payload(i: usize, size: usize) -> Vec<u8> {
    let head = format!("{{\"i\":{i},\"t\":{},\"pad\":\"", now_ns());
    let pad = size.saturating_sub(head.len() + 2);
    let mut p = head.into_bytes();
    p.extend(std::iter::repeat_n(b'x', pad));
    p.extend_from_slice(b"\"}");
    p
}

fn enqueued_at_ns(p: &[u8]) -> u128 {
    let text = std::str::from_utf8(p).unwrap_or("");
    text.split("\"t\":")
        .nth(1)
        .and_then(|r| r.split(',').next())
        .and_then(|t| t.parse().ok())
        .unwrap_or(0)
}

fn report(a: &Args, jobs: usize, seconds: f64, p50: Option<f64>, p99: Option<f64>) {
    let opt = |v: Option<f64>| {
        v.map(|x| format!("{x:.3}"))
            .unwrap_or_else(|| "null".into())
    };
    println!(
        "{{\"workload\": \"{}\", \"jobs\": {jobs}, \"seconds\": {seconds:.6}, \"p50_ms\": {}, \"p99_ms\": {}, \"version\": \"echomq {} (rust)\"}}",
        a.workload,
        opt(p50),
        opt(p99),
        env!("CARGO_PKG_VERSION")
    );
}

async fn enqueue_bulk(client: &Client, a: &Args) {
    // Chunks of 1,000 in one pipeline each, a few chunks in flight at once.
    let payloads: Vec<Vec<u8>> = (0..a.n).map(|i| payload(i, a.payload_size)).collect();
    let mut inflight = tokio::task::JoinSet::new();
    for chunk in payloads.chunks(1_000) {
        if inflight.len() >= 4 {
            inflight.join_next().await.unwrap().unwrap();
        }
        let (client, q, chunk) = (client.clone(), a.queue.clone(), chunk.to_vec());
        inflight.spawn(async move {
            for verdict in client
                .enqueue_many(&q, &echomq::EnqueueOptions::defaults_for(&chunk))
                .await
                .expect("enqueue_many")
            {
                verdict.expect("enqueue");
            }
        });
    }
    while let Some(r) = inflight.join_next().await {
        r.unwrap();
    }
}

async fn wait_for(worker: &Worker, n: u64) {
    let deadline = Instant::now() + Duration::from_secs(300);
    while worker.stats().completed < n {
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {n} completions"
        );
        tokio::time::sleep(Duration::from_micros(500)).await;
    }
}

/// `EMQ_BENCH_PREFETCH=n`: a fixed prefetch window instead of the adaptive
/// default (n = the concurrency is the window before issue #16), for a
/// before/after in one run.
fn prefetch_override() -> Option<usize> {
    std::env::var("EMQ_BENCH_PREFETCH")
        .ok()
        .map(|v| v.parse().expect("EMQ_BENCH_PREFETCH"))
}

fn bench_worker(
    client: &Client,
    a: &Args,
    concurrency: usize,
    latencies: Option<Arc<Mutex<Vec<f64>>>>,
) -> Worker {
    let options = WorkerOptions {
        concurrency,
        idle_max_ms: 5,
        prefetch: prefetch_override(),
        ..WorkerOptions::default()
    };
    let worker = Worker::new(client.clone(), &a.queue, options, move |job| {
        let latencies = latencies.clone();
        async move {
            if let Some(l) = latencies {
                let ms = (now_ns().saturating_sub(enqueued_at_ns(&job.payload))) as f64 / 1e6;
                l.lock().unwrap().push(ms);
            }
            Ok(())
        }
    })
    .expect("worker");
    if a.listeners {
        worker
            .on_event(|e| {
                std::hint::black_box(e);
            })
            .expect("listener");
    }
    worker
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let a = parse_args();
    // EMQ_WIRE_VERSION=echomq:2.0.0 runs the 2.0.0 scripts (the before/after
    // check of the 2.1.0 claim); default: the newest.
    let options = ConnectOptions {
        publish_events: a.events,
        wire_version: std::env::var("EMQ_WIRE_VERSION")
            .map(|v| WireVersion::parse(&v).expect("EMQ_WIRE_VERSION"))
            .unwrap_or(WireVersion::NEWEST),
        wait_replicas: a.wait_replicas,
        ..ConnectOptions::default()
    };
    let client = Client::connect(&a.url, options).await.expect("connect");
    match a.workload.as_str() {
        "enqueue-single" => {
            let start = Instant::now();
            for i in 0..a.n {
                client
                    .enqueue(&a.queue, payload(i, a.payload_size), Default::default())
                    .await
                    .expect("enqueue");
            }
            report(&a, a.n, start.elapsed().as_secs_f64(), None, None);
        }
        "enqueue-bulk" | "prefill" => {
            let start = Instant::now();
            enqueue_bulk(&client, &a).await;
            report(&a, a.n, start.elapsed().as_secs_f64(), None, None);
        }
        "process" => {
            let worker = bench_worker(&client, &a, a.concurrency, None);
            let start = Instant::now();
            let running = tokio::spawn({
                let w = worker.clone();
                async move { w.run().await }
            });
            wait_for(&worker, a.n as u64).await;
            let seconds = start.elapsed().as_secs_f64();
            worker.stop();
            running.await.unwrap().unwrap();
            report(&a, a.n, seconds, None, None);
        }
        "latency" => {
            let latencies: Arc<Mutex<Vec<f64>>> = Arc::default();
            let worker = bench_worker(&client, &a, 50, Some(latencies.clone()));
            let running = tokio::spawn({
                let w = worker.clone();
                async move { w.run().await }
            });
            let start = Instant::now();
            let interval = Duration::from_secs_f64(1.0 / a.rate);
            for i in 0..a.n {
                let due = start + interval * i as u32;
                tokio::time::sleep_until(due.into()).await;
                client
                    .enqueue(&a.queue, payload(i, a.payload_size), Default::default())
                    .await
                    .expect("enqueue");
            }
            wait_for(&worker, a.n as u64).await;
            let seconds = start.elapsed().as_secs_f64();
            worker.stop();
            running.await.unwrap().unwrap();
            let mut l = latencies.lock().unwrap().clone();
            l.sort_by(|x, y| x.partial_cmp(y).unwrap());
            let pct = |p: f64| l[((l.len() as f64 * p) as usize).min(l.len() - 1)];
            report(&a, a.n, seconds, Some(pct(0.50)), Some(pct(0.99)));
        }
        "slow" => {
            // The slow-handler row (issue #16): two workers of 4 slots with
            // 50 ms handlers share a pre-filled queue; the most jobs either
            // held at once (stats.in_flight: running + prefetched + settling)
            // and the makespan against the ideal split (n x 50 ms / 8 slots).
            let make = || {
                let options = WorkerOptions {
                    concurrency: 4,
                    prefetch: prefetch_override(),
                    ..WorkerOptions::default()
                };
                Worker::new(client.clone(), &a.queue, options, |_job| async move {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    Ok(())
                })
                .expect("worker")
            };
            let workers = [make(), make()];
            let start = Instant::now();
            let runs: Vec<_> = workers
                .iter()
                .map(|w| {
                    let w = w.clone();
                    tokio::spawn(async move { w.run().await })
                })
                .collect();
            let mut most = 0u64;
            let deadline = Instant::now() + Duration::from_secs(300);
            while workers.iter().map(|w| w.stats().completed).sum::<u64>() < a.n as u64 {
                assert!(Instant::now() < deadline, "timed out");
                for w in &workers {
                    most = most.max(w.stats().in_flight);
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            let seconds = start.elapsed().as_secs_f64();
            for w in &workers {
                w.stop();
            }
            for r in runs {
                r.await.unwrap().unwrap();
            }
            let ideal = a.n as f64 * 0.050 / 8.0;
            println!(
                "{{\"workload\": \"slow\", \"jobs\": {}, \"seconds\": {seconds:.6}, \"p50_ms\": null, \"p99_ms\": null, \"version\": \"echomq {} (rust)\", \"note\": \"most held by one worker {most} (4 slots); makespan {:.2} x the ideal split\"}}",
                a.n,
                env!("CARGO_PKG_VERSION"),
                seconds / ideal
            );
        }
        "idle" => {
            // Idle pickup (issue #16): a worker with the default options sits
            // idle for --idle-seconds (the orchestrator reads INFO
            // commandstats around that window), then one job every ~200 ms;
            // the handler records enqueue -> start.
            let latencies: Arc<Mutex<Vec<f64>>> = Arc::default();
            let record = latencies.clone();
            let options = WorkerOptions {
                concurrency: a.concurrency,
                ..WorkerOptions::default()
            };
            let worker = Worker::new(client.clone(), &a.queue, options, move |job| {
                let record = record.clone();
                async move {
                    let ms = (now_ns().saturating_sub(enqueued_at_ns(&job.payload))) as f64 / 1e6;
                    record.lock().unwrap().push(ms);
                    Ok(())
                }
            })
            .expect("worker");
            let running = tokio::spawn({
                let w = worker.clone();
                async move { w.run().await }
            });
            tokio::time::sleep(Duration::from_millis(500)).await;
            eprintln!("idle-start");
            tokio::time::sleep(Duration::from_secs_f64(a.idle_seconds)).await;
            eprintln!("idle-end");
            let start = Instant::now();
            for i in 0..a.n {
                client
                    .enqueue(&a.queue, payload(i, a.payload_size), Default::default())
                    .await
                    .expect("enqueue");
                wait_for(&worker, i as u64 + 1).await;
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            let seconds = start.elapsed().as_secs_f64();
            worker.stop();
            running.await.unwrap().unwrap();
            let mut l = latencies.lock().unwrap().clone();
            l.sort_by(|x, y| x.partial_cmp(y).unwrap());
            let pct = |p: f64| l[((l.len() as f64 * p) as usize).min(l.len() - 1)];
            report(&a, a.n, seconds, Some(pct(0.50)), Some(pct(0.99)));
        }
        other => {
            println!("{{\"workload\": \"{other}\", \"unsupported\": \"unknown workload\"}}");
        }
    }
}
