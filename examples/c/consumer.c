/*
 * A worker on queue "emails": prints each job, fails once on purpose for
 * payloads containing "retry-me", and stops on SIGINT / SIGTERM (or after N
 * completed jobs when N is given).
 *
 *   EMQ_URL=redis://127.0.0.1:6379/ ./consumer [N]
 */
#define _POSIX_C_SOURCE 200809L
#include <echomq.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t stop_requested = 0;
static void on_signal(int sig) {
    (void)sig;
    stop_requested = 1; /* emq_worker_stop is not async-signal-safe: main() calls it */
}

typedef struct {
    FILE *log; /* shared by every handler thread; stdio locks each call */
} app_state;

static int contains(const uint8_t *data, size_t len, const char *needle) {
    size_t n = strlen(needle);
    for (size_t i = 0; i + n <= len; i++)
        if (memcmp(data + i, needle, n) == 0) return 1;
    return 0;
}

/* Runs on library threads, up to `concurrency` at once. `job` is valid only
 * during this call: copy what you keep. */
static emq_handler_status handle(const emq_job *job, void *user_data, emq_handler_result *result) {
    app_state *app = user_data;
    fprintf(app->log, "job %s token=%llu payload=%.*s\n", job->id, (unsigned long long)job->token,
            (int)job->payload_len, (const char *)job->payload);
    if (contains(job->payload, job->payload_len, "retry-me") && job->token == 1) {
        emq_handler_result_set_message(result, "first attempt fails on purpose", NULL);
        return EMQ_HANDLER_RETRY;
    }
    return EMQ_HANDLER_OK;
}

int main(int argc, char **argv) {
    const char *url = getenv("EMQ_URL") ? getenv("EMQ_URL") : "redis://127.0.0.1:6379/";
    unsigned long long want = argc > 1 ? strtoull(argv[1], NULL, 10) : 0;

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    emq_client *client = NULL;
    emq_error *err = NULL;
    if (emq_connect(url, NULL, &client, &err) != EMQ_OK) {
        fprintf(stderr, "connect: %s\n", err->message);
        emq_error_free(err);
        return 1;
    }

    emq_worker_options options;
    emq_worker_options_init(&options, sizeof options);
    options.concurrency = 4;
    options.backoff = EMQ_BACKOFF_FIXED;
    options.backoff_base_ms = 100;
    app_state app = {stdout};
    emq_worker *worker = NULL;
    if (emq_worker_new(client, "emails", &options, handle, &app, &worker, &err) != EMQ_OK ||
        emq_worker_start(worker, &err) != EMQ_OK) {
        fprintf(stderr, "worker: %s\n", err->message);
        emq_error_free(err);
        emq_worker_free(worker);
        emq_client_free(client);
        return 1;
    }

    emq_stats stats = {0};
    while (!stop_requested) {
        struct timespec tick = {0, 50 * 1000000L};
        nanosleep(&tick, NULL);
        emq_worker_stats(worker, &stats, NULL);
        if (want && stats.completed >= want) break;
    }
    emq_worker_stop(worker, NULL);
    emq_worker_join(worker, NULL); /* in-flight jobs finish (grace period) */
    emq_worker_stats(worker, &stats, NULL);
    printf("consumer: completed=%llu retried=%llu dead=%llu\n", (unsigned long long)stats.completed,
           (unsigned long long)stats.retried, (unsigned long long)stats.dead);
    emq_worker_free(worker);
    emq_client_free(client);
    return 0;
}
