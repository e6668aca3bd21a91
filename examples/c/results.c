/* Progress, logs and kept results (echomq:2.1.0): a worker reports progress,
 * logs a line and keeps a value for an hour; the producer waits for it.
 *
 *   EMQ_URL=redis://127.0.0.1:6379/ ./results
 */
#include <echomq.h>
#include <stdio.h>
#include <stdlib.h>

#define QUEUE "thumbnails"

static emq_handler_status make_thumbnail(const emq_job *job, void *user_data, emq_handler_result *result) {
    emq_client *c = user_data;
    emq_log(c, QUEUE, job->id, "resizing", 0, NULL, NULL);
    emq_update_progress(c, QUEUE, job->id, job->token, "{\"step\":1,\"of\":1}", NULL);
    static const char value[] = "160x120";
    emq_handler_result_set_value(result, (const uint8_t *)value, sizeof value - 1, NULL);
    return EMQ_HANDLER_OK;
}

static int fail(emq_error *err) {
    fprintf(stderr, "error: %s\n", err ? err->message : "?");
    emq_error_free(err);
    return 1;
}

int main(void) {
    const char *url = getenv("EMQ_URL");
    emq_connect_options options = emq_connect_options_default();
    emq_client *c = NULL;
    emq_error *err = NULL;
    if (emq_connect(url ? url : "redis://127.0.0.1:6379/", &options, &c, &err) != EMQ_OK) return fail(err);

    emq_worker_options wo = emq_worker_options_default();
    wo.keep_result_ms = 3600000;
    emq_worker *w = NULL;
    if (emq_worker_new(c, QUEUE, &wo, make_thumbnail, c, &w, &err) != EMQ_OK) return fail(err);
    if (emq_worker_start(w, &err) != EMQ_OK) return fail(err);

    emq_enqueued receipt;
    if (emq_enqueue(c, QUEUE, (const uint8_t *)"cat.png", 7, NULL, &receipt, &err) != EMQ_OK) return fail(err);
    emq_value *value = NULL;
    if (emq_wait_for_result(c, QUEUE, receipt.id, 30000, &value, &err) != EMQ_OK) return fail(err);
    printf("result: %.*s\n", (int)value->len, (const char *)value->data);
    emq_value_free(value);
    emq_string_list *lines = NULL;
    if (emq_logs(c, QUEUE, receipt.id, 0, -1, &lines, &err) != EMQ_OK) return fail(err);
    for (size_t i = 0; i < lines->len; i++) printf("log: %s\n", lines->items[i]);
    emq_string_list_free(lines);

    emq_worker_stop(w, NULL);
    emq_worker_join(w, NULL);
    emq_worker_free(w);
    emq_client_free(c);
    return 0;
}
