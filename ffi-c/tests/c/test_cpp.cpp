// The C++17 wrapper (include/echomq.hpp) against a real server: EMQ_URL must point at a
// throwaway redis-server (scripts/test-c.sh starts one). Also run under valgrind there.
#include "echomq.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <typeinfo>
#include <vector>

static std::atomic<int> failures{0};  // CHECK runs on callback threads too
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
static_assert(std::is_nothrow_move_assignable_v<echomq::Worker>);
static_assert(!std::is_copy_constructible_v<echomq::Subscription>);
static_assert(std::is_nothrow_move_assignable_v<echomq::Subscription>);

// The answer enums are real C++ enums over int32_t (the C ABI's type); inputs stay ints.
template <typename E>
constexpr bool int32_enum = std::is_enum_v<E> && sizeof(E) == 4 &&
                            std::is_same_v<std::underlying_type_t<E>, int32_t>;
static_assert(int32_enum<emq_job_state> && int32_enum<emq_retry_outcome> &&
              int32_enum<emq_key_class> && int32_enum<emq_settled> &&
              int32_enum<emq_worker_event_kind>);
static_assert(std::is_same_v<emq_backoff, int32_t> && std::is_same_v<emq_browse_set, int32_t> &&
              std::is_same_v<emq_status, int32_t>);

// A redis-cli command against EMQ_URL (for wire state the wrapper does not expose).
static void redis_cli(const std::string& args) {
    std::string cmd = "redis-cli -u \"" + std::string(std::getenv("EMQ_URL")) + "\" " + args +
                      " >/dev/null";
    CHECK(std::system(cmd.c_str()) == 0);
}

// Poll `cond` up to ~10 s.
template <typename F>
static bool eventually(F&& cond) {
    for (int i = 0; i < 1000; ++i) {
        if (cond()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return cond();
}

// raise(status) throws exactly E, whose kStatus and status() are `status`.
template <typename E>
static bool maps(emq_status status) {
    try {
        echomq::detail::raise(status, nullptr);
    } catch (const E& e) {
        return typeid(e) == typeid(E) && e.status() == status && E::kStatus == status;
    } catch (...) {
    }
    return false;
}

// Every status the header defines has its own class (a new status without one would
// throw the bare echomq::Error; ffi-c/src/tests.rs checks the list is complete).
static void every_status_maps() {
    CHECK(maps<echomq::KindError>(EMQ_ERR_KIND));
    CHECK(maps<echomq::StaleError>(EMQ_ERR_STALE));
    CHECK(maps<echomq::GoneError>(EMQ_ERR_GONE));
    CHECK(maps<echomq::LeaseLostError>(EMQ_ERR_LEASE_LOST));
    CHECK(maps<echomq::NotDeadError>(EMQ_ERR_NOT_DEAD));
    CHECK(maps<echomq::VersionFenceError>(EMQ_ERR_VERSION_FENCE));
    CHECK(maps<echomq::InvalidIdError>(EMQ_ERR_INVALID_ID));
    CHECK(maps<echomq::InvalidQueueError>(EMQ_ERR_INVALID_QUEUE));
    CHECK(maps<echomq::InvalidArgumentError>(EMQ_ERR_INVALID_ARGUMENT));
    CHECK(maps<echomq::ConnectionError>(EMQ_ERR_CONNECTION));
    CHECK(maps<echomq::TimeoutError>(EMQ_ERR_TIMEOUT));
    CHECK(maps<echomq::ProtocolError>(EMQ_ERR_PROTOCOL));
    CHECK(maps<echomq::ServerError>(EMQ_ERR_SERVER));
    CHECK(maps<echomq::JobActiveError>(EMQ_ERR_JOB_ACTIVE));
    CHECK(maps<echomq::BundleMismatchError>(EMQ_ERR_BUNDLE_MISMATCH));
    CHECK(maps<echomq::ClosedError>(EMQ_ERR_CLOSED));
    CHECK(maps<echomq::PartialBatchError>(EMQ_ERR_PARTIAL_BATCH));
    CHECK(maps<echomq::InternalError>(EMQ_ERR_INTERNAL));
    CHECK(maps<echomq::NullPointerError>(EMQ_ERR_NULL_POINTER));
    CHECK(maps<echomq::InvalidUtf8Error>(EMQ_ERR_INVALID_UTF8));
    CHECK(maps<echomq::PanicError>(EMQ_ERR_PANIC));
#ifdef EMQ_ERR_UNSUPPORTED
    CHECK(maps<echomq::UnsupportedError>(EMQ_ERR_UNSUPPORTED));
#endif
#ifdef EMQ_ERR_RATE_LIMITED
    CHECK(maps<echomq::RateLimitedError>(EMQ_ERR_RATE_LIMITED));
#endif
#ifdef EMQ_ERR_UNAVAILABLE
    CHECK(maps<echomq::UnavailableError>(EMQ_ERR_UNAVAILABLE));
#endif
#ifdef EMQ_ERR_NOT_DURABLE
    CHECK(maps<echomq::NotDurableError>(EMQ_ERR_NOT_DURABLE));
#endif
    CHECK(maps<echomq::JobDeadError>(EMQ_ERR_JOB_DEAD));
}

static void pure_helpers() {
    std::string id = echomq::mint_job_id();
    CHECK(id.size() == EMQ_ID_LEN);
    CHECK(echomq::is_valid_id(id));
    CHECK(!echomq::is_valid_id("nope"));
    CHECK(echomq::is_valid_queue("emails"));
    CHECK(!echomq::is_valid_queue("emq"));
    CHECK(echomq::slot(std::string_view("emq:{cpp}:pending")) < 16384);
    CHECK(std::string(echomq::protocol_version()) == emq_protocol_version());
    CHECK(std::string(echomq::version()) == EMQ_VERSION);  // header and library agree
    emq_id_parts parts = echomq::parse_id("USR0KHTOWnGLuC");
    CHECK(std::string(parts.ns) == "USR" && parts.snowflake == 274557032793636864ull);
    CHECK(echomq::encode_id("USR", parts.snowflake) == "USR0KHTOWnGLuC");
    CHECK(echomq::lex_bound(echomq::parse_id(id).minted_at_ms) <= id);
    CHECK(echomq::queue_key("orders", EMQ_KEY_SCHEDULE) == "emq:{orders}:schedule");
    CHECK(echomq::job_key("orders", "ORD0NgWEfAEJfs") == "emq:{orders}:job:ORD0NgWEfAEJfs");
    echomq::KeyInfo info = echomq::classify("emq:{orders}:job:ORD0NgWEfAEJfs");
    CHECK(info.key_class == EMQ_CLASS_JOB && info.queue == std::string("orders"));
    CHECK(info.id == std::string("ORD0NgWEfAEJfs") && !info.key_type && !info.member);
#if __cplusplus >= 202002L
    // C++20: byte spans go in as they are.
    const std::string_view pending_key = "emq:{orders}:pending";
    std::vector<std::byte> as_bytes;
    for (char ch : pending_key) as_bytes.push_back(static_cast<std::byte>(ch));
    CHECK(echomq::classify(std::span<const std::byte>(as_bytes)).key_class == EMQ_CLASS_QUEUE);
    CHECK(echomq::slot(std::span<const uint8_t>(
              reinterpret_cast<const uint8_t*>(pending_key.data()), pending_key.size())) ==
          echomq::slot(pending_key));
#endif
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
    echomq::EnqueueOptions in_a_minute;
    in_a_minute.delay_ms = 60000;
    echomq::Enqueued later = client.enqueue(q, "later", in_a_minute);

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
    CHECK(client.exists(q, jobs[0].id()) && !client.exists(q, echomq::mint_job_id()));
    CHECK(throws<echomq::InvalidIdError>([&] { client.exists(q, "not an id"); }, EMQ_ERR_INVALID_ID));
    client.requeue_dead(q, jobs[0].id());
    CHECK(throws<echomq::NotDeadError>([&] { client.requeue_dead(q, jobs[0].id()); },
                                       EMQ_ERR_NOT_DEAD));
    client.remove(q, jobs[0].id());
    CHECK(client.counts(q).pending == 0);

    echomq::EnqueueOptions same_id;
    same_id.id = later.id;
    echomq::Enqueued fixed = client.enqueue(q, "again", same_id);
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

static void operator_verbs(const echomq::Client& client) {
    const std::string q = "cpp-ops";
    for (int i = 0; i < 3; ++i) client.enqueue(q, "p");
    echomq::EnqueueOptions later;
    later.delay_ms = 60000;
    client.enqueue(q, "later", later);
    client.pause("cpp-ops-empty");
    std::vector<std::string> names = client.queues();
    CHECK(std::is_sorted(names.begin(), names.end()));
    CHECK(std::find(names.begin(), names.end(), q) != names.end());
    CHECK(std::find(names.begin(), names.end(), "cpp-ops-empty") != names.end());

    CHECK(client.drain(q, false, 2) == 2);
    CHECK(client.drain(q, true) == 2);  // the last pending one and the scheduled one
    emq_queue_counts c = client.counts(q);
    CHECK(c.pending == 0 && c.scheduled == 0);

    // Two dead jobs: requeue them all, kill them again, purge by age (none old), then all.
    for (int i = 0; i < 2; ++i) client.enqueue(q, "d");
    for (int round = 0; round < 2; ++round) {
        for (echomq::Job& job : client.claim_many(q, 2, 30000)) {
            CHECK(client.retry(q, job.id(), job.token(), 0, 1, "x") == EMQ_RETRY_DEAD);
        }
        if (round == 0) CHECK(client.requeue_all_dead(q) == 2);
    }
    CHECK(client.counts(q).dead == 2);
    CHECK(client.purge_dead(q, 86400000) == 0);
    CHECK(client.purge_dead(q, std::nullopt, 1) == 1);
    CHECK(client.purge_dead(q) == 1);
    CHECK(client.counts(q).dead == 0);
    CHECK(throws<echomq::InvalidQueueError>([&] { client.drain("bad queue"); },
                                            EMQ_ERR_INVALID_QUEUE));
}

static void repeats(const echomq::Client& client) {
    const std::string q = "cpp-repeats";
    echomq::RepeatSpec every;
    every.every_ms = 60000;
    uint64_t next = client.upsert_repeat(q, "tick", "beat", every);
    CHECK(next > 0);
    echomq::RepeatSpec nightly;
    nightly.cron = "0 3 * * *";
    nightly.tz = "Europe/Berlin";
    CHECK(client.upsert_repeat(q, "nightly", "report", nightly) > 0);
    std::vector<echomq::Repeat> listed = client.list_repeats(q);
    CHECK(listed.size() == 2);
    CHECK(listed[0].name == "tick" && listed[0].every_ms == 60000 && listed[0].payload == "beat");
    CHECK(listed[1].cron && *listed[1].cron == "0 3 * * *" && listed[1].tz == std::string("Europe/Berlin"));
    CHECK(client.fire_repeats(q) == 0);  // nothing due yet
    echomq::RepeatSpec bad;
    bad.cron = "not a cron";
    CHECK(throws<echomq::InvalidArgumentError>([&] { client.upsert_repeat(q, "bad", "x", bad); },
                                               EMQ_ERR_INVALID_ARGUMENT));
    CHECK(client.remove_repeat(q, "tick"));
    CHECK(!client.remove_repeat(q, "tick"));
    CHECK(client.list_repeats(q).size() == 1);
}

static void job_features(const echomq::Client& client) {
    const std::string q = "cpp-features";
    // Dedup: one job per dedup id.
    echomq::EnqueueOptions dedup;
    dedup.dedup_id = "order-42";
    echomq::Enqueued a = client.enqueue(q, "first", dedup);
    echomq::Enqueued b = client.enqueue(q, "second", dedup);
    CHECK(!a.duplicate && b.duplicate && a.id == b.id);
    CHECK(client.counts(q).pending == 1);
    dedup.dedup_id = "a b";
    CHECK(throws<echomq::InvalidArgumentError>([&] { client.enqueue(q, "x", dedup); },
                                               EMQ_ERR_INVALID_ARGUMENT));
    client.drain(q);

    // Limits are enforced inside the claim, as a typed error.
    for (int i = 0; i < 3; ++i) client.enqueue(q, "x");
    client.set_concurrency(q, 1);
    std::optional<echomq::Job> held = client.claim(q, 60000);
    CHECK(held.has_value());
    CHECK(throws<echomq::RateLimitedError>([&] { client.claim(q, 60000); },
                                           EMQ_ERR_RATE_LIMITED));
    client.set_concurrency(q, 0);
    client.set_rate_limit(q, 1, 60000);
    CHECK(client.claim(q, 60000).has_value());
    CHECK(throws<echomq::RateLimitedError>([&] { client.claim(q, 60000); },
                                           EMQ_ERR_RATE_LIMITED));
    client.set_rate_limit(q, 0, 0);
    client.rate_limit(q, held->id(), held->token(), 300);  // parked in schedule, no attempt
    std::optional<echomq::JobInfo> parked = client.job(q, held->id());
    CHECK(parked && parked->state == EMQ_STATE_SCHEDULED);
    CHECK(throws<echomq::StaleError>([&] { client.complete(q, *held); }, EMQ_ERR_STALE));
    client.drain(q, true);

    // The stall cap: the first lapsed lease is forgiven, the second is dead "stalled".
    const std::string sq = "cpp-stalls";
    echomq::Enqueued r = client.enqueue(sq, "hangs");
    for (int round = 1; round <= 2; ++round) {
        CHECK(client.claim(sq, 50).has_value());
        std::this_thread::sleep_for(std::chrono::milliseconds(120));
        echomq::Client::Reaped reaped = client.reap_stalled(sq, 10, 2);
        if (round == 1) {
            CHECK(reaped.recovered == std::vector<std::string>{r.id} && reaped.dead.empty());
        } else {
            CHECK(reaped.dead == std::vector<std::string>{r.id} && reaped.recovered.empty());
        }
    }
    std::optional<echomq::JobInfo> info = client.job(sq, r.id);
    CHECK(info && info->state == EMQ_STATE_DEAD && info->last_error == std::string("stalled"));
}

struct SeenEvent {
    emq_worker_event_kind kind;
    std::string name, id, error;
    uint64_t token;
    int64_t retry_in_ms;
};

static void observability(const echomq::Client& client) {
    const std::string q = "cpp-events";

    // Logs: another runtime's bundle makes the core warn at connect.
    std::mutex log_lock;
    std::vector<std::string> warnings;
    CHECK(throws<echomq::InvalidArgumentError>([] { echomq::set_log_handler([](auto, auto, auto) {}, 99); },
                                               EMQ_ERR_INVALID_ARGUMENT));
    echomq::set_log_handler(
        [&](emq_log_level level, std::string_view target, std::string_view message) {
            std::lock_guard<std::mutex> g(log_lock);
            if (level == EMQ_LOG_WARN && target.substr(0, 6) == "echomq" &&
                message.find("bundle mismatch") != std::string_view::npos) {
                warnings.emplace_back(message);
            }
        });
    redis_cli("HSET '{emq}:bundle' bundle 0000");
    { echomq::Client other = echomq::Client::connect(); }
    redis_cli("HDEL '{emq}:bundle' bundle");
    echomq::reset_log_handler();  // back to stderr; `warnings` is no longer written
    CHECK(!warnings.empty());

    // A subscription sees the wire's side; the worker's events its own.
    std::mutex sub_lock;
    std::vector<std::string> lines;
    echomq::Subscription sub = client.subscribe(q, [&](const echomq::QueueEvent& e) {
        std::lock_guard<std::mutex> g(sub_lock);
        CHECK(e.queue() == q && e.json().front() == '{');
        lines.push_back(std::string(e.event()) + " " + std::string(e.job()) + " " +
                        std::string(e.field("error").value_or("")));
    });
    auto seen_line = [&](const std::string& line) {
        std::lock_guard<std::mutex> g(sub_lock);
        return std::find(lines.begin(), lines.end(), line) != lines.end();
    };

    echomq::Enqueued ok_job = client.enqueue(q, "ok");
    echomq::Enqueued flaky = client.enqueue(q, "flaky");
    echomq::Enqueued doomed = client.enqueue(q, "doomed");

    std::mutex event_lock;
    std::vector<SeenEvent> events;
    emq_worker_options wo = echomq::worker_options();
    wo.max_attempts = 2;
    wo.backoff = EMQ_BACKOFF_FIXED;
    wo.backoff_base_ms = 10;
    wo.backoff_cap_ms = 10;
    wo.pump_interval_ms = 20;
    wo.idle_max_ms = 20;
    echomq::Worker w(client, q,
                     [](const echomq::JobView& job) {
                         if (job.payload() == "flaky" && job.token() == 1) {
                             throw std::runtime_error("try again");
                         }
                         if (job.payload() == "doomed") throw echomq::Unrecoverable("never");
                     },
                     wo);
    w.on_event([&](const echomq::WorkerEvent& e) {
        std::lock_guard<std::mutex> g(event_lock);
        events.push_back(SeenEvent{e.kind(), std::string(e.name()),
                                   std::string(e.id().value_or("")),
                                   std::string(e.error().value_or("")), e.token(),
                                   e.retry_in_ms()});
    });
    CHECK(throws<echomq::InvalidArgumentError>([&] { w.on_event([](const echomq::WorkerEvent&) {}); },
                                               EMQ_ERR_INVALID_ARGUMENT));
    w.start();

    echomq::Settled done = client.wait_for(q, ok_job.id, 30000);
    CHECK(done.state == EMQ_SETTLED_COMPLETED && !done.last_error);
    echomq::Settled dead = client.wait_for(q, doomed.id, 30000);
    CHECK(dead.state == EMQ_SETTLED_DEAD && dead.last_error == std::string("never"));
    CHECK(client.wait_for(q, flaky.id, 30000).state == EMQ_SETTLED_COMPLETED);
    echomq::EnqueueOptions in_a_minute;
    in_a_minute.delay_ms = 60000;
    echomq::Enqueued later = client.enqueue(q, "later", in_a_minute);
    CHECK(throws<echomq::TimeoutError>([&] { client.wait_for(q, later.id, 50); }, EMQ_ERR_TIMEOUT));
    w.stop();
    w.join();

    auto has = [&](emq_worker_event_kind kind, const std::string& id, uint64_t token,
                   const std::string& error, int64_t retry_in_ms) {
        return std::any_of(events.begin(), events.end(), [&](const SeenEvent& e) {
            return e.kind == kind && e.id == id && e.token == token && e.error == error &&
                   e.retry_in_ms == retry_in_ms;
        });
    };
    CHECK(has(EMQ_EVENT_ACTIVE, ok_job.id, 1, "", -1));
    CHECK(has(EMQ_EVENT_COMPLETED, ok_job.id, 1, "", -1));
    CHECK(has(EMQ_EVENT_FAILED, flaky.id, 1, "try again", 10));
    CHECK(has(EMQ_EVENT_COMPLETED, flaky.id, 2, "", -1));
    CHECK(has(EMQ_EVENT_FAILED, doomed.id, 1, "never", -1));
    CHECK(has(EMQ_EVENT_DEAD, doomed.id, 1, "never", -1));
    CHECK(!events.empty() && events.back().kind == EMQ_EVENT_CLOSED &&
          events.back().name == "closed");

    CHECK(eventually([&] {
        return seen_line("completed " + ok_job.id + " ") && seen_line("dead " + doomed.id + " never");
    }));
    CHECK(seen_line("added " + ok_job.id + " ") && seen_line("retried " + flaky.id + " try again"));
    sub.close();
    sub.close();  // idempotent

    // Moving a subscription over another frees the old one first.
    echomq::Subscription other = client.subscribe("cpp-events-2", [](const echomq::QueueEvent&) {});
    other = std::move(sub);

    // Metrics: any range of names, or a braced list.
    std::string text = client.metrics_text({q});
    CHECK(text.find("echomq_dead_jobs{queue=\"cpp-events\"} 1\n") != std::string::npos);
    CHECK(text.find("echomq_completed_total{queue=\"cpp-events\"} 2\n") != std::string::npos);
    std::vector<std::string> names = {q, "cpp-ops"};
    CHECK(client.metrics_text(names).find("queue=\"cpp-ops\"") != std::string::npos);
    std::array<std::string_view, 1> bad = {"bad queue"};
    CHECK(throws<echomq::InvalidQueueError>([&] { client.metrics_text(bad); },
                                            EMQ_ERR_INVALID_QUEUE));
}

// Progress, logs and kept results (wire 2.1.0): the scenario every binding runs.
// The first line of a redis-cli command's answer against EMQ_URL.
static std::string redis_out(const std::string& args) {
    std::string cmd = "redis-cli -u \"" + std::string(std::getenv("EMQ_URL")) + "\" " + args;
    std::string out;
    if (FILE* p = popen(cmd.c_str(), "r")) {
        char line[256] = "";
        if (std::fgets(line, sizeof line, p)) out = line;
        pclose(p);
    }
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
    return out;
}

// Issue #33: the facts an error carries are members of the exception: the rate limit's
// wait (between the limiter's PTTL before and after the refused claim) and the job id of
// a dead and a gone job. The C, Python and Node suites run the same scenario.
static void error_facts(echomq::Client& client) {
    const std::string q = "cpp-facts";
    echomq::Enqueued a = client.enqueue(q, "a");
    echomq::Enqueued b = client.enqueue(q, "b");
    client.set_rate_limit(q, 1, 600000);
    std::optional<echomq::Job> held = client.claim(q, 60000);
    CHECK(held.has_value());
    if (!held) return;
    long before = std::atol(redis_out("PTTL 'emq:{" + q + "}:limiter'").c_str());
    std::optional<int64_t> wait;
    try {
        client.claim(q, 60000);
        CHECK(false);
    } catch (const echomq::RateLimitedError& e) {
        wait = e.retry_after_ms();
        CHECK(!e.job_id());
    }
    long after = std::atol(redis_out("PTTL 'emq:{" + q + "}:limiter'").c_str());
    CHECK(wait && after > 500000 && after <= *wait && *wait <= before);
    client.set_rate_limit(q, 0, 0);

    CHECK(client.retry(q, held->id(), held->token(), 0, 1, "boom") == EMQ_RETRY_DEAD);
    CHECK(redis_out("HGET 'emq:{" + q + "}:job:" + a.id + "' state") == "dead");
    try {
        client.wait_for_result(q, a.id, 20000);
        CHECK(false);
    } catch (const echomq::JobDeadError& e) {
        CHECK(e.job_id() == a.id && e.last_error() == std::string("boom"));
        CHECK(!e.retry_after_ms());
    }

    client.remove(q, b.id);
    CHECK(redis_out("EXISTS 'emq:{" + q + "}:job:" + b.id + "'") == "0");
    try {
        client.wait_for_result(q, b.id, 20000);
        CHECK(false);
    } catch (const echomq::GoneError& e) {
        CHECK(e.job_id() == b.id);
    }
    try {
        client.update_progress(q, b.id, 1, "1");
        CHECK(false);
    } catch (const echomq::GoneError& e) {
        CHECK(e.job_id() == b.id);
    }
}

static void progress_results(echomq::Client& client) {
    const std::string q = "cpp-results";
    echomq::Enqueued e = client.enqueue(q, "p");
    CHECK(throws<echomq::StaleError>([&] { client.update_progress(q, e.id, 7, "1"); },
                                     EMQ_ERR_STALE));
    std::optional<echomq::Job> held = client.claim(q, 30000);
    CHECK(held.has_value());
    if (!held) return;
    client.update_progress(q, e.id, held->token(), "{\"done\":3}");
    std::optional<echomq::JobInfo> info = client.job(q, e.id);
    CHECK(info && info->progress == std::string("{\"done\":3}"));
    CHECK(throws<echomq::InvalidArgumentError>(
        [&] { client.update_progress(q, e.id, held->token(), "not json"); },
        EMQ_ERR_INVALID_ARGUMENT));
    for (int i = 1; i <= 3; ++i) client.log(q, e.id, "line " + std::to_string(i), 2);
    std::vector<std::string> lines = client.logs(q, e.id);
    CHECK(lines.size() == 2 && lines[0] == "line 2" && lines[1] == "line 3");
    client.complete(q, e.id, held->token());
    CHECK(throws<echomq::GoneError>([&] { client.log(q, e.id, "late"); }, EMQ_ERR_GONE));

    echomq::Enqueued kept = client.enqueue(q, "keep");
    echomq::Enqueued doomed = client.enqueue(q, "doomed");
    emq_worker_options wo = echomq::worker_options();
    wo.keep_result_ms = 60000;
    wo.max_attempts = 1;
    echomq::Worker w(client, q,
                     [](const echomq::JobView& job) {
                         if (job.payload() == "doomed") throw std::runtime_error("it broke");
                         job.set_result("done:" + std::string(job.payload()));
                     },
                     wo);
    w.start();
    CHECK(client.wait_for_result(q, kept.id, 30000) == "done:keep");
    bool dead_seen = false;
    try {
        client.wait_for_result(q, doomed.id, 30000);
    } catch (const echomq::JobDeadError& err) {
        dead_seen = err.last_error() == std::string("it broke");
    }
    CHECK(dead_seen);
    w.stop();
    w.join();
    CHECK(client.result(q, kept.id) == std::string("done:keep"));
    CHECK(!client.result(q, doomed.id).has_value());
    CHECK(throws<echomq::InvalidArgumentError>([&] { held->view().set_result("x"); },
                                               EMQ_ERR_INVALID_ARGUMENT));
}

// A server of its own (to stop under a client): $EMQ_TEST_SERVER or redis-server,
// daemonized on a free port; answers its port once it answers PING.
static int own_server() {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t n = sizeof a;
    CHECK(bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    CHECK(getsockname(s, reinterpret_cast<sockaddr*>(&a), &n) == 0);
    close(s);
    const std::string port = std::to_string(ntohs(a.sin_port));
    const char* bin = std::getenv("EMQ_TEST_SERVER");
    const std::string start = std::string(bin && *bin ? bin : "redis-server") + " --port " + port +
                              " --bind 127.0.0.1 --save '' --appendonly no --daemonize yes >/dev/null";
    CHECK(std::system(start.c_str()) == 0);
    const std::string ping = "redis-cli -p " + port + " ping >/dev/null 2>&1";
    CHECK(eventually([&] { return std::system(ping.c_str()) == 0; }));
    return std::stoi(port);
}

// Protocol and Unavailable provoked for real (issue 41), not only mapped.
static void error_kinds_provoked(const echomq::Client& client) {
    const std::string q = "cpp-kinds";
    echomq::Enqueued e = client.enqueue(q, "x");
    redis_cli("HSET 'emq:{" + q + "}:job:" + e.id + "' attempts two");  // not a number
    CHECK(throws<echomq::ProtocolError>([&] { client.job(q, e.id); }, EMQ_ERR_PROTOCOL));

    const int port = own_server();
    emq_connect_options co = echomq::connect_options();
    co.connect_timeout_ms = 300;
    co.response_timeout_ms = 500;
    echomq::Client gone = echomq::Client::connect("redis://127.0.0.1:" + std::to_string(port) + "/", co);
    gone.counts(q);
    const std::string stop = "redis-cli -p " + std::to_string(port) + " shutdown nosave >/dev/null 2>&1";
    CHECK(std::system(stop.c_str()) != -1);
    // The first call may be the one that learns the socket is gone (it may
    // have been sent); after that reconnects are retried, then unavailable.
    try {
        gone.counts(q);
        CHECK(false);
    } catch (const echomq::ConnectionError&) {
    } catch (const echomq::UnavailableError&) {
    }
    CHECK(throws<echomq::UnavailableError>([&] { gone.counts(q); }, EMQ_ERR_UNAVAILABLE));
}

// One enqueue with options (issue #33): each option's wire state, the refusals (nothing
// written), and a batch with per-item options.
static void enqueue_options(const echomq::Client& client) {
    const std::string q = "cpp-enqueue";
    auto now_ms = [] {
        return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                         std::chrono::system_clock::now().time_since_epoch())
                                         .count());
    };
    auto key = [&](const std::string& rest) { return "'emq:{" + q + "}:" + rest + "'"; };
    auto zscore = [&](const char* set, const std::string& id) {
        std::string out = redis_out("ZSCORE " + key(set) + " " + id);
        return out.empty() ? -1.0 : std::stod(out);
    };

    // Defaults: pending now under a minted id.
    echomq::Enqueued plain = client.enqueue(q, "plain");
    CHECK(!plain.duplicate && zscore("pending", plain.id) == 0);
    CHECK(client.enqueue(q, "braces", {}).id != plain.id);

    // id: under the chosen id; again = duplicate, the row untouched.
    echomq::EnqueueOptions chosen;
    chosen.id = echomq::mint_job_id();
    echomq::Enqueued first = client.enqueue(q, "first", chosen);
    CHECK(!first.duplicate && first.id == *chosen.id && zscore("pending", first.id) == 0);
    echomq::Enqueued again = client.enqueue(q, "second", chosen);
    CHECK(again.duplicate && again.id == *chosen.id);
    CHECK(redis_out("HGET " + key("job:" + first.id) + " payload") == "first");

    // run_at_ms: scored exactly; delay_ms: server-now + delay.
    const uint64_t at = now_ms() + 7200000;
    echomq::EnqueueOptions when;
    when.run_at_ms = at;
    echomq::Enqueued scheduled = client.enqueue(q, "at", when);
    CHECK(zscore("schedule", scheduled.id) == static_cast<double>(at));
    CHECK(redis_out("HGET " + key("job:" + scheduled.id) + " state") == "scheduled");
    echomq::EnqueueOptions delay;
    delay.delay_ms = 3600000;
    const uint64_t before = now_ms();
    echomq::Enqueued delayed = client.enqueue(q, "in", delay);
    const uint64_t after = now_ms();
    const double score = zscore("schedule", delayed.id);
    CHECK(score >= static_cast<double>(before + 3600000 - 1000) &&
          score <= static_cast<double>(after + 3600000 + 1000));

    // dedup_id (+ dedup_ttl_ms): the dedup key names the job.
    echomq::EnqueueOptions dedup;
    dedup.dedup_id = "cpp-invoice";
    echomq::Enqueued a = client.enqueue(q, "a", dedup);
    echomq::Enqueued b = client.enqueue(q, "b", dedup);
    CHECK(!a.duplicate && b.duplicate && a.id == b.id);
    CHECK(redis_out("GET " + key("de:cpp-invoice")) == a.id);
    CHECK(redis_out("PTTL " + key("de:cpp-invoice")) == "-1");
    dedup.dedup_id = "cpp-throttle";
    dedup.dedup_ttl_ms = 60000;
    echomq::Enqueued t = client.enqueue(q, "t", dedup);
    CHECK(redis_out("GET " + key("de:cpp-throttle")) == t.id);
    const long ttl = std::stol(redis_out("PTTL " + key("de:cpp-throttle")));
    CHECK(ttl > 0 && ttl <= 60000);

    // Refusals: typed, before the wire.
    const std::string rq = "cpp-enqueue-refused";
    auto nothing_in = [&](const std::string& queue) {
        return redis_out("EVAL \"return #redis.call('KEYS', ARGV[1])\" 0 'emq:{" + queue +
                         "}:*'") == "0";
    };
    std::vector<echomq::EnqueueOptions> refused(4);
    refused[0].run_at_ms = at;
    refused[0].delay_ms = 1000;
    refused[1].dedup_id = "d";
    refused[1].id = echomq::mint_job_id();
    refused[2].dedup_id = "d";
    refused[2].delay_ms = 1000;
    refused[3].dedup_ttl_ms = 1000;
    for (const echomq::EnqueueOptions& o : refused)
        CHECK(throws<echomq::InvalidArgumentError>([&] { client.enqueue(rq, "x", o); },
                                                   EMQ_ERR_INVALID_ARGUMENT));
    echomq::EnqueueOptions bad_id;
    bad_id.id = "JOB-nope";
    CHECK(throws<echomq::InvalidIdError>([&] { client.enqueue(rq, "x", bad_id); },
                                         EMQ_ERR_INVALID_ID));
    bad_id.id = std::string("JOB\xff", 4);
    CHECK(throws<echomq::InvalidUtf8Error>([&] { client.enqueue(rq, "x", bad_id); },
                                           EMQ_ERR_INVALID_UTF8));
    CHECK(nothing_in(rq));

    // A batch with per-item options: verdicts in input order.
    echomq::EnqueueOptions fresh, taken, held, later;
    fresh.id = echomq::mint_job_id();
    taken.id = first.id;
    held.dedup_id = "cpp-invoice";
    later.delay_ms = 3600000;
    std::vector<echomq::EnqueueResult> many = client.enqueue_many(
        q, {"plain", "later", "fresh", "taken", "held"}, {{}, later, fresh, taken, held});
    CHECK(many.size() == 5);
    for (const echomq::EnqueueResult& r : many) CHECK(r.status == EMQ_OK && r.message.empty());
    if (many.size() == 5) {
        CHECK(!many[0].duplicate && zscore("pending", many[0].id) == 0);
        CHECK(!many[1].duplicate && zscore("schedule", many[1].id) > 0);
        CHECK(!many[2].duplicate && many[2].id == *fresh.id);
        CHECK(many[3].duplicate && many[3].id == first.id);
        CHECK(many[4].duplicate && many[4].id == a.id);
    }
    // A bad item refuses the whole batch; so does a count mismatch (the wrapper's check).
    try {
        client.enqueue_many(rq, {"a", "b"}, {{}, refused[0]});
        CHECK(false);
    } catch (const echomq::InvalidArgumentError& e) {
        CHECK(std::string(e.what()).rfind("item 1: ", 0) == 0);
    }
    CHECK(throws<echomq::InvalidArgumentError>(
        [&] { client.enqueue_many(rq, {"a", "b"}, {echomq::EnqueueOptions{}}); },
        EMQ_ERR_INVALID_ARGUMENT));
    CHECK(nothing_in(rq));
#if __cplusplus >= 202002L
    // C++20: designated initialisers.
    echomq::Enqueued d20 = client.enqueue(q, "c++20", {.delay_ms = 1000});
    CHECK(zscore("schedule", d20.id) > 0);
#endif

    // priority (wire 2.2.0, issue #34): this client speaks 2.1.0, so UnsupportedError,
    // nothing written; out of range is InvalidArgumentError.
    echomq::EnqueueOptions urgent;
    urgent.priority = 5;
    CHECK(throws<echomq::UnsupportedError>([&] { client.enqueue(rq, "x", urgent); },
                                           EMQ_ERR_UNSUPPORTED));
    CHECK(nothing_in(rq));
    // A 2.2.0 client on a database of its own (the first client fences a keyspace at its
    // wire): the higher priority is claimed first, then the lower, then none.
    std::string url = std::getenv("EMQ_URL");
    if (url.empty() || url.back() != '/') url += '/';
    emq_connect_options co = echomq::connect_options();
    co.wire_version = "echomq:2.2.0";
    echomq::Client newer = echomq::Client::connect(url + "11", co);
    const std::string pq = "cpp-prio";
    echomq::EnqueueOptions low, high;
    low.priority = 1;
    high.priority = EMQ_MAX_PRIORITY;
    echomq::Enqueued l = newer.enqueue(pq, "low", low);
    echomq::Enqueued h = newer.enqueue(pq, "high", high);
    echomq::Enqueued n = newer.enqueue(pq, "none");
    CHECK(redis_out("-n 11 ZSCORE 'emq:{" + pq + "}:prio' " + h.id) == "-1000000");
    CHECK(redis_out("-n 11 HGET 'emq:{" + pq + "}:job:" + l.id + "' priority") == "1");
    for (const std::string& want : {h.id, l.id, n.id}) {
        std::optional<echomq::Job> job = newer.claim(pq, 30000);
        CHECK(job && job->id() == want);
    }
    high.priority = EMQ_MAX_PRIORITY + 1;
    CHECK(throws<echomq::InvalidArgumentError>([&] { newer.enqueue("cpp-prio-bad", "x", high); },
                                               EMQ_ERR_INVALID_ARGUMENT));
    CHECK(redis_out("-n 11 EXISTS 'emq:{cpp-prio-bad}:pending' 'emq:{cpp-prio-bad}:prio'") == "0");
    redis_out("-n 11 FLUSHDB");
}

int main() {
    pure_helpers();
    every_status_maps();
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
        operator_verbs(client);
        job_features(client);
        enqueue_options(client);
        repeats(client);
        observability(client);
        progress_results(client);
        error_facts(client);
        error_kinds_provoked(client);
        echomq::Client moved = std::move(client);
        moved.close();
        CHECK(throws<echomq::ClosedError>([&] { moved.counts("cpp-verbs"); }, EMQ_ERR_CLOSED));
    }
    if (failures) {
        std::fprintf(stderr, "test_cpp: %d failure(s)\n", failures.load());
        return 1;
    }
    std::printf("test_cpp: all passed\n");
    return 0;
}
