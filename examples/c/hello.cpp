// The same header from C++17: RAII owners for what the library returns.
//
//   EMQ_URL=redis://127.0.0.1:6379/ ./hello_cpp
#include <echomq.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace emq {

struct Error : std::runtime_error {
    emq_status status;
    std::string found;  // version fence only
    Error(emq_status s, const emq_error* e)
        : std::runtime_error(e && e->message ? e->message : emq_status_code(s)),
          status(s),
          found(e && e->found ? e->found : "") {}
};

// Call an emq_* function; throw emq::Error on failure (never across the C boundary).
template <typename F>
void check(F&& call) {
    emq_error* raw = nullptr;
    emq_status s = call(&raw);
    std::unique_ptr<emq_error, decltype(&emq_error_free)> err(raw, &emq_error_free);
    if (s != EMQ_OK) throw Error(s, err.get());
}

using Client = std::unique_ptr<emq_client, decltype(&emq_client_free)>;
using Job = std::unique_ptr<emq_job, decltype(&emq_job_free)>;

Client connect(const std::string& url) {
    emq_client* raw = nullptr;
    check([&](emq_error** e) { return emq_connect(url.c_str(), nullptr, &raw, e); });
    return Client(raw, &emq_client_free);
}

}  // namespace emq

int main() {
    const char* env = std::getenv("EMQ_URL");
    std::string url = env ? env : "redis://127.0.0.1:6379/";
    try {
        auto client = emq::connect(url);
        std::string_view text = "hello from C++17";
        emq_enqueued receipt{};
        emq::check([&](emq_error** e) {
            return emq_enqueue(client.get(), "cpp", reinterpret_cast<const uint8_t*>(text.data()),
                               text.size(), &receipt, e);
        });

        emq_job* raw = nullptr;
        emq::check([&](emq_error** e) { return emq_claim(client.get(), "cpp", 30000, &raw, e); });
        emq::Job job(raw, &emq_job_free);
        if (!job) throw std::runtime_error("nothing to claim");
        std::string payload(reinterpret_cast<const char*>(job->payload), job->payload_len);
        emq::check([&](emq_error** e) {
            return emq_complete(client.get(), "cpp", job->id, job->token, e);
        });

        // A stale token is a typed error, not a string to parse.
        try {
            emq::check([&](emq_error** e) {
                return emq_complete(client.get(), "cpp", job->id, job->token, e);
            });
        } catch (const emq::Error& e) {
            if (e.status != EMQ_ERR_GONE) throw;
        }

        uint16_t slot = 0;
        const std::string key = "emq:{cpp}:pending";
        emq::check([&](emq_error** e) {
            return emq_slot(reinterpret_cast<const uint8_t*>(key.data()), key.size(), &slot, e);
        });
        std::cout << "c++: " << receipt.id << " -> \"" << payload << "\" (token " << job->token
                  << ", slot " << slot << ", " << emq_protocol_version() << ")\n";
        return 0;
    } catch (const emq::Error& e) {
        std::cerr << "echomq error " << emq_status_code(e.status) << ": " << e.what() << "\n";
        return 1;
    }
}
