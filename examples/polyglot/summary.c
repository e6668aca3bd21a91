/*
 * The demo's C tool that reads the queue.
 *
 *   summary progress N   one progress line every 500 ms until every order has
 *                        settled (nothing pending, active or scheduled, and
 *                        completed + dead >= N); exit 1 after 300 s.
 *   summary report N     drain `orders.receipts`, tally receipts per runtime,
 *                        find missing and duplicate orders, print the table;
 *                        exit 0 only if no order is missing and nothing is left
 *                        in pending/active/scheduled.
 *
 * EMQ_URL selects the server (default redis://127.0.0.1:6379/).
 */
#define _POSIX_C_SOURCE 200809L
#include <echomq.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define QUEUE "orders"
#define RECEIPTS "orders.receipts"
#define PROGRESS_LIMIT_MS (300 * 1000)
#define MAX_RUNTIMES 8

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int report_error(const char *what, emq_status st, emq_error *err) {
    fprintf(stderr, "summary: %s failed: %s: %s\n", what, emq_status_code(st),
            err && err->message ? err->message : "");
    emq_error_free(err);
    return 1;
}

static int progress(emq_client *client, unsigned long long n) {
    int tty = isatty(STDOUT_FILENO);
    emq_queue_counts c = {0};
    emq_error *err = NULL;
    for (long waited = 0;; waited += 500) {
        emq_status st = emq_counts(client, QUEUE, &c, &err);
        if (st != EMQ_OK) return report_error("counts", st, err);
        int done = c.pending + c.active + c.scheduled == 0 && c.completed + c.dead >= n;
        char line[200];
        snprintf(line, sizeof line, "progress: completed %llu/%llu pending %llu active %llu scheduled %llu dead %llu",
                 (unsigned long long)c.completed, n, (unsigned long long)c.pending,
                 (unsigned long long)c.active, (unsigned long long)c.scheduled, (unsigned long long)c.dead);
        if (tty) {
            printf("\r%s\033[K%s", line, done ? "\n" : "");
        } else if (done || waited % 2000 == 0) {
            printf("%s\n", line);
        }
        fflush(stdout);
        if (done) return 0;
        if (waited >= PROGRESS_LIMIT_MS) {
            if (tty) printf("\n");
            fprintf(stderr, "summary: orders still unsettled after %d s\n", PROGRESS_LIMIT_MS / 1000);
            return 1;
        }
        sleep_ms(500);
    }
}

typedef struct {
    char name[16];
    unsigned long long receipts, retried;
} runtime_tally;

static runtime_tally *tally_for(runtime_tally *t, int *count, const char *name) {
    for (int i = 0; i < *count; i++)
        if (strcmp(t[i].name, name) == 0) return &t[i];
    if (*count == MAX_RUNTIMES) return NULL;
    runtime_tally *slot = &t[(*count)++];
    snprintf(slot->name, sizeof slot->name, "%s", name);
    return slot;
}

static int report(emq_client *client, unsigned long long n) {
    unsigned *seen = calloc(n ? n : 1, sizeof *seen);
    runtime_tally runtimes[MAX_RUNTIMES];
    int nruntimes = 0;
    unsigned long long receipts = 0, malformed = 0, out_of_range = 0, retried = 0;
    emq_error *err = NULL;
    emq_status st;

    /* Drain the receipts: claim in batches, tally, complete the batch. */
    for (;;) {
        emq_job_list *batch = NULL;
        st = emq_claim_many(client, RECEIPTS, 500, 30000, &batch, &err);
        if (st != EMQ_OK) {
            free(seen);
            return report_error("claim_many", st, err);
        }
        if (batch->len == 0) {
            emq_job_list_free(batch);
            break;
        }
        emq_job_ref *refs = calloc(batch->len, sizeof *refs);
        for (size_t i = 0; i < batch->len; i++) {
            const emq_job *job = &batch->jobs[i];
            refs[i] = (emq_job_ref){job->id, job->token};
            char text[96], runtime[16];
            size_t len = job->payload_len < sizeof text - 1 ? job->payload_len : sizeof text - 1;
            if (len) memcpy(text, job->payload, len);
            text[len] = 0;
            long long order;
            unsigned long long token;
            receipts++;
            if (sscanf(text, "%lld %15s %llu", &order, runtime, &token) != 3) {
                malformed++;
                continue;
            }
            runtime_tally *t = tally_for(runtimes, &nruntimes, runtime);
            if (t) {
                t->receipts++;
                if (token > 1) t->retried++;
            }
            if (token > 1) retried++;
            if (order < 0 || (unsigned long long)order >= n)
                out_of_range++;
            else
                seen[order]++;
        }
        emq_verdict_list *verdicts = NULL;
        st = emq_complete_many(client, RECEIPTS, refs, batch->len, &verdicts, &err);
        free(refs);
        emq_job_list_free(batch);
        if (st != EMQ_OK) {
            free(seen);
            return report_error("complete_many", st, err);
        }
        emq_verdict_list_free(verdicts);
    }

    unsigned long long missing = 0, duplicates = 0;
    long long first_missing = -1;
    for (unsigned long long i = 0; i < n; i++) {
        if (seen[i] == 0) {
            missing++;
            if (first_missing < 0) first_missing = (long long)i;
        } else if (seen[i] > 1) {
            duplicates += seen[i] - 1;
        }
    }
    free(seen);

    emq_queue_counts c = {0};
    st = emq_counts(client, QUEUE, &c, &err);
    if (st != EMQ_OK) return report_error("counts", st, err);
    unsigned long long left = c.pending + c.active + c.scheduled;

    printf("%-10s %10s %10s\n", "runtime", "processed", "retried");
    for (int i = 0; i < nruntimes; i++)
        printf("%-10s %10llu %10llu\n", runtimes[i].name, runtimes[i].receipts, runtimes[i].retried);
    printf("%-10s %10llu %10llu\n", "total", receipts, retried);
    printf("completed (orders): %llu\n", (unsigned long long)c.completed);
    printf("dead: %llu\n", (unsigned long long)c.dead);
    printf("duplicates (at-least-once redeliveries): %llu\n", duplicates);
    if (malformed || out_of_range) printf("unexpected receipts: %llu\n", malformed + out_of_range);
    printf("missing: %llu", missing);
    if (missing) printf(" (first: order %lld)", first_missing);
    printf("\n");
    printf("left in pending/active: %llu", (unsigned long long)(c.pending + c.active));
    if (c.scheduled) printf(" (scheduled: %llu)", (unsigned long long)c.scheduled);
    printf("\n");
    if (missing == 0 && left == 0) {
        printf("ALL %llu ORDERS PROCESSED\n", n);
        return 0;
    }
    printf("NOT ALL %llu ORDERS PROCESSED: %llu missing, %llu left\n", n, missing, left);
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 3 || (strcmp(argv[1], "progress") != 0 && strcmp(argv[1], "report") != 0)) {
        fprintf(stderr, "usage: summary progress N | summary report N\n");
        return 2;
    }
    char *end = NULL;
    unsigned long long n = strtoull(argv[2], &end, 10);
    if (end == argv[2] || *end) {
        fprintf(stderr, "summary: N must be a number\n");
        return 2;
    }
    const char *url = getenv("EMQ_URL") ? getenv("EMQ_URL") : "redis://127.0.0.1:6379/";
    emq_connect_options o = emq_connect_options_default();
    o.client_name = "demo-summary-c";
    emq_client *client = NULL;
    emq_error *err = NULL;
    emq_status st = emq_connect(url, &o, &client, &err);
    if (st != EMQ_OK) return report_error("connect", st, err);
    int rc = strcmp(argv[1], "progress") == 0 ? progress(client, n) : report(client, n);
    emq_client_free(client);
    return rc;
}
