// EchoMQ from C++17 with the header-only wrapper <echomq.hpp>: RAII handles, typed
// exceptions, a worker that takes a lambda, its events, and the operator verbs.
//
//   EMQ_URL=redis://127.0.0.1:6379/ ./hello_cpp
#include <echomq.hpp>

#include <atomic>
#include <chrono>
#include <iostream>
#include <string>
#include <thread>

int main() {
    try {
        auto client = echomq::Client::connect();  // EMQ_URL, else redis://127.0.0.1:6379/

        // Produce: text and bytes both go in as echomq::Bytes (pointer + size).
        auto receipt = client.enqueue("cpp", "hello from C++17");
        for (int i = 1; i <= 3; ++i) client.enqueue("cpp", "order " + std::to_string(i));

        // Claim and settle by hand; the Job frees itself.
        if (auto job = client.claim("cpp", 30000)) {
            std::cout << "c++: claimed " << job->id() << " -> \"" << job->payload() << "\"\n";
            client.complete("cpp", *job);
            // A second settle is a typed error, never a string to parse.
            try {
                client.complete("cpp", *job);
            } catch (const echomq::GoneError& e) {
                std::cout << "c++: settling twice -> " << e.code() << "\n";
            }
        }

        // Or let a worker call a lambda: return = complete, throw = retry,
        // throw echomq::Unrecoverable = dead.
        echomq::Worker worker(client, "cpp", [](const echomq::JobView& job) {
            if (job.payload() == "poison") throw echomq::Unrecoverable("cannot parse");
            std::cout << "c++ worker: " << job.payload() << " (token " << job.token() << ")\n";
        });
        // Its events arrive on the worker's threads: count, do not block.
        std::atomic<int> completed{0};
        worker.on_event([&](const echomq::WorkerEvent& e) {
            if (e.kind() == EMQ_EVENT_COMPLETED) ++completed;
        });
        auto poison = client.enqueue("cpp", "poison");
        worker.start();
        // wait_for answers when the job settles: completed, or dead with its error.
        echomq::Settled settled = client.wait_for("cpp", poison.id, 30000);
        std::cout << "c++: poison job -> " << (settled.state == EMQ_SETTLED_DEAD ? "dead" : "?")
                  << " (" << settled.last_error.value_or("") << ")\n";
        while (completed.load() < 3) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        worker.stop();
        worker.join();
        std::cout << "c++: " << receipt.id << " done, " << worker.stats().completed
                  << " by the worker\n";

        // Operator verbs: put the dead job back, then drop what is waiting.
        std::cout << "c++: requeued " << client.requeue_all_dead("cpp") << ", drained "
                  << client.drain("cpp") << "\n";
        std::cout << "c++: libechomq " << echomq::version() << ", "
                  << echomq::protocol_version() << "\n";
        return 0;
    } catch (const echomq::Error& e) {
        std::cerr << "echomq error " << e.code() << ": " << e.what() << "\n";
        return 1;
    }
}
