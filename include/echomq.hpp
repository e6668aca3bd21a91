// echomq.hpp: a header-only C++17 wrapper over the C ABI in echomq.h.
//
// It adds no behaviour of its own: every call is one emq_* call, converted.
//   - RAII: Client, Job and Worker own their C handles and free them once.
//   - Errors: a failed call throws a class derived from echomq::Error, one class per
//     status (echomq::StaleError for EMQ_ERR_STALE, ...). Error::status() is the number,
//     Error::code() the stable string form. A status this header does not know yet
//     throws echomq::Error itself.
//   - Inputs: std::string_view for text, echomq::Bytes (pointer + size; built from a
//     std::string_view, a std::vector<uint8_t> or a pointer and a length) for payloads.
//   - Worker: any callable taking `const echomq::JobView&`. Returning normally completes
//     the job; throwing echomq::Unrecoverable sends it to the dead set; throwing anything
//     else retries it with the exception's what() as last_error. No exception ever
//     crosses into the library.
//
// Link exactly as for C: $(pkg-config --cflags --libs echomq).
#ifndef ECHOMQ_HPP
#define ECHOMQ_HPP

#include "echomq.h"

#include <cstdint>
#include <cstdlib>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace echomq {

// ---------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------

/// The base of every exception this wrapper throws for a failed emq_* call.
class Error : public std::runtime_error {
public:
    Error(emq_status status, const std::string& message, std::string found = {},
          std::string class_word = {})
        : std::runtime_error(message),
          status_(status),
          found_(std::move(found)),
          class_word_(std::move(class_word)) {}

    /// The C status number (EMQ_ERR_*), stable forever.
    emq_status status() const noexcept { return status_; }
    /// The stable string code ("EMQSTALE", "EMQ_GONE", ...).
    const char* code() const noexcept { return emq_status_code(status_); }
    /// The version found on the server (VersionFenceError only, else empty).
    const std::string& found() const noexcept { return found_; }
    /// The unknown class word (ProtocolError only, else empty).
    const std::string& class_word() const noexcept { return class_word_; }

private:
    emq_status status_;
    std::string found_;
    std::string class_word_;
};

/// One entry of a PartialBatchError: a payload's pre-minted id and whether it was written
/// (EMQ_WRITTEN, EMQ_NOT_WRITTEN or EMQ_WRITE_UNKNOWN).
struct BatchItem {
    std::string id;
    int32_t state;
};

#define ECHOMQ_ERROR_CLASS(Name, Status)                                   \
    class Name : public Error {                                            \
    public:                                                                \
        static constexpr emq_status kStatus = Status;                      \
        explicit Name(const std::string& message, std::string found = {},  \
                      std::string class_word = {})                         \
            : Error(Status, message, std::move(found), std::move(class_word)) {} \
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
#undef ECHOMQ_ERROR_CLASS

/// EMQ_ERR_PARTIAL_BATCH: enqueue_many lost its connection part way. items() holds every
/// payload's id and write state; resend the ones not written with enqueue_with_id.
class PartialBatchError : public Error {
public:
    static constexpr emq_status kStatus = EMQ_ERR_PARTIAL_BATCH;
    PartialBatchError(const std::string& message, std::vector<BatchItem> items)
        : Error(EMQ_ERR_PARTIAL_BATCH, message), items_(std::move(items)) {}
    const std::vector<BatchItem>& items() const noexcept { return items_; }

private:
    std::vector<BatchItem> items_;
};

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

/// Throw the typed exception for `status`, reading the details from `err` (may be NULL).
[[noreturn]] inline void raise(emq_status status, const emq_error* err) {
    std::string msg = err && err->message ? err->message : emq_status_code(status);
    std::string found = err ? str_or_empty(err->found) : std::string();
    std::string word = err ? str_or_empty(err->class_word) : std::string();
    switch (status) {
        case EMQ_ERR_KIND: throw KindError(msg);
        case EMQ_ERR_STALE: throw StaleError(msg);
        case EMQ_ERR_GONE: throw GoneError(msg);
        case EMQ_ERR_LEASE_LOST: throw LeaseLostError(msg);
        case EMQ_ERR_NOT_DEAD: throw NotDeadError(msg);
        case EMQ_ERR_VERSION_FENCE: throw VersionFenceError(msg, found);
        case EMQ_ERR_INVALID_ID: throw InvalidIdError(msg);
        case EMQ_ERR_INVALID_QUEUE: throw InvalidQueueError(msg);
        case EMQ_ERR_INVALID_ARGUMENT: throw InvalidArgumentError(msg);
        case EMQ_ERR_CONNECTION: throw ConnectionError(msg);
        case EMQ_ERR_TIMEOUT: throw TimeoutError(msg);
        case EMQ_ERR_PROTOCOL: throw ProtocolError(msg, {}, word);
        case EMQ_ERR_SERVER: throw ServerError(msg);
        case EMQ_ERR_JOB_ACTIVE: throw JobActiveError(msg);
        case EMQ_ERR_BUNDLE_MISMATCH: throw BundleMismatchError(msg);
        case EMQ_ERR_CLOSED: throw ClosedError(msg);
        case EMQ_ERR_PARTIAL_BATCH: {
            std::vector<BatchItem> items;
            if (err) {
                for (size_t i = 0; i < err->batch_len; ++i) {
                    items.push_back(BatchItem{err->batch[i].id.text, err->batch[i].state});
                }
            }
            throw PartialBatchError(msg, std::move(items));
        }
        case EMQ_ERR_INTERNAL: throw InternalError(msg);
        case EMQ_ERR_NULL_POINTER: throw NullPointerError(msg);
        case EMQ_ERR_INVALID_UTF8: throw InvalidUtf8Error(msg);
        case EMQ_ERR_PANIC: throw PanicError(msg);
        default: throw Error(status, msg, found, word);
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

/// A job row read with Client::job.
struct JobInfo {
    std::string id;
    emq_job_state state;
    uint64_t attempts;
    std::string payload;
    std::optional<std::string> last_error;
};

/// A claimed job seen without owning it (the worker hands these to the handler; valid only
/// during the call).
class JobView {
public:
    explicit JobView(const emq_job& job) : job_(&job) {}
    std::string_view id() const noexcept { return job_->id; }
    uint64_t token() const noexcept { return job_->token; }
    std::string_view payload() const noexcept {
        return std::string_view(reinterpret_cast<const char*>(job_->payload), job_->payload_len);
    }
    const emq_job& raw() const noexcept { return *job_; }

private:
    const emq_job* job_;
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

    Enqueued enqueue(std::string_view queue, Bytes payload) const {
        std::string q(queue);
        emq_enqueued out{};
        detail::check([&](emq_error** e) {
            return emq_enqueue(raw(), q.c_str(), payload.data(), payload.size(), &out, e);
        });
        return Enqueued{out.id, out.duplicate};
    }

    Enqueued enqueue_with_id(std::string_view queue, std::string_view id, Bytes payload) const {
        std::string q(queue), i(id);
        emq_enqueued out{};
        detail::check([&](emq_error** e) {
            return emq_enqueue_with_id(raw(), q.c_str(), i.c_str(), payload.data(), payload.size(),
                                       &out, e);
        });
        return Enqueued{out.id, out.duplicate};
    }

    Enqueued enqueue_at(std::string_view queue, Bytes payload, uint64_t run_at_ms) const {
        std::string q(queue);
        emq_enqueued out{};
        detail::check([&](emq_error** e) {
            return emq_enqueue_at(raw(), q.c_str(), payload.data(), payload.size(), run_at_ms, &out,
                                  e);
        });
        return Enqueued{out.id, out.duplicate};
    }

    Enqueued enqueue_in(std::string_view queue, Bytes payload, uint64_t delay_ms) const {
        std::string q(queue);
        emq_enqueued out{};
        detail::check([&](emq_error** e) {
            return emq_enqueue_in(raw(), q.c_str(), payload.data(), payload.size(), delay_ms, &out,
                                  e);
        });
        return Enqueued{out.id, out.duplicate};
    }

    /// One verdict per payload, in order; a batch cut part way throws PartialBatchError.
    std::vector<EnqueueResult> enqueue_many(std::string_view queue,
                                            const std::vector<Bytes>& payloads) const {
        std::string q(queue);
        std::vector<emq_bytes> items;
        items.reserve(payloads.size());
        for (const Bytes& p : payloads) items.push_back(emq_bytes{p.data(), p.size()});
        emq_enqueue_list* raw_list = nullptr;
        detail::check([&](emq_error** e) {
            return emq_enqueue_many(raw(), q.c_str(), items.data(), items.size(), &raw_list, e);
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
        emq_retry_outcome out = 0;
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
                    std::nullopt};
        if (info->last_error) out.last_error = std::string(info->last_error);
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

private:
    // Called by the library on its threads: exceptions stop here.
    static emq_handler_status trampoline(const emq_job* job, void* user_data,
                                         emq_handler_result* result) noexcept {
        try {
            (*static_cast<Handler*>(user_data))(JobView(*job));
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

    // Declared first so it is destroyed last: the C worker (freed first) calls into it.
    std::unique_ptr<Handler> handler_;
    std::unique_ptr<emq_worker, detail::Deleter<emq_worker, emq_worker_free>> raw_;
};

// ---------------------------------------------------------------------------------------
// Pure helpers (no server)
// ---------------------------------------------------------------------------------------

inline const char* protocol_version() noexcept { return emq_protocol_version(); }

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
