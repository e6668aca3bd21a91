/*
 * The demo's C worker on queue `orders` (the handler contract of every
 * runtime): fail the first attempt of a `fail_once` order, else write a
 * receipt "<order> c <token>" into `orders.receipts`.
 *
 *   make -C examples/polyglot c
 *   EMQ_URL=redis://127.0.0.1:6379/ examples/polyglot/worker-c
 *
 * Runs until SIGTERM or SIGINT, drains, then prints one line:
 *   c worker: processed=<completed> retried=<retried> dead=<dead>
 */
#define _POSIX_C_SOURCE 200809L
#include <echomq.h>

#include <ctype.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define QUEUE "orders"
#define RECEIPTS "orders.receipts"

static volatile sig_atomic_t stop_requested = 0;
static void on_signal(int sig) {
    (void)sig;
    stop_requested = 1; /* main() calls emq_worker_stop: it is not async-signal-safe */
}

/* Where `"key"` is followed by optional spaces and a colon: the value's start, or NULL. */
static const char *json_value(const char *text, const char *key) {
    size_t klen = strlen(key);
    for (const char *p = text; (p = strstr(p, key)) != NULL; p += klen) {
        const char *q = p + klen;
        while (isspace((unsigned char)*q)) q++;
        if (*q != ':') continue;
        q++;
        while (isspace((unsigned char)*q)) q++;
        return q;
    }
    return NULL;
}

/* The handler: runs on library threads, up to `concurrency` at once; `job`
 * is valid only during the call. user_data is the (thread-safe) client. */
static emq_handler_status handle(const emq_job *job, void *user_data, emq_handler_result *result) {
    emq_client *client = user_data;
    char text[256];
    size_t n = job->payload_len < sizeof text - 1 ? job->payload_len : sizeof text - 1;
    if (n) memcpy(text, job->payload, n);
    text[n] = 0;

    const char *order_text = json_value(text, "\"order\"");
    char *end = NULL;
    long long order = order_text ? strtoll(order_text, &end, 10) : 0;
    if (!order_text || end == order_text) {
        emq_handler_result_set_message(result, "payload has no integer \"order\"", NULL);
        return EMQ_HANDLER_FATAL;
    }
    const char *fail_once = json_value(text, "\"fail_once\"");
    if (fail_once && strncmp(fail_once, "true", 4) == 0 && job->token == 1) {
        emq_handler_result_set_message(result, "simulated failure (first attempt)", NULL);
        return EMQ_HANDLER_RETRY;
    }

    char receipt[64];
    int len = snprintf(receipt, sizeof receipt, "%lld c %llu", order, (unsigned long long)job->token);
    emq_error *err = NULL;
    if (emq_enqueue(client, RECEIPTS, (const uint8_t *)receipt, (size_t)len, NULL, NULL, &err) != EMQ_OK) {
        emq_handler_result_set_message(result, err ? err->message : "receipt enqueue failed", NULL);
        emq_error_free(err);
        return EMQ_HANDLER_RETRY;
    }
    return EMQ_HANDLER_OK;
}

int main(void) {
    const char *url = getenv("EMQ_URL") ? getenv("EMQ_URL") : "redis://127.0.0.1:6379/";

    /* Installed explicitly: a background job of a non-interactive shell
     * starts with SIGINT ignored. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    emq_connect_options copts = emq_connect_options_default();
    copts.client_name = "demo-worker-c";
    emq_client *client = NULL;
    emq_error *err = NULL;
    if (emq_connect(url, &copts, &client, &err) != EMQ_OK) {
        fprintf(stderr, "c worker: connect failed: %s\n", err ? err->message : "?");
        emq_error_free(err);
        return 1;
    }

    emq_worker_options o = emq_worker_options_default();
    o.concurrency = 8;
    o.lease_ms = 5000;
    o.backoff = EMQ_BACKOFF_FIXED;
    o.backoff_base_ms = 200;
    o.pump_interval_ms = 200;
    o.max_attempts = 5;
    emq_worker *worker = NULL;
    if (emq_worker_new(client, QUEUE, &o, handle, client, &worker, &err) != EMQ_OK ||
        emq_worker_start(worker, &err) != EMQ_OK) {
        fprintf(stderr, "c worker: %s\n", err ? err->message : "?");
        emq_error_free(err);
        emq_worker_free(worker);
        emq_client_free(client);
        return 1;
    }
    fprintf(stderr, "c worker: running on %s (SIGTERM/SIGINT to stop)\n", QUEUE);

    while (!stop_requested) {
        struct timespec tick = {0, 100 * 1000000L};
        nanosleep(&tick, NULL);
    }
    emq_worker_stop(worker, NULL);
    emq_status st = emq_worker_join(worker, &err); /* in-flight handlers finish */
    if (st != EMQ_OK) {
        fprintf(stderr, "c worker: join: %s\n", err ? err->message : "?");
        emq_error_free(err);
    }
    emq_stats s = {0};
    emq_worker_stats(worker, &s, NULL);
    printf("c worker: processed=%llu retried=%llu dead=%llu\n", (unsigned long long)s.completed,
           (unsigned long long)s.retried, (unsigned long long)s.dead);
    fflush(stdout);
    emq_worker_free(worker); /* the handler is no longer running: safe to free the client */
    emq_client_free(client);
    return st == EMQ_OK ? 0 : 1;
}
