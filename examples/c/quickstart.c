/*
 * EchoMQ quickstart: a producer and a worker in one program.
 *
 *   make -C examples/c quickstart
 *   EMQ_URL=redis://127.0.0.1:6379/ examples/c/quickstart
 *
 * It enqueues three jobs, runs a worker until each of them has completed, and
 * exits. In production the producer and the worker are separate processes.
 */
#include <echomq.h>

#include <stdio.h>

#define JOBS 3

static int fail(const char *what, emq_status status, emq_error *err) {
    fprintf(stderr, "%s: %s: %s\n", what, emq_status_code(status), err ? err->message : "");
    emq_error_free(err);
    return 1;
}

/* Called once per claimed job, on the library's threads (up to `concurrency`
 * at once). `job` is valid only during the call. EMQ_HANDLER_OK completes the
 * job; EMQ_HANDLER_RETRY retries it with backoff; EMQ_HANDLER_FATAL sends it
 * straight to dead. */
static emq_handler_status send_email(const emq_job *job, void *user_data,
                                     emq_handler_result *result) {
    (void)user_data;
    (void)result;
    printf("worker: %s attempt %llu: %.*s\n", job->id, (unsigned long long)job->attempts,
           (int)job->payload_len, (const char *)job->payload);
    return EMQ_HANDLER_OK;
}

int main(void) {
    emq_client *client = NULL;
    emq_error *err = NULL;
    /* NULL: EMQ_URL when set, else redis://127.0.0.1:6379/. */
    emq_status st = emq_connect(NULL, NULL, &client, &err);
    if (st != EMQ_OK) return fail("connect", st, err);

    /* The producer's side: each enqueue answers the new job's id. */
    emq_enqueued jobs[JOBS];
    for (int i = 0; i < JOBS; i++) {
        char text[32];
        int len = snprintf(text, sizeof text, "hello #%d", i);
        st = emq_enqueue(client, "emails", (const uint8_t *)text, (size_t)len, NULL, &jobs[i], &err);
        if (st != EMQ_OK) {
            emq_client_free(client);
            return fail("enqueue", st, err);
        }
    }

    /* The worker's side: it runs on the library's threads once started. */
    emq_worker_options options;
    emq_worker_options_init(&options, sizeof options);
    options.concurrency = 4;
    emq_worker *worker = NULL;
    st = emq_worker_new(client, "emails", &options, send_email, NULL, &worker, &err);
    if (st == EMQ_OK) st = emq_worker_start(worker, &err);
    if (st != EMQ_OK) {
        emq_worker_free(worker);
        emq_client_free(client);
        return fail("worker", st, err);
    }

    int failed = 0;
    for (int i = 0; i < JOBS && !failed; i++) {
        emq_settled settled;
        st = emq_wait_for(client, "emails", jobs[i].id, 30000, &settled, NULL, &err);
        if (st != EMQ_OK) {
            failed = fail("wait_for", st, err);
            break;
        }
        printf("producer: %s %s\n", jobs[i].id,
               settled == EMQ_SETTLED_COMPLETED ? "completed" : "dead");
    }
    emq_worker_stop(worker, NULL); /* claims nothing more, lets running handlers finish */
    emq_worker_join(worker, NULL);
    emq_worker_free(worker);
    emq_client_free(client);
    return failed;
}
