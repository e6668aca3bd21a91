/*
 * The C ABI against a real redis-server: EMQ_URL=redis://127.0.0.1:PORT/ ./test_ffi
 * Wire state is checked with raw redis-cli commands as well as with the API.
 * Prints one line per test and a final "N passed, M failed"; exit 1 on failure.
 */
#define _POSIX_C_SOURCE 200809L
#include "echomq.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the layouts the Rust side asserts (ffi-c/src/tests.rs), from C ---- */
#if UINTPTR_MAX == 0xFFFFFFFFFFFFFFFFu
_Static_assert(sizeof(emq_error) == 80 && offsetof(emq_error, class_word) == 32 &&
                   offsetof(emq_error, batch) == 40 && offsetof(emq_error, batch_len) == 48 &&
                   offsetof(emq_error, last_error) == 56 && offsetof(emq_error, job_id) == 64 &&
                   offsetof(emq_error, retry_after_ms) == 72,
               "emq_error");
_Static_assert(sizeof(emq_batch_item) == 20 && offsetof(emq_batch_item, state) == 16, "emq_batch_item");
_Static_assert(sizeof(emq_id) == 15, "emq_id");
_Static_assert(sizeof(emq_enqueued) == 16 && offsetof(emq_enqueued, duplicate) == 15, "emq_enqueued");
_Static_assert(sizeof(emq_bytes) == 16 && offsetof(emq_bytes, len) == 8, "emq_bytes");
_Static_assert(sizeof(emq_job_ref) == 16 && offsetof(emq_job_ref, token) == 8, "emq_job_ref");
_Static_assert(sizeof(emq_job) == 48 && offsetof(emq_job, token) == 16 &&
                   offsetof(emq_job, payload) == 24 && offsetof(emq_job, payload_len) == 32 &&
                   offsetof(emq_job, attempts) == 40,
               "emq_job");
_Static_assert(sizeof(emq_enqueue_result) == 32 && offsetof(emq_enqueue_result, id) == 4 &&
                   offsetof(emq_enqueue_result, duplicate) == 19 &&
                   offsetof(emq_enqueue_result, error) == 24,
               "emq_enqueue_result");
_Static_assert(sizeof(emq_verdict) == 16 && offsetof(emq_verdict, error) == 8, "emq_verdict");
_Static_assert(sizeof(emq_queue_counts) == 48 && offsetof(emq_queue_counts, failed) == 40,
               "emq_queue_counts");
_Static_assert(sizeof(emq_job_info) == 64 && offsetof(emq_job_info, state) == 16 &&
                   offsetof(emq_job_info, attempts) == 24 && offsetof(emq_job_info, payload) == 32 &&
                   offsetof(emq_job_info, payload_len) == 40 &&
                   offsetof(emq_job_info, last_error) == 48 &&
                   offsetof(emq_job_info, progress) == 56,
               "emq_job_info");
_Static_assert(sizeof(emq_id_parts) == 24 && offsetof(emq_id_parts, node_id) == 4 &&
                   offsetof(emq_id_parts, snowflake) == 8,
               "emq_id_parts");
_Static_assert(sizeof(emq_key_info) == 40 && offsetof(emq_key_info, member) == 32, "emq_key_info");
_Static_assert(sizeof(emq_connect_options) == 80 && offsetof(emq_connect_options, size) == 0 &&
                   offsetof(emq_connect_options, node_id) == 8 &&
                   offsetof(emq_connect_options, strict_bundle) == 12 &&
                   offsetof(emq_connect_options, client_name) == 16 &&
                   offsetof(emq_connect_options, max_payload) == 40 &&
                   offsetof(emq_connect_options, publish_events) == 48 &&
                   offsetof(emq_connect_options, wire_version) == 56 &&
                   offsetof(emq_connect_options, wait_replicas) == 64 &&
                   offsetof(emq_connect_options, wait_timeout_ms) == 72,
               "emq_connect_options");
_Static_assert(sizeof(emq_enqueue_options) == 56 && offsetof(emq_enqueue_options, size) == 0 &&
                   offsetof(emq_enqueue_options, id) == 8 &&
                   offsetof(emq_enqueue_options, run_at_ms) == 16 &&
                   offsetof(emq_enqueue_options, delay_ms) == 24 &&
                   offsetof(emq_enqueue_options, dedup_id) == 32 &&
                   offsetof(emq_enqueue_options, dedup_ttl_ms) == 40 &&
                   offsetof(emq_enqueue_options, priority) == 48,
               "emq_enqueue_options");
_Static_assert(sizeof(emq_worker_event) == 64 && offsetof(emq_worker_event, token) == 24 &&
                   offsetof(emq_worker_event, duration_ms) == 48 && offsetof(emq_worker_event, count) == 56,
               "emq_worker_event");
_Static_assert(sizeof(emq_queue_event) == 56 && offsetof(emq_queue_event, field_count) == 40 &&
                   offsetof(emq_queue_event, json) == 48,
               "emq_queue_event");
_Static_assert(sizeof(emq_worker_options) == 128 && offsetof(emq_worker_options, size) == 0 &&
                   offsetof(emq_worker_options, concurrency) == 8 &&
                   offsetof(emq_worker_options, backoff) == 12 &&
                   offsetof(emq_worker_options, lease_ms) == 16 &&
                   offsetof(emq_worker_options, shutdown_grace_ms) == 64 &&
                   offsetof(emq_worker_options, prefetch) == 72 &&
                   offsetof(emq_worker_options, handler_batch) == 80 &&
                   offsetof(emq_worker_options, dead_max_age_ms) == 88 &&
                   offsetof(emq_worker_options, dead_max_len) == 96 &&
                   offsetof(emq_worker_options, max_stalls) == 104 &&
                   offsetof(emq_worker_options, keep_result_ms) == 112 &&
                   offsetof(emq_worker_options, wake_fallback_ms) == 120,
               "emq_worker_options");
/* The answer enums keep the int32_t ABI of the typedefs they replaced. */
_Static_assert(sizeof(emq_job_state) == 4 && sizeof(emq_retry_outcome) == 4 &&
                   sizeof(emq_key_class) == 4 && sizeof(emq_settled) == 4 &&
                   sizeof(emq_worker_event_kind) == 4 && EMQ_STATE_DEAD == 3 &&
                   EMQ_EVENT_CLOSED == 9 && EMQ_SETTLED_DEAD == 2,
               "answer enums");
_Static_assert(sizeof(emq_string_list) == 16 && offsetof(emq_string_list, len) == 8, "emq_string_list");
_Static_assert(sizeof(emq_stats) == 80 && offsetof(emq_stats, in_flight) == 40 &&
                   offsetof(emq_stats, released) == 72,
               "emq_stats");
#endif

/* ---- a tiny harness ---- */
/* A string literal as an (uint8_t pointer, length) payload. */
#define LIT(s) (const uint8_t *)(s), sizeof(s) - 1

static int g_passed, g_failed, g_current_failed;
static const char *g_url;
static const char *g_self; /* argv[0], to start this program again as a worker process */

#define CHECK(cond)                                                              \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "  FAILED %s:%d: %s\n", __FILE__, __LINE__, #cond);  \
            g_current_failed = 1;                                                \
            return;                                                              \
        }                                                                        \
    } while (0)

static void run_test(const char *name, void (*fn)(void)) {
    const char *only = getenv("EMQ_C_TEST_ONLY"); /* a substring of the names to run */
    if (only && !strstr(name, only)) return;
    g_current_failed = 0;
    fn();
    if (g_current_failed) {
        g_failed++;
        printf("FAIL %s\n", name);
    } else {
        g_passed++;
        printf("ok   %s\n", name);
    }
    fflush(stdout);
}

/* `ok(call, err)`: true for EMQ_OK; otherwise prints and frees the error. A
 * macro, so that `err` is read after the call has set it (the order in which
 * a function's arguments are evaluated is unspecified: read first, a failure
 * printed "(no error record)" and leaked the record). */
static _Thread_local emq_status g_ok_status;
#define ok(call, err) (g_ok_status = (call), ok_status(g_ok_status, (err)))
static int ok_status(emq_status status, emq_error *err) {
    if (status == EMQ_OK) return 1;
    fprintf(stderr, "  status %d (%s): %s\n", status, emq_status_code(status),
            err && err->message ? err->message : "(no error record)");
    emq_error_free(err);
    return 0;
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Enqueue options at their defaults (now, a minted id), to set fields on. */
static emq_enqueue_options enqueue_options(void) {
    emq_enqueue_options o;
    emq_enqueue_options_init(&o, sizeof o);
    return o;
}

/* Run `redis-cli -u URL <args>` and keep the first line of its answer. */
static int redis(const char *url, char *out, size_t cap, const char *fmt, ...) {
    char args[1024], cmd[1400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "redis-cli -u '%s' %s 2>/dev/null", url, args);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    char line[1024] = "";
    if (!fgets(line, sizeof line, p)) line[0] = 0;
    pclose(p);
    line[strcspn(line, "\r\n")] = 0;
    if (out) snprintf(out, cap, "%s", line);
    return 0;
}

static emq_client *connect_or_null(void) {
    emq_client *client = NULL;
    emq_error *err = NULL;
    if (!ok(emq_connect(g_url, NULL, &client, &err), err)) return NULL;
    return client;
}

/* ---- tests ---- */

static void test_pure_helpers(void) {
    uint16_t slot = 0;
    const char *key = "emq:{orders}:pending";
    CHECK(emq_slot((const uint8_t *)key, strlen(key), &slot, NULL) == EMQ_OK && slot == 105);
    CHECK(strcmp(emq_protocol_version(), "echomq:2.1.0") == 0);
    CHECK(strcmp(emq_status_code(EMQ_ERR_STALE), "EMQSTALE") == 0);
    CHECK(strcmp(emq_status_code(EMQ_ERR_NULL_POINTER), "EMQ_NULL_POINTER") == 0);

    emq_id_parts parts;
    CHECK(emq_parse_id("USR0KHTOWnGLuC", &parts, NULL) == EMQ_OK);
    CHECK(strcmp(parts.ns, "USR") == 0 && parts.snowflake == 274557032793636864ull);
    emq_id id;
    CHECK(emq_encode_id("USR", parts.snowflake, &id, NULL) == EMQ_OK);
    CHECK(strcmp(id.text, "USR0KHTOWnGLuC") == 0);
    CHECK(emq_mint_job_id(-1, &id, NULL) == EMQ_OK && strncmp(id.text, "JOB", 3) == 0);
    CHECK(strlen(id.text) == EMQ_ID_LEN);
    bool valid = false;
    CHECK(emq_is_valid_id(id.text, &valid, NULL) == EMQ_OK && valid);
    CHECK(emq_is_valid_id("JOB123", &valid, NULL) == EMQ_OK && !valid);
    emq_id bound;
    CHECK(emq_parse_id(id.text, &parts, NULL) == EMQ_OK);
    CHECK(emq_lex_bound(parts.minted_at_ms, &bound, NULL) == EMQ_OK);
    CHECK(strcmp(bound.text, id.text) <= 0);

    CHECK(emq_is_valid_queue("orders.eu-1_x", &valid, NULL) == EMQ_OK && valid);
    CHECK(emq_is_valid_queue("emq", &valid, NULL) == EMQ_OK && !valid);
    emq_error *err = NULL;
    CHECK(emq_validate_queue("a b", &err) == EMQ_ERR_INVALID_QUEUE);
    CHECK(err && err->status == EMQ_ERR_INVALID_QUEUE && strcmp(err->code, "EMQ_INVALID_QUEUE") == 0);
    emq_error_free(err);

    char *text = NULL;
    CHECK(emq_queue_key("orders", EMQ_KEY_SCHEDULE, &text, NULL) == EMQ_OK);
    CHECK(strcmp(text, "emq:{orders}:schedule") == 0);
    emq_string_free(text);
    CHECK(emq_job_key("orders", "ORD0NgWEfAEJfs", &text, NULL) == EMQ_OK);
    CHECK(strcmp(text, "emq:{orders}:job:ORD0NgWEfAEJfs") == 0);
    emq_string_free(text);
    CHECK(emq_job_key("orders", "ORD0NgWEfAEJf", &text, NULL) == EMQ_ERR_INVALID_ID && text == NULL);

    emq_key_info *info = NULL;
    const char *jk = "emq:{orders}:job:ORD0NgWEfAEJfs";
    CHECK(emq_classify((const uint8_t *)jk, strlen(jk), &info, NULL) == EMQ_OK);
    CHECK(info->key_class == EMQ_CLASS_JOB && strcmp(info->queue, "orders") == 0);
    CHECK(strcmp(info->id, "ORD0NgWEfAEJfs") == 0 && info->key_type == NULL && info->member == NULL);
    emq_key_info_free(info);
    const uint8_t junk[] = {0xff, 0x00, 'x'};
    CHECK(emq_classify(junk, sizeof junk, &info, NULL) == EMQ_OK);
    CHECK(info->key_class == EMQ_CLASS_UNCLASSIFIED && info->queue == NULL);
    emq_key_info_free(info);
    const char *mk = "emq:{orders}:metrics:failed";
    CHECK(emq_classify((const uint8_t *)mk, strlen(mk), &info, NULL) == EMQ_OK);
    CHECK(info->key_class == EMQ_CLASS_METRIC && strcmp(info->key_type, "metrics:failed") == 0);
    emq_key_info_free(info);
}

static void test_enqueue_claim_complete(void) {
    emq_client *c = connect_or_null();
    CHECK(c);
    emq_error *err = NULL;
    const uint8_t payload[] = {'h', 'i', 0, 0xff, '!'};
    emq_enqueued receipt;
    CHECK(ok(emq_enqueue(c, "t.basic", payload, sizeof payload, NULL, &receipt, &err), err));
    CHECK(err == NULL && !receipt.duplicate && strlen(receipt.id) == 14);

    char line[256];
    redis(g_url, line, sizeof line, "HGET 'emq:{t.basic}:job:%s' state", receipt.id);
    CHECK(strcmp(line, "pending") == 0);
    bool there = false;
    CHECK(ok(emq_exists(c, "t.basic", receipt.id, &there, &err), err) && there);
    CHECK(emq_exists(c, "t.basic", "not an id", &there, NULL) == EMQ_ERR_INVALID_ID);
    CHECK(emq_exists(c, "t.basic", receipt.id, NULL, NULL) == EMQ_ERR_NULL_POINTER);

    emq_job *job = NULL;
    CHECK(ok(emq_claim(c, "t.basic", 30000, &job, &err), err));
    CHECK(job != NULL && strcmp(job->id, receipt.id) == 0 && job->token == 1);
    CHECK(job->payload_len == sizeof payload && memcmp(job->payload, payload, sizeof payload) == 0);
    redis(g_url, line, sizeof line, "ZSCORE 'emq:{t.basic}:active' %s", job->id);
    CHECK(atoll(line) > (long long)now_ms());

    CHECK(ok(emq_complete(c, "t.basic", job->id, job->token, &err), err));
    redis(g_url, line, sizeof line, "EXISTS 'emq:{t.basic}:job:%s'", receipt.id);
    CHECK(strcmp(line, "0") == 0);
    CHECK(ok(emq_exists(c, "t.basic", receipt.id, &there, &err), err) && !there);
    redis(g_url, line, sizeof line, "ZCARD 'emq:{t.basic}:active'");
    CHECK(strcmp(line, "0") == 0);
    emq_job_info *row = (emq_job_info *)1;
    CHECK(ok(emq_get_job(c, "t.basic", receipt.id, &row, &err), err) && row == NULL);
    emq_queue_counts counts;
    CHECK(ok(emq_counts(c, "t.basic", &counts, &err), err));
    CHECK(counts.pending == 0 && counts.active == 0 && counts.completed == 1);
    emq_job_free(job);

    /* Nothing pending: EMQ_OK and a NULL job. */
    job = (emq_job *)1;
    CHECK(ok(emq_claim(c, "t.basic", 30000, &job, &err), err) && job == NULL);
    /* Complete again: the row is gone. */
    CHECK(emq_complete(c, "t.basic", receipt.id, 1, &err) == EMQ_ERR_GONE);
    CHECK(err && err->status == EMQ_ERR_GONE);
    emq_error_free(err);
    emq_client_free(c);
}

static void test_stale_token_keeps_row(void) {
    emq_client *c = connect_or_null();
    CHECK(c);
    emq_error *err = NULL;
    emq_enqueued r;
    CHECK(ok(emq_enqueue(c, "t.stale", LIT("x"), NULL, &r, &err), err));
    emq_job *job = NULL;
    CHECK(ok(emq_claim(c, "t.stale", 30000, &job, &err), err) && job);
    CHECK(emq_complete(c, "t.stale", job->id, job->token + 1, &err) == EMQ_ERR_STALE);
    CHECK(err && err->status == EMQ_ERR_STALE && strcmp(err->code, "EMQSTALE") == 0);
    CHECK(err->message && strlen(err->message) > 0 && err->found == NULL);
    emq_error_free(err);
    char line[64];
    redis(g_url, line, sizeof line, "HGET 'emq:{t.stale}:job:%s' state", job->id);
    CHECK(strcmp(line, "active") == 0);
    redis(g_url, line, sizeof line, "HGET 'emq:{t.stale}:job:%s' attempts", job->id);
    CHECK(strcmp(line, "1") == 0);
    /* The right token still settles it. */
    CHECK(ok(emq_complete(c, "t.stale", job->id, job->token, &err), err));
    emq_job_free(job);
    emq_client_free(c);
}

static void test_version_fence(void) {
    char url1[512];
    size_t n = strlen(g_url);
    snprintf(url1, sizeof url1, "%s%s3", g_url, (n && g_url[n - 1] == '/') ? "" : "/");
    redis(url1, NULL, 0, "SET '{emq}:version' echomq:9.9.9");
    emq_client *c = (emq_client *)1;
    emq_error *err = NULL;
    CHECK(emq_connect(url1, NULL, &c, &err) == EMQ_ERR_VERSION_FENCE);
    CHECK(c == NULL && err != NULL);
    CHECK(err->status == EMQ_ERR_VERSION_FENCE && strcmp(err->code, "EMQ_VERSION_FENCE") == 0);
    CHECK(err->found && strcmp(err->found, "echomq:9.9.9") == 0 && err->class_word == NULL);
    emq_error_free(err);
    /* The fence sent nothing else: the planted value is untouched, no bundle written. */
    char line[64];
    redis(url1, line, sizeof line, "GET '{emq}:version'");
    CHECK(strcmp(line, "echomq:9.9.9") == 0);
    redis(url1, line, sizeof line, "EXISTS '{emq}:bundle'");
    CHECK(strcmp(line, "0") == 0);
    /* NULL err is allowed too. */
    CHECK(emq_connect(url1, NULL, &c, NULL) == EMQ_ERR_VERSION_FENCE && c == NULL);
    redis(url1, NULL, 0, "FLUSHDB");
}

static void test_bad_arguments_are_codes(void) {
    emq_client *c = connect_or_null();
    CHECK(c);
    emq_error *err = NULL;
    emq_enqueued r;
    /* invalid id */
    CHECK(emq_complete(c, "t.args", "JOB-not-an-id", 1, &err) == EMQ_ERR_INVALID_ID);
    CHECK(err && strcmp(err->code, "EMQ_INVALID_ID") == 0);
    emq_error_free(err);
    emq_enqueue_options bad_id = enqueue_options();
    bad_id.id = "JOB0000000000";
    CHECK(emq_enqueue(c, "t.args", LIT("x"), &bad_id, &r, NULL) == EMQ_ERR_INVALID_ID);
    /* invalid queue */
    CHECK(emq_enqueue(c, "emq", LIT("x"), NULL, &r, &err) == EMQ_ERR_INVALID_QUEUE);
    emq_error_free(err);
    CHECK(emq_enqueue(c, "", LIT("x"), NULL, &r, NULL) == EMQ_ERR_INVALID_QUEUE);
    CHECK(emq_claim(c, "a}b", 1000, &(emq_job *){NULL}, NULL) == EMQ_ERR_INVALID_QUEUE);
    /* invalid argument: zero lease */
    emq_job *job = NULL;
    CHECK(emq_claim(c, "t.args", 0, &job, &err) == EMQ_ERR_INVALID_ARGUMENT && job == NULL);
    emq_error_free(err);
    /* null pointers */
    CHECK(emq_enqueue(NULL, "t.args", LIT("x"), NULL, &r, &err) == EMQ_ERR_NULL_POINTER);
    CHECK(err && err->status == EMQ_ERR_NULL_POINTER && strstr(err->message, "client"));
    emq_error_free(err);
    CHECK(emq_enqueue(c, NULL, LIT("x"), NULL, &r, NULL) == EMQ_ERR_NULL_POINTER);
    CHECK(emq_enqueue(c, "t.args", NULL, 3, NULL, &r, NULL) == EMQ_ERR_NULL_POINTER);
    CHECK(emq_claim(c, "t.args", 1000, NULL, NULL) == EMQ_ERR_NULL_POINTER);
    CHECK(emq_counts(c, "t.args", NULL, NULL) == EMQ_ERR_NULL_POINTER);
    CHECK(emq_connect(g_url, NULL, NULL, NULL) == EMQ_ERR_NULL_POINTER);
    emq_job_ref refs[2] = {{"JOB0KHTOWnGLuC", 1}, {NULL, 1}};
    emq_verdict_list *verdicts = NULL;
    CHECK(emq_complete_many(c, "t.args", refs, 2, &verdicts, &err) == EMQ_ERR_NULL_POINTER);
    CHECK(verdicts == NULL && strstr(err->message, "jobs[1].id"));
    emq_error_free(err);
    /* An empty payload may be NULL. */
    CHECK(ok(emq_enqueue(c, "t.args", NULL, 0, NULL, &r, &err), err));
    /* invalid UTF-8 */
    CHECK(emq_enqueue(c, "bad\xff", LIT("x"), NULL, &r, &err) == EMQ_ERR_INVALID_UTF8);
    CHECK(err && strcmp(err->code, "EMQ_INVALID_UTF8") == 0);
    emq_error_free(err);
    CHECK(emq_connect("redis://\xc3\x28", NULL, &(emq_client *){NULL}, NULL) == EMQ_ERR_INVALID_UTF8);
    /* unknown enum values */
    emq_id_list *ids = NULL;
    CHECK(emq_browse(c, "t.args", 42, false, 10, NULL, &ids, NULL) == EMQ_ERR_INVALID_ARGUMENT);
    /* oversized payload with a small max_payload */
    emq_connect_options o = emq_connect_options_default();
    o.max_payload = 4;
    o.client_name = "emq-c-test";
    emq_client *small = NULL;
    CHECK(ok(emq_connect(g_url, &o, &small, &err), err));
    CHECK(emq_enqueue(small, "t.args", LIT("12345"), NULL, &r, NULL) == EMQ_ERR_INVALID_ARGUMENT);
    emq_client_free(small);
    /* a refused connection */
    o = emq_connect_options_default();
    o.connect_timeout_ms = 2000;
    emq_client *nowhere = NULL;
    CHECK(emq_connect("redis://127.0.0.1:1/", &o, &nowhere, &err) == EMQ_ERR_CONNECTION);
    CHECK(nowhere == NULL);
    emq_error_free(err);
    emq_client_free(c);
}

static void test_batches_and_inspection(void) {
    emq_client *c = connect_or_null();
    CHECK(c);
    emq_error *err = NULL;
    const char *q = "t.batch";
    emq_bytes payloads[3] = {{(const uint8_t *)"a", 1}, {(const uint8_t *)"bb", 2}, {NULL, 0}};
    emq_enqueue_list *el = NULL;
    CHECK(ok(emq_enqueue_many(c, q, payloads, 3, NULL, &el, &err), err));
    CHECK(el && el->len == 3);
    for (size_t i = 0; i < el->len; i++)
        CHECK(el->items[i].status == EMQ_OK && el->items[i].error == NULL && !el->items[i].duplicate);
    CHECK(strcmp(el->items[0].id, el->items[1].id) < 0);

    emq_id_list *ids = NULL;
    CHECK(ok(emq_browse(c, q, EMQ_BROWSE_PENDING, false, 10, NULL, &ids, &err), err));
    CHECK(ids->len == 3 && strcmp(ids->ids[0].text, el->items[0].id) == 0);
    emq_id_list_free(ids);
    emq_time_range none = {0, 1};
    CHECK(ok(emq_browse(c, q, EMQ_BROWSE_PENDING, true, 10, &none, &ids, &err), err));
    CHECK(ids->len == 0 && ids->ids == NULL);
    emq_id_list_free(ids);

    emq_job_list *jobs = NULL;
    CHECK(ok(emq_claim_many(c, q, 10, 30000, &jobs, &err), err));
    CHECK(jobs->len == 3 && jobs->jobs[1].payload_len == 2 && jobs->jobs[2].payload_len == 0);
    CHECK(memcmp(jobs->jobs[1].payload, "bb", 2) == 0);

    emq_job_ref refs[3];
    for (size_t i = 0; i < 3; i++) refs[i] = (emq_job_ref){jobs->jobs[i].id, jobs->jobs[i].token};
    emq_verdict_list *vl = NULL;
    /* extend re-scores the lease deadline (the score in active) to server-now
     * + lease: 30 s -> 10 min -> 20 min moves it by minutes, however slow. */
    char s0[64], s1[64], s2[64];
    redis(g_url, s0, sizeof s0, "ZSCORE 'emq:{%s}:active' %s", q, refs[0].id);
    CHECK(ok(emq_extend_many(c, q, refs, 3, 600000, &vl, &err), err));
    CHECK(vl->len == 3 && vl->items[0].status == EMQ_OK);
    emq_verdict_list_free(vl);
    redis(g_url, s1, sizeof s1, "ZSCORE 'emq:{%s}:active' %s", q, refs[0].id);
    CHECK(ok(emq_extend(c, q, refs[0].id, refs[0].token, 1200000, &err), err));
    redis(g_url, s2, sizeof s2, "ZSCORE 'emq:{%s}:active' %s", q, refs[0].id);
    CHECK(atof(s1) >= atof(s0) + 560000 && atof(s2) >= atof(s1) + 590000);
    refs[2].token = 99; /* stale */
    CHECK(ok(emq_complete_many(c, q, refs, 3, &vl, &err), err));
    CHECK(vl->len == 3 && vl->items[0].status == EMQ_OK && vl->items[1].status == EMQ_OK);
    CHECK(vl->items[2].status == EMQ_ERR_STALE && vl->items[2].error &&
          vl->items[2].error->status == EMQ_ERR_STALE);
    emq_verdict_list_free(vl);

    /* retry → scheduled, then dead at max attempts; requeue_dead; remove */
    emq_retry_outcome outcome = -1;
    CHECK(ok(emq_retry(c, q, refs[2].id, 1, 0, 1, "it broke", &outcome, &err), err));
    CHECK(outcome == EMQ_RETRY_DEAD);
    emq_job_info *row = NULL;
    CHECK(ok(emq_get_job(c, q, refs[2].id, &row, &err), err) && row);
    CHECK(row->state == EMQ_STATE_DEAD && row->attempts == 1 && row->payload_len == 0);
    CHECK(row->last_error && strcmp(row->last_error, "it broke") == 0);
    emq_job_info_free(row);
    CHECK(ok(emq_browse(c, q, EMQ_BROWSE_DEAD, false, 10, NULL, &ids, &err), err));
    CHECK(ids->len == 1 && strcmp(ids->ids[0].text, refs[2].id) == 0);
    emq_id_list_free(ids);
    CHECK(emq_requeue_dead(c, q, refs[0].id, &err) == EMQ_ERR_GONE ||
          (err && err->status == EMQ_ERR_NOT_DEAD));
    emq_error_free(err);
    CHECK(ok(emq_requeue_dead(c, q, refs[2].id, &err), err));
    CHECK(ok(emq_get_job(c, q, refs[2].id, &row, &err), err) && row);
    CHECK(row->state == EMQ_STATE_PENDING && row->last_error == NULL);
    emq_job_info_free(row);
    CHECK(emq_requeue_dead(c, q, refs[2].id, &err) == EMQ_ERR_NOT_DEAD);
    emq_error_free(err);

    emq_job *job = NULL;
    CHECK(ok(emq_claim(c, q, 30000, &job, &err), err) && job);
    CHECK(emq_remove(c, q, job->id, &err) == EMQ_ERR_JOB_ACTIVE);
    emq_error_free(err);
    CHECK(ok(emq_retry(c, q, job->id, job->token, 60000, 5, "later", &outcome, &err), err));
    CHECK(outcome == EMQ_RETRY_SCHEDULED);
    CHECK(ok(emq_remove(c, q, job->id, &err), err));
    CHECK(emq_remove(c, q, job->id, &err) == EMQ_ERR_GONE);
    emq_error_free(err);
    emq_job_free(job);
    emq_job_list_free(jobs);
    emq_enqueue_list_free(el);

    /* chosen-id duplicates, scheduling, promote, reap */
    emq_id id;
    emq_enqueued r;
    CHECK(ok(emq_mint_job_id(-1, &id, &err), err));
    emq_enqueue_options o = enqueue_options();
    o.id = id.text;
    CHECK(ok(emq_enqueue(c, q, LIT("p"), &o, &r, &err), err) && !r.duplicate);
    CHECK(ok(emq_enqueue(c, q, LIT("other"), &o, &r, &err), err) && r.duplicate);
    CHECK(strcmp(r.id, id.text) == 0);
    o = enqueue_options();
    o.run_at_ms = now_ms() - 1000;
    CHECK(ok(emq_enqueue(c, q, LIT("at"), &o, &r, &err), err));
    o = enqueue_options();
    o.delay_ms = 3600000;
    CHECK(ok(emq_enqueue(c, q, LIT("in"), &o, NULL, &err), err));
    uint64_t moved = 0;
    CHECK(ok(emq_promote(c, q, 100, &moved, &err), err) && moved == 1);
    CHECK(ok(emq_reap(c, q, 100, &moved, &err), err) && moved == 0);
    emq_queue_counts counts;
    CHECK(ok(emq_counts(c, q, &counts, &err), err));
    CHECK(counts.pending == 2 && counts.scheduled == 1 && counts.active == 0);
    CHECK(counts.completed == 2 && counts.dead == 0 && counts.failed == 1);

    /* pause / resume */
    bool paused = true;
    CHECK(ok(emq_is_paused(c, q, &paused, &err), err) && !paused);
    CHECK(ok(emq_pause(c, q, &err), err));
    CHECK(ok(emq_is_paused(c, q, &paused, &err), err) && paused);
    job = (emq_job *)1;
    CHECK(ok(emq_claim(c, q, 1000, &job, &err), err) && job == NULL);
    CHECK(ok(emq_resume(c, q, &err), err));
    CHECK(ok(emq_claim(c, q, 1000, &job, &err), err) && job != NULL);
    emq_job_free(job);

    emq_bundle_mismatch_list *ml = NULL;
    CHECK(ok(emq_bundle_mismatches(c, &ml, &err), err) && ml && ml->len == 0);
    emq_bundle_mismatch_list_free(ml);
    uint16_t node = 0;
    CHECK(ok(emq_client_node_id(c, &node, &err), err) && node <= 1023);

    CHECK(ok(emq_close(c, &err), err));
    CHECK(emq_counts(c, q, &counts, &err) == EMQ_ERR_CLOSED);
    CHECK(err && strcmp(err->code, "EMQ_CLOSED") == 0);
    emq_error_free(err);
    emq_client_free(c);
}

/* One client, several threads at once. */
#define THREADS 4
#define PER_THREAD 50
static void *enqueue_from_thread(void *arg) {
    emq_client *c = arg;
    for (int i = 0; i < PER_THREAD; i++)
        if (emq_enqueue(c, "t.threads", LIT("t"), NULL, NULL, NULL) != EMQ_OK) return (void *)1;
    return NULL;
}

static void test_threads_share_a_client(void) {
    emq_client *c = connect_or_null();
    CHECK(c);
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, enqueue_from_thread, c);
    int failures = 0;
    for (int i = 0; i < THREADS; i++) {
        void *rv = NULL;
        pthread_join(t[i], &rv);
        failures += rv != NULL;
    }
    CHECK(failures == 0);
    emq_queue_counts counts;
    CHECK(emq_counts(c, "t.threads", &counts, NULL) == EMQ_OK);
    CHECK(counts.pending == THREADS * PER_THREAD);
    emq_client_free(c);
}

/* ---- worker ---- */
#define N_JOBS 200
typedef struct {
    atomic_int seen[N_JOBS];
    atomic_int calls;
    emq_client *client; /* for the follow-up enqueue */
    emq_handler_status verdict;
} handler_state;

static emq_handler_status count_handler(const emq_job *job, void *user_data, emq_handler_result *result) {
    handler_state *st = user_data;
    (void)result;
    char text[32] = "";
    size_t n = job->payload_len < sizeof text - 1 ? job->payload_len : sizeof text - 1;
    memcpy(text, job->payload, n);
    int i = atoi(text);
    if (i >= 0 && i < N_JOBS) atomic_fetch_add(&st->seen[i], 1);
    atomic_fetch_add(&st->calls, 1);
    /* A handler may use the client: enqueue a receipt. */
    char receipt[64];
    int len = snprintf(receipt, sizeof receipt, "%d c %llu", i, (unsigned long long)job->token);
    if (emq_enqueue(st->client, "t.worker.receipts", (const uint8_t *)receipt, (size_t)len, NULL, NULL, NULL) != EMQ_OK)
        return EMQ_HANDLER_RETRY;
    return EMQ_HANDLER_OK;
}

static int wait_for(emq_worker *w, uint64_t completed, uint64_t dead, long timeout_ms) {
    emq_stats s;
    for (long waited = 0; waited < timeout_ms; waited += 20) {
        if (emq_worker_stats(w, &s, NULL) == EMQ_OK && s.completed >= completed && s.dead >= dead) return 1;
        sleep_ms(20);
    }
    return 0;
}

static void test_worker_processes_each_job_once(void) {
    emq_client *c = connect_or_null();
    CHECK(c);
    emq_error *err = NULL;
    static handler_state st;
    memset(&st, 0, sizeof st);
    st.client = c;
    emq_bytes payloads[N_JOBS];
    char texts[N_JOBS][8];
    for (int i = 0; i < N_JOBS; i++) {
        int len = snprintf(texts[i], sizeof texts[i], "%d", i);
        payloads[i] = (emq_bytes){(const uint8_t *)texts[i], (size_t)len};
    }
    emq_enqueue_list *el = NULL;
    CHECK(ok(emq_enqueue_many(c, "t.worker", payloads, N_JOBS, NULL, &el, &err), err));
    emq_enqueue_list_free(el);

    emq_worker_options o = emq_worker_options_default();
    CHECK(o.prefetch == EMQ_PREFETCH_ADAPTIVE && EMQ_PREFETCH_CONCURRENCY == EMQ_PREFETCH_ADAPTIVE && o.handler_batch == 1);
    emq_worker *w = NULL;
    o.prefetch = -5; /* neither >= 0 nor EMQ_PREFETCH_ADAPTIVE */
    CHECK(emq_worker_new(c, "t.worker", &o, count_handler, &st, &w, &err) ==
          EMQ_ERR_INVALID_ARGUMENT && w == NULL);
    emq_error_free(err);
    err = NULL;
    o.prefetch = EMQ_PREFETCH_ADAPTIVE;
    o.concurrency = 8;
    o.handler_batch = 4; /* callbacks in batches of up to 4 per blocking call */
    o.pump_interval_ms = 100;
    CHECK(ok(emq_worker_new(c, "t.worker", &o, count_handler, &st, &w, &err), err));
    CHECK(ok(emq_worker_start(w, &err), err));
    CHECK(emq_worker_start(w, &err) == EMQ_ERR_INVALID_ARGUMENT);
    emq_error_free(err);
    int done = wait_for(w, N_JOBS, 0, 60000);
    CHECK(ok(emq_worker_stop(w, &err), err));
    CHECK(ok(emq_worker_join(w, &err), err));
    CHECK(done);
    emq_stats s;
    CHECK(ok(emq_worker_stats(w, &s, &err), err));
    CHECK(s.completed == N_JOBS && s.claimed == N_JOBS && s.retried == 0 && s.dead == 0);
    CHECK(s.in_flight == 0);
    emq_worker_free(w);
    for (int i = 0; i < N_JOBS; i++) CHECK(atomic_load(&st.seen[i]) == 1);
    CHECK(atomic_load(&st.calls) == N_JOBS);
    emq_queue_counts counts;
    CHECK(ok(emq_counts(c, "t.worker", &counts, &err), err));
    CHECK(counts.pending == 0 && counts.active == 0 && counts.completed == N_JOBS);
    CHECK(ok(emq_counts(c, "t.worker.receipts", &counts, &err), err) && counts.pending == N_JOBS);
    char line[64];
    redis(g_url, line, sizeof line, "ZCARD 'emq:{t.worker}:active'");
    CHECK(strcmp(line, "0") == 0);
    emq_client_free(c);
}

static emq_handler_status failing_handler(const emq_job *job, void *user_data, emq_handler_result *result) {
    handler_state *st = user_data;
    atomic_fetch_add(&st->calls, 1);
    char msg[64];
    snprintf(msg, sizeof msg, "always fails (attempt %llu)", (unsigned long long)job->token);
    emq_handler_result_set_message(result, msg, NULL);
    return st->verdict;
}

static void test_failing_handler_retries_then_dead(void) {
    emq_client *c = connect_or_null();
    CHECK(c);
    emq_error *err = NULL;
    static handler_state st;
    memset(&st, 0, sizeof st);
    st.verdict = EMQ_HANDLER_RETRY;
    emq_enqueued r;
    CHECK(ok(emq_enqueue(c, "t.fail", LIT("x"), NULL, &r, &err), err));

    emq_worker_options o = emq_worker_options_default();
    o.max_attempts = 3;
    o.backoff = EMQ_BACKOFF_FIXED;
    o.backoff_base_ms = 20;
    o.pump_interval_ms = 50;
    emq_worker *w = NULL;
    CHECK(ok(emq_worker_new(c, "t.fail", &o, failing_handler, &st, &w, &err), err));
    CHECK(ok(emq_worker_start(w, &err), err));
    int done = wait_for(w, 0, 1, 60000);
    emq_worker_stop(w, NULL);
    CHECK(ok(emq_worker_join(w, &err), err));
    CHECK(done);
    emq_stats s;
    CHECK(ok(emq_worker_stats(w, &s, &err), err));
    CHECK(s.retried == 2 && s.dead == 1 && s.completed == 0);
    CHECK(atomic_load(&st.calls) == 3);
    emq_worker_free(w);

    emq_job_info *row = NULL;
    CHECK(ok(emq_get_job(c, "t.fail", r.id, &row, &err), err) && row);
    CHECK(row->state == EMQ_STATE_DEAD && row->attempts == 3);
    CHECK(row->last_error && strcmp(row->last_error, "always fails (attempt 3)") == 0);
    emq_job_info_free(row);
    char line[128];
    redis(g_url, line, sizeof line, "HGET 'emq:{t.fail}:job:%s' last_error", r.id);
    CHECK(strcmp(line, "always fails (attempt 3)") == 0);

    /* A fatal failure goes straight to dead. */
    memset(&st, 0, sizeof st);
    st.verdict = EMQ_HANDLER_FATAL;
    CHECK(ok(emq_enqueue(c, "t.fatal", LIT("x"), NULL, &r, &err), err));
    CHECK(ok(emq_worker_new(c, "t.fatal", &o, failing_handler, &st, &w, &err), err));
    CHECK(ok(emq_worker_start(w, &err), err));
    done = wait_for(w, 0, 1, 60000);
    emq_worker_stop(w, NULL);
    CHECK(ok(emq_worker_join(w, &err), err));
    CHECK(done && atomic_load(&st.calls) == 1);
    emq_worker_free(w);
    CHECK(ok(emq_get_job(c, "t.fatal", r.id, &row, &err), err) && row);
    CHECK(row->state == EMQ_STATE_DEAD && row->attempts == 1);
    emq_job_info_free(row);
    emq_client_free(c);
}

static void test_worker_arguments(void) {
    emq_client *c = connect_or_null();
    CHECK(c);
    emq_error *err = NULL;
    emq_worker *w = (emq_worker *)1;
    CHECK(emq_worker_new(c, "emq", NULL, count_handler, NULL, &w, &err) == EMQ_ERR_INVALID_QUEUE);
    CHECK(w == NULL);
    emq_error_free(err);
    CHECK(emq_worker_new(c, "t.w", NULL, NULL, NULL, &w, NULL) == EMQ_ERR_NULL_POINTER);
    emq_worker_options o = emq_worker_options_default();
    o.concurrency = 0;
    CHECK(emq_worker_new(c, "t.w", &o, count_handler, NULL, &w, NULL) == EMQ_ERR_INVALID_ARGUMENT);
    o = emq_worker_options_default();
    o.backoff = 7;
    CHECK(emq_worker_new(c, "t.w", &o, count_handler, NULL, &w, NULL) == EMQ_ERR_INVALID_ARGUMENT);
    /* Never started: join returns at once, free is fine; the client may go first. */
    CHECK(ok(emq_worker_new(c, "t.w", NULL, count_handler, NULL, &w, &err), err));
    emq_client_free(c);
    CHECK(ok(emq_worker_join(w, &err), err));
    emq_worker_free(w);
    CHECK(emq_handler_result_set_message(NULL, "x", NULL) == EMQ_ERR_NULL_POINTER);
}

/* Issue #11: node-id range, redacted URLs, option ranges, closed clients. */
/* ---- issue 41: failures and error kinds provoked for real ---- */

/* A server of the test's own (to stop under a client, or to plant state the
 * shared one must not see): $EMQ_TEST_SERVER or redis-server on a free port.
 * Returns its pid (0 on failure) and its URL in `url`. */
static pid_t start_own_server(char *url, size_t cap) {
    const char *bin = getenv("EMQ_TEST_SERVER");
    if (!bin || !*bin) bin = "redis-server";
    for (int attempt = 0; attempt < 20; attempt++) {
        int s = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof a;
        if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) != 0 ||
            getsockname(s, (struct sockaddr *)&a, &len) != 0) {
            if (s >= 0) close(s);
            return 0;
        }
        char port[16];
        snprintf(port, sizeof port, "%d", ntohs(a.sin_port));
        close(s);
        pid_t pid = fork();
        if (pid == 0) {
            int null = open("/dev/null", O_WRONLY);
            dup2(null, 1);
            dup2(null, 2);
            execlp(bin, bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                   (char *)NULL);
            _exit(127);
        }
        snprintf(url, cap, "redis://127.0.0.1:%s/", port);
        /* Ours once INFO names our pid (another process may have taken the port). */
        char want[32], line[128];
        snprintf(want, sizeof want, "process_id:%d", (int)pid);
        for (int i = 0; i < 400 && waitpid(pid, NULL, WNOHANG) == 0; i++) {
            redis(url, line, sizeof line, "INFO server 2>/dev/null | grep -a process_id");
            if (strcmp(line, want) == 0) return pid;
            sleep_ms(25);
        }
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    return 0;
}

static void stop_own_server(pid_t pid) {
    if (pid <= 0) return;
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

static atomic_int g_gate_open;

/* Holds its slot until the test opens the gate (at most two minutes). */
static emq_handler_status gated_handler(const emq_job *job, void *user_data, emq_handler_result *result) {
    (void)job, (void)user_data, (void)result;
    for (int i = 0; i < 12000 && !atomic_load(&g_gate_open); i++) sleep_ms(10);
    return EMQ_HANDLER_OK;
}

/* Poll the worker's stats until `pred` holds (at most a minute). */
static int stats_until(emq_worker *w, int (*pred)(const emq_stats *)) {
    emq_stats s;
    for (int i = 0; i < 3000; i++) {
        if (emq_worker_stats(w, &s, NULL) == EMQ_OK && pred(&s)) return 1;
        sleep_ms(20);
    }
    return 0;
}
static int claimed_one(const emq_stats *s) { return s->claimed == 1; }
static int heartbeat_failed(const emq_stats *s) { return s->heartbeat_failures > 0; }
static int claim_and_settle_failed(const emq_stats *s) { return s->claim_failures > 0 && s->settle_failures > 0; }

/* As core/tests/lifecycle.rs: the server goes away under a worker holding a
 * job; heartbeats fail, then the settlement and the claims for the freed slot. */
static void test_worker_stats_count_failures(void) {
    char url[64];
    pid_t server = start_own_server(url, sizeof url);
    CHECK(server > 0);
    emq_connect_options co = emq_connect_options_default();
    co.response_timeout_ms = 2000; /* calls to the gone server give up after it */
    emq_client *c = NULL;
    emq_error *err = NULL;
    if (!ok(emq_connect(url, &co, &c, &err), err)) stop_own_server(server);
    CHECK(c);
    emq_enqueued r;
    CHECK(ok(emq_enqueue(c, "t.stats", LIT("held"), NULL, &r, &err), err));
    emq_worker_options o = emq_worker_options_default();
    o.concurrency = 1;
    o.prefetch = 0;
    o.lease_ms = 300;
    o.idle_max_ms = 20;
    o.shutdown_grace_ms = 0;
    atomic_store(&g_gate_open, 0);
    emq_worker *w = NULL;
    CHECK(ok(emq_worker_new(c, "t.stats", &o, gated_handler, NULL, &w, &err), err));
    CHECK(ok(emq_worker_start(w, &err), err));
    int claimed = stats_until(w, claimed_one);
    stop_own_server(server);
    int heartbeat = claimed && stats_until(w, heartbeat_failed);
    atomic_store(&g_gate_open, 1); /* the handler ends while the server is gone */
    int settle = heartbeat && stats_until(w, claim_and_settle_failed);
    emq_worker_stop(w, NULL);
    CHECK(ok(emq_worker_join(w, &err), err));
    CHECK(claimed && heartbeat && settle);
    emq_stats s;
    CHECK(ok(emq_worker_stats(w, &s, &err), err));
    CHECK(s.claimed == s.completed + s.retried + s.dead + s.lease_lost + s.settle_failures + s.released);
    CHECK(s.in_flight == 0);
    emq_worker_free(w);
    emq_client_free(c);
}

/* FAILS_WITH(call, want): the call answers `want` with a matching error
 * record in `err` (freed, and reset). The call runs before `err` is read. */
#define FAILS_WITH(call, want) (g_status = (call), fails_with(g_status, &err, (want)))
static emq_status g_status;
static int fails_with(emq_status got, emq_error **errp, emq_status want) {
    emq_error *err = *errp;
    *errp = NULL;
    int good = got == want && err && err->status == want && err->code &&
               strcmp(err->code, emq_status_code(want)) == 0;
    if (!good)
        fprintf(stderr, "  wanted %s, got %d (%s)\n", emq_status_code(want), got,
                err && err->message ? err->message : "no error record");
    emq_error_free(err);
    return good;
}

static void test_error_kinds_provoked_on_a_server(void) {
    emq_client *c = connect_or_null();
    CHECK(c);
    emq_error *err = NULL;
    emq_enqueued r;
    char line[128];
    /* Kind: an id of another namespace; nothing written. */
    emq_enqueue_options other_ns = enqueue_options();
    other_ns.id = "ORD0NgWEfAEJfs";
    CHECK(FAILS_WITH(emq_enqueue(c, "t.kinds", LIT("x"), &other_ns, &r, &err), EMQ_ERR_KIND));
    redis(g_url, line, sizeof line, "EXISTS 'emq:{t.kinds}:pending'");
    CHECK(strcmp(line, "0") == 0);
    /* Server: a key of the wrong type under the queue's name (WRONGTYPE). */
    redis(g_url, NULL, 0, "SET 'emq:{t.wrongtype}:pending' 'not a zset'");
    CHECK(FAILS_WITH(emq_enqueue(c, "t.wrongtype", LIT("x"), NULL, &r, &err), EMQ_ERR_SERVER));
    redis(g_url, line, sizeof line, "GET 'emq:{t.wrongtype}:pending'");
    CHECK(strcmp(line, "not a zset") == 0);
    /* Protocol: a job row the core cannot decode. */
    CHECK(ok(emq_enqueue(c, "t.kinds", LIT("x"), NULL, &r, &err), err));
    redis(g_url, NULL, 0, "HSET 'emq:{t.kinds}:job:%s' attempts two", r.id);
    emq_job_info *row = NULL;
    CHECK(FAILS_WITH(emq_get_job(c, "t.kinds", r.id, &row, &err), EMQ_ERR_PROTOCOL) && row == NULL);
    /* LeaseLost: a lease that lapsed and was reaped, then extended. */
    CHECK(ok(emq_enqueue(c, "t.lease", LIT("x"), NULL, &r, &err), err));
    emq_job *job = NULL;
    CHECK(ok(emq_claim(c, "t.lease", 1, &job, &err), err) && job);
    uint64_t reaped = 0;
    for (int i = 0; i < 3000 && reaped == 0; i++) {
        CHECK(ok(emq_reap(c, "t.lease", 10, &reaped, &err), err));
        if (!reaped) sleep_ms(10);
    }
    CHECK(reaped == 1);
    CHECK(FAILS_WITH(emq_extend(c, "t.lease", job->id, job->token, 60000, &err), EMQ_ERR_LEASE_LOST));
    redis(g_url, line, sizeof line, "ZCARD 'emq:{t.lease}:active'");
    CHECK(strcmp(line, "0") == 0);
    emq_job_free(job);
    /* Timeout: waiting for a job that nobody runs. */
    emq_settled settled;
    char *last_error = NULL;
    CHECK(FAILS_WITH(emq_wait_for(c, "t.lease", r.id, 50, &settled, &last_error, &err), EMQ_ERR_TIMEOUT));
    emq_client_free(c);

    /* NotDurable: one replica asked for, none exists; the write happened. */
    emq_connect_options co = emq_connect_options_default();
    co.wait_replicas = 1;
    co.wait_timeout_ms = 50;
    CHECK(ok(emq_connect(g_url, &co, &c, &err), err));
    int not_durable = FAILS_WITH(emq_enqueue(c, "t.durable", LIT("x"), NULL, &r, &err), EMQ_ERR_NOT_DURABLE);
    emq_client_free(c);
    CHECK(not_durable);
    redis(g_url, line, sizeof line, "ZCARD 'emq:{t.durable}:pending'");
    CHECK(strcmp(line, "1") == 0);
}

static void test_bundle_mismatch_and_unavailable_on_a_server_of_its_own(void) {
    char url[64], line[128];
    pid_t server = start_own_server(url, sizeof url);
    CHECK(server > 0);
    emq_error *err = NULL;
    emq_client *c = NULL;
    /* BundleMismatch: another runtime recorded different scripts. */
    redis(url, NULL, 0, "HSET '{emq}:bundle' bundle 0000");
    emq_connect_options co = emq_connect_options_default();
    co.strict_bundle = true;
    int refused = FAILS_WITH(emq_connect(url, &co, &c, &err), EMQ_ERR_BUNDLE_MISMATCH) && c == NULL;
    redis(url, line, sizeof line, "HGET '{emq}:bundle' bundle");
    int kept = strcmp(line, "0000") == 0;
    /* Unavailable: the server is gone; after the call that may learn it (a
     * connection error), reconnects are retried, then answered unavailable. */
    co = emq_connect_options_default();
    co.connect_timeout_ms = 300;
    co.response_timeout_ms = 500;
    int connected = ok(emq_connect(url, &co, &c, &err), err);
    emq_queue_counts counts;
    int counted = connected && ok(emq_counts(c, "t.gone", &counts, &err), err);
    stop_own_server(server);
    CHECK(refused && kept && counted);
    emq_status first = emq_counts(c, "t.gone", &counts, &err);
    emq_error_free(err);
    err = NULL;
    CHECK(first == EMQ_ERR_CONNECTION || first == EMQ_ERR_UNAVAILABLE);
    CHECK(FAILS_WITH(emq_counts(c, "t.gone", &counts, &err), EMQ_ERR_UNAVAILABLE));
    emq_client_free(c);
}

static double monotonic_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Issue #39 item 3: with the defaults (connect timeout 5 s, response timeout
 * 30 s), a call against a server that is gone fails typed well before the
 * response timeout: the first may be EMQ_ERR_CONNECTION (it learns the
 * socket is gone after sending), then EMQ_ERR_UNAVAILABLE. A generous bound
 * (15 s), the figures printed. */
static void test_a_gone_server_fails_within_the_connect_timeout(void) {
    char url[64];
    pid_t server = start_own_server(url, sizeof url);
    CHECK(server > 0);
    emq_client *c = NULL;
    emq_error *err = NULL;
    CHECK(ok(emq_connect(url, NULL, &c, &err), err));
    CHECK(ok(emq_enqueue(c, "t.gone", LIT("x"), NULL, NULL, &err), err));
    stop_own_server(server);
    emq_status last = EMQ_OK;
    for (int call = 0; call < 3; call++) {
        emq_queue_counts counts;
        double started = monotonic_s();
        last = emq_counts(c, "t.gone", &counts, &err);
        double took = monotonic_s() - started;
        printf("    call %d with the server gone: %s after %.3f s\n", call,
               err ? err->code : "no error", took);
        emq_error_free(err);
        err = NULL;
        CHECK(last == EMQ_ERR_CONNECTION || last == EMQ_ERR_UNAVAILABLE);
        CHECK(took < 15.0);
    }
    CHECK(last == EMQ_ERR_UNAVAILABLE);
    emq_client_free(c);
}

struct watchdog { emq_worker *w; atomic_int done; };

/* Stops the worker if the test has not finished within a minute, so a run
 * that never ends fails the test (join answers EMQ_OK) instead of hanging it. */
static void *stop_after_a_minute(void *arg) {
    struct watchdog *d = arg;
    for (int i = 0; i < 6000 && !atomic_load(&d->done); i++) sleep_ms(10);
    if (!atomic_load(&d->done)) emq_worker_stop(d->w, NULL);
    return NULL;
}

/* Issue #39 item 4: after the record moves on (what `emq upgrade --yes` ends
 * with) and a reconnect, a worker still speaking the old wire stops, and
 * emq_worker_join answers EMQ_ERR_VERSION_FENCE with the record it found,
 * instead of retrying for ever. */
static void test_a_fenced_out_worker_stops_with_the_fence_error(void) {
    char url[64], line[64];
    pid_t server = start_own_server(url, sizeof url);
    CHECK(server > 0);
    emq_connect_options co = emq_connect_options_default();
    co.wire_version = "echomq:2.0.0";
    emq_client *c = NULL;
    emq_error *err = NULL;
    CHECK(ok(emq_connect(url, &co, &c, &err), err));
    redis(url, line, sizeof line, "GET '{emq}:version'");
    CHECK(strcmp(line, "echomq:2.0.0") == 0);
    emq_worker_options o = emq_worker_options_default();
    o.idle_max_ms = 50;
    emq_worker *w = NULL;
    CHECK(ok(emq_worker_new(c, "t.fenced", &o, count_handler, NULL, &w, &err), err));
    CHECK(ok(emq_worker_start(w, &err), err));
    redis(url, NULL, 0, "SET '{emq}:version' echomq:2.1.0");
    redis(url, NULL, 0, "CLIENT KILL TYPE normal SKIPME yes");
    /* No emq_worker_stop: the fence alone must end the run. */
    struct watchdog dog = {.w = w};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, stop_after_a_minute, &dog) == 0);
    emq_status joined = emq_worker_join(w, &err);
    atomic_store(&dog.done, 1);
    pthread_join(t, NULL);
    CHECK(joined == EMQ_ERR_VERSION_FENCE);
    CHECK(err && emq_error_found(err) && strcmp(emq_error_found(err), "echomq:2.1.0") == 0);
    emq_error_free(err);
    err = NULL;
    emq_stats st;
    CHECK(ok(emq_worker_stats(w, &st, &err), err));
    CHECK(st.claim_failures <= 3);
    emq_worker_free(w);
    /* A producer's refusal stays typed too. */
    CHECK(FAILS_WITH(emq_enqueue(c, "t.fenced", LIT("late"), NULL, NULL, &err), EMQ_ERR_VERSION_FENCE));
    emq_client_free(c);
    stop_own_server(server);
}

struct killer { const char *url; long before; };

/* Kill every normal connection but its own once the server holds 100 more keys. */
static void *kill_mid_batch(void *arg) {
    struct killer *k = arg;
    char line[64];
    for (int i = 0; i < 30000; i++) {
        redis(k->url, line, sizeof line, "DBSIZE");
        if (atol(line) > k->before + 100) {
            redis(k->url, NULL, 0, "CLIENT KILL TYPE normal SKIPME yes");
            return NULL;
        }
        sleep_ms(1);
    }
    return NULL;
}

static void test_partial_batch_from_a_dropped_connection(void) {
    char url[64], line[64];
    pid_t server = start_own_server(url, sizeof url);
    CHECK(server > 0);
    enum { N = 20000, SIZE = 2000 };
    static uint8_t big[SIZE];
    static emq_bytes payloads[N];
    memset(big, 'x', sizeof big);
    for (int i = 0; i < N; i++) payloads[i] = (emq_bytes){big, SIZE};
    int cut = 0, whole = 1;
    /* A valgrind run of the whole program once died here of SIGPIPE: a write
     * to the killed connection raised it in this (C) process, which, unlike
     * Rust, Python and Node hosts, does not ignore it. Reported on issue 41
     * for the library; ignored here so the rest of the suite still runs. */
    void (*was)(int) = signal(SIGPIPE, SIG_IGN);
    for (int attempt = 0; attempt < 5 && !cut; attempt++) {
        emq_client *c = NULL;
        emq_error *err = NULL;
        if (!ok(emq_connect(url, NULL, &c, &err), err)) break;
        redis(url, line, sizeof line, "DBSIZE");
        struct killer k = {url, atol(line)};
        pthread_t t;
        pthread_create(&t, NULL, kill_mid_batch, &k);
        emq_enqueue_list *el = NULL;
        emq_status st = emq_enqueue_many(c, "t.partial", payloads, N, NULL, &el, &err);
        pthread_join(t, NULL);
        if (st == EMQ_OK) { /* the whole batch won the race; try again */
            emq_enqueue_list_free(el);
            emq_client_free(c);
            continue;
        }
        cut = st == EMQ_ERR_PARTIAL_BATCH && err && err->batch_len == N;
        size_t written = 0;
        for (size_t i = 0; cut && i < err->batch_len; i++) {
            if (err->batch[i].state == EMQ_WRITTEN) {
                written++;
                redis(url, line, sizeof line, "EXISTS 'emq:{t.partial}:job:%s'", err->batch[i].id.text);
                whole &= strcmp(line, "1") == 0;
            }
        }
        cut = cut && written > 0 && written < N;
        if (!cut) fprintf(stderr, "  status %d (%s)\n", st, err && err->message ? err->message : "");
        emq_error_free(err);
        emq_client_free(c);
    }
    signal(SIGPIPE, was);
    stop_own_server(server);
    CHECK(cut && whole);
}

static void test_hardened_edges(void) {
    emq_error *err = NULL;
    emq_id id;
    CHECK(emq_mint_job_id(-2, &id, NULL) == EMQ_ERR_INVALID_ARGUMENT);
    CHECK(emq_mint_job_id(1024, &id, NULL) == EMQ_ERR_INVALID_ARGUMENT);
    emq_client *bad = NULL;
    CHECK(emq_connect("redis://user:secret@127.0.0.1:notaport/", NULL, &bad, &err) ==
          EMQ_ERR_INVALID_ARGUMENT);
    CHECK(err && err->message && strstr(err->message, "secret") == NULL);
    CHECK(strstr(err->message, "user:***@") != NULL);
    emq_error_free(err);
    err = NULL;

    emq_client *c = connect_or_null();
    CHECK(c);
    emq_worker_options o = emq_worker_options_default();
    o.concurrency = 4000000000u;
    CHECK(emq_worker_new(c, "t.h", &o, count_handler, NULL, &(emq_worker *){0}, NULL) ==
          EMQ_ERR_INVALID_ARGUMENT);
    o = emq_worker_options_default();
    o.idle_max_ms = UINT64_MAX;
    CHECK(emq_worker_new(c, "t.h", &o, count_handler, NULL, &(emq_worker *){0}, NULL) ==
          EMQ_ERR_INVALID_ARGUMENT);

    /* A running worker whose client is closed ends; join answers EMQ_ERR_CLOSED. */
    emq_worker *running = NULL, *idle = NULL;
    o = emq_worker_options_default();
    o.idle_max_ms = 20;
    CHECK(ok(emq_worker_new(c, "t.h", &o, count_handler, NULL, &running, &err), err));
    CHECK(ok(emq_worker_new(c, "t.h", &o, count_handler, NULL, &idle, &err), err));
    CHECK(ok(emq_worker_start(running, &err), err));
    sleep_ms(100);
    CHECK(ok(emq_close(c, &err), err));
    CHECK(emq_worker_join(running, NULL) == EMQ_ERR_CLOSED);
    emq_stats st;
    CHECK(ok(emq_worker_stats(running, &st, &err), err));
    CHECK(st.in_flight == 0 && st.settle_failures == 0 && st.released == 0);
    emq_worker_free(running);
    /* Starting a worker, making one, or asking for mismatches on a closed client: closed. */
    CHECK(emq_worker_start(idle, NULL) == EMQ_ERR_CLOSED);
    emq_worker_free(idle);
    CHECK(emq_worker_new(c, "t.h", NULL, count_handler, NULL, &idle, NULL) == EMQ_ERR_CLOSED);
    emq_bundle_mismatch_list *ml = NULL;
    CHECK(emq_bundle_mismatches(c, &ml, NULL) == EMQ_ERR_CLOSED);
    CHECK(strcmp(emq_status_code(EMQ_ERR_PARTIAL_BATCH), "EMQ_PARTIAL_BATCH") == 0);
    CHECK(strcmp(emq_status_code(EMQ_ERR_INTERNAL), "EMQ_INTERNAL") == 0);
    emq_client_free(c);
}

/* ---- leases: heartbeats, graceful stop, a SIGKILLed worker ---- */

typedef struct {
    atomic_int calls;
    atomic_ullong first_token;
    long sleep_ms;
} slow_state;

static emq_handler_status slow_handler(const emq_job *job, void *user_data, emq_handler_result *result) {
    slow_state *st = user_data;
    (void)result;
    unsigned long long none = 0;
    atomic_compare_exchange_strong(&st->first_token, &none, (unsigned long long)job->token);
    atomic_fetch_add(&st->calls, 1);
    sleep_ms(st->sleep_ms);
    return EMQ_HANDLER_OK;
}

static void test_heartbeat_outlives_the_lease(void) {
    emq_client *c = connect_or_null();
    CHECK(c);
    emq_error *err = NULL;
    static slow_state st;
    memset(&st, 0, sizeof st);
    st.sleep_ms = 4500; /* three times the lease */
    emq_enqueued r;
    CHECK(ok(emq_enqueue(c, "t.slow", LIT("slow"), NULL, &r, &err), err));
    emq_worker_options o = emq_worker_options_default();
    o.lease_ms = 1500;
    o.pump_interval_ms = 100; /* the reaper runs often: only heartbeats save the job */
    emq_worker *w = NULL;
    CHECK(ok(emq_worker_new(c, "t.slow", &o, slow_handler, &st, &w, &err), err));
    CHECK(ok(emq_worker_start(w, &err), err));
    int done = wait_for(w, 1, 0, 60000);
    emq_worker_stop(w, NULL);
    CHECK(ok(emq_worker_join(w, &err), err));
    CHECK(done);
    emq_stats s;
    CHECK(ok(emq_worker_stats(w, &s, &err), err));
    CHECK(s.completed == 1 && s.lease_lost == 0 && s.claimed == 1);
    CHECK(atomic_load(&st.calls) == 1 && atomic_load(&st.first_token) == 1);
    emq_worker_free(w);
    char line[64];
    redis(g_url, line, sizeof line, "EXISTS 'emq:{t.slow}:job:%s'", r.id);
    CHECK(strcmp(line, "0") == 0);
    emq_client_free(c);
}

static void test_graceful_stop_leaves_nothing_active(void) {
    emq_client *c = connect_or_null();
    CHECK(c);
    emq_error *err = NULL;
    static slow_state st;
    memset(&st, 0, sizeof st);
    st.sleep_ms = 200;
    for (int i = 0; i < 20; i++) CHECK(ok(emq_enqueue(c, "t.stop", LIT("job"), NULL, NULL, &err), err));
    emq_worker_options o = emq_worker_options_default();
    o.concurrency = 4;
    emq_worker *w = NULL;
    CHECK(ok(emq_worker_new(c, "t.stop", &o, slow_handler, &st, &w, &err), err));
    CHECK(ok(emq_worker_start(w, &err), err));
    emq_stats s = {0};
    for (int i = 0; i < 500 && s.claimed < 4; i++) {
        emq_worker_stats(w, &s, NULL);
        sleep_ms(10);
    }
    CHECK(ok(emq_worker_stop(w, &err), err));
    CHECK(ok(emq_worker_join(w, &err), err));
    CHECK(ok(emq_worker_stats(w, &s, &err), err));
    /* Running callbacks finished; prefetched jobs (at most `concurrency`)
     * went back to pending unrun. */
    CHECK(s.completed >= 4 && s.claimed - s.completed <= 4 && s.in_flight == 0);
    emq_worker_free(w);
    char line[64];
    redis(g_url, line, sizeof line, "ZCARD 'emq:{t.stop}:active'");
    CHECK(strcmp(line, "0") == 0);
    redis(g_url, line, sizeof line, "ZCARD 'emq:{t.stop}:pending'");
    CHECK(strtoull(line, NULL, 10) == 20 - s.completed);
    emq_client_free(c);
}

/* `test_ffi child-worker`: a worker whose handler never returns (killed by the parent). */
static int child_worker(void) {
    emq_client *c = connect_or_null();
    if (!c) return 1;
    static slow_state st;
    st.sleep_ms = 600000;
    emq_worker_options o = emq_worker_options_default();
    o.lease_ms = 1000;
    emq_worker *w = NULL;
    if (!ok(emq_worker_new(c, "t.kill", &o, slow_handler, &st, &w, NULL), NULL)) return 1;
    emq_worker_run(w, NULL);
    return 0;
}

static void test_sigkilled_worker_job_is_recovered(void) {
    emq_client *c = connect_or_null();
    CHECK(c);
    emq_error *err = NULL;
    emq_enqueued r;
    CHECK(ok(emq_enqueue(c, "t.kill", LIT("orphan"), NULL, &r, &err), err));
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        /* A fresh process image: no state shared with the test process. */
        /* argv[0], not /proc/self/exe: under valgrind the latter is valgrind itself. */
        execl(g_self, g_self, "child-worker", (char *)NULL);
        _exit(127);
    }
    char line[64] = "0";
    for (int i = 0; i < 1000 && strcmp(line, "1") != 0; i++) {
        redis(g_url, line, sizeof line, "ZCARD 'emq:{t.kill}:active'");
        sleep_ms(10);
    }
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    CHECK(strcmp(line, "1") == 0); /* the child held the job when it died */

    static slow_state st;
    memset(&st, 0, sizeof st);
    emq_worker_options o = emq_worker_options_default();
    o.pump_interval_ms = 100;
    emq_worker *w = NULL;
    CHECK(ok(emq_worker_new(c, "t.kill", &o, slow_handler, &st, &w, &err), err));
    CHECK(ok(emq_worker_start(w, &err), err));
    int done = wait_for(w, 1, 0, 60000);
    emq_worker_stop(w, NULL);
    CHECK(ok(emq_worker_join(w, &err), err));
    emq_worker_free(w);
    CHECK(done);
    CHECK(atomic_load(&st.first_token) == 2); /* a new life: the dead holder's token is stale */
    redis(g_url, line, sizeof line, "EXISTS 'emq:{t.kill}:job:%s'", r.id);
    CHECK(strcmp(line, "0") == 0);
    emq_client_free(c);
}

/* Issue #17: option structs grow. A program built against an older, smaller
 * struct passes its own sizeof; the library reads only those bytes and keeps
 * its defaults for the rest. The bytes after the old struct are filled with
 * 0xFF here: read as fields they would be an invalid idle_max_ms / a wild
 * client_name pointer, so success proves they were not read. */
struct old_worker_options { size_t size; uint32_t concurrency; int32_t backoff; uint64_t lease_ms; };
struct old_connect_options { size_t size; int32_t node_id; bool strict_bundle; };

static void test_growable_options(void) {
    emq_error *err = NULL;
    union { struct old_worker_options o; unsigned char raw[sizeof(emq_worker_options) + 16]; } w;
    memset(w.raw, 0xFF, sizeof w.raw);
    emq_worker_options_init((emq_worker_options *)&w.o, sizeof w.o);
    CHECK(w.o.size == sizeof w.o && w.o.concurrency == 10 && w.o.lease_ms == 30000);
    CHECK(w.raw[sizeof w.o] == 0xFF); /* init wrote only the caller's bytes */
    w.o.concurrency = 2;
    emq_client *c = connect_or_null();
    CHECK(c);
    emq_worker *worker = NULL;
    CHECK(ok(emq_worker_new(c, "t.grow", (emq_worker_options *)&w.o, count_handler, NULL, &worker,
                            &err),
             err));
    emq_worker_free(worker);
    w.o.concurrency = 0; /* the fields the old struct has are read */
    CHECK(emq_worker_new(c, "t.grow", (emq_worker_options *)&w.o, count_handler, NULL, &worker,
                         NULL) == EMQ_ERR_INVALID_ARGUMENT);

    union { struct old_connect_options o; unsigned char raw[sizeof(emq_connect_options) + 16]; } co;
    memset(co.raw, 0xFF, sizeof co.raw);
    emq_connect_options_init((emq_connect_options *)&co.o, sizeof co.o);
    co.o.node_id = 7;
    emq_client *old = NULL;
    CHECK(ok(emq_connect(g_url, (emq_connect_options *)&co.o, &old, &err), err));
    uint16_t node = 0;
    CHECK(ok(emq_client_node_id(old, &node, &err), err) && node == 7);
    emq_client_free(old);

    /* A newer, larger struct: fields this library does not know must be zero. */
    struct { emq_connect_options o; uint64_t future; } newer;
    emq_connect_options_init(&newer.o, sizeof newer);
    CHECK(newer.o.size == sizeof newer && newer.future == 0 && newer.o.node_id == -1);
    emq_client *n = NULL;
    CHECK(ok(emq_connect(g_url, &newer.o, &n, &err), err));
    emq_client_free(n);
    newer.future = 1;
    CHECK(emq_connect(g_url, &newer.o, &n, &err) == EMQ_ERR_INVALID_ARGUMENT);
    CHECK(err && strstr(err->message, "does not know") != NULL);
    emq_error_free(err);
    err = NULL;

    /* A struct never initialised (size 0) is refused, not guessed at. */
    emq_connect_options zero;
    memset(&zero, 0, sizeof zero);
    CHECK(emq_connect(g_url, &zero, &n, &err) == EMQ_ERR_INVALID_ARGUMENT);
    CHECK(err && strstr(err->message, "emq_connect_options_init") != NULL);
    emq_error_free(err);
    emq_client_free(c);
}

/* ---- job features (issue #13): wire 2.0.0 / 2.1.0, stall cap, dedup ---- */

static void test_wire_2_0_0_refuses_2_1_0_verbs(void) {
    char url4[512];
    size_t n = strlen(g_url);
    snprintf(url4, sizeof url4, "%s%s4", g_url, (n && g_url[n - 1] == '/') ? "" : "/");
    emq_connect_options o = emq_connect_options_default();
    CHECK(o.wire_version == NULL);
    o.wire_version = "echomq:2.0.0";
    emq_client *c = NULL;
    emq_error *err = NULL;
    CHECK(ok(emq_connect(url4, &o, &c, &err), err));
    char line[64];
    redis(url4, line, sizeof line, "GET '{emq}:version'");
    CHECK(strcmp(line, "echomq:2.0.0") == 0);
    emq_id_list *recovered = NULL, *dead = NULL;
    CHECK(emq_reap_stalled(c, "t.wire", 10, 2, &recovered, &dead, &err) == EMQ_ERR_UNSUPPORTED);
    CHECK(err && strcmp(err->code, "EMQ_UNSUPPORTED") == 0 && recovered == NULL && dead == NULL);
    emq_error_free(err);
    err = NULL;
    emq_enqueue_options dedup = enqueue_options();
    dedup.dedup_id = "d";
    CHECK(emq_enqueue(c, "t.wire", LIT("x"), &dedup, NULL, NULL) == EMQ_ERR_UNSUPPORTED);
    const emq_enqueue_options *per_item[1] = {&dedup};
    emq_bytes one = {(const uint8_t *)"x", 1};
    emq_enqueue_list *el = NULL;
    CHECK(emq_enqueue_many(c, "t.wire", &one, 1, per_item, &el, NULL) == EMQ_ERR_UNSUPPORTED && el == NULL);
    CHECK(emq_upsert_repeat(c, "t.wire", "r", LIT("x"), 1000, NULL, NULL, 0, 0, 0, NULL, NULL) == EMQ_ERR_UNSUPPORTED);
    emq_repeat_list *repeats = NULL;
    CHECK(emq_list_repeats(c, "t.wire", &repeats, NULL) == EMQ_ERR_UNSUPPORTED && repeats == NULL);
    CHECK(emq_fire_repeats(c, "t.wire", 10, NULL, NULL) == EMQ_ERR_UNSUPPORTED);
    CHECK(emq_remove_repeat(c, "t.wire", "r", NULL, NULL) == EMQ_ERR_UNSUPPORTED);
    redis(url4, line, sizeof line, "EXISTS 'emq:{t.wire}:pending'");
    CHECK(strcmp(line, "0") == 0);
    emq_client_free(c);
    /* An unknown version is a bad argument, before any I/O. */
    o.wire_version = "echomq:7.0.0";
    CHECK(emq_connect(url4, &o, &c, NULL) == EMQ_ERR_INVALID_ARGUMENT && c == NULL);
    redis(url4, NULL, 0, "FLUSHDB");
}

static void test_dedup_one_job_per_dedup_id(void) {
    emq_client *c = connect_or_null();
    CHECK(c);
    emq_error *err = NULL;
    emq_enqueued a, b;
    emq_enqueue_options o = enqueue_options();
    o.dedup_id = "order-42";
    CHECK(ok(emq_enqueue(c, "t.dedup", LIT("first"), &o, &a, &err), err));
    CHECK(ok(emq_enqueue(c, "t.dedup", LIT("second"), &o, &b, &err), err));
    CHECK(!a.duplicate && b.duplicate && strcmp(a.id, b.id) == 0);
    char line[64];
    redis(g_url, line, sizeof line, "ZCARD 'emq:{t.dedup}:pending'");
    CHECK(strcmp(line, "1") == 0);
    redis(g_url, line, sizeof line, "GET 'emq:{t.dedup}:de:order-42'");
    CHECK(strcmp(line, a.id) == 0);
    o.dedup_id = "a b";
    CHECK(emq_enqueue(c, "t.dedup", LIT("x"), &o, NULL, NULL) == EMQ_ERR_INVALID_ARGUMENT);
    emq_client_free(c);
}

/* ---- one enqueue with options (issue #33) ---- */

/* How many keys of queue `q` exist (the refusals write none). */
static long queue_keys(const char *q) {
    char line[64];
    redis(g_url, line, sizeof line, "EVAL \"return #redis.call('KEYS', ARGV[1])\" 0 'emq:{%s}:*'", q);
    return atol(line);
}

/* `ZSCORE key member` as a number; -1 when absent. */
static double zscore(const char *q, const char *set, const char *id) {
    char line[64];
    redis(g_url, line, sizeof line, "ZSCORE 'emq:{%s}:%s' %s", q, set, id);
    return line[0] ? atof(line) : -1;
}

static void test_enqueue_with_each_option(void) {
    emq_client *c = connect_or_null();
    CHECK(c);
    emq_error *err = NULL;
    const char *q = "t.enq";
    char line[128];
    emq_enqueued r;

    /* NULL options and the initialised defaults: pending now under a minted id. */
    CHECK(ok(emq_enqueue(c, q, LIT("plain"), NULL, &r, &err), err) && !r.duplicate);
    CHECK(strncmp(r.id, "JOB", 3) == 0 && zscore(q, "pending", r.id) == 0);
    emq_enqueue_options o = enqueue_options();
    CHECK(o.size == sizeof o && o.id == NULL && o.run_at_ms == 0 && o.delay_ms == 0);
    CHECK(o.dedup_id == NULL && o.dedup_ttl_ms == 0 && o.priority == 0);
    CHECK(ok(emq_enqueue(c, q, LIT("defaults"), &o, &r, &err), err) && !r.duplicate);
    CHECK(zscore(q, "pending", r.id) == 0);
    redis(g_url, line, sizeof line, "HGET 'emq:{%s}:job:%s' payload", q, r.id);
    CHECK(strcmp(line, "defaults") == 0);

    /* id: the row under the chosen id; again = duplicate, the row untouched. */
    emq_id chosen;
    CHECK(ok(emq_mint_job_id(-1, &chosen, &err), err));
    o = enqueue_options();
    o.id = chosen.text;
    CHECK(ok(emq_enqueue(c, q, LIT("first"), &o, &r, &err), err));
    CHECK(!r.duplicate && strcmp(r.id, chosen.text) == 0 && zscore(q, "pending", chosen.text) == 0);
    CHECK(ok(emq_enqueue(c, q, LIT("second"), &o, &r, &err), err));
    CHECK(r.duplicate && strcmp(r.id, chosen.text) == 0);
    redis(g_url, line, sizeof line, "HGET 'emq:{%s}:job:%s' payload", q, chosen.text);
    CHECK(strcmp(line, "first") == 0);

    /* run_at_ms: in the schedule ZSET, scored exactly run_at_ms. */
    uint64_t at = now_ms() + 7200000;
    o = enqueue_options();
    o.run_at_ms = at;
    CHECK(ok(emq_enqueue(c, q, LIT("at"), &o, &r, &err), err) && !r.duplicate);
    CHECK(zscore(q, "schedule", r.id) == (double)at && zscore(q, "pending", r.id) < 0);
    redis(g_url, line, sizeof line, "HGET 'emq:{%s}:job:%s' state", q, r.id);
    CHECK(strcmp(line, "scheduled") == 0);

    /* delay_ms: scored server-now + delay (the server is this machine). */
    o = enqueue_options();
    o.delay_ms = 3600000;
    uint64_t before = now_ms();
    CHECK(ok(emq_enqueue(c, q, LIT("in"), &o, &r, &err), err) && !r.duplicate);
    uint64_t after = now_ms();
    double score = zscore(q, "schedule", r.id);
    CHECK(score >= (double)(before + 3600000 - 1000) && score <= (double)(after + 3600000 + 1000));

    /* run_at_ms with a chosen id: both apply. */
    CHECK(ok(emq_mint_job_id(-1, &chosen, &err), err));
    o = enqueue_options();
    o.id = chosen.text;
    o.run_at_ms = at;
    CHECK(ok(emq_enqueue(c, q, LIT("at+id"), &o, &r, &err), err));
    CHECK(strcmp(r.id, chosen.text) == 0 && zscore(q, "schedule", chosen.text) == (double)at);

    /* dedup_id: the dedup key names the job; a second one answers it, duplicate. */
    emq_enqueued a, b;
    o = enqueue_options();
    o.dedup_id = "invoice-7";
    CHECK(ok(emq_enqueue(c, q, LIT("a"), &o, &a, &err), err) && !a.duplicate);
    CHECK(ok(emq_enqueue(c, q, LIT("b"), &o, &b, &err), err) && b.duplicate);
    CHECK(strcmp(a.id, b.id) == 0 && zscore(q, "pending", a.id) == 0);
    redis(g_url, line, sizeof line, "GET 'emq:{%s}:de:invoice-7'", q);
    CHECK(strcmp(line, a.id) == 0);
    redis(g_url, line, sizeof line, "PTTL 'emq:{%s}:de:invoice-7'", q);
    CHECK(strcmp(line, "-1") == 0); /* no TTL: held while the job lives */

    /* dedup_ttl_ms: the dedup key expires (throttle mode). */
    o.dedup_id = "throttle-1";
    o.dedup_ttl_ms = 60000;
    CHECK(ok(emq_enqueue(c, q, LIT("t"), &o, &a, &err), err) && !a.duplicate);
    redis(g_url, line, sizeof line, "GET 'emq:{%s}:de:throttle-1'", q);
    CHECK(strcmp(line, a.id) == 0);
    redis(g_url, line, sizeof line, "PTTL 'emq:{%s}:de:throttle-1'", q);
    CHECK(atol(line) > 0 && atol(line) <= 60000);
    emq_client_free(c);
}

static void test_enqueue_refusals_write_nothing(void) {
    emq_client *c = connect_or_null();
    CHECK(c);
    emq_error *err = NULL;
    const char *q = "t.refuse";
    emq_enqueued r;
    emq_id chosen;
    CHECK(ok(emq_mint_job_id(-1, &chosen, &err), err));
    /* Each refused with EMQ_ERR_INVALID_ARGUMENT (a bad id: INVALID_ID) before the wire. */
    emq_enqueue_options o[6];
    for (int i = 0; i < 6; i++) o[i] = enqueue_options();
    o[0].run_at_ms = now_ms() + 1000, o[0].delay_ms = 1000;     /* both times */
    o[1].dedup_id = "d", o[1].id = chosen.text;                 /* dedup + id */
    o[2].dedup_id = "d", o[2].delay_ms = 1000;                  /* dedup + delay */
    o[3].dedup_id = "d", o[3].run_at_ms = now_ms() + 1000;      /* dedup + run_at */
    o[4].dedup_ttl_ms = 1000;                                   /* ttl without dedup */
    o[5].dedup_id = "not a dedup id";                           /* bad dedup id */
    for (int i = 0; i < 6; i++) {
        CHECK(emq_enqueue(c, q, LIT("x"), &o[i], &r, &err) == EMQ_ERR_INVALID_ARGUMENT);
        CHECK(err && err->status == EMQ_ERR_INVALID_ARGUMENT && strcmp(err->code, "EMQ_INVALID_ARGUMENT") == 0);
        emq_error_free(err);
        err = NULL;
    }
    emq_enqueue_options bad = enqueue_options();
    bad.id = "JOB-nope";
    CHECK(emq_enqueue(c, q, LIT("x"), &bad, &r, NULL) == EMQ_ERR_INVALID_ID);
    /* A payload over max_payload, with options too. */
    emq_connect_options co = emq_connect_options_default();
    co.max_payload = 4;
    emq_client *small = NULL;
    CHECK(ok(emq_connect(g_url, &co, &small, &err), err));
    emq_enqueue_options later = enqueue_options();
    later.delay_ms = 1000;
    CHECK(emq_enqueue(small, q, LIT("12345"), &later, &r, NULL) == EMQ_ERR_INVALID_ARGUMENT);
    emq_client_free(small);
    CHECK(queue_keys(q) == 0);

    /* Bad input from C: statuses and messages, never a crash, nothing written. */
    emq_enqueue_options utf8 = enqueue_options();
    utf8.id = "JOB\xff";
    CHECK(emq_enqueue(c, q, LIT("x"), &utf8, &r, &err) == EMQ_ERR_INVALID_UTF8);
    CHECK(err && strstr(err->message, "options.id") != NULL);
    emq_error_free(err);
    utf8 = enqueue_options();
    utf8.dedup_id = "d\xc3\x28";
    CHECK(emq_enqueue(c, q, LIT("x"), &utf8, &r, &err) == EMQ_ERR_INVALID_UTF8);
    CHECK(err && strstr(err->message, "options.dedup_id") != NULL);
    emq_error_free(err);
    /* struct_size: never initialised (0), too small, or a newer struct with unknown fields set. */
    emq_enqueue_options zero;
    memset(&zero, 0, sizeof zero);
    CHECK(emq_enqueue(c, q, LIT("x"), &zero, &r, &err) == EMQ_ERR_INVALID_ARGUMENT);
    CHECK(err && strstr(err->message, "emq_enqueue_options_init") != NULL);
    emq_error_free(err);
    zero.size = 3;
    CHECK(emq_enqueue(c, q, LIT("x"), &zero, &r, NULL) == EMQ_ERR_INVALID_ARGUMENT);
    struct { emq_enqueue_options o; uint64_t future; } newer;
    emq_enqueue_options_init(&newer.o, sizeof newer);
    CHECK(newer.o.size == sizeof newer && newer.future == 0);
    newer.future = 5;
    CHECK(emq_enqueue(c, q, LIT("x"), &newer.o, &r, &err) == EMQ_ERR_INVALID_ARGUMENT);
    CHECK(err && strstr(err->message, "does not know") != NULL);
    emq_error_free(err);
    /* NULL where a value is required. */
    CHECK(emq_enqueue(NULL, q, LIT("x"), NULL, &r, NULL) == EMQ_ERR_NULL_POINTER);
    CHECK(emq_enqueue(c, NULL, LIT("x"), NULL, &r, NULL) == EMQ_ERR_NULL_POINTER);
    CHECK(emq_enqueue(c, q, NULL, 1, NULL, &r, NULL) == EMQ_ERR_NULL_POINTER);
    CHECK(queue_keys(q) == 0);

    /* The accepted ones: a newer struct left at zero, and an older, smaller one
     * (size, id, run_at_ms): the fields it lacks keep their defaults. */
    newer.future = 0;
    CHECK(ok(emq_enqueue(c, q, LIT("newer"), &newer.o, &r, &err), err) && zscore(q, "pending", r.id) == 0);
    CHECK(ok(emq_mint_job_id(-1, &chosen, &err), err));
    emq_enqueue_options older = enqueue_options();
    older.size = offsetof(emq_enqueue_options, delay_ms);
    older.id = chosen.text;
    older.delay_ms = 99; /* past the caller's size: not read */
    CHECK(ok(emq_enqueue(c, q, LIT("older"), &older, &r, &err), err));
    CHECK(strcmp(r.id, chosen.text) == 0 && zscore(q, "pending", r.id) == 0);
    emq_client_free(c);
}

static void test_enqueue_many_with_per_item_options(void) {
    emq_client *c = connect_or_null();
    CHECK(c);
    emq_error *err = NULL;
    const char *q = "t.enqmany";
    emq_enqueued held, holder;
    /* A row under a chosen id and a live dedup holder, before the batch. */
    emq_id taken, fresh;
    CHECK(ok(emq_mint_job_id(-1, &taken, &err), err) && ok(emq_mint_job_id(-1, &fresh, &err), err));
    emq_enqueue_options pre = enqueue_options();
    pre.id = taken.text;
    CHECK(ok(emq_enqueue(c, q, LIT("taken"), &pre, &held, &err), err));
    pre = enqueue_options();
    pre.dedup_id = "held";
    CHECK(ok(emq_enqueue(c, q, LIT("holder"), &pre, &holder, &err), err));

    uint64_t at = now_ms() + 7200000;
    emq_enqueue_options delay = enqueue_options(), with_id = enqueue_options(),
                        dup_id = enqueue_options(), dedup_new = enqueue_options(),
                        dedup_held = enqueue_options(), run_at = enqueue_options();
    delay.delay_ms = 3600000;
    with_id.id = fresh.text;
    dup_id.id = taken.text;
    dedup_new.dedup_id = "new-one";
    dedup_held.dedup_id = "held";
    run_at.run_at_ms = at;
    const emq_enqueue_options *options[7] = {NULL, &delay, &with_id, &dup_id, &dedup_new, &dedup_held, &run_at};
    emq_bytes payloads[7] = {{LIT("plain")}, {LIT("delay")}, {LIT("id")},   {LIT("dup")},
                             {LIT("dedup")}, {LIT("held")},  {LIT("at")}};
    emq_enqueue_list *el = NULL;
    CHECK(ok(emq_enqueue_many(c, q, payloads, 7, options, &el, &err), err));
    CHECK(el && el->len == 7);
    for (size_t i = 0; i < 7; i++) CHECK(el->items[i].status == EMQ_OK && el->items[i].error == NULL);
    /* Verdicts in input order. */
    CHECK(!el->items[0].duplicate && zscore(q, "pending", el->items[0].id) == 0);
    CHECK(!el->items[1].duplicate && zscore(q, "schedule", el->items[1].id) > (double)now_ms() + 3000000);
    CHECK(!el->items[2].duplicate && strcmp(el->items[2].id, fresh.text) == 0);
    CHECK(zscore(q, "pending", fresh.text) == 0);
    CHECK(el->items[3].duplicate && strcmp(el->items[3].id, taken.text) == 0);
    char line[64];
    redis(g_url, line, sizeof line, "HGET 'emq:{%s}:job:%s' payload", q, taken.text);
    CHECK(strcmp(line, "taken") == 0);
    CHECK(!el->items[4].duplicate && zscore(q, "pending", el->items[4].id) == 0);
    redis(g_url, line, sizeof line, "GET 'emq:{%s}:de:new-one'", q);
    CHECK(strcmp(line, el->items[4].id) == 0);
    CHECK(el->items[5].duplicate && strcmp(el->items[5].id, holder.id) == 0);
    CHECK(!el->items[6].duplicate && zscore(q, "schedule", el->items[6].id) == (double)at);
    emq_queue_counts counts;
    CHECK(ok(emq_counts(c, q, &counts, &err), err));
    CHECK(counts.pending == 5 && counts.scheduled == 2); /* taken, holder + 3 new; 2 scheduled */
    emq_enqueue_list_free(el);
    el = NULL;

    /* NULL options: every item with the defaults. */
    CHECK(ok(emq_enqueue_many(c, q, payloads, 2, NULL, &el, &err), err) && el->len == 2);
    CHECK(!el->items[1].duplicate && zscore(q, "pending", el->items[1].id) == 0);
    emq_enqueue_list_free(el);
    el = NULL;

    /* A bad item refuses the whole batch, nothing written, *out NULL. */
    const char *rq = "t.enqmany.refused";
    emq_enqueue_options both = enqueue_options();
    both.delay_ms = 1, both.run_at_ms = at;
    const emq_enqueue_options *bad[3] = {NULL, &delay, &both};
    CHECK(emq_enqueue_many(c, rq, payloads, 3, bad, &el, &err) == EMQ_ERR_INVALID_ARGUMENT);
    CHECK(el == NULL && err && strncmp(err->message, "item 2: ", 8) == 0);
    emq_error_free(err);
    emq_enqueue_options utf8 = enqueue_options();
    utf8.id = "\xff";
    bad[2] = &utf8;
    CHECK(emq_enqueue_many(c, rq, payloads, 3, bad, &el, &err) == EMQ_ERR_INVALID_UTF8);
    CHECK(el == NULL && err && strstr(err->message, "options[2].id") != NULL);
    emq_error_free(err);
    emq_enqueue_options unsized;
    memset(&unsized, 0, sizeof unsized);
    bad[1] = &unsized;
    CHECK(emq_enqueue_many(c, rq, payloads, 3, bad, &el, &err) == EMQ_ERR_INVALID_ARGUMENT);
    CHECK(el == NULL && err && strncmp(err->message, "options[1]: ", 12) == 0);
    emq_error_free(err);
    CHECK(emq_enqueue_many(c, rq, NULL, 3, NULL, &el, NULL) == EMQ_ERR_NULL_POINTER);
    CHECK(emq_enqueue_many(c, rq, payloads, 3, NULL, NULL, NULL) == EMQ_ERR_NULL_POINTER);
    emq_bytes holes[2] = {{NULL, 3}, {LIT("x")}};
    CHECK(emq_enqueue_many(c, rq, holes, 2, NULL, &el, &err) == EMQ_ERR_NULL_POINTER);
    CHECK(el == NULL && err && strstr(err->message, "payloads[0].data") != NULL);
    emq_error_free(err);
    CHECK(queue_keys(rq) == 0);
    /* Zero items: an empty list. */
    CHECK(ok(emq_enqueue_many(c, rq, NULL, 0, NULL, &el, &err), err) && el && el->len == 0);
    emq_enqueue_list_free(el);
    emq_client_free(c);
}

/* ---- priorities (wire 2.2.0, issue #34) ---- */

/* `ZSCORE emq:{q}:<set> id` on `url` as a number; -1 when absent. */
static double zscore_at(const char *url, const char *q, const char *set, const char *id) {
    char line[64];
    redis(url, line, sizeof line, "ZSCORE 'emq:{%s}:%s' %s", q, set, id);
    return line[0] ? atof(line) : -1;
}

static long keys_at(const char *url, const char *q) {
    char line[64];
    redis(url, line, sizeof line, "EVAL \"return #redis.call('KEYS', ARGV[1])\" 0 'emq:{%s}:*'", q);
    return atol(line);
}

/* A client speaking 2.2.0 (on a server of its own: the first client fences the
 * keyspace at its version) enqueues low, high and none; the claims answer high,
 * low, none. The job waits in `prio` scored -priority with the row field. */
static void test_priority_orders_the_claims_on_wire_2_2_0(void) {
    char url[64], line[128];
    pid_t server = start_own_server(url, sizeof url);
    CHECK(server > 0);
    emq_connect_options co = emq_connect_options_default();
    co.wire_version = "echomq:2.2.0";
    emq_client *c = NULL;
    emq_error *err = NULL;
    if (!ok(emq_connect(url, &co, &c, &err), err)) {
        stop_own_server(server);
        return;
    }
    const char *q = "t.prio";
    emq_enqueued low, high, none;
    emq_enqueue_options o = enqueue_options();
    o.priority = 1;
    CHECK(ok(emq_enqueue(c, q, LIT("low"), &o, &low, &err), err));
    o.priority = EMQ_MAX_PRIORITY;
    CHECK(ok(emq_enqueue(c, q, LIT("high"), &o, &high, &err), err));
    CHECK(ok(emq_enqueue(c, q, LIT("none"), NULL, &none, &err), err));
    /* Wire state: prio holds the two, scored -priority; none waits in pending. */
    CHECK(zscore_at(url, q, "prio", low.id) == -1.0);
    CHECK(zscore_at(url, q, "prio", high.id) == -(double)EMQ_MAX_PRIORITY);
    CHECK(zscore_at(url, q, "prio", none.id) == -1 && zscore_at(url, q, "pending", none.id) == 0);
    CHECK(zscore_at(url, q, "pending", high.id) == -1);
    redis(url, line, sizeof line, "ZRANGE 'emq:{%s}:prio' 0 0", q);
    CHECK(strcmp(line, high.id) == 0);
    redis(url, line, sizeof line, "HGET 'emq:{%s}:job:%s' priority", q, high.id);
    CHECK(strcmp(line, "1000000") == 0);
    redis(url, line, sizeof line, "HGET 'emq:{%s}:job:%s' priority", q, low.id);
    CHECK(strcmp(line, "1") == 0);
    redis(url, line, sizeof line, "HEXISTS 'emq:{%s}:job:%s' priority", q, none.id);
    CHECK(strcmp(line, "0") == 0);
    emq_queue_counts counts;
    CHECK(ok(emq_counts(c, q, &counts, &err), err) && counts.pending == 3);
    /* The claims: highest first, then the lower one, then the job without. */
    const char *want[3] = {high.id, low.id, none.id};
    for (int i = 0; i < 3; i++) {
        emq_job *job = NULL;
        CHECK(ok(emq_claim(c, q, 30000, &job, &err), err) && job);
        if (!job) break;
        CHECK(strcmp(job->id, want[i]) == 0);
        emq_job_free(job);
    }

    /* Per item of a batch too: the item with a priority is claimed first. */
    emq_enqueue_options p7 = enqueue_options();
    p7.priority = 7;
    const emq_enqueue_options *per_item[2] = {NULL, &p7};
    emq_bytes payloads[2] = {{LIT("plain")}, {LIT("seven")}};
    emq_enqueue_list *el = NULL;
    CHECK(ok(emq_enqueue_many(c, q, payloads, 2, per_item, &el, &err), err) && el && el->len == 2);
    if (el && el->len == 2) {
        CHECK(zscore_at(url, q, "prio", el->items[1].id) == -7.0);
        emq_job *job = NULL;
        CHECK(ok(emq_claim(c, q, 30000, &job, &err), err) && job && strcmp(job->id, el->items[1].id) == 0);
        emq_job_free(job);
    }
    emq_enqueue_list_free(el);

    /* Out of range: EMQ_ERR_INVALID_ARGUMENT before the wire, alone or in a batch. */
    const char *rq = "t.prio.refused";
    o = enqueue_options();
    o.priority = EMQ_MAX_PRIORITY + 1;
    CHECK(FAILS_WITH(emq_enqueue(c, rq, LIT("x"), &o, NULL, &err), EMQ_ERR_INVALID_ARGUMENT));
    o.priority = (uint64_t)-1; /* a negative priority, cast */
    CHECK(FAILS_WITH(emq_enqueue(c, rq, LIT("x"), &o, NULL, &err), EMQ_ERR_INVALID_ARGUMENT));
    o.priority = EMQ_MAX_PRIORITY + 1;
    const emq_enqueue_options *bad[2] = {NULL, &o};
    CHECK(FAILS_WITH(emq_enqueue_many(c, rq, payloads, 2, bad, &el, &err), EMQ_ERR_INVALID_ARGUMENT));
    CHECK(keys_at(url, rq) == 0);
    emq_client_free(c);
    stop_own_server(server);
}

/* The default wire (2.1.0) has no priorities: EMQ_ERR_UNSUPPORTED, nothing written. */
static void test_priority_on_wire_2_1_0_is_unsupported(void) {
    emq_connect_options co = emq_connect_options_default();
    co.wire_version = "echomq:2.1.0";
    emq_client *c = NULL;
    emq_error *err = NULL;
    CHECK(ok(emq_connect(g_url, &co, &c, &err), err));
    if (!c) return;
    const char *q = "t.prio.old";
    emq_enqueue_options o = enqueue_options();
    o.priority = 5;
    CHECK(FAILS_WITH(emq_enqueue(c, q, LIT("x"), &o, NULL, &err), EMQ_ERR_UNSUPPORTED));
    const emq_enqueue_options *per_item[1] = {&o};
    emq_bytes one[1] = {{LIT("x")}};
    emq_enqueue_list *el = NULL;
    CHECK(FAILS_WITH(emq_enqueue_many(c, q, one, 1, per_item, &el, &err), EMQ_ERR_UNSUPPORTED));
    CHECK(el == NULL && queue_keys(q) == 0);
    /* Priority 0 is none: accepted at 2.1.0, into pending. */
    emq_enqueued r;
    o.priority = 0;
    CHECK(ok(emq_enqueue(c, q, LIT("x"), &o, &r, &err), err) && zscore(q, "pending", r.id) == 0);
    emq_client_free(c);
}

/* ---- repeatable jobs (issue #13 §6): the scenario every binding runs ---- */

struct repeat_pump {
    emq_client *client;
    uint64_t fired;
    int failures;
};

/* One of two pumps racing on one repeat until it ends (bounded). */
static void *pump_repeats(void *arg) {
    struct repeat_pump *p = arg;
    for (int i = 0; i < 3000; i++) {
        uint64_t n = 0;
        emq_error *err = NULL;
        if (!ok(emq_fire_repeats(p->client, "t.repeat", 10, &n, &err), err)) p->failures++;
        p->fired += n;
        char line[64];
        redis(g_url, line, sizeof line, "EXISTS 'emq:{t.repeat}:repeat:tick'");
        if (strcmp(line, "0") == 0) break;
        sleep_ms(2);
    }
    return NULL;
}

static void test_repeat_two_pumps_one_job_per_slot(void) {
    emq_client *a = connect_or_null(), *b = connect_or_null();
    CHECK(a && b);
    emq_error *err = NULL;
    uint64_t next = 0;
    CHECK(ok(emq_upsert_repeat(a, "t.repeat", "tick", LIT("r"), 50, NULL, NULL, 0, 0, 5, &next, &err), err));
    CHECK(next > now_ms() - 1000);
    char line[128];
    redis(g_url, line, sizeof line, "HGET 'emq:{t.repeat}:repeat:tick' every_ms");
    CHECK(strcmp(line, "50") == 0);
    emq_repeat_list *list = NULL;
    CHECK(ok(emq_list_repeats(a, "t.repeat", &list, &err), err));
    CHECK(list && list->len == 1 && strcmp(list->items[0].name, "tick") == 0);
    CHECK(list->items[0].every_ms == 50 && list->items[0].cron == NULL && list->items[0].limit == 5);
    CHECK(list->items[0].next_run_ms == next && list->items[0].payload_len == 1);
    emq_repeat_list_free(list);

    struct repeat_pump pumps[2] = {{a, 0, 0}, {b, 0, 0}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, pump_repeats, &pumps[i]);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    CHECK(pumps[0].failures == 0 && pumps[1].failures == 0);
    CHECK(pumps[0].fired + pumps[1].fired == 5);
    redis(g_url, line, sizeof line, "ZCARD 'emq:{t.repeat}:pending'");
    CHECK(strcmp(line, "5") == 0);
    redis(g_url, line, sizeof line, "EXISTS 'emq:{t.repeat}:repeat'");
    CHECK(strcmp(line, "0") == 0);
    CHECK(ok(emq_list_repeats(a, "t.repeat", &list, &err), err));
    CHECK(list && list->len == 0 && list->items == NULL);
    emq_repeat_list_free(list);

    /* Cron in a zone; bad input is EMQ_ERR_INVALID_ARGUMENT with nothing written. */
    CHECK(ok(emq_upsert_repeat(a, "t.repeat", "report", LIT("{}"), 0, "*/5 * * * *", "Europe/Berlin", 0, 0, 0, &next, &err), err));
    CHECK(next % 300000 == 0);
    redis(g_url, line, sizeof line, "HGET 'emq:{t.repeat}:repeat:report' tz");
    CHECK(strcmp(line, "Europe/Berlin") == 0);
    bool removed = false;
    CHECK(ok(emq_remove_repeat(a, "t.repeat", "report", &removed, &err), err) && removed);
    CHECK(ok(emq_remove_repeat(a, "t.repeat", "report", &removed, &err), err) && !removed);
    CHECK(emq_upsert_repeat(a, "t.repeat", "x", LIT("x"), 0, "not cron", NULL, 0, 0, 0, NULL, NULL) == EMQ_ERR_INVALID_ARGUMENT);
    CHECK(emq_upsert_repeat(a, "t.repeat", "x", LIT("x"), 0, "* * * * *", "Mars/Olympus", 0, 0, 0, NULL, NULL) == EMQ_ERR_INVALID_ARGUMENT);
    CHECK(emq_upsert_repeat(a, "t.repeat", "x", LIT("x"), 1000, "* * * * *", NULL, 0, 0, 0, NULL, NULL) == EMQ_ERR_INVALID_ARGUMENT);
    CHECK(emq_upsert_repeat(a, "t.repeat", "a b", LIT("x"), 1000, NULL, NULL, 0, 0, 0, NULL, NULL) == EMQ_ERR_INVALID_ARGUMENT);
    CHECK(emq_upsert_repeat(a, "t.repeat", NULL, LIT("x"), 1000, NULL, NULL, 0, 0, 0, NULL, NULL) == EMQ_ERR_NULL_POINTER);
    redis(g_url, line, sizeof line, "EXISTS 'emq:{t.repeat}:repeat:x' 'emq:{t.repeat}:repeat'");
    CHECK(strcmp(line, "0") == 0);
    emq_client_free(a);
    emq_client_free(b);
}

static void test_limits_are_enforced_inside_the_claim(void) {
    emq_client *c = connect_or_null();
    CHECK(c);
    emq_error *err = NULL;
    for (int i = 0; i < 3; i++) CHECK(ok(emq_enqueue(c, "t.limits", LIT("x"), NULL, NULL, &err), err));
    CHECK(ok(emq_set_concurrency(c, "t.limits", 1, &err), err));
    emq_job *job = NULL;
    CHECK(ok(emq_claim(c, "t.limits", 60000, &job, &err), err) && job);
    emq_job *none = NULL;
    CHECK(emq_claim(c, "t.limits", 60000, &none, &err) == EMQ_ERR_RATE_LIMITED && none == NULL);
    CHECK(err && strcmp(err->code, "EMQRATE") == 0);
    emq_error_free(err);
    err = NULL;
    CHECK(ok(emq_set_concurrency(c, "t.limits", 0, &err), err));
    CHECK(ok(emq_set_rate_limit(c, "t.limits", 1, 60000, &err), err));
    CHECK(ok(emq_claim(c, "t.limits", 60000, &none, &err), err) && none);
    emq_job_free(none);
    none = NULL;
    CHECK(emq_claim(c, "t.limits", 60000, &none, NULL) == EMQ_ERR_RATE_LIMITED);
    char line[64];
    redis(g_url, line, sizeof line, "GET 'emq:{t.limits}:limiter'");
    CHECK(strcmp(line, "1") == 0);
    CHECK(ok(emq_set_rate_limit(c, "t.limits", 0, 0, &err), err));
    CHECK(ok(emq_rate_limit(c, "t.limits", job->id, job->token, 300, &err), err));
    redis(g_url, line, sizeof line, "HGET 'emq:{t.limits}:job:%s' state", job->id);
    CHECK(strcmp(line, "scheduled") == 0);
    CHECK(emq_complete(c, "t.limits", job->id, job->token, NULL) == EMQ_ERR_STALE);
    emq_job_free(job);
    emq_client_free(c);
}

/* Issue #33: the facts an error carries are read through accessors, never
 * from its message: the rate limit's wait (between the limiter's PTTL before
 * and after the refused claim) and the job id of a dead and a gone job. The
 * Python, Node and C++ suites run the same scenario. */
static void test_error_facts_through_accessors(void) {
    emq_client *c = connect_or_null();
    CHECK(c);
    if (!c) return;
    emq_error *err = NULL;
    const char *q = "t.facts";
    char line[128];
    emq_enqueued a, b;
    CHECK(ok(emq_enqueue(c, q, LIT("a"), NULL, &a, &err), err));
    CHECK(ok(emq_enqueue(c, q, LIT("b"), NULL, &b, &err), err));
    CHECK(ok(emq_set_rate_limit(c, q, 1, 600000, &err), err));
    emq_job *job = NULL;
    CHECK(ok(emq_claim(c, q, 60000, &job, &err), err) && job);
    if (!job) return;
    redis(g_url, line, sizeof line, "PTTL 'emq:{%s}:limiter'", q);
    long before = atol(line);
    emq_job *none = NULL;
    CHECK(emq_claim(c, q, 60000, &none, &err) == EMQ_ERR_RATE_LIMITED && none == NULL);
    redis(g_url, line, sizeof line, "PTTL 'emq:{%s}:limiter'", q);
    long after = atol(line);
    int64_t wait = emq_error_retry_after_ms(err);
    CHECK(after > 500000 && after <= wait && wait <= before);
    CHECK(err && err->retry_after_ms == wait && emq_error_job_id(err) == NULL);
    emq_error_free(err);
    err = NULL;
    CHECK(ok(emq_set_rate_limit(c, q, 0, 0, &err), err));

    /* a job that went dead: its id and last_error */
    emq_retry_outcome outcome;
    CHECK(ok(emq_retry(c, q, job->id, job->token, 0, 1, "boom", &outcome, &err), err));
    CHECK(outcome == EMQ_RETRY_DEAD);
    redis(g_url, line, sizeof line, "HGET 'emq:{%s}:job:%s' state", q, a.id);
    CHECK(strcmp(line, "dead") == 0);
    emq_value *value = NULL;
    CHECK(emq_wait_for_result(c, q, a.id, 20000, &value, &err) == EMQ_ERR_JOB_DEAD);
    CHECK(emq_error_job_id(err) && strcmp(emq_error_job_id(err), a.id) == 0);
    CHECK(emq_error_last_error(err) && strcmp(emq_error_last_error(err), "boom") == 0);
    CHECK(emq_error_retry_after_ms(err) == -1);
    emq_error_free(err);
    err = NULL;

    /* a removed job: gone, named by the decoder and by a wire refusal */
    CHECK(ok(emq_remove(c, q, b.id, &err), err));
    redis(g_url, line, sizeof line, "EXISTS 'emq:{%s}:job:%s'", q, b.id);
    CHECK(strcmp(line, "0") == 0);
    CHECK(emq_wait_for_result(c, q, b.id, 20000, &value, &err) == EMQ_ERR_GONE);
    CHECK(emq_error_job_id(err) && strcmp(emq_error_job_id(err), b.id) == 0);
    emq_error_free(err);
    err = NULL;
    CHECK(emq_update_progress(c, q, b.id, 1, "1", &err) == EMQ_ERR_GONE);
    CHECK(emq_error_job_id(err) && strcmp(emq_error_job_id(err), b.id) == 0);
    emq_error_free(err);
    err = NULL;
    CHECK(emq_error_job_id(NULL) == NULL && emq_error_retry_after_ms(NULL) == -1);
    size_t n = 7;
    CHECK(emq_error_items(NULL, &n) == NULL && n == 0);
    emq_job_free(job);
    emq_client_free(c);
}

/* `test_ffi poison-worker`: a worker whose handler never returns, with a stall cap of 3. */
static int poison_worker(void) {
    emq_client *c = connect_or_null();
    if (!c) return 1;
    static slow_state st;
    st.sleep_ms = 600000;
    emq_worker_options o = emq_worker_options_default();
    o.concurrency = 1;
    o.prefetch = 0;
    o.lease_ms = 300;
    o.pump_interval_ms = 50;
    o.max_stalls = 3;
    emq_worker *w = NULL;
    if (!ok(emq_worker_new(c, "t.poison", &o, slow_handler, &st, &w, NULL), NULL)) return 1;
    emq_worker_run(w, NULL);
    return 0;
}

static pid_t spawn_poison_worker(void) {
    pid_t child = fork();
    if (child == 0) {
        execl(g_self, g_self, "poison-worker", (char *)NULL);
        _exit(127);
    }
    return child;
}

static void test_poison_job_killing_its_worker_three_times_is_dead_stalled(void) {
    emq_client *c = connect_or_null();
    CHECK(c);
    emq_error *err = NULL;
    emq_enqueued r;
    CHECK(ok(emq_enqueue(c, "t.poison", LIT("kills its worker"), NULL, &r, &err), err));
    char line[64] = "";
    for (int round = 1; round <= 3; round++) {
        pid_t child = spawn_poison_worker();
        CHECK(child > 0);
        char want[8];
        snprintf(want, sizeof want, "%d", round);
        for (int i = 0; i < 3000; i++) {
            redis(g_url, line, sizeof line, "HGET 'emq:{t.poison}:job:%s' attempts", r.id);
            if (strcmp(line, want) == 0) break;
            sleep_ms(10);
        }
        CHECK(strcmp(line, want) == 0); /* a fresh worker claimed it */
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
    }
    pid_t last = spawn_poison_worker();
    for (int i = 0; i < 3000; i++) {
        redis(g_url, line, sizeof line, "HGET 'emq:{t.poison}:job:%s' state", r.id);
        if (strcmp(line, "dead") == 0) break;
        sleep_ms(10);
    }
    kill(last, SIGKILL);
    waitpid(last, NULL, 0);
    CHECK(strcmp(line, "dead") == 0);
    redis(g_url, line, sizeof line, "HGET 'emq:{t.poison}:job:%s' last_error", r.id);
    CHECK(strcmp(line, "stalled") == 0);
    redis(g_url, line, sizeof line, "HGET 'emq:{t.poison}:job:%s' stalled", r.id);
    CHECK(strcmp(line, "3") == 0);
    redis(g_url, line, sizeof line, "ZCARD 'emq:{t.poison}:dead'");
    CHECK(strcmp(line, "1") == 0);
    emq_client_free(c);
}

/* ---- observability (issue #12) ---- */

/* What the log handler saw (core threads call it: guarded by a mutex). */
static pthread_mutex_t g_log_lock = PTHREAD_MUTEX_INITIALIZER;
static char g_log_seen[512];
static int g_log_level;

static void capture_log(emq_log_level level, const char *target, const char *message, void *user_data) {
    (void)user_data;
    pthread_mutex_lock(&g_log_lock);
    if (strstr(message, "bundle mismatch") && strncmp(target, "echomq", 6) == 0) {
        snprintf(g_log_seen, sizeof g_log_seen, "%s", message);
        g_log_level = level;
    }
    pthread_mutex_unlock(&g_log_lock);
}

static void test_log_handler_receives_core_warnings(void) {
    emq_error *err = NULL;
    CHECK(emq_set_log_handler(capture_log, NULL, 99, &err) == EMQ_ERR_INVALID_ARGUMENT);
    emq_error_free(err);
    CHECK(ok(emq_set_log_handler(capture_log, NULL, EMQ_LOG_WARN, &err), err));
    /* Another runtime recorded a different bundle: the core warns at connect. */
    redis(g_url, NULL, 0, "HSET '{emq}:bundle' bundle 0000");
    emq_client *c = connect_or_null();
    redis(g_url, NULL, 0, "HDEL '{emq}:bundle' bundle");
    CHECK(c);
    emq_client_free(c);
    pthread_mutex_lock(&g_log_lock);
    int seen = strstr(g_log_seen, "bundle mismatch") != NULL && g_log_level == EMQ_LOG_WARN;
    pthread_mutex_unlock(&g_log_lock);
    CHECK(ok(emq_set_log_handler(NULL, NULL, EMQ_LOG_WARN, &err), err)); /* back to stderr */
    CHECK(seen);
}

/* Worker events, copied out of the callback. */
#define MAX_EVENTS 64
typedef struct {
    pthread_mutex_t lock;
    int n;
    struct {
        emq_worker_event_kind kind;
        char id[EMQ_ID_BUF];
        uint64_t token;
        char error[64];
        int64_t retry_in_ms;
    } items[MAX_EVENTS];
} event_log;

static void record_event(const emq_worker_event *e, void *user_data) {
    event_log *log = user_data;
    pthread_mutex_lock(&log->lock);
    if (log->n < MAX_EVENTS) {
        log->items[log->n].kind = e->kind;
        snprintf(log->items[log->n].id, EMQ_ID_BUF, "%s", e->id ? e->id : "");
        log->items[log->n].token = e->token;
        snprintf(log->items[log->n].error, 64, "%s", e->error ? e->error : "");
        log->items[log->n].retry_in_ms = e->retry_in_ms;
        log->n++;
    }
    pthread_mutex_unlock(&log->lock);
}

static int has_event(event_log *log, emq_worker_event_kind kind, const char *id, uint64_t token,
                     const char *error, int64_t retry_in_ms) {
    for (int i = 0; i < log->n; i++) {
        if (log->items[i].kind == kind && strcmp(log->items[i].id, id) == 0 &&
            (token == 0 || log->items[i].token == token) &&
            (error == NULL || strcmp(log->items[i].error, error) == 0) &&
            (retry_in_ms == -2 || log->items[i].retry_in_ms == retry_in_ms))
            return 1;
    }
    return 0;
}

static emq_handler_status lifecycle_handler(const emq_job *job, void *user_data, emq_handler_result *result) {
    (void)user_data;
    if (job->payload_len == 5 && memcmp(job->payload, "flaky", 5) == 0 && job->token == 1) {
        emq_handler_result_set_message(result, "try again", NULL);
        return EMQ_HANDLER_RETRY;
    }
    if (job->payload_len == 6 && memcmp(job->payload, "doomed", 6) == 0) {
        emq_handler_result_set_message(result, "never", NULL);
        return EMQ_HANDLER_FATAL;
    }
    if (job->payload_len == 4 && memcmp(job->payload, "lost", 4) == 0) /* someone took it */
        redis(g_url, NULL, 0, "HINCRBY 'emq:{t.events}:job:%s' attempts 1", job->id);
    return EMQ_HANDLER_OK;
}

/* Queue events, copied out of the subscription's callback. */
typedef struct {
    pthread_mutex_t lock;
    char lines[32][64];
    int n;
} queue_log;

static void record_queue_event(const emq_queue_event *e, void *user_data) {
    queue_log *log = user_data;
    pthread_mutex_lock(&log->lock);
    if (log->n < 32) {
        const char *error = "";
        for (size_t i = 0; i < e->field_count; i++)
            if (strcmp(e->field_names[i], "error") == 0) error = e->field_values[i];
        snprintf(log->lines[log->n++], 64, "%s %s %s", e->event, e->job, error);
    }
    pthread_mutex_unlock(&log->lock);
}

static int has_line(queue_log *log, const char *event, const char *job, const char *error) {
    char want[64];
    snprintf(want, sizeof want, "%s %s %s", event, job, error);
    pthread_mutex_lock(&log->lock);
    int found = 0;
    for (int i = 0; i < log->n; i++) found |= strcmp(log->lines[i], want) == 0;
    pthread_mutex_unlock(&log->lock);
    return found;
}

static void test_worker_events_subscription_wait_for_metrics(void) {
    emq_client *c = connect_or_null();
    CHECK(c);
    emq_error *err = NULL;
    static queue_log qlog = {PTHREAD_MUTEX_INITIALIZER, {{0}}, 0};
    emq_subscription *sub = NULL;
    CHECK(ok(emq_subscribe(c, "t.events", record_queue_event, &qlog, &sub, &err), err) && sub);

    emq_enqueued ok_job, flaky, doomed, lost;
    CHECK(ok(emq_enqueue(c, "t.events", LIT("ok"), NULL, &ok_job, &err), err));
    CHECK(ok(emq_enqueue(c, "t.events", LIT("flaky"), NULL, &flaky, &err), err));
    CHECK(ok(emq_enqueue(c, "t.events", LIT("doomed"), NULL, &doomed, &err), err));
    CHECK(ok(emq_enqueue(c, "t.events", LIT("lost"), NULL, &lost, &err), err));

    static event_log elog = {PTHREAD_MUTEX_INITIALIZER, 0, {{0}}};
    emq_worker_options o = emq_worker_options_default();
    o.max_attempts = 2;
    o.backoff = EMQ_BACKOFF_FIXED;
    o.backoff_base_ms = 10;
    o.backoff_cap_ms = 10;
    o.pump_interval_ms = 20;
    o.idle_max_ms = 20;
    emq_worker *w = NULL;
    CHECK(ok(emq_worker_new(c, "t.events", &o, lifecycle_handler, NULL, &w, &err), err));
    CHECK(ok(emq_worker_set_event_handler(w, record_event, &elog, &err), err));
    CHECK(emq_worker_set_event_handler(w, record_event, &elog, &err) == EMQ_ERR_INVALID_ARGUMENT);
    emq_error_free(err);
    err = NULL;
    CHECK(ok(emq_worker_start(w, &err), err));

    /* wait_for: answered by the worker's settlements. */
    emq_settled state = 0;
    char *last_error = NULL;
    CHECK(ok(emq_wait_for(c, "t.events", ok_job.id, 30000, &state, &last_error, &err), err));
    CHECK(state == EMQ_SETTLED_COMPLETED && last_error == NULL);
    CHECK(ok(emq_wait_for(c, "t.events", doomed.id, 30000, &state, &last_error, &err), err));
    CHECK(state == EMQ_SETTLED_DEAD && last_error && strcmp(last_error, "never") == 0);
    emq_string_free(last_error);
    CHECK(ok(emq_wait_for(c, "t.events", flaky.id, 30000, &state, NULL, &err), err));
    CHECK(state == EMQ_SETTLED_COMPLETED);
    emq_stats s;
    for (int i = 0; i < 1500 && !(emq_worker_stats(w, &s, NULL) == EMQ_OK && s.lease_lost >= 1); i++)
        sleep_ms(20);
    emq_worker_stop(w, NULL);
    CHECK(ok(emq_worker_join(w, &err), err));
    emq_worker_free(w);

    CHECK(has_event(&elog, EMQ_EVENT_ACTIVE, ok_job.id, 1, NULL, -2));
    CHECK(has_event(&elog, EMQ_EVENT_COMPLETED, ok_job.id, 1, NULL, -2));
    CHECK(has_event(&elog, EMQ_EVENT_FAILED, flaky.id, 1, "try again", 10));
    CHECK(has_event(&elog, EMQ_EVENT_COMPLETED, flaky.id, 2, NULL, -2));
    CHECK(has_event(&elog, EMQ_EVENT_FAILED, doomed.id, 1, "never", -1));
    CHECK(has_event(&elog, EMQ_EVENT_DEAD, doomed.id, 1, "never", -2));
    CHECK(has_event(&elog, EMQ_EVENT_LEASE_LOST, lost.id, 1, NULL, -2));
    CHECK(!has_event(&elog, EMQ_EVENT_COMPLETED, lost.id, 0, NULL, -2));
    CHECK(elog.n > 0 && elog.items[elog.n - 1].kind == EMQ_EVENT_CLOSED);

    /* The subscription saw the wire's side of it. */
    int seen = 0;
    for (int i = 0; i < 500 && !seen; i++) {
        seen = has_line(&qlog, "completed", ok_job.id, "") && has_line(&qlog, "dead", doomed.id, "never");
        if (!seen) sleep_ms(10);
    }
    CHECK(seen);
    CHECK(has_line(&qlog, "added", ok_job.id, "") && has_line(&qlog, "active", ok_job.id, ""));
    CHECK(has_line(&qlog, "retried", flaky.id, "try again"));
    CHECK(ok(emq_subscription_close(sub, &err), err));
    emq_subscription_free(sub);

    /* Metrics: the counts, as Prometheus text. */
    const char *queues[] = {"t.events"};
    char *text = NULL;
    CHECK(ok(emq_metrics_text(c, queues, 1, &text, &err), err) && text);
    int metrics_ok = strstr(text, "echomq_dead_jobs{queue=\"t.events\"} 1\n") != NULL &&
                     strstr(text, "echomq_completed_total{queue=\"t.events\"} 2\n") != NULL &&
                     strstr(text, "# TYPE echomq_worker_handler_duration_seconds histogram") != NULL;
    emq_string_free(text);
    CHECK(metrics_ok);
    const char *bad[] = {"bad queue"};
    CHECK(emq_metrics_text(c, bad, 1, &text, &err) == EMQ_ERR_INVALID_QUEUE && text == NULL);
    emq_error_free(err);
    emq_client_free(c);
}

/* Cross-runtime (issue #12's Done-when): the C subscriber and emq_wait_for
 * follow jobs a Python worker, in another process, processed. The worker is
 * tests/cross/python_worker.py (run from the repository root) under
 * $EMQ_TEST_PYTHON, a python with echomq installed (scripts/test-c.sh sets it). */
static void test_c_subscriber_follows_a_python_worker(void) {
    const char *python = getenv("EMQ_TEST_PYTHON");
    if (!python) fprintf(stderr, "set EMQ_TEST_PYTHON to a python with echomq installed\n");
    CHECK(python);
    emq_client *c = connect_or_null();
    CHECK(python && c);
    emq_error *err = NULL;
    static queue_log qlog = {PTHREAD_MUTEX_INITIALIZER, {{0}}, 0};
    emq_subscription *sub = NULL;
    CHECK(ok(emq_subscribe(c, "t.cross", record_queue_event, &qlog, &sub, &err), err) && sub);
    emq_enqueued good, bad;
    CHECK(ok(emq_enqueue(c, "t.cross", LIT("ok"), NULL, &good, &err), err));
    CHECK(ok(emq_enqueue(c, "t.cross", LIT("fail"), NULL, &bad, &err), err));
    pid_t child = fork();
    if (child == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, STDOUT_FILENO);
        execl(python, python, "tests/cross/python_worker.py", g_url, "t.cross", (char *)NULL);
        _exit(127);
    }
    CHECK(child > 0);
    /* Every wait first, the worker stopped, then the checks (a failed check
     * returns at once and must not leave the worker running). */
    emq_settled good_state = 0, bad_state = 0;
    char *last_error = NULL;
    int waited = ok(emq_wait_for(c, "t.cross", good.id, 30000, &good_state, NULL, &err), err) &&
                 ok(emq_wait_for(c, "t.cross", bad.id, 30000, &bad_state, &last_error, &err), err);
    /* The subscription hears both ends too (in either order), the dead one
     * with the same error. */
    int dead = 0, completed = 0;
    for (int i = 0; waited && i < 500 && !(dead && completed); i++) {
        dead = last_error && has_line(&qlog, "dead", bad.id, last_error);
        completed = has_line(&qlog, "completed", good.id, "");
        if (!(dead && completed)) sleep_ms(10);
    }
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    CHECK(waited && good_state == EMQ_SETTLED_COMPLETED && bad_state == EMQ_SETTLED_DEAD);
    CHECK(last_error && strstr(last_error, "python says no") && dead && completed);
    emq_string_free(last_error);
    CHECK(has_line(&qlog, "added", good.id, "") && has_line(&qlog, "active", good.id, ""));
    CHECK(has_line(&qlog, "added", bad.id, "") && has_line(&qlog, "active", bad.id, ""));
    emq_subscription_free(sub);
    emq_client_free(c);
}

/* `added` events heard (no copy: only the count matters here). */
static void count_added(const emq_queue_event *e, void *user_data) {
    if (strcmp(e->event, "added") == 0) atomic_fetch_add((atomic_int *)user_data, 1);
}

/* emq_close returns only once the events of the calls before it are out:
 * 40 batches answered, then close at once, and every `added` arrives. */
static void test_close_publishes_queued_events(void) {
    emq_client *watcher = connect_or_null(), *producer = connect_or_null();
    CHECK(watcher && producer);
    emq_error *err = NULL;
    static atomic_int heard;
    atomic_store(&heard, 0);
    emq_subscription *sub = NULL;
    CHECK(ok(emq_subscribe(watcher, "t.close", count_added, &heard, &sub, &err), err) && sub);
    emq_bytes payloads[50];
    for (int i = 0; i < 50; i++) payloads[i] = (emq_bytes){(const uint8_t *)"x", 1};
    for (int b = 0; b < 40; b++) {
        emq_enqueue_list *list = NULL;
        CHECK(ok(emq_enqueue_many(producer, "t.close", payloads, 50, NULL, &list, &err), err));
        emq_enqueue_list_free(list);
    }
    CHECK(ok(emq_close(producer, &err), err));
    emq_enqueued late;
    CHECK(emq_enqueue(producer, "t.close", LIT("late"), NULL, &late, &err) == EMQ_ERR_CLOSED);
    emq_error_free(err);
    err = NULL;
    uint64_t until = now_ms() + 5000;
    while (atomic_load(&heard) < 2000 && now_ms() < until) sleep_ms(10);
    sleep_ms(200); /* nothing more than one per job either */
    CHECK(atomic_load(&heard) == 2000);
    emq_subscription_free(sub);
    emq_client_free(producer);
    emq_client_free(watcher);
}

/* The operator verbs: queues, drain, purge_dead (age bound), requeue_all_dead. */
static void test_operator_verbs(void) {
    emq_client *c = connect_or_null();
    CHECK(c);
    if (!c) return;
    emq_error *err = NULL;
    const char *q = "t.ops";
    emq_enqueued receipt;
    for (int i = 0; i < 3; i++) CHECK(ok(emq_enqueue(c, q, (const uint8_t *)"p", 1, NULL, &receipt, &err), err));
    emq_enqueue_options later = enqueue_options();
    later.delay_ms = 60000;
    CHECK(ok(emq_enqueue(c, q, (const uint8_t *)"later", 5, &later, &receipt, &err), err));
    CHECK(ok(emq_pause(c, "t.ops-empty", &err), err));

    emq_string_list *names = NULL;
    CHECK(ok(emq_queues(c, &names, &err), err) && names);
    int seen_ops = 0, seen_empty = 0;
    for (size_t i = 0; names && i < names->len; i++) {
        if (strcmp(names->items[i], q) == 0) seen_ops = 1;
        if (strcmp(names->items[i], "t.ops-empty") == 0) seen_empty = 1;
    }
    CHECK(seen_ops && seen_empty);
    emq_string_list_free(names);

    uint64_t n = 0;
    CHECK(ok(emq_drain(c, q, false, 2, &n, &err), err) && n == 2);
    CHECK(ok(emq_drain(c, q, true, 0, &n, &err), err) && n == 2);
    emq_queue_counts counts;
    CHECK(ok(emq_counts(c, q, &counts, &err), err) && counts.pending == 0 && counts.scheduled == 0);

    /* two dead jobs, requeue them all, kill them again, purge by age then all */
    for (int i = 0; i < 2; i++) CHECK(ok(emq_enqueue(c, q, (const uint8_t *)"d", 1, NULL, &receipt, &err), err));
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 2; i++) {
            emq_job *job = NULL;
            emq_retry_outcome outcome = -1;
            CHECK(ok(emq_claim(c, q, 30000, &job, &err), err) && job);
            if (!job) return;
            CHECK(ok(emq_retry(c, q, job->id, job->token, 0, 1, "x", &outcome, &err), err));
            CHECK(outcome == EMQ_RETRY_DEAD);
            emq_job_free(job);
        }
        if (round == 0) {
            CHECK(ok(emq_requeue_all_dead(c, q, 0, &n, &err), err) && n == 2);
        }
    }
    uint64_t day = 86400000;
    CHECK(ok(emq_purge_dead(c, q, &day, 0, &n, &err), err) && n == 0);
    CHECK(ok(emq_purge_dead(c, q, NULL, 0, &n, &err), err) && n == 2);
    CHECK(emq_drain(c, "bad queue", false, 0, &n, &err) == EMQ_ERR_INVALID_QUEUE);
    emq_error_free(err);
    CHECK(emq_queues(c, NULL, NULL) == EMQ_ERR_NULL_POINTER);

    emq_worker_options wo;
    emq_worker_options_init(&wo, sizeof wo);
    CHECK(wo.dead_max_age_ms == 0 && wo.dead_max_len == EMQ_DEAD_KEEP_ALL);
    emq_client_free(c);
}

/* Issue #13 §2/§4 (echomq:2.1.0): progress, logs and kept results, the
 * scenario every binding runs. */
static emq_handler_status result_handler(const emq_job *job, void *user_data, emq_handler_result *result) {
    emq_client *c = user_data;
    emq_update_progress(c, "t.results", job->id, job->token, "50", NULL);
    emq_log(c, "t.results", job->id, "working", 0, NULL, NULL);
    if (job->payload_len == 4 && memcmp(job->payload, "fail", 4) == 0) {
        emq_handler_result_set_message(result, "it broke", NULL);
        return EMQ_HANDLER_RETRY;
    }
    if (job->payload_len == 1 && job->payload[0] == 'a') {
        emq_handler_result_set_value(result, LIT("done:a"), NULL);
    }
    return EMQ_HANDLER_OK;
}

static void test_progress_logs_results(void) {
    emq_client *c = connect_or_null();
    CHECK(c);
    if (!c) return;
    emq_error *err = NULL;
    const char *q = "t.progress";
    emq_enqueued receipt;
    char line[256], cmd[256];
    CHECK(ok(emq_enqueue(c, q, LIT("p"), NULL, &receipt, &err), err));
    const char *id = receipt.id;
    /* not held: stale */
    CHECK(emq_update_progress(c, q, id, 0, "10", &err) == EMQ_ERR_STALE);
    emq_error_free(err);
    err = NULL;
    emq_job *job = NULL;
    CHECK(ok(emq_claim(c, q, 30000, &job, &err), err) && job);
    if (!job) return;
    CHECK(ok(emq_update_progress(c, q, id, job->token, "{\"done\":3}", &err), err));
    snprintf(cmd, sizeof cmd, "HGET 'emq:{%s}:job:%s' progress", q, id);
    redis(g_url, line, sizeof line, "%s", cmd);
    CHECK(strcmp(line, "{\"done\":3}") == 0);
    emq_job_info *info = NULL;
    CHECK(ok(emq_get_job(c, q, id, &info, &err), err) && info && info->progress);
    if (info && info->progress) CHECK(strcmp(info->progress, "{\"done\":3}") == 0);
    emq_job_info_free(info);
    CHECK(emq_update_progress(c, q, id, job->token, "not json", &err) == EMQ_ERR_INVALID_ARGUMENT);
    emq_error_free(err);
    err = NULL;
    uint64_t len = 0;
    for (int i = 1; i <= 5; i++) {
        char text[16];
        snprintf(text, sizeof text, "line %d", i);
        CHECK(ok(emq_log(c, q, id, text, 3, &len, &err), err) && len == (uint64_t)(i < 3 ? i : 3));
    }
    emq_string_list *lines = NULL;
    CHECK(ok(emq_logs(c, q, id, 0, -1, &lines, &err), err) && lines && lines->len == 3);
    if (lines && lines->len == 3) CHECK(strcmp(lines->items[0], "line 3") == 0 && strcmp(lines->items[2], "line 5") == 0);
    emq_string_list_free(lines);
    CHECK(ok(emq_complete(c, q, id, job->token, &err), err));
    emq_job_free(job);
    snprintf(cmd, sizeof cmd, "EXISTS 'emq:{%s}:job:%s:logs'", q, id);
    redis(g_url, line, sizeof line, "%s", cmd);
    CHECK(strcmp(line, "0") == 0);
    CHECK(emq_log(c, q, id, "late", 0, NULL, &err) == EMQ_ERR_GONE);
    emq_error_free(err);
    err = NULL;

    /* a worker keeping results */
    const char *rq = "t.results";
    emq_enqueued ok_job, dead_job, empty_job;
    CHECK(ok(emq_enqueue(c, rq, LIT("a"), NULL, &ok_job, &err), err));
    CHECK(ok(emq_enqueue(c, rq, LIT("fail"), NULL, &dead_job, &err), err));
    CHECK(ok(emq_enqueue(c, rq, LIT("nothing"), NULL, &empty_job, &err), err));
    emq_worker_options o = emq_worker_options_default();
    CHECK(o.keep_result_ms == 0);
    o.keep_result_ms = 60000;
    o.max_attempts = 1;
    emq_worker *w = NULL;
    CHECK(ok(emq_worker_new(c, rq, &o, result_handler, c, &w, &err), err));
    CHECK(ok(emq_worker_start(w, &err), err));
    emq_value *value = NULL;
    CHECK(ok(emq_wait_for_result(c, rq, ok_job.id, 20000, &value, &err), err) && value);
    if (value) CHECK(value->len == 6 && memcmp(value->data, "done:a", 6) == 0);
    emq_value_free(value);
    value = NULL;
    CHECK(ok(emq_wait_for_result(c, rq, empty_job.id, 20000, &value, &err), err) && value);
    if (value) CHECK(value->len == 0);
    emq_value_free(value);
    value = NULL;
    CHECK(emq_wait_for_result(c, rq, dead_job.id, 20000, &value, &err) == EMQ_ERR_JOB_DEAD);
    CHECK(err && err->last_error && strcmp(err->last_error, "it broke") == 0 && value == NULL);
    emq_error_free(err);
    err = NULL;
    CHECK(ok(emq_worker_stop(w, &err), err));
    CHECK(ok(emq_worker_join(w, &err), err));
    emq_worker_free(w);
    snprintf(cmd, sizeof cmd, "PTTL 'emq:{%s}:job:%s:result'", rq, ok_job.id);
    redis(g_url, line, sizeof line, "%s", cmd);
    long ttl = atol(line);
    CHECK(ttl > 50000 && ttl <= 60000);
    snprintf(cmd, sizeof cmd, "PTTL 'emq:{%s}:job:%s:logs'", rq, ok_job.id);
    redis(g_url, line, sizeof line, "%s", cmd);
    ttl = atol(line);
    CHECK(ttl > 50000 && ttl <= 60000);
    CHECK(ok(emq_result(c, rq, ok_job.id, &value, &err), err) && value && value->len == 6);
    emq_value_free(value);
    value = NULL;
    CHECK(ok(emq_result(c, rq, dead_job.id, &value, &err), err) && value == NULL);
    CHECK(emq_result(c, rq, ok_job.id, NULL, NULL) == EMQ_ERR_NULL_POINTER);
    emq_client_free(c);
}

/* Issue #17: a NULL url reads EMQ_URL; a claim carries its attempt number; a
 * state another runtime wrote reads as EMQ_STATE_UNKNOWN, not an error. */
static void test_null_url_attempts_unknown_state(void) {
    emq_client *c = NULL;
    emq_error *err = NULL;
    CHECK(ok(emq_connect(NULL, NULL, &c, &err), err) && c);
    emq_enqueued r;
    CHECK(ok(emq_enqueue(c, "t.ergo", (const uint8_t *)"x", 1, NULL, &r, &err), err));
    char line[64];
    redis(g_url, line, sizeof line, "ZCARD 'emq:{t.ergo}:pending'");
    CHECK(strcmp(line, "1") == 0); /* the server EMQ_URL names */
    emq_job *job = NULL;
    CHECK(ok(emq_claim(c, "t.ergo", 30000, &job, &err), err) && job);
    CHECK(job->attempts == 1 && job->token == 1);
    CHECK(ok(emq_complete(c, "t.ergo", job->id, job->token, &err), err));
    emq_job_free(job);

    emq_id id;
    CHECK(ok(emq_mint_job_id(-1, &id, &err), err));
    redis(g_url, NULL, 0, "HSET 'emq:{t.ergo}:job:%s' state awaiting_children attempts 0 payload p", id.text);
    emq_job_info *row = NULL;
    CHECK(ok(emq_get_job(c, "t.ergo", id.text, &row, &err), err) && row);
    CHECK(row->state == EMQ_STATE_UNKNOWN && row->payload_len == 1);
    emq_job_info_free(row);
    emq_client_free(c);
}

int main(int argc, char **argv) {
    g_url = getenv("EMQ_URL");
    if (!g_url) {
        fprintf(stderr, "set EMQ_URL=redis://127.0.0.1:PORT/\n");
        return 2;
    }
    g_self = argv[0];
    if (argc > 1 && strcmp(argv[1], "child-worker") == 0) return child_worker();
    if (argc > 1 && strcmp(argv[1], "poison-worker") == 0) return poison_worker();
    run_test("pure helpers", test_pure_helpers);
    run_test("queues, drain, purge_dead, requeue_all_dead", test_operator_verbs);
    run_test("enqueue, claim, complete (row gone)", test_enqueue_claim_complete);
    run_test("stale token -> EMQ_ERR_STALE, row intact", test_stale_token_keeps_row);
    run_test("version fence -> EMQ_ERR_VERSION_FENCE with found", test_version_fence);
    run_test("invalid id / queue / NULL / UTF-8 are codes", test_bad_arguments_are_codes);
    run_test("batches, retry, dead, requeue, remove, pause, close", test_batches_and_inspection);
    run_test("threads share one client", test_threads_share_a_client);
    run_test("worker processes each job exactly once", test_worker_processes_each_job_once);
    run_test("failing handler: retried then dead with its message", test_failing_handler_retries_then_dead);
    run_test("worker argument checks", test_worker_arguments);
    run_test("worker stats count failures (the server stopped mid-run)", test_worker_stats_count_failures);
    run_test("error kinds provoked: kind, server, protocol, lease lost, timeout, not durable",
             test_error_kinds_provoked_on_a_server);
    run_test("error kinds provoked: bundle mismatch (strict), unavailable",
             test_bundle_mismatch_and_unavailable_on_a_server_of_its_own);
    run_test("a server that is gone fails a call within the connect timeout (issue #39)",
             test_a_gone_server_fails_within_the_connect_timeout);
    run_test("a fenced-out worker stops with EMQ_ERR_VERSION_FENCE (issue #39)",
             test_a_fenced_out_worker_stops_with_the_fence_error);
    run_test("a batch cut by a dropped connection: EMQ_ERR_PARTIAL_BATCH, per-item states",
             test_partial_batch_from_a_dropped_connection);
    run_test("hardened edges: node ids, redacted URLs, ranges, closed clients", test_hardened_edges);
    run_test("option structs grow: older and newer sizes", test_growable_options);
    run_test("heartbeats keep a handler 3x the lease from being reaped", test_heartbeat_outlives_the_lease);
    run_test("graceful stop leaves nothing in active", test_graceful_stop_leaves_nothing_active);
    run_test("a SIGKILLed worker's job is recovered with token 2", test_sigkilled_worker_job_is_recovered);
    run_test("log handler receives the core's warnings", test_log_handler_receives_core_warnings);
    run_test("worker events, subscription, wait_for, metrics", test_worker_events_subscription_wait_for_metrics);
    run_test("emq_close publishes the events queued before it", test_close_publishes_queued_events);
    run_test("a C subscriber and emq_wait_for follow a Python worker", test_c_subscriber_follows_a_python_worker);
    run_test("wire 2.0.0: 2.1.0 verbs are EMQ_ERR_UNSUPPORTED", test_wire_2_0_0_refuses_2_1_0_verbs);
    run_test("dedup: one job per dedup id", test_dedup_one_job_per_dedup_id);
    run_test("enqueue with each option: wire state (issue #33)", test_enqueue_with_each_option);
    run_test("enqueue refusals and bad C input write nothing", test_enqueue_refusals_write_nothing);
    run_test("enqueue_many: per-item options, verdicts in order, refusals", test_enqueue_many_with_per_item_options);
    run_test("priority: claimed highest first on wire 2.2.0, refusals (issue #34)",
             test_priority_orders_the_claims_on_wire_2_2_0);
    run_test("priority on wire 2.1.0: EMQ_ERR_UNSUPPORTED, nothing written (issue #34)",
             test_priority_on_wire_2_1_0_is_unsupported);
    run_test("repeat: two pumps racing make one job per slot; cron + tz; bad input",
             test_repeat_two_pumps_one_job_per_slot);
    run_test("limits: EMQ_ERR_RATE_LIMITED from the claim, rate_limit parks the job",
             test_limits_are_enforced_inside_the_claim);
    run_test("error facts: retry_after_ms and job ids through accessors (issue #33)",
             test_error_facts_through_accessors);
    run_test("poison job killing its worker 3 times ends dead 'stalled'",
             test_poison_job_killing_its_worker_three_times_is_dead_stalled);
    run_test("progress, logs and kept results (2.1.0)", test_progress_logs_results);
    run_test("NULL url, attempts, unknown state (issue #17)", test_null_url_attempts_unknown_state);
    printf("%d passed, %d failed\n", g_passed, g_failed);
    return g_failed == 0 ? 0 : 1;
}
