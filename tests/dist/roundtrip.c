/* The C tarball's check (scripts/test-dist.sh): built with nothing but the
 * unpacked archive and pkg-config. Enqueue, claim, complete on $EMQ_URL (queue
 * argv[1]), check the wire counts, and print the library's version and the header's. */
#include <echomq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, emq_error *err) {
    fprintf(stderr, "%s: %s\n", what, err ? err->message : "unexpected result");
    emq_error_free(err);
    return 1;
}

int main(int argc, char **argv) {
    const char *url = getenv("EMQ_URL");
    const char *queue = argc > 1 ? argv[1] : "dist-c";
    emq_client *client = NULL;
    emq_error *err = NULL;
    if (emq_connect(url, NULL, &client, &err) != EMQ_OK) return fail("connect", err);

    emq_enqueued enq;
    if (emq_enqueue(client, queue, (const uint8_t *)"from C", 6, NULL, &enq, &err) != EMQ_OK)
        return fail("enqueue", err);
    emq_job *job = NULL;
    if (emq_claim(client, queue, 10000, &job, &err) != EMQ_OK) return fail("claim", err);
    if (job == NULL || strcmp(job->id, enq.id) != 0 || job->payload_len != 6 ||
        memcmp(job->payload, "from C", 6) != 0)
        return fail("claim returned another job", NULL);
    if (emq_complete(client, queue, job->id, job->token, &err) != EMQ_OK)
        return fail("complete", err);
    emq_job_free(job);

    emq_queue_counts counts;
    if (emq_counts(client, queue, &counts, &err) != EMQ_OK) return fail("counts", err);
    if (counts.pending != 0 || counts.active != 0 || counts.completed != 1)
        return fail("counts after the round trip", NULL);
    emq_client_free(client);

    printf("library=%s header=%s macros=%d.%d.%d\n", emq_version(), EMQ_VERSION,
           EMQ_VERSION_MAJOR, EMQ_VERSION_MINOR, EMQ_VERSION_PATCH);
    return 0;
}
