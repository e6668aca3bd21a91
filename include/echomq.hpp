// echomq.hpp: a header-only C++17 wrapper over the C ABI in echomq.h.
//
// It adds no behaviour of its own: every call is one emq_* call, converted.
//   - RAII: Client, Job and Worker own their C handles and free them once.
//   - Errors: a failed call throws a class derived from echomq::Error, one class per
//     status (echomq::StaleError for EMQ_ERR_STALE, ...). Error::status() is the number,
//     Error::code() the stable string form. A status this header does not know yet
//     throws echomq::Error itself.
//   - Inputs: std::string_view for text, echomq::Bytes (pointer + size; built from a
//     std::string_view, a std::vector<uint8_t>, a pointer and a length, or under C++20 a
//     std::span of bytes) for payloads.
//   - Worker: any callable taking `const echomq::JobView&`. Returning normally completes
//     the job; throwing echomq::Unrecoverable sends it to the dead set; throwing anything
//     else retries it with the exception's what() as last_error. No exception ever
//     crosses into the library.
//   - Callbacks (log handler, worker events, queue subscriptions) are std::functions whose
//     storage the wrapper keeps alive for as long as the library may call them.
//
// Link exactly as for C: $(pkg-config --cflags --libs echomq).
#ifndef ECHOMQ_HPP
#define ECHOMQ_HPP

#include "echomq.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
#if __cplusplus >= 202002L
#include <span>
#endif

namespace echomq {

// ---------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------

/// One entry of a PartialBatchError: a payload's pre-minted id and whether it was written
/// (EMQ_WRITTEN, EMQ_NOT_WRITTEN or EMQ_WRITE_UNKNOWN).
struct BatchItem {
    std::string id;
    int32_t state;
};

/// The facts a failed call's error carries, copied from its emq_error (the core declares
/// which kinds carry which; the others stay empty).
struct ErrorFacts {
    /// The value found in `{emq}:version` (VersionFenceError).
    std::string found;
    /// The unknown `EMQ*` class word (ProtocolError).
    std::string class_word;
    /// The job the error is about (StaleError, GoneError, LeaseLostError, NotDeadError,
    /// JobActiveError, NotDurableError, JobDeadError).
    std::optional<std::string> job_id;
    /// A dead job's last_error (JobDeadError; nullopt when none was recorded).
    std::optional<std::string> last_error;
    /// How long to wait before claiming again, ms (RateLimitedError; 0 = until a slot frees).
    std::optional<int64_t> retry_after_ms;
    /// Every payload's id and write state (PartialBatchError).
    std::vector<BatchItem> items;
};

/// The base of every exception this wrapper throws for a failed emq_* call.
class Error : public std::runtime_error {
public:
    Error(emq_status status, const std::string& message, ErrorFacts facts = {})
        : std::runtime_error(message), status_(status), facts_(std::move(facts)) {}

    /// The C status number (EMQ_ERR_*), stable forever.
    emq_status status() const noexcept { return status_; }
    /// The stable string code ("EMQSTALE", "EMQ_GONE", ...).
    const char* code() const noexcept { return emq_status_code(status_); }
    /// The version found on the server (VersionFenceError only, else empty).
    const std::string& found() const noexcept { return facts_.found; }
    /// The unknown class word (ProtocolError only, else empty).
    const std::string& class_word() const noexcept { return facts_.class_word; }
    /// The id of the job the error is about (the job kinds only, else nullopt).
    const std::optional<std::string>& job_id() const noexcept { return facts_.job_id; }
    /// How long to wait before claiming again, ms (RateLimitedError only, else nullopt).
    std::optional<int64_t> retry_after_ms() const noexcept { return facts_.retry_after_ms; }
    /// A dead job's last_error (JobDeadError only; nullopt when none was recorded).
    const std::optional<std::string>& last_error() const noexcept { return facts_.last_error; }
    /// Every payload's id and write state (PartialBatchError only, else empty).
    const std::vector<BatchItem>& items() const noexcept { return facts_.items; }

private:
    emq_status status_;
    ErrorFacts facts_;
};

#define ECHOMQ_ERROR_CLASS(Name, Status)                                          \
    class Name : public Error {                                                   \
    public:                                                                       \
        static constexpr emq_status kStatus = Status;                             \
        explicit Name(const std::string& message, ErrorFacts facts = {})          \
            : Error(Status, message, std::move(facts)) {}                         \
    };

ECHOMQ_ERROR_CLASS(KindError, EMQ_ERR_KIND)
ECHOMQ_ERROR_CLASS(StaleError, EMQ_ERR_STALE)
ECHOMQ_ERROR_CLASS(GoneError, EMQ_ERR_GONE)
ECHOMQ_ERROR_CLASS(LeaseLostError, EMQ_ERR_LEASE_LOST)
ECHOMQ_ERROR_CLASS(NotDeadError, EMQ_ERR_NOT_DEAD)
ECHOMQ_ERROR_CLASS(VersionFenceError, EMQ_ERR_VERSION_FENCE)
ECHOMQ_ERROR_CLASS(InvalidIdError, EMQ_ERR_INVALID_ID)
ECHOMQ_ERROR_CLASS(InvalidQueueError, EMQ_ERR_INVALID_QUEUE)
ECHOMQ_ERROR_CLASS(InvalidArgumentError, EMQ_ERR_INVALID_ARGUMENT)
ECHOMQ_ERROR_CLASS(ConnectionError, EMQ_ERR_CONNECTION)
ECHOMQ_ERROR_CLASS(TimeoutError, EMQ_ERR_TIMEOUT)
ECHOMQ_ERROR_CLASS(ProtocolError, EMQ_ERR_PROTOCOL)
ECHOMQ_ERROR_CLASS(ServerError, EMQ_ERR_SERVER)
ECHOMQ_ERROR_CLASS(JobActiveError, EMQ_ERR_JOB_ACTIVE)
ECHOMQ_ERROR_CLASS(BundleMismatchError, EMQ_ERR_BUNDLE_MISMATCH)
ECHOMQ_ERROR_CLASS(ClosedError, EMQ_ERR_CLOSED)
ECHOMQ_ERROR_CLASS(InternalError, EMQ_ERR_INTERNAL)
ECHOMQ_ERROR_CLASS(NullPointerError, EMQ_ERR_NULL_POINTER)
ECHOMQ_ERROR_CLASS(InvalidUtf8Error, EMQ_ERR_INVALID_UTF8)
ECHOMQ_ERROR_CLASS(PanicError, EMQ_ERR_PANIC)
// Statuses some builds of echomq.h have and others not yet (the 2.1.0 features, the
// cluster transport): mapped when the header defines them.
#ifdef EMQ_ERR_UNSUPPORTED
ECHOMQ_ERROR_CLASS(UnsupportedError, EMQ_ERR_UNSUPPORTED)
#endif
#ifdef EMQ_ERR_RATE_LIMITED
ECHOMQ_ERROR_CLASS(RateLimitedError, EMQ_ERR_RATE_LIMITED)
#endif
#ifdef EMQ_ERR_UNAVAILABLE
ECHOMQ_ERROR_CLASS(UnavailableError, EMQ_ERR_UNAVAILABLE)
#endif
#ifdef EMQ_ERR_NOT_DURABLE
ECHOMQ_ERROR_CLASS(NotDurableError, EMQ_ERR_NOT_DURABLE)
#endif
/// EMQ_ERR_PARTIAL_BATCH: enqueue_many lost its connection part way. items() holds every
/// payload's id and write state; resend the ones not written with that id as
/// EnqueueOptions::id.
ECHOMQ_ERROR_CLASS(PartialBatchError, EMQ_ERR_PARTIAL_BATCH)
#ifdef EMQ_ERR_JOB_DEAD
/// EMQ_ERR_JOB_DEAD: the job Client::wait_for_result waited on went dead; job_id() is that
/// job, last_error() its last_error (nullopt when none was recorded).
ECHOMQ_ERROR_CLASS(JobDeadError, EMQ_ERR_JOB_DEAD)
#endif
#undef ECHOMQ_ERROR_CLASS

/// Throw from a worker handler to send the job straight to the dead set (no retry).
class Unrecoverable : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

namespace detail {

inline std::optional<std::string> opt_str(const char* s) {
    return s ? std::optional<std::string>(s) : std::nullopt;
}

inline std::string str_or_empty(const char* s) { return s ? std::string(s) : std::string(); }

/// The facts of `err` (may be NULL), read through the emq_error_<fact> accessors.
inline ErrorFacts facts_of(const emq_error* err) {
    ErrorFacts f;
    if (!err) return f;
    f.found = str_or_empty(emq_error_found(err));
    f.class_word = str_or_empty(emq_error_word(err));
    f.job_id = opt_str(emq_error_job_id(err));
    f.last_error = opt_str(emq_error_last_error(err));
    int64_t wait = emq_error_retry_after_ms(err);
    if (wait >= 0) f.retry_after_ms = wait;
    size_t n = 0;
    const emq_batch_item* items = emq_error_items(err, &n);
    for (size_t i = 0; i < n; ++i) f.items.push_back(BatchItem{items[i].id.text, items[i].state});
    return f;
}

/// Throw the typed exception for `status`, with the facts from `err` (may be NULL).
[[noreturn]] inline void raise(emq_status status, const emq_error* err) {
    std::string msg = err && err->message ? err->message : emq_status_code(status);
    ErrorFacts f = facts_of(err);
    switch (status) {
        case EMQ_ERR_KIND: throw KindError(msg, std::move(f));
        case EMQ_ERR_STALE: throw StaleError(msg, std::move(f));
        case EMQ_ERR_GONE: throw GoneError(msg, std::move(f));
        case EMQ_ERR_LEASE_LOST: throw LeaseLostError(msg, std::move(f));
        case EMQ_ERR_NOT_DEAD: throw NotDeadError(msg, std::move(f));
        case EMQ_ERR_VERSION_FENCE: throw VersionFenceError(msg, std::move(f));
        case EMQ_ERR_INVALID_ID: throw InvalidIdError(msg, std::move(f));
        case EMQ_ERR_INVALID_QUEUE: throw InvalidQueueError(msg, std::move(f));
        case EMQ_ERR_INVALID_ARGUMENT: throw InvalidArgumentError(msg, std::move(f));
        case EMQ_ERR_CONNECTION: throw ConnectionError(msg, std::move(f));
        case EMQ_ERR_TIMEOUT: throw TimeoutError(msg, std::move(f));
        case EMQ_ERR_PROTOCOL: throw ProtocolError(msg, std::move(f));
        case EMQ_ERR_SERVER: throw ServerError(msg, std::move(f));
        case EMQ_ERR_JOB_ACTIVE: throw JobActiveError(msg, std::move(f));
        case EMQ_ERR_BUNDLE_MISMATCH: throw BundleMismatchError(msg, std::move(f));
        case EMQ_ERR_CLOSED: throw ClosedError(msg, std::move(f));
        case EMQ_ERR_PARTIAL_BATCH: throw PartialBatchError(msg, std::move(f));
        case EMQ_ERR_INTERNAL: throw InternalError(msg, std::move(f));
        case EMQ_ERR_NULL_POINTER: throw NullPointerError(msg, std::move(f));
        case EMQ_ERR_INVALID_UTF8: throw InvalidUtf8Error(msg, std::move(f));
        case EMQ_ERR_PANIC: throw PanicError(msg, std::move(f));
#ifdef EMQ_ERR_UNSUPPORTED
        case EMQ_ERR_UNSUPPORTED: throw UnsupportedError(msg, std::move(f));
#endif
#ifdef EMQ_ERR_RATE_LIMITED
        case EMQ_ERR_RATE_LIMITED: throw RateLimitedError(msg, std::move(f));
#endif
#ifdef EMQ_ERR_UNAVAILABLE
        case EMQ_ERR_UNAVAILABLE: throw UnavailableError(msg, std::move(f));
#endif
#ifdef EMQ_ERR_NOT_DURABLE
        case EMQ_ERR_NOT_DURABLE: throw NotDurableError(msg, std::move(f));
#endif
#ifdef EMQ_ERR_JOB_DEAD
        case EMQ_ERR_JOB_DEAD: throw JobDeadError(msg, std::move(f));
#endif
        default: throw Error(status, msg, std::move(f));
    }
}

/// Run `call(&err)`; on a non-OK status free the C error and throw its typed exception.
template <typename F>
void check(F&& call) {
    emq_error* raw = nullptr;
    emq_status status = std::forward<F>(call)(&raw);
    std::unique_ptr<emq_error, decltype(&emq_error_free)> err(raw, &emq_error_free);
    if (status != EMQ_OK) raise(status, err.get());
}

/// unique_ptr deleter calling the matching emq_*_free.
template <typename T, void (*Free)(T*)>
struct Deleter {
    void operator()(T* p) const noexcept { Free(p); }
};

/// NUL-terminated copies of a list of names and the `const char*` array pointing at them.
class CStrings {
public:
    template <typename Range>
    explicit CStrings(const Range& names) {
        for (const auto& n : names) owned_.emplace_back(std::string_view(n));
        for (const std::string& n : owned_) ptrs_.push_back(n.c_str());
    }
    const char* const* data() const noexcept { return ptrs_.empty() ? nullptr : ptrs_.data(); }
    size_t size() const noexcept { return ptrs_.size(); }

private:
    std::vector<std::string> owned_;
    std::vector<const char*> ptrs_;
};

inline std::string_view view_or_empty(const char* s) {
    return s ? std::string_view(s) : std::string_view();
}

}  // namespace detail

// ---------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------

/// A borrowed byte string (pointer + size), the C++17 stand-in for std::span<const uint8_t>.
class Bytes {
public:
    Bytes() = default;
    Bytes(const void* data, size_t size) : data_(static_cast<const uint8_t*>(data)), size_(size) {}
    Bytes(std::string_view text) : data_(reinterpret_cast<const uint8_t*>(text.data())), size_(text.size()) {}
    Bytes(const std::string& text) : Bytes(std::string_view(text)) {}
    Bytes(const char* text) : Bytes(std::string_view(text)) {}
    Bytes(const std::vector<uint8_t>& bytes) : data_(bytes.data()), size_(bytes.size()) {}
#if __cplusplus >= 202002L
    Bytes(std::span<const uint8_t> bytes) : data_(bytes.data()), size_(bytes.size()) {}
    Bytes(std::span<const std::byte> bytes)
        : data_(reinterpret_cast<const uint8_t*>(bytes.data())), size_(bytes.size()) {}
#endif

    const uint8_t* data() const noexcept { return data_; }
    size_t size() const noexcept { return size_; }

private:
    const uint8_t* data_ = nullptr;
    size_t size_ = 0;
};

/// The receipt of an enqueue.
struct Enqueued {
    std::string id;
    bool duplicate;
};

/// How enqueue (and each item of enqueue_many) writes a job: emq_enqueue_options with
/// std::optional fields. Every field unset (the default) = now, under a freshly minted id.
/// A number set to 0 counts as unset (the C struct's convention). Refused with
/// InvalidArgumentError before anything is sent: run_at_ms with delay_ms; dedup_id with
/// id, run_at_ms or delay_ms; dedup_ttl_ms without dedup_id; priority above
/// EMQ_MAX_PRIORITY. A priority on a client not speaking wire 2.2.0 is UnsupportedError.
struct EnqueueOptions {
    /// A caller-chosen JOB id: a row that already holds it answers duplicate = true.
    std::optional<std::string> id = std::nullopt;
    /// Run at this absolute unix-ms instant (the caller's clock).
    std::optional<uint64_t> run_at_ms = std::nullopt;
    /// Run this many ms after the server's now.
    std::optional<uint64_t> delay_ms = std::nullopt;
    /// Wire 2.1.0: while the job holding this dedup id lives, another enqueue with it
    /// answers that job's id with duplicate = true.
    std::optional<std::string> dedup_id = std::nullopt;
    /// Release the dedup id after this long even if its job still lives (throttle mode).
    std::optional<uint64_t> dedup_ttl_ms = std::nullopt;
    /// Wire 2.2.0: 1..=EMQ_MAX_PRIORITY, higher claimed first, before every job without
    /// one; mint order within one priority. Unset or 0 = none.
    std::optional<uint64_t> priority = std::nullopt;
};

namespace detail {

/// `o` as the C struct; its strings borrow from `o`, which must outlive the call.
inline emq_enqueue_options to_c(const EnqueueOptions& o) {
    emq_enqueue_options c;
    emq_enqueue_options_init(&c, sizeof c);
    c.id = o.id ? o.id->c_str() : nullptr;
    c.run_at_ms = o.run_at_ms.value_or(0);
    c.delay_ms = o.delay_ms.value_or(0);
    c.dedup_id = o.dedup_id ? o.dedup_id->c_str() : nullptr;
    c.dedup_ttl_ms = o.dedup_ttl_ms.value_or(0);
    c.priority = o.priority.value_or(0);
    return c;
}

}  // namespace detail

/// One payload's verdict in enqueue_many: status EMQ_OK with an id, or an error.
struct EnqueueResult {
    emq_status status;
    std::string id;
    bool duplicate;
    std::string message;  // empty when status == EMQ_OK
};

/// One job's verdict in complete_many / extend_many.
struct Verdict {
    emq_status status;
    std::string message;  // empty when status == EMQ_OK
};

/// A job to settle in complete_many / extend_many: its id and token.
struct JobRef {
    std::string id;
    uint64_t token;
};

/// One field where the server's script bundle differs from this library's.
struct BundleMismatch {
    std::string field;
    std::string ours;
    std::string theirs;
};

/// What emq_classify read from a key; absent parts are nullopt.
struct KeyInfo {
    emq_key_class key_class;
    std::optional<std::string> queue;
    std::optional<std::string> key_type;
    std::optional<std::string> id;
    std::optional<std::string> member;
};

/// A repeatable job as stored (Client::list_repeats). Optional numbers are 0 when unset.
struct Repeat {
    std::string name;
    uint64_t every_ms = 0;
    std::optional<std::string> cron;
    std::optional<std::string> tz;
    std::string payload;
    uint64_t next_run_ms = 0;
    uint64_t start_at = 0;
    uint64_t end_at = 0;
    uint64_t limit = 0;
    uint64_t count = 0;
    uint64_t last_run_ms = 0;
    std::string last_id;
};

/// What to repeat: an interval (`every_ms`) or a cron pattern with its IANA zone, and the
/// optional window and fire limit (0 = none).
struct RepeatSpec {
    uint64_t every_ms = 0;
    std::optional<std::string> cron;
    std::optional<std::string> tz;
    uint64_t start_at = 0;
    uint64_t end_at = 0;
    uint64_t limit = 0;
};

/// A job row read with Client::job.
struct JobInfo {
    std::string id;
    emq_job_state state;
    uint64_t attempts;
    std::string payload;
    std::optional<std::string> last_error;
    /// The last progress a holder wrote (its JSON text; wire 2.1.0), nullopt if none.
    std::optional<std::string> progress;
};

/// A claimed job seen without owning it (the worker hands these to the handler; valid only
/// during the call).
class JobView {
public:
    explicit JobView(const emq_job& job, emq_handler_result* result = nullptr)
        : job_(&job), result_(result) {}
    std::string_view id() const noexcept { return job_->id; }
    uint64_t token() const noexcept { return job_->token; }
    std::string_view payload() const noexcept {
        return std::string_view(reinterpret_cast<const char*>(job_->payload), job_->payload_len);
    }
    const emq_job& raw() const noexcept { return *job_; }
    /// In a worker's handler: the value kept as the job's result when the worker's
    /// keep_result_ms > 0 and the handler returns normally (copied; a later call replaces
    /// it). Outside a handler it throws InvalidArgumentError.
    void set_result(std::string_view value) const {
        if (!result_) throw InvalidArgumentError("set_result outside a worker's handler");
        detail::check([&](emq_error** e) {
            return emq_handler_result_set_value(
                result_, reinterpret_cast<const uint8_t*>(value.data()), value.size(), e);
        });
    }

private:
    const emq_job* job_;
    emq_handler_result* result_;
};

/// A claimed job, owned: the C struct (or the claim_many list holding it) is freed when the
/// last Job referring to it goes away.
class Job {
public:
    explicit Job(emq_job* raw) : owner_(raw, &emq_job_free), job_(raw) {}
    Job(std::shared_ptr<const void> owner, const emq_job* job)
        : owner_(std::move(owner)), job_(job) {}
    std::string_view id() const noexcept { return job_->id; }
    uint64_t token() const noexcept { return job_->token; }
    std::string_view payload() const noexcept { return view().payload(); }
    JobView view() const noexcept { return JobView(*job_); }
    const emq_job& raw() const noexcept { return *job_; }

private:
    std::shared_ptr<const void> owner_;
    const emq_job* job_;
};

/// One worker event (Worker::on_event), valid only during the callback: copy what you keep.
class WorkerEvent {
public:
    explicit WorkerEvent(const emq_worker_event& event) : event_(&event) {}
    /// EMQ_EVENT_ACTIVE, EMQ_EVENT_COMPLETED, ...
    emq_worker_event_kind kind() const noexcept { return event_->kind; }
    /// "active", "completed", "failed", "dead", "lease_lost", "stalled", "error", "drained",
    /// "closed".
    std::string_view name() const noexcept { return detail::view_or_empty(event_->name); }
    /// The job's id, or nullopt for events about no job (stalled, error, drained, closed).
    std::optional<std::string_view> id() const noexcept {
        return event_->id ? std::optional<std::string_view>(event_->id) : std::nullopt;
    }
    uint64_t token() const noexcept { return event_->token; }
    /// The failure text (failed, dead, error), else nullopt.
    std::optional<std::string_view> error() const noexcept {
        return event_->error ? std::optional<std::string_view>(event_->error) : std::nullopt;
    }
    /// EMQ_EVENT_ERROR: the failure's status; else EMQ_OK.
    emq_status error_status() const noexcept { return event_->error_status; }
    /// EMQ_EVENT_FAILED: ms until the next attempt; -1 otherwise (the job went dead).
    int64_t retry_in_ms() const noexcept { return event_->retry_in_ms; }
    /// How long the handler ran (completed, failed), in ms.
    double duration_ms() const noexcept { return event_->duration_ms; }
    /// EMQ_EVENT_STALLED: how many jobs the reap returned.
    uint64_t count() const noexcept { return event_->count; }
    const emq_worker_event& raw() const noexcept { return *event_; }

private:
    const emq_worker_event* event_;
};

/// One message of a queue's event channel (Client::subscribe), valid only during the
/// callback: copy what you keep.
class QueueEvent {
public:
    explicit QueueEvent(const emq_queue_event& event) : event_(&event) {}
    std::string_view queue() const noexcept { return detail::view_or_empty(event_->queue); }
    /// "added", "active", "completed", "retried", "dead", "removed", "paused", ...
    std::string_view event() const noexcept { return detail::view_or_empty(event_->event); }
    /// The job id; empty for queue-wide events ("paused", "resumed").
    std::string_view job() const noexcept { return detail::view_or_empty(event_->job); }
    /// The value of another field ("token", "attempts", "error", ...), or nullopt.
    std::optional<std::string_view> field(std::string_view name) const noexcept {
        for (size_t i = 0; i < event_->field_count; ++i) {
            if (detail::view_or_empty(event_->field_names[i]) == name) {
                return detail::view_or_empty(event_->field_values[i]);
            }
        }
        return std::nullopt;
    }
    /// Every other field, as (name, value) pairs in the message's order.
    std::vector<std::pair<std::string_view, std::string_view>> fields() const {
        std::vector<std::pair<std::string_view, std::string_view>> out;
        for (size_t i = 0; i < event_->field_count; ++i) {
            out.emplace_back(detail::view_or_empty(event_->field_names[i]),
                             detail::view_or_empty(event_->field_values[i]));
        }
        return out;
    }
    /// The whole message as published (a JSON object of strings).
    std::string_view json() const noexcept { return detail::view_or_empty(event_->json); }
    const emq_queue_event& raw() const noexcept { return *event_; }

private:
    const emq_queue_event* event_;
};

/// How a job waited on with Client::wait_for ended.
struct Settled {
    /// EMQ_SETTLED_COMPLETED or EMQ_SETTLED_DEAD.
    emq_settled state;
    /// The job's last error when it went dead (nullopt when none was recorded).
    std::optional<std::string> last_error;
};

class Client;

/// A live subscription to one queue's events (Client::subscribe): the callable runs on the
/// subscription's own thread, one message at a time, and may call any Client method.
/// Move-only; destruction closes it and waits for the callable's last call to return.
/// An exception escaping the callable is caught and dropped (delivery is at-most-once).
class Subscription {
public:
    using Handler = std::function<void(const QueueEvent&)>;

    /// No callable call starts after this returns, except for messages already received.
    /// Idempotent; any thread but the callable's own.
    void close() {
        detail::check([&](emq_error** e) { return emq_subscription_close(raw_.get(), e); });
    }

    emq_subscription* raw() const noexcept { return raw_.get(); }

    Subscription(Subscription&&) noexcept = default;
    /// Frees this subscription (waiting for its callable) before taking the other's.
    Subscription& operator=(Subscription&& other) noexcept {
        if (this != &other) {
            raw_.reset();
            handler_ = std::move(other.handler_);
            raw_ = std::move(other.raw_);
        }
        return *this;
    }

private:
    friend class Client;
    Subscription(const emq_client* client, const std::string& queue, Handler handler)
        : handler_(std::make_unique<Handler>(std::move(handler))) {
        emq_subscription* raw = nullptr;
        detail::check([&](emq_error** e) {
            return emq_subscribe(client, queue.c_str(), &Subscription::trampoline,
                                 handler_.get(), &raw, e);
        });
        raw_.reset(raw);
    }

    static void trampoline(const emq_queue_event* event, void* user_data) noexcept {
        try {
            (*static_cast<Handler*>(user_data))(QueueEvent(*event));
        } catch (...) {
            // No exception crosses into the library; the event is dropped.
        }
    }

    // Declared first so it is destroyed last: the subscription (freed first) calls into it.
    std::unique_ptr<Handler> handler_;
    std::unique_ptr<emq_subscription, detail::Deleter<emq_subscription, emq_subscription_free>>
        raw_;
};

// ---------------------------------------------------------------------------------------
// Client
// ---------------------------------------------------------------------------------------

/// Connect options with the library defaults (emq_connect_options_init).
inline emq_connect_options connect_options() {
    emq_connect_options o;
    emq_connect_options_init(&o, sizeof o);
    return o;
}

/// A connection to one server; move-only, freed on destruction. Safe to share by
/// reference between threads (the C client is).
class Client {
public:
    /// Connect to `url`; an empty url reads EMQ_URL, else redis://127.0.0.1:6379/.
    static Client connect(std::string_view url = {},
                          const emq_connect_options& options = connect_options()) {
        std::string target(url);
        if (target.empty()) {
            const char* env = std::getenv("EMQ_URL");
            target = env && *env ? env : "redis://127.0.0.1:6379/";
        }
        emq_client* raw = nullptr;
        detail::check([&](emq_error** e) { return emq_connect(target.c_str(), &options, &raw, e); });
        return Client(raw);
    }

    emq_client* raw() const noexcept { return raw_.get(); }

    /// Close the connection; later calls (and workers on it) answer ClosedError.
    void close() {
        detail::check([&](emq_error** e) { return emq_close(raw(), e); });
    }

    uint16_t node_id() const {
        uint16_t out = 0;
        detail::check([&](emq_error** e) { return emq_client_node_id(raw(), &out, e); });
        return out;
    }

    /// Enqueue `payload` as `options` say (default: now, under a freshly minted id).
    Enqueued enqueue(std::string_view queue, Bytes payload,
                     const EnqueueOptions& options = {}) const {
        std::string q(queue);
        emq_enqueue_options o = detail::to_c(options);
        emq_enqueued out{};
        detail::check([&](emq_error** e) {
            return emq_enqueue(raw(), q.c_str(), payload.data(), payload.size(), &o, &out, e);
        });
        return Enqueued{out.id, out.duplicate};
    }

    /// One verdict per payload, in order, payload i written as options[i] says; `options`
    /// is empty (every item with the defaults) or has one entry per payload (else
    /// InvalidArgumentError). Every item is checked before anything is sent (a bad one
    /// throws, nothing written); a batch cut part way throws PartialBatchError.
    std::vector<EnqueueResult> enqueue_many(std::string_view queue,
                                            const std::vector<Bytes>& payloads,
                                            const std::vector<EnqueueOptions>& options = {}) const {
        if (!options.empty() && options.size() != payloads.size())
            throw InvalidArgumentError("enqueue_many: " + std::to_string(options.size()) +
                                       " options for " + std::to_string(payloads.size()) +
                                       " payloads");
        std::string q(queue);
        std::vector<emq_bytes> items;
        items.reserve(payloads.size());
        for (const Bytes& p : payloads) items.push_back(emq_bytes{p.data(), p.size()});
        std::vector<emq_enqueue_options> c_options;
        std::vector<const emq_enqueue_options*> c_pointers;
        c_options.reserve(options.size());
        for (const EnqueueOptions& o : options) c_options.push_back(detail::to_c(o));
        for (const emq_enqueue_options& o : c_options) c_pointers.push_back(&o);
        emq_enqueue_list* raw_list = nullptr;
        detail::check([&](emq_error** e) {
            return emq_enqueue_many(raw(), q.c_str(), items.data(), items.size(),
                                    c_pointers.empty() ? nullptr : c_pointers.data(), &raw_list,
                                    e);
        });
        std::unique_ptr<emq_enqueue_list, detail::Deleter<emq_enqueue_list, emq_enqueue_list_free>>
            list(raw_list);
        std::vector<EnqueueResult> out;
        for (size_t i = 0; list && i < list->len; ++i) {
            const emq_enqueue_result& r = list->items[i];
            out.push_back(EnqueueResult{r.status, r.id, r.duplicate,
                                        r.error ? detail::str_or_empty(r.error->message) : ""});
        }
        return out;
    }

    /// The oldest pending job, or nullopt when there is none (or the queue is paused).
    std::optional<Job> claim(std::string_view queue, uint64_t lease_ms) const {
        std::string q(queue);
        emq_job* out = nullptr;
        detail::check([&](emq_error** e) { return emq_claim(raw(), q.c_str(), lease_ms, &out, e); });
        if (!out) return std::nullopt;
        return Job(out);
    }

    /// Up to `max` jobs, oldest first, in one round trip (empty when none is pending).
    std::vector<Job> claim_many(std::string_view queue, uint64_t max, uint64_t lease_ms) const {
        std::string q(queue);
        emq_job_list* raw_list = nullptr;
        detail::check([&](emq_error** e) {
            return emq_claim_many(raw(), q.c_str(), max, lease_ms, &raw_list, e);
        });
        std::shared_ptr<emq_job_list> list(raw_list, &emq_job_list_free);
        std::vector<Job> jobs;
        for (size_t i = 0; list && i < list->len; ++i) jobs.emplace_back(list, &list->jobs[i]);
        return jobs;
    }

    void complete(std::string_view queue, std::string_view id, uint64_t token) const {
        std::string q(queue), i(id);
        detail::check([&](emq_error** e) { return emq_complete(raw(), q.c_str(), i.c_str(), token, e); });
    }
    void complete(std::string_view queue, const Job& job) const {
        complete(queue, job.id(), job.token());
    }

    /// One verdict per job, in order (one pipeline).
    std::vector<Verdict> complete_many(std::string_view queue, const std::vector<JobRef>& jobs) const {
        return settle_many(queue, jobs, [&](const char* q, const emq_job_ref* refs, size_t n,
                                            emq_verdict_list** out, emq_error** e) {
            return emq_complete_many(raw(), q, refs, n, out, e);
        });
    }

    /// Extend every lease to `lease_ms` from now; one verdict per job, in order.
    std::vector<Verdict> extend_many(std::string_view queue, const std::vector<JobRef>& jobs,
                                     uint64_t lease_ms) const {
        return settle_many(queue, jobs, [&](const char* q, const emq_job_ref* refs, size_t n,
                                            emq_verdict_list** out, emq_error** e) {
            return emq_extend_many(raw(), q, refs, n, lease_ms, out, e);
        });
    }

    /// The fields where the server's bundle differs (empty when it matches).
    std::vector<BundleMismatch> bundle_mismatches() const {
        emq_bundle_mismatch_list* raw_list = nullptr;
        detail::check([&](emq_error** e) { return emq_bundle_mismatches(raw(), &raw_list, e); });
        std::unique_ptr<emq_bundle_mismatch_list,
                        detail::Deleter<emq_bundle_mismatch_list, emq_bundle_mismatch_list_free>>
            list(raw_list);
        std::vector<BundleMismatch> out;
        for (size_t i = 0; list && i < list->len; ++i) {
            const emq_bundle_mismatch& m = list->items[i];
            out.push_back(BundleMismatch{detail::str_or_empty(m.field),
                                         detail::str_or_empty(m.ours),
                                         detail::str_or_empty(m.theirs)});
        }
        return out;
    }

    /// Returns EMQ_RETRY_SCHEDULED or EMQ_RETRY_DEAD (max_attempts reached).
    emq_retry_outcome retry(std::string_view queue, std::string_view id, uint64_t token,
                            uint64_t delay_ms, uint64_t max_attempts,
                            std::string_view error = {}) const {
        std::string q(queue), i(id), msg(error);
        emq_retry_outcome out{};
        detail::check([&](emq_error** e) {
            return emq_retry(raw(), q.c_str(), i.c_str(), token, delay_ms, max_attempts,
                             error.empty() ? nullptr : msg.c_str(), &out, e);
        });
        return out;
    }

    void extend(std::string_view queue, std::string_view id, uint64_t token,
                uint64_t lease_ms) const {
        std::string q(queue), i(id);
        detail::check([&](emq_error** e) {
            return emq_extend(raw(), q.c_str(), i.c_str(), token, lease_ms, e);
        });
    }

    uint64_t promote(std::string_view queue, uint64_t limit) const {
        std::string q(queue);
        uint64_t out = 0;
        detail::check([&](emq_error** e) { return emq_promote(raw(), q.c_str(), limit, &out, e); });
        return out;
    }

    uint64_t reap(std::string_view queue, uint64_t limit) const {
        std::string q(queue);
        uint64_t out = 0;
        detail::check([&](emq_error** e) { return emq_reap(raw(), q.c_str(), limit, &out, e); });
        return out;
    }

    emq_queue_counts counts(std::string_view queue) const {
        std::string q(queue);
        emq_queue_counts out{};
        detail::check([&](emq_error** e) { return emq_counts(raw(), q.c_str(), &out, e); });
        return out;
    }

    /// The job's row, or nullopt when there is no such row.
    std::optional<JobInfo> job(std::string_view queue, std::string_view id) const {
        std::string q(queue), i(id);
        emq_job_info* raw_info = nullptr;
        detail::check([&](emq_error** e) { return emq_get_job(raw(), q.c_str(), i.c_str(), &raw_info, e); });
        std::unique_ptr<emq_job_info, detail::Deleter<emq_job_info, emq_job_info_free>> info(raw_info);
        if (!info) return std::nullopt;
        JobInfo out{info->id, info->state, info->attempts,
                    std::string(reinterpret_cast<const char*>(info->payload), info->payload_len),
                    std::nullopt, std::nullopt};
        if (info->last_error) out.last_error = std::string(info->last_error);
        if (info->progress) out.progress = std::string(info->progress);
        return out;
    }

    /// Ids in one set (EMQ_BROWSE_*), oldest first unless newest_first; `range` bounds the
    /// enqueue time (pending/dead) or run time (schedule).
    std::vector<std::string> browse(std::string_view queue, emq_browse_set set,
                                    bool newest_first = false, uint64_t limit = 100,
                                    std::optional<emq_time_range> range = std::nullopt) const {
        std::string q(queue);
        emq_id_list* raw_list = nullptr;
        detail::check([&](emq_error** e) {
            return emq_browse(raw(), q.c_str(), set, newest_first, limit,
                              range ? &*range : nullptr, &raw_list, e);
        });
        std::unique_ptr<emq_id_list, detail::Deleter<emq_id_list, emq_id_list_free>> list(raw_list);
        std::vector<std::string> out;
        for (size_t i = 0; list && i < list->len; ++i) out.emplace_back(list->ids[i].text);
        return out;
    }

    void pause(std::string_view queue) const {
        std::string q(queue);
        detail::check([&](emq_error** e) { return emq_pause(raw(), q.c_str(), e); });
    }
    void resume(std::string_view queue) const {
        std::string q(queue);
        detail::check([&](emq_error** e) { return emq_resume(raw(), q.c_str(), e); });
    }
    /// Whether the job's row exists (in any state).
    bool exists(std::string_view queue, std::string_view id) const {
        std::string q(queue), i(id);
        bool out = false;
        detail::check([&](emq_error** e) { return emq_exists(raw(), q.c_str(), i.c_str(), &out, e); });
        return out;
    }
    bool is_paused(std::string_view queue) const {
        std::string q(queue);
        bool out = false;
        detail::check([&](emq_error** e) { return emq_is_paused(raw(), q.c_str(), &out, e); });
        return out;
    }
    void requeue_dead(std::string_view queue, std::string_view id) const {
        std::string q(queue), i(id);
        detail::check([&](emq_error** e) { return emq_requeue_dead(raw(), q.c_str(), i.c_str(), e); });
    }
    void remove(std::string_view queue, std::string_view id) const {
        std::string q(queue), i(id);
        detail::check([&](emq_error** e) { return emq_remove(raw(), q.c_str(), i.c_str(), e); });
    }

    // ---- operator verbs: bounded script batches; limit 0 = no limit ----

    /// Create or replace the repeatable job `name` (wire 2.1.0); returns its next slot
    /// (unix ms, server clock).
    uint64_t upsert_repeat(std::string_view queue, std::string_view name, Bytes payload,
                           const RepeatSpec& spec) const {
        std::string q(queue), n(name);
        const char* cron = spec.cron ? spec.cron->c_str() : nullptr;
        const char* tz = spec.tz ? spec.tz->c_str() : nullptr;
        uint64_t next = 0;
        detail::check([&](emq_error** e) {
            return emq_upsert_repeat(raw(), q.c_str(), n.c_str(), payload.data(), payload.size(),
                                     spec.every_ms, cron, tz, spec.start_at, spec.end_at,
                                     spec.limit, &next, e);
        });
        return next;
    }

    /// Take the repeatable job `name` off the schedule; false when there was none.
    bool remove_repeat(std::string_view queue, std::string_view name) const {
        std::string q(queue), n(name);
        bool removed = false;
        detail::check([&](emq_error** e) {
            return emq_remove_repeat(raw(), q.c_str(), n.c_str(), &removed, e);
        });
        return removed;
    }

    /// Every repeatable job of `queue`, soonest slot first.
    std::vector<Repeat> list_repeats(std::string_view queue) const {
        std::string q(queue);
        emq_repeat_list* raw_list = nullptr;
        detail::check([&](emq_error** e) { return emq_list_repeats(raw(), q.c_str(), &raw_list, e); });
        std::unique_ptr<emq_repeat_list, detail::Deleter<emq_repeat_list, emq_repeat_list_free>>
            list(raw_list);
        std::vector<Repeat> out;
        for (size_t i = 0; list && i < list->len; ++i) {
            const emq_repeat& r = list->items[i];
            Repeat item;
            item.name = r.name;
            item.every_ms = r.every_ms;
            if (r.cron) item.cron = std::string(r.cron);
            if (r.tz) item.tz = std::string(r.tz);
            if (r.payload) item.payload.assign(reinterpret_cast<const char*>(r.payload), r.payload_len);
            item.next_run_ms = r.next_run_ms;
            item.start_at = r.start_at;
            item.end_at = r.end_at;
            item.limit = r.limit;
            item.count = r.count;
            item.last_run_ms = r.last_run_ms;
            item.last_id = r.last_id;
            out.push_back(std::move(item));
        }
        return out;
    }

    /// The repeat pump: fire up to `limit` due repeats, one job per slot; returns how many.
    uint64_t fire_repeats(std::string_view queue, uint64_t limit = 100) const {
        std::string q(queue);
        uint64_t fired = 0;
        detail::check([&](emq_error** e) { return emq_fire_repeats(raw(), q.c_str(), limit, &fired, e); });
        return fired;
    }

    /// Every queue of the deployment, sorted.
    std::vector<std::string> queues() const {
        emq_string_list* raw_list = nullptr;
        detail::check([&](emq_error** e) { return emq_queues(raw(), &raw_list, e); });
        std::unique_ptr<emq_string_list, detail::Deleter<emq_string_list, emq_string_list_free>>
            list(raw_list);
        std::vector<std::string> out;
        for (size_t i = 0; list && i < list->len; ++i) out.emplace_back(list->items[i]);
        return out;
    }

    /// Delete up to `limit` waiting jobs, oldest first: pending, then scheduled when
    /// `include_scheduled`. Active jobs survive. Returns how many went.
    uint64_t drain(std::string_view queue, bool include_scheduled = false,
                   uint64_t limit = 0) const {
        std::string q(queue);
        uint64_t out = 0;
        detail::check([&](emq_error** e) {
            return emq_drain(raw(), q.c_str(), include_scheduled, limit, &out, e);
        });
        return out;
    }

    /// Delete up to `limit` dead jobs, oldest first; with `older_than_ms`, only those minted
    /// longer ago than that. Returns how many went.
    uint64_t purge_dead(std::string_view queue, std::optional<uint64_t> older_than_ms = std::nullopt,
                        uint64_t limit = 0) const {
        std::string q(queue);
        uint64_t out = 0;
        detail::check([&](emq_error** e) {
            return emq_purge_dead(raw(), q.c_str(), older_than_ms ? &*older_than_ms : nullptr,
                                  limit, &out, e);
        });
        return out;
    }

    /// Put up to `limit` dead jobs back to pending, oldest first. Returns how many moved.
    uint64_t requeue_all_dead(std::string_view queue, uint64_t limit = 0) const {
        std::string q(queue);
        uint64_t out = 0;
        detail::check([&](emq_error** e) {
            return emq_requeue_all_dead(raw(), q.c_str(), limit, &out, e);
        });
        return out;
    }

    // ---- 2.1.0 job features (issue #13) ----

    /// The ids reap_stalled moved: back to pending, or dead at max_stalls.
    struct Reaped {
        std::vector<std::string> recovered;
        std::vector<std::string> dead;
    };

    /// Reap up to `limit` lapsed leases, counting a stall on each; at `max_stalls` a job goes
    /// dead with last_error "stalled".
    Reaped reap_stalled(std::string_view queue, uint64_t limit, uint64_t max_stalls) const {
        std::string q(queue);
        emq_id_list* recovered = nullptr;
        emq_id_list* dead = nullptr;
        detail::check([&](emq_error** e) {
            return emq_reap_stalled(raw(), q.c_str(), limit, max_stalls, &recovered, &dead, e);
        });
        using List = std::unique_ptr<emq_id_list, detail::Deleter<emq_id_list, emq_id_list_free>>;
        List r(recovered), d(dead);
        Reaped out;
        for (size_t i = 0; r && i < r->len; ++i) out.recovered.emplace_back(r->ids[i].text);
        for (size_t i = 0; d && i < d->len; ++i) out.dead.emplace_back(d->ids[i].text);
        return out;
    }

    /// At most `n` jobs of the queue active at once across every worker (0 removes it); a
    /// claim at the ceiling throws RateLimitedError.
    void set_concurrency(std::string_view queue, uint64_t n) const {
        std::string q(queue);
        detail::check([&](emq_error** e) { return emq_set_concurrency(raw(), q.c_str(), n, e); });
    }

    /// At most `max` claims per `per_ms` window (0 removes the limit).
    void set_rate_limit(std::string_view queue, uint64_t max, uint64_t per_ms) const {
        std::string q(queue);
        detail::check([&](emq_error** e) {
            return emq_set_rate_limit(raw(), q.c_str(), max, per_ms, e);
        });
    }

    /// From a handler (say after an HTTP 429): the held job waits `ms` in schedule without
    /// counting an attempt, and claims on the queue pause for `ms`. Do not settle it after.
    void rate_limit(std::string_view queue, std::string_view id, uint64_t token,
                    uint64_t ms) const {
        std::string q(queue), i(id);
        detail::check([&](emq_error** e) {
            return emq_rate_limit(raw(), q.c_str(), i.c_str(), token, ms, e);
        });
    }

    // ---- observability ----

    /// Wait up to `timeout_ms` for job `id` to complete or go dead. The deadline passing
    /// throws TimeoutError; the job being removed meanwhile, GoneError.
    Settled wait_for(std::string_view queue, std::string_view id, uint64_t timeout_ms) const {
        std::string q(queue), i(id);
        emq_settled state{};
        char* last_error = nullptr;
        detail::check([&](emq_error** e) {
            return emq_wait_for(raw(), q.c_str(), i.c_str(), timeout_ms, &state, &last_error, e);
        });
        std::unique_ptr<char, detail::Deleter<char, emq_string_free>> owned(last_error);
        return Settled{state, detail::opt_str(owned.get())};
    }

    // ---- progress, logs and kept results (wire 2.1.0) ----

    /// As the job's holder: record how far it got, one JSON value (`"50"`, `{"done":3}`) of
    /// at most 64 KiB. StaleError unless `token` holds the active job; GoneError without a row.
    void update_progress(std::string_view queue, std::string_view id, uint64_t token,
                         std::string_view json) const {
        std::string q(queue), i(id), v(json);
        detail::check([&](emq_error** e) {
            return emq_update_progress(raw(), q.c_str(), i.c_str(), token, v.c_str(), e);
        });
    }

    /// Append `line` to the job's log, keeping the newest `max_lines` (0: the default,
    /// 1000). Returns the log's length; GoneError once the job has no row.
    uint64_t log(std::string_view queue, std::string_view id, std::string_view line,
                 uint64_t max_lines = 0) const {
        std::string q(queue), i(id), l(line);
        uint64_t len = 0;
        detail::check([&](emq_error** e) {
            return emq_log(raw(), q.c_str(), i.c_str(), l.c_str(), max_lines, &len, e);
        });
        return len;
    }

    /// Lines start..=end of the job's log (LRANGE indexes; default all), oldest first.
    std::vector<std::string> logs(std::string_view queue, std::string_view id,
                                  int64_t start = 0, int64_t end = -1) const {
        std::string q(queue), i(id);
        emq_string_list* raw_list = nullptr;
        detail::check([&](emq_error** e) {
            return emq_logs(raw(), q.c_str(), i.c_str(), start, end, &raw_list, e);
        });
        std::unique_ptr<emq_string_list, detail::Deleter<emq_string_list, emq_string_list_free>>
            list(raw_list);
        std::vector<std::string> out;
        for (size_t n = 0; list && n < list->len; ++n) out.emplace_back(list->items[n]);
        return out;
    }

    /// The value a worker kept for the job (keep_result_ms), or nullopt when none is kept.
    std::optional<std::string> result(std::string_view queue, std::string_view id) const {
        std::string q(queue), i(id);
        emq_value* raw_value = nullptr;
        detail::check([&](emq_error** e) {
            return emq_result(raw(), q.c_str(), i.c_str(), &raw_value, e);
        });
        std::unique_ptr<emq_value, detail::Deleter<emq_value, emq_value_free>> value(raw_value);
        if (!value) return std::nullopt;
        if (value->len == 0) return std::string();
        return std::string(reinterpret_cast<const char*>(value->data), value->len);
    }

    /// Wait up to `timeout_ms` for the job's kept result. JobDeadError (with last_error())
    /// if it went dead, GoneError with neither row nor result, TimeoutError at the deadline.
    std::string wait_for_result(std::string_view queue, std::string_view id,
                                uint64_t timeout_ms) const {
        std::string q(queue), i(id);
        emq_value* raw_value = nullptr;
        detail::check([&](emq_error** e) {
            return emq_wait_for_result(raw(), q.c_str(), i.c_str(), timeout_ms, &raw_value, e);
        });
        std::unique_ptr<emq_value, detail::Deleter<emq_value, emq_value_free>> value(raw_value);
        if (!value || value->len == 0) return std::string();
        return std::string(reinterpret_cast<const char*>(value->data), value->len);
    }

    /// Prometheus text exposition for the given queues (any range of string-likes: a
    /// std::vector<std::string>, std::array<std::string_view, N>, std::span, ...).
    template <typename Range>
    std::string metrics_text(const Range& queues) const {
        detail::CStrings names(queues);
        char* out = nullptr;
        detail::check([&](emq_error** e) {
            return emq_metrics_text(raw(), names.data(), names.size(), &out, e);
        });
        std::unique_ptr<char, detail::Deleter<char, emq_string_free>> owned(out);
        return std::string(owned.get());
    }
    std::string metrics_text(std::initializer_list<std::string_view> queues) const {
        return metrics_text<std::initializer_list<std::string_view>>(queues);
    }

    /// Subscribe to `queue`'s events on a connection of its own; returns once the server
    /// confirmed the subscription. See Subscription.
    Subscription subscribe(std::string_view queue, Subscription::Handler handler) const {
        return Subscription(raw(), std::string(queue), std::move(handler));
    }

private:
    explicit Client(emq_client* raw) : raw_(raw) {}

    template <typename F>
    std::vector<Verdict> settle_many(std::string_view queue, const std::vector<JobRef>& jobs,
                                     F&& call) const {
        std::string q(queue);
        std::vector<emq_job_ref> refs;
        refs.reserve(jobs.size());
        for (const JobRef& j : jobs) refs.push_back(emq_job_ref{j.id.c_str(), j.token});
        emq_verdict_list* raw_list = nullptr;
        detail::check([&](emq_error** e) {
            return call(q.c_str(), refs.data(), refs.size(), &raw_list, e);
        });
        std::unique_ptr<emq_verdict_list, detail::Deleter<emq_verdict_list, emq_verdict_list_free>>
            list(raw_list);
        std::vector<Verdict> out;
        for (size_t i = 0; list && i < list->len; ++i) {
            const emq_verdict& v = list->items[i];
            out.push_back(Verdict{v.status, v.error ? detail::str_or_empty(v.error->message) : ""});
        }
        return out;
    }

    std::unique_ptr<emq_client, detail::Deleter<emq_client, emq_client_free>> raw_;
};

// ---------------------------------------------------------------------------------------
// Worker
// ---------------------------------------------------------------------------------------

/// Worker options with the library defaults (emq_worker_options_init).
inline emq_worker_options worker_options() {
    emq_worker_options o;
    emq_worker_options_init(&o, sizeof o);
    return o;
}

/// A worker on one queue calling a C++ callable for each job. Destruction stops and joins
/// it. Move-only; the callable lives on the heap so the C side's pointer stays valid.
class Worker {
public:
    using Handler = std::function<void(const JobView&)>;

    Worker(const Client& client, std::string_view queue, Handler handler,
           const emq_worker_options& options = worker_options())
        : handler_(std::make_unique<Handler>(std::move(handler))) {
        std::string q(queue);
        emq_worker* raw = nullptr;
        detail::check([&](emq_error** e) {
            return emq_worker_new(client.raw(), q.c_str(), &options, &Worker::trampoline,
                                  handler_.get(), &raw, e);
        });
        raw_.reset(raw);
    }

    using EventHandler = std::function<void(const WorkerEvent&)>;

    /// Call `handler` for each of the worker's events, on the worker's own threads: it must
    /// return quickly and must not call blocking Client methods. Set it before start(),
    /// once. An exception escaping it is caught and dropped.
    void on_event(EventHandler handler) {
        auto owned = std::make_unique<EventHandler>(std::move(handler));
        detail::check([&](emq_error** e) {
            return emq_worker_set_event_handler(raw_.get(), &Worker::event_trampoline,
                                                owned.get(), e);
        });
        events_ = std::move(owned);
    }

    /// Start the worker's threads; returns at once.
    void start() { detail::check([&](emq_error** e) { return emq_worker_start(raw_.get(), e); }); }
    /// No new claims; in-flight jobs get shutdown_grace_ms. Any thread, not a signal handler.
    void stop() { detail::check([&](emq_error** e) { return emq_worker_stop(raw_.get(), e); }); }
    /// Wait until drained and no handler call is running.
    void join() { detail::check([&](emq_error** e) { return emq_worker_join(raw_.get(), e); }); }
    /// start() + join().
    void run() { detail::check([&](emq_error** e) { return emq_worker_run(raw_.get(), e); }); }

    emq_stats stats() const {
        emq_stats out{};
        detail::check([&](emq_error** e) { return emq_worker_stats(raw_.get(), &out, e); });
        return out;
    }

    emq_worker* raw() const noexcept { return raw_.get(); }

    Worker(Worker&&) noexcept = default;
    /// Stops, joins and frees this worker before taking the other's (its callables must
    /// outlive it; member-wise assignment would free them first).
    Worker& operator=(Worker&& other) noexcept {
        if (this != &other) {
            raw_.reset();
            handler_ = std::move(other.handler_);
            events_ = std::move(other.events_);
            raw_ = std::move(other.raw_);
        }
        return *this;
    }

private:
    // Called by the library on its threads: exceptions stop here.
    static emq_handler_status trampoline(const emq_job* job, void* user_data,
                                         emq_handler_result* result) noexcept {
        try {
            (*static_cast<Handler*>(user_data))(JobView(*job, result));
            return EMQ_HANDLER_OK;
        } catch (const Unrecoverable& e) {
            emq_handler_result_set_message(result, e.what(), nullptr);
            return EMQ_HANDLER_FATAL;
        } catch (const std::exception& e) {
            emq_handler_result_set_message(result, e.what(), nullptr);
            return EMQ_HANDLER_RETRY;
        } catch (...) {
            emq_handler_result_set_message(result, "unknown C++ exception", nullptr);
            return EMQ_HANDLER_RETRY;
        }
    }

    static void event_trampoline(const emq_worker_event* event, void* user_data) noexcept {
        try {
            (*static_cast<EventHandler*>(user_data))(WorkerEvent(*event));
        } catch (...) {
            // No exception crosses into the library; the event is dropped.
        }
    }

    // Declared first so they are destroyed last: the C worker (freed first) calls into them.
    std::unique_ptr<Handler> handler_;
    std::unique_ptr<EventHandler> events_;
    std::unique_ptr<emq_worker, detail::Deleter<emq_worker, emq_worker_free>> raw_;
};

// ---------------------------------------------------------------------------------------
// Pure helpers (no server)
// ---------------------------------------------------------------------------------------

inline const char* protocol_version() noexcept { return emq_protocol_version(); }

/// The library's version ("major.minor.patch"); EMQ_VERSION is the header's.
inline const char* version() noexcept { return emq_version(); }

// ---------------------------------------------------------------------------------------
// Logs
// ---------------------------------------------------------------------------------------

/// Receives one core log record: level (EMQ_LOG_ERROR..EMQ_LOG_TRACE), target (the Rust
/// module, e.g. "echomq::worker::run") and message, valid only during the call. Called on
/// the library's threads, several at once: it must be thread-safe, quick, and must not call
/// back into the library.
using LogHandler = std::function<void(emq_log_level, std::string_view, std::string_view)>;

namespace detail {
/// Every log handler ever installed through this header. The library may still be
/// finishing a call to the previous handler when a new one is installed, so none is
/// ever freed: they live, reachable, until the process ends (install one, not thousands).
inline std::vector<std::unique_ptr<LogHandler>>& log_handlers() {
    static auto* handlers = new std::vector<std::unique_ptr<LogHandler>>();
    return *handlers;
}
inline std::mutex& log_handlers_lock() {
    static auto* lock = new std::mutex();
    return *lock;
}
inline void log_trampoline(emq_log_level level, const char* target, const char* message,
                           void* user_data) noexcept {
    try {
        (*static_cast<LogHandler*>(user_data))(level, view_or_empty(target),
                                               view_or_empty(message));
    } catch (...) {
        // No exception crosses into the library; the record is dropped.
    }
}
}  // namespace detail

/// Send the core's log records at or above `min_level` to `handler` (for the whole
/// process). An exception escaping it is caught and dropped.
inline void set_log_handler(LogHandler handler, emq_log_level min_level = EMQ_LOG_WARN) {
    std::lock_guard<std::mutex> guard(detail::log_handlers_lock());
    auto owned = std::make_unique<LogHandler>(std::move(handler));
    detail::check([&](emq_error** e) {
        return emq_set_log_handler(&detail::log_trampoline, owned.get(), min_level, e);
    });
    detail::log_handlers().push_back(std::move(owned));
}

/// Back to the default: records at or above `min_level` printed to stderr
/// (EMQ_LOG_OFF silences everything).
inline void reset_log_handler(emq_log_level min_level = EMQ_LOG_WARN) {
    std::lock_guard<std::mutex> guard(detail::log_handlers_lock());
    detail::check([&](emq_error** e) { return emq_set_log_handler(nullptr, nullptr, min_level, e); });
}

/// A new job id; node_id -1 = EMQ_NODE_ID or the process default.
inline std::string mint_job_id(int32_t node_id = -1) {
    emq_id out{};
    detail::check([&](emq_error** e) { return emq_mint_job_id(node_id, &out, e); });
    return out.text;
}

inline bool is_valid_id(std::string_view text) {
    std::string t(text);
    bool out = false;
    detail::check([&](emq_error** e) { return emq_is_valid_id(t.c_str(), &out, e); });
    return out;
}

inline bool is_valid_queue(std::string_view name) {
    std::string n(name);
    bool out = false;
    detail::check([&](emq_error** e) { return emq_is_valid_queue(n.c_str(), &out, e); });
    return out;
}

/// Throws InvalidQueueError when `name` is not a queue name.
inline void validate_queue(std::string_view name) {
    std::string n(name);
    detail::check([&](emq_error** e) { return emq_validate_queue(n.c_str(), e); });
}

/// The parts of a branded id (namespace, node id, snowflake, mint time).
inline emq_id_parts parse_id(std::string_view text) {
    std::string t(text);
    emq_id_parts out{};
    detail::check([&](emq_error** e) { return emq_parse_id(t.c_str(), &out, e); });
    return out;
}

/// The id with namespace `ns` (3 letters) and `snowflake`.
inline std::string encode_id(std::string_view ns, uint64_t snowflake) {
    std::string n(ns);
    emq_id out{};
    detail::check([&](emq_error** e) { return emq_encode_id(n.c_str(), snowflake, &out, e); });
    return out.text;
}

/// The smallest id minted at or after `unix_ms` (a browse range bound).
inline std::string lex_bound(uint64_t unix_ms) {
    emq_id out{};
    detail::check([&](emq_error** e) { return emq_lex_bound(unix_ms, &out, e); });
    return out.text;
}

namespace detail {
/// Take ownership of a library-allocated string.
inline std::string take_string(char* raw) {
    std::unique_ptr<char, Deleter<char, emq_string_free>> owned(raw);
    return owned ? std::string(owned.get()) : std::string();
}
}  // namespace detail

/// A queue's key of one type (EMQ_KEY_*), e.g. "emq:{emails}:pending".
inline std::string queue_key(std::string_view queue, emq_key_type key_type) {
    std::string q(queue);
    char* out = nullptr;
    detail::check([&](emq_error** e) { return emq_queue_key(q.c_str(), key_type, &out, e); });
    return detail::take_string(out);
}

/// A job's row key.
inline std::string job_key(std::string_view queue, std::string_view id) {
    std::string q(queue), i(id);
    char* out = nullptr;
    detail::check([&](emq_error** e) { return emq_job_key(q.c_str(), i.c_str(), &out, e); });
    return detail::take_string(out);
}

/// Classify a key against the key grammar.
inline KeyInfo classify(Bytes key) {
    emq_key_info* raw = nullptr;
    detail::check([&](emq_error** e) { return emq_classify(key.data(), key.size(), &raw, e); });
    std::unique_ptr<emq_key_info, detail::Deleter<emq_key_info, emq_key_info_free>> info(raw);
    return KeyInfo{info->key_class, detail::opt_str(info->queue), detail::opt_str(info->key_type),
                   detail::opt_str(info->id), detail::opt_str(info->member)};
}

/// The Redis Cluster hash slot of a key.
inline uint16_t slot(Bytes key) {
    uint16_t out = 0;
    detail::check([&](emq_error** e) { return emq_slot(key.data(), key.size(), &out, e); });
    return out;
}

}  // namespace echomq

#endif  // ECHOMQ_HPP
