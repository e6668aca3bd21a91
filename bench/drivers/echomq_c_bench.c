/* The EchoMQ C driver for bench/run.py (contract: bench/DRIVERS.md). */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "echomq.h"

static const char *url = "redis://127.0.0.1:6379/", *queue = "bench";
static size_t n = 20000, concurrency = 50, payload_size = 100;
static double rate = 2000, idle_seconds = 10;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long long wall_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static size_t make_payload(char *buf, size_t i) {
    int head = snprintf(buf, payload_size + 64, "{\"i\":%zu,\"t\":%lld,\"pad\":\"", i, wall_ns());
    size_t len = (size_t)head;
    while (len + 2 < payload_size) buf[len++] = 'x';
    buf[len++] = '"';
    buf[len++] = '}';
    return len;
}

static void die(const char *what, emq_status st, emq_error *err) {
    fprintf(stderr, "%s failed: status %d: %s\n", what, st, err && err->message ? err->message : "");
    exit(1);
}

static void report(const char *workload, size_t jobs, double seconds, double p50, double p99,
                   size_t handler_batch) {
    printf("{\"workload\": \"%s\", \"jobs\": %zu, \"seconds\": %.6f, ", workload, jobs, seconds);
    if (p50 >= 0) printf("\"p50_ms\": %.3f, \"p99_ms\": %.3f, ", p50, p99);
    else printf("\"p50_ms\": null, \"p99_ms\": null, ");
    if (handler_batch > 1) printf("\"note\": \"handler_batch=%zu\", ", handler_batch);
    printf("\"version\": \"echomq (c)\"}\n");
}

static void bulk(emq_client *c) {
    char *bufs = malloc(1000 * (payload_size + 64));
    emq_bytes items[1000];
    for (size_t start = 0; start < n; start += 1000) {
        size_t count = n - start < 1000 ? n - start : 1000;
        for (size_t k = 0; k < count; k++) {
            char *b = bufs + k * (payload_size + 64);
            items[k].data = (const uint8_t *)b;
            items[k].len = make_payload(b, start + k);
        }
        emq_enqueue_list *list = NULL;
        emq_error *err = NULL;
        emq_status st = emq_enqueue_many(c, queue, items, count, NULL, &list, &err);
        if (st != EMQ_OK) die("emq_enqueue_many", st, err);
        emq_enqueue_list_free(list);
    }
    free(bufs);
}

/* Latency samples, written by handler threads. */
static double *samples;
static atomic_size_t sample_count;

static long long enqueued_at(const emq_job *job) {
    const char *p = memmem(job->payload, job->payload_len, "\"t\":", 4);
    return p ? atoll(p + 4) : 0;
}

static emq_handler_status noop(const emq_job *job, void *user, emq_handler_result *result) {
    (void)job; (void)user; (void)result;
    return EMQ_HANDLER_OK;
}

static emq_handler_status timed(const emq_job *job, void *user, emq_handler_result *result) {
    (void)user; (void)result;
    size_t k = atomic_fetch_add(&sample_count, 1);
    if (k < n) samples[k] = (wall_ns() - enqueued_at(job)) / 1e6;
    return EMQ_HANDLER_OK;
}

/* --events off: connect with publish_events = false; --listeners on: a no-op event callback. */
static int events_on = 1, listeners_on = 0;
/* --handler-batch K: jobs per callback in the process workload; 0 (default) = the concurrency. */
static size_t handler_batch_arg = 0;

static void ignore_event(const emq_worker_event *event, void *user) {
    (void)event; (void)user;
}

static emq_worker *start_worker(emq_client *c, size_t conc, size_t handler_batch, emq_handler h) {
    emq_worker_options o = emq_worker_options_default();
    o.concurrency = (uint32_t)conc;
    o.handler_batch = (uint32_t)handler_batch;
    o.idle_max_ms = 5;
    emq_worker *w = NULL;
    emq_error *err = NULL;
    emq_status st = emq_worker_new(c, queue, &o, h, NULL, &w, &err);
    if (st != EMQ_OK) die("emq_worker_new", st, err);
    if (listeners_on && (st = emq_worker_set_event_handler(w, ignore_event, NULL, &err)) != EMQ_OK)
        die("emq_worker_set_event_handler", st, err);
    if ((st = emq_worker_start(w, &err)) != EMQ_OK) die("emq_worker_start", st, err);
    return w;
}

static void wait_done(emq_worker *w) {
    double deadline = now_s() + 240;
    emq_stats s;
    do {
        emq_worker_stats(w, &s, NULL);
        if (now_s() > deadline) { fprintf(stderr, "timed out\n"); exit(1); }
        struct timespec ts = {0, 500000};
        if (s.completed < n) nanosleep(&ts, NULL);
    } while (s.completed < n);
}

static void stop_worker(emq_worker *w) {
    emq_worker_stop(w, NULL);
    emq_worker_join(w, NULL);
    emq_worker_free(w);
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: %s <workload> --url U --n N ...\n", argv[0]); return 2; }
    const char *workload = argv[1];
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--url")) url = argv[i + 1];
        else if (!strcmp(argv[i], "--queue")) queue = argv[i + 1];
        else if (!strcmp(argv[i], "--n")) n = strtoul(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--concurrency")) concurrency = strtoul(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--rate")) rate = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--payload-size")) payload_size = strtoul(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--events")) events_on = strcmp(argv[i + 1], "off") != 0;
        else if (!strcmp(argv[i], "--listeners")) listeners_on = strcmp(argv[i + 1], "on") == 0;
        else if (!strcmp(argv[i], "--handler-batch")) handler_batch_arg = strtoul(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--idle-seconds")) idle_seconds = atof(argv[i + 1]);
    }
    emq_client *c = NULL;
    emq_error *err = NULL;
    emq_connect_options options = emq_connect_options_default();
    options.publish_events = events_on;
    emq_status st = emq_connect(url, &options, &c, &err);
    if (st != EMQ_OK) die("emq_connect", st, err);
    char *buf = malloc(payload_size + 64);

    if (!strcmp(workload, "enqueue-single")) {
        double t0 = now_s();
        for (size_t i = 0; i < n; i++) {
            size_t len = make_payload(buf, i);
            if ((st = emq_enqueue(c, queue, (const uint8_t *)buf, len, NULL, NULL, &err)) != EMQ_OK) die("emq_enqueue", st, err);
        }
        report(workload, n, now_s() - t0, -1, -1, 1);
    } else if (!strcmp(workload, "enqueue-bulk") || !strcmp(workload, "prefill")) {
        double t0 = now_s();
        bulk(c);
        report(workload, n, now_s() - t0, -1, -1, 1);
    } else if (!strcmp(workload, "process")) {
        double t0 = now_s();
        /* A no-op callback: hand it whole claims (one blocking call per
         * batch), the documented setting for short callbacks. */
        size_t batch = handler_batch_arg ? handler_batch_arg : concurrency;
        emq_worker *w = start_worker(c, concurrency, batch, noop);
        wait_done(w);
        double seconds = now_s() - t0;
        stop_worker(w);
        report(workload, n, seconds, -1, -1, batch);
    } else if (!strcmp(workload, "latency")) {
        samples = calloc(n, sizeof(double));
        emq_worker *w = start_worker(c, 50, 1, timed);
        double t0 = now_s();
        for (size_t i = 0; i < n; i++) {
            double delay = t0 + i / rate - now_s();
            if (delay > 0) {
                struct timespec ts = {(time_t)delay, (long)((delay - (time_t)delay) * 1e9)};
                nanosleep(&ts, NULL);
            }
            size_t len = make_payload(buf, i);
            if ((st = emq_enqueue(c, queue, (const uint8_t *)buf, len, NULL, NULL, &err)) != EMQ_OK) die("emq_enqueue", st, err);
        }
        wait_done(w);
        double seconds = now_s() - t0;
        stop_worker(w);
        size_t k = atomic_load(&sample_count) < n ? atomic_load(&sample_count) : n;
        qsort(samples, k, sizeof(double), cmp);
        report(workload, n, seconds, samples[k / 2], samples[(size_t)(k * 0.99)], 1);
        free(samples);
    } else if (!strcmp(workload, "idle")) {
        /* Idle pickup (issue #16): a worker with the default options (concurrency from
         * --concurrency) sits idle for --idle-seconds, then one job every ~200 ms, each
         * waited for until it ran; the callback records enqueue -> start. */
        samples = calloc(n ? n : 1, sizeof(double));
        emq_worker_options o = emq_worker_options_default();
        o.concurrency = (uint32_t)concurrency;
        emq_worker *w = NULL;
        if ((st = emq_worker_new(c, queue, &o, timed, NULL, &w, &err)) != EMQ_OK) die("emq_worker_new", st, err);
        if ((st = emq_worker_start(w, &err)) != EMQ_OK) die("emq_worker_start", st, err);
        struct timespec settle = {0, 500000000L};
        nanosleep(&settle, NULL);
        fprintf(stderr, "idle-start\n");
        struct timespec idle = {(time_t)idle_seconds, (long)((idle_seconds - (time_t)idle_seconds) * 1e9)};
        nanosleep(&idle, NULL);
        double t0 = now_s();
        for (size_t i = 0; i < n; i++) {
            size_t len = make_payload(buf, i);
            if ((st = emq_enqueue(c, queue, (const uint8_t *)buf, len, NULL, NULL, &err)) != EMQ_OK) die("emq_enqueue", st, err);
            double deadline = now_s() + 10;
            while (atomic_load(&sample_count) < i + 1) {
                if (now_s() > deadline) { fprintf(stderr, "job %zu did not start within 10 s\n", i); exit(1); }
                struct timespec ts = {0, 200000};
                nanosleep(&ts, NULL);
            }
            struct timespec gap = {0, 200000000L};
            nanosleep(&gap, NULL);
        }
        double seconds = now_s() - t0;
        stop_worker(w);
        size_t k = atomic_load(&sample_count) < n ? atomic_load(&sample_count) : n;
        qsort(samples, k, sizeof(double), cmp);
        report(workload, n, seconds, k ? samples[k / 2] : -1, k ? samples[(size_t)(k * 0.99)] : -1, 1);
        free(samples);
    } else {
        printf("{\"workload\": \"%s\", \"unsupported\": \"unknown workload\"}\n", workload);
    }
    free(buf);
    emq_client_free(c);
    return 0;
}
