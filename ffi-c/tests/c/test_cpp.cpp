// The C++17 wrapper (include/echomq.hpp) against a real server: EMQ_URL must point at a
// throwaway redis-server (scripts/test-c.sh starts one). Also run under valgrind there.
#include "echomq.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

static int failures = 0;
#define CHECK(cond)                                                          \
    do {                                                                     \
        if (!(cond)) {                                                       \
            std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            ++failures;                                                      \
        }                                                                    \
    } while (0)

// Run `f`; pass when it throws exactly E (which must also be an echomq::Error of `status`).
template <typename E, typename F>
static bool throws(F&& f, emq_status status) {
    try {
        f();
    } catch (const E& e) {
        const echomq::Error& base = e;
        return base.status() == status && E::kStatus == status;
    } catch (...) {
        return false;
    }
    return false;
}

static_assert(std::is_base_of_v<echomq::Error, echomq::StaleError>);
static_assert(std::is_base_of_v<echomq::Error, echomq::PartialBatchError>);
static_assert(!std::is_copy_constructible_v<echomq::Client>);
static_assert(std::is_move_constructible_v<echomq::Client>);
static_assert(!std::is_copy_constructible_v<echomq::Worker>);

static void pure_helpers() {
    std::string id = echomq::mint_job_id();
    CHECK(id.size() == EMQ_ID_LEN);
    CHECK(echomq::is_valid_id(id));
    CHECK(!echomq::is_valid_id("nope"));
    CHECK(echomq::is_valid_queue("emails"));
    CHECK(!echomq::is_valid_queue("emq"));
    CHECK(echomq::slot(std::string_view("emq:{cpp}:pending")) < 16384);
    CHECK(std::string(echomq::protocol_version()) == emq_protocol_version());
    emq_id_parts parts = echomq::parse_id("USR0KHTOWnGLuC");
    CHECK(std::string(parts.ns) == "USR" && parts.snowflake == 274557032793636864ull);
    CHECK(echomq::encode_id("USR", parts.snowflake) == "USR0KHTOWnGLuC");
    CHECK(echomq::lex_bound(echomq::parse_id(id).minted_at_ms) <= id);
    CHECK(echomq::queue_key("orders", EMQ_KEY_SCHEDULE) == "emq:{orders}:schedule");
    CHECK(echomq::job_key("orders", "ORD0NgWEfAEJfs") == "emq:{orders}:job:ORD0NgWEfAEJfs");
    echomq::KeyInfo info = echomq::classify("emq:{orders}:job:ORD0NgWEfAEJfs");
    CHECK(info.key_class == EMQ_CLASS_JOB && info.queue == std::string("orders"));
    CHECK(info.id == std::string("ORD0NgWEfAEJfs") && !info.key_type && !info.member);
    const uint8_t junk[] = {0xff, 0x00, 'x'};
    CHECK(echomq::classify(echomq::Bytes(junk, sizeof junk)).key_class == EMQ_CLASS_UNCLASSIFIED);
    echomq::validate_queue("orders");
    CHECK(throws<echomq::InvalidQueueError>([] { echomq::validate_queue("a b"); },
                                            EMQ_ERR_INVALID_QUEUE));
    CHECK(throws<echomq::InvalidIdError>([] { echomq::job_key("orders", "ORD0NgWEfAEJf"); },
                                         EMQ_ERR_INVALID_ID));
    // Every status maps to its class; statuses this header does not know throw the base.
    CHECK(throws<echomq::InvalidArgumentError>([] { echomq::mint_job_id(5000); },
                                               EMQ_ERR_INVALID_ARGUMENT));
    CHECK(throws<echomq::InvalidUtf8Error>([] { echomq::is_valid_id("\xff\xfe"); },
                                           EMQ_ERR_INVALID_UTF8));
    try {
        echomq::detail::raise(77, nullptr);
        CHECK(false);
    } catch (const echomq::Error& e) {
        CHECK(e.status() == 77);
        CHECK(std::string(e.code()) == "EMQ_UNKNOWN_STATUS");
    }
}

static void client_verbs(const echomq::Client& client) {
    const std::string q = "cpp-verbs";
    std::string text = "hello";
    echomq::Enqueued first = client.enqueue(q, text);
    CHECK(echomq::is_valid_id(first.id));
    CHECK(!first.duplicate);
    std::vector<uint8_t> raw_bytes = {0, 1, 2, 255};
    client.enqueue(q, raw_bytes);
    echomq::Enqueued later = client.enqueue_in(q, "later", 60000);

    emq_queue_counts c = client.counts(q);
    CHECK(c.pending == 2 && c.scheduled == 1 && c.active == 0);
    CHECK(client.browse(q, EMQ_BROWSE_SCHEDULE) == std::vector<std::string>{later.id});
    CHECK(client.browse(q, EMQ_BROWSE_PENDING, true).front() != first.id);

    std::optional<echomq::Job> job = client.claim(q, 30000);
    CHECK(job.has_value());
    CHECK(job->id() == first.id);
    CHECK(job->payload() == "hello");
    CHECK(job->token() == 1);
    client.extend(q, job->id(), job->token(), 30000);
    client.complete(q, *job);
    // Settling twice: the row is gone, a typed error.
    CHECK(throws<echomq::GoneError>([&] { client.complete(q, *job); }, EMQ_ERR_GONE));

    std::vector<echomq::Job> jobs = client.claim_many(q, 10, 30000);
    CHECK(jobs.size() == 1);
    CHECK(jobs[0].payload() == std::string_view("\0\1\2\xff", 4));
    CHECK(throws<echomq::StaleError>(
        [&] { client.complete(q, jobs[0].id(), jobs[0].token() + 1); }, EMQ_ERR_STALE));
    CHECK(client.retry(q, jobs[0].id(), jobs[0].token(), 0, 1, "boom") == EMQ_RETRY_DEAD);
    std::optional<echomq::JobInfo> info = client.job(q, jobs[0].id());
    CHECK(info && info->state == EMQ_STATE_DEAD && info->last_error == std::string("boom"));
    CHECK(info && info->attempts == 1 && info->payload.size() == 4);
    CHECK(!client.job(q, echomq::mint_job_id()).has_value());
    client.requeue_dead(q, jobs[0].id());
    CHECK(throws<echomq::NotDeadError>([&] { client.requeue_dead(q, jobs[0].id()); },
                                       EMQ_ERR_NOT_DEAD));
    client.remove(q, jobs[0].id());
    CHECK(client.counts(q).pending == 0);

    echomq::Enqueued fixed = client.enqueue_with_id(q, later.id, "again");
    CHECK(fixed.duplicate && fixed.id == later.id);
    std::vector<echomq::EnqueueResult> many = client.enqueue_many(q, {"a", "b", "c"});
    CHECK(many.size() == 3);
    for (const auto& r : many) CHECK(r.status == EMQ_OK && echomq::is_valid_id(r.id));

    // Batch settles: one verdict per job, in order.
    std::vector<echomq::Job> two = client.claim_many(q, 2, 30000);
    CHECK(two.size() == 2);
    std::vector<echomq::JobRef> refs = {{std::string(two[0].id()), two[0].token()},
                                        {std::string(two[1].id()), two[1].token() + 9}};
    std::vector<echomq::Verdict> extended = client.extend_many(q, refs, 60000);
    CHECK(extended.size() == 2 && extended[0].status == EMQ_OK);
    CHECK(extended[1].status == EMQ_ERR_STALE && !extended[1].message.empty());
    refs[1].token = two[1].token();
    std::vector<echomq::Verdict> completed = client.complete_many(q, refs);
    CHECK(completed.size() == 2 && completed[0].status == EMQ_OK && completed[1].status == EMQ_OK);
    CHECK(client.bundle_mismatches().empty());

    client.pause(q);
    CHECK(client.is_paused(q));
    CHECK(!client.claim(q, 1000).has_value());
    client.resume(q);
    CHECK(!client.is_paused(q));
    CHECK(client.promote(q, 100) == 0);
    CHECK(client.reap(q, 100) == 0);

    CHECK(throws<echomq::InvalidQueueError>([&] { client.counts("emq"); }, EMQ_ERR_INVALID_QUEUE));
    CHECK(throws<echomq::InvalidIdError>([&] { client.remove(q, "not-an-id"); },
                                         EMQ_ERR_INVALID_ID));
    CHECK(throws<echomq::InvalidArgumentError>([&] { client.claim(q, 0); },
                                               EMQ_ERR_INVALID_ARGUMENT));
}

static void worker(const echomq::Client& client) {
    const std::string q = "cpp-worker";
    for (int i = 0; i < 6; ++i) client.enqueue(q, "job " + std::to_string(i));
    client.enqueue(q, "fatal");
    client.enqueue(q, "retry");

    std::atomic<int> seen{0};
    emq_worker_options wo = echomq::worker_options();
    wo.concurrency = 2;
    wo.max_attempts = 2;
    wo.backoff = EMQ_BACKOFF_FIXED;
    wo.backoff_base_ms = 1;
    wo.pump_interval_ms = 20;
    echomq::Worker w(client, q,
                     [&](const echomq::JobView& job) {
                         ++seen;
                         if (job.payload() == "fatal") throw echomq::Unrecoverable("no way");
                         if (job.payload() == "retry") throw std::runtime_error("try again");
                     },
                     wo);
    w.start();
    for (int i = 0; i < 500; ++i) {
        emq_queue_counts c = client.counts(q);
        if (c.pending == 0 && c.active == 0 && c.scheduled == 0 && c.dead == 2) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    w.stop();
    w.join();
    emq_stats s = w.stats();
    CHECK(s.completed == 6);
    CHECK(s.dead == 2);
    CHECK(s.retried == 1);
    CHECK(seen.load() == 9);
    std::vector<std::string> dead = client.browse(q, EMQ_BROWSE_DEAD);
    CHECK(dead.size() == 2);
    for (const std::string& id : dead) {
        std::optional<echomq::JobInfo> info = client.job(q, id);
        CHECK(info && info->last_error &&
              (*info->last_error == "no way" || *info->last_error == "try again"));
    }
    // A moved worker is still the same worker; destruction stops and joins it.
    echomq::Worker moved = std::move(w);
    CHECK(moved.stats().completed == 6);
}

int main() {
    pure_helpers();
    CHECK(throws<echomq::ConnectionError>(
        [] {
            emq_connect_options co = echomq::connect_options();
            co.connect_timeout_ms = 500;
            echomq::Client::connect("redis://127.0.0.1:1/", co);
        },
        EMQ_ERR_CONNECTION));
    {
        echomq::Client client = echomq::Client::connect();  // EMQ_URL
        client_verbs(client);
        worker(client);
        echomq::Client moved = std::move(client);
        moved.close();
        CHECK(throws<echomq::ClosedError>([&] { moved.counts("cpp-verbs"); }, EMQ_ERR_CLOSED));
    }
    if (failures) {
        std::fprintf(stderr, "test_cpp: %d failure(s)\n", failures);
        return 1;
    }
    std::printf("test_cpp: all passed\n");
    return 0;
}
