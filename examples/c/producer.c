/*
 * Enqueue N jobs on queue "emails" in one pipeline, then one scheduled job.
 *
 *   EMQ_URL=redis://127.0.0.1:6379/ ./producer 10
 */
#include <echomq.h>

#include <stdio.h>
#include <stdlib.h>

static int fail(const char *what, emq_status status, emq_error *err) {
    fprintf(stderr, "%s failed: %s (%d): %s\n", what, emq_status_code(status), status,
            err ? err->message : "");
    if (status == EMQ_ERR_VERSION_FENCE && err && err->found)
        fprintf(stderr, "  {emq}:version holds %s, this library speaks %s\n", err->found,
                emq_protocol_version());
    emq_error_free(err);
    return 1;
}

int main(int argc, char **argv) {
    const char *url = getenv("EMQ_URL") ? getenv("EMQ_URL") : "redis://127.0.0.1:6379/";
    size_t n = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 10;

    emq_connect_options options;
    emq_connect_options_init(&options, sizeof options);
    options.client_name = "example-producer-c";
    emq_client *client = NULL;
    emq_error *err = NULL;
    emq_status st = emq_connect(url, &options, &client, &err);
    if (st != EMQ_OK) return fail("connect", st, err);

    /* Payloads are bytes: (pointer, length). The library copies them. */
    char (*texts)[64] = calloc(n ? n : 1, sizeof *texts);
    emq_bytes *payloads = calloc(n ? n : 1, sizeof *payloads);
    for (size_t i = 0; i < n; i++) {
        int len = snprintf(texts[i], sizeof texts[i], "{\"to\":\"user%zu@example.com\"}", i);
        payloads[i] = (emq_bytes){(const uint8_t *)texts[i], (size_t)len};
    }
    emq_enqueue_list *list = NULL;
    st = n ? emq_enqueue_many(client, "emails", payloads, n, NULL, &list, &err) : EMQ_OK;
    free(payloads);
    free(texts);
    if (st != EMQ_OK) {
        emq_client_free(client);
        return fail("enqueue_many", st, err);
    }
    size_t ok = 0;
    for (size_t i = 0; list && i < list->len; i++) {
        if (list->items[i].status == EMQ_OK) {
            ok++;
            if (i < 3) printf("enqueued %s\n", list->items[i].id);
        } else {
            fprintf(stderr, "payload %zu: %s\n", i, list->items[i].error->message);
        }
    }
    emq_enqueue_list_free(list); /* frees the items and their errors */

    /* A job for later: in 60 seconds (server time). Options start from their
     * defaults (now, a fresh id); set only what differs. */
    const char reminder[] = "{\"to\":\"later@example.com\"}";
    emq_enqueue_options later;
    emq_enqueue_options_init(&later, sizeof later);
    later.delay_ms = 60000;
    emq_enqueued receipt;
    st = emq_enqueue(client, "emails", (const uint8_t *)reminder, sizeof reminder - 1, &later,
                     &receipt, &err);
    if (st != EMQ_OK) {
        emq_client_free(client);
        return fail("enqueue (delay_ms)", st, err);
    }

    emq_queue_counts counts;
    st = emq_counts(client, "emails", &counts, &err);
    if (st != EMQ_OK) {
        emq_client_free(client);
        return fail("counts", st, err);
    }
    printf("producer: enqueued=%zu scheduled=%s pending=%llu\n", ok, receipt.id,
           (unsigned long long)counts.pending);
    emq_client_free(client);
    return 0;
}
