/*
 * A stand-in for the demo's Python producer, so scripts/test-c.sh can smoke
 * the C demo pieces without Python: enqueue N orders on `orders` with the
 * producer's payloads ({"order": i, "fail_once": i % 20 == 7}).
 *
 *   EMQ_URL=redis://127.0.0.1:PORT/ ./demo_orders N
 */
#include "echomq.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    int n = atoi(argv[1]);
    emq_client *client = NULL;
    emq_error *err = NULL;
    if (emq_connect(getenv("EMQ_URL"), NULL, &client, &err) != EMQ_OK) {
        fprintf(stderr, "connect: %s\n", err ? err->message : "?");
        emq_error_free(err);
        return 1;
    }
    for (int i = 0; i < n; i++) {
        char text[64];
        int len = snprintf(text, sizeof text, "{\"order\": %d, \"fail_once\": %s}", i,
                           i % 20 == 7 ? "true" : "false");
        if (emq_enqueue(client, "orders", (const uint8_t *)text, (size_t)len, NULL, NULL, &err) != EMQ_OK) {
            fprintf(stderr, "enqueue: %s\n", err ? err->message : "?");
            emq_error_free(err);
            emq_client_free(client);
            return 1;
        }
    }
    emq_client_free(client);
    return 0;
}
