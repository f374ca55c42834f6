// basild benchmark: RESERVE+CONFIRM+RELEASE cycles per second
// through basild on the emulated xc30-2256 with 4 concurrent clients, and
// the time basild adds to each call compared with running the emulator
// directly on the same request. Also INVENTORY's decode time apart from its
// transport time (basild's own timings).
//
//   build/bench/basild_bench [SECONDS] [CLIENTS]      (defaults 20, 4)
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "basild/control_client/client.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

std::string g_bin = BASIL_BINARY_DIR;

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double pct(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

// Runs the emulator as apbasil on `xml`; returns the wall time in ms and the output.
double run_emulator(const std::string& state, const std::string& xml, std::string* out) {
  auto t0 = Clock::now();
  auto r = basil_test::run({g_bin + "/emulator/basil-emulator", "--state", state}, xml);
  double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  if (out != nullptr) *out = std::move(r.out);
  return ms;
}

std::string attr(const std::string& xml, const std::string& name) {
  auto p = xml.find(name + "=\"");
  if (p == std::string::npos) return "";
  p += name.size() + 2;
  return xml.substr(p, xml.find('"', p) - p);
}

}  // namespace

int main(int argc, char** argv) {
  int seconds = argc > 1 ? std::atoi(argv[1]) : 20;
  int clients = argc > 2 ? std::atoi(argv[2]) : 4;
  const basil_test::TempDir scratch("basild-bench", "/tmp");  // removed on every way out
  const std::string& dir = scratch.path();
  std::string emu_state = dir + "/emulator";
  if (basil_test::run({g_bin + "/emulator/basil-emulator", "init", "--preset", "xc30-2256", "--state", emu_state})
          .exit_code != 0)
    return 1;
  {
    std::ofstream conf(dir + "/basild.conf");
    conf << "[apbasil]\npath = \"" << g_bin << "/emulator/basil-emulator\"\nargs = [\"--state\", \"" << emu_state
         << "\"]\nmax_concurrent = " << clients << "\n[state]\ndatabase = \"" << dir << "/state.db\"\n[control]\nsocket = \""
         << dir << "/control.sock\"\n[log]\ndirectory = \"" << dir << "\"\n[poll]\ninterval = \"10s\"\n";
  }
  basil_test::Subprocess basild({g_bin + "/basild/basild", "--config", dir + "/basild.conf"},
                                {.err = basil_test::Redirect::file(dir + "/basild.log")});
  if (!basild.started()) return 1;
  std::string sock = dir + "/control.sock";
  for (int i = 0; i < 200; ++i) {
    basild::control::Client c(sock);
    auto r = c.request("GET", "/v1/health", "", "", std::chrono::seconds(2));
    if (r.ok()) {
      auto h = json::parse(r.body, nullptr, false);
      if (h.is_object() && h.contains("inventory_age_s") && h["inventory_age_s"].is_number()) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }

  // ---- cycles through basild
  std::mutex mu;
  std::map<std::string, std::vector<double>> lat;  // ms per call, client side
  std::atomic<std::uint64_t> cycles{0}, errors{0}, seq{0};
  auto deadline = Clock::now() + std::chrono::seconds(seconds);
  std::vector<std::thread> threads;
  for (int t = 0; t < clients; ++t)
    threads.emplace_back([&] {
      basild::control::Client c(sock);
      while (Clock::now() < deadline) {
        std::string batch = "bench-" + std::to_string(seq++);
        auto timed = [&](const char* name, const std::string& path, const json& body) -> json {
          auto t0 = Clock::now();
          auto r = c.request("POST", path, body.dump(), "application/json", std::chrono::seconds(60));
          double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
          if (!r.ok() || r.status != 200) {
            ++errors;
            return json();
          }
          std::lock_guard<std::mutex> lock(mu);
          lat[name].push_back(ms);
          return json::parse(r.body, nullptr, false);
        };
        auto res = timed("RESERVE", "/v1/reserve",
                         {{"batch_id", batch}, {"user", "bench"}, {"params", {{{"width", 64}, {"nppn", 32}}}}});
        if (!res.is_object() || !res.contains("reservation_id")) continue;
        auto id = res["reservation_id"].get<std::uint64_t>();
        timed("CONFIRM", "/v1/confirm", {{"reservation_id", id}, {"pagg_id", 1000 + id}});
        timed("RELEASE", "/v1/release", {{"reservation_id", id}});
        ++cycles;
      }
    });
  for (auto& t : threads) t.join();

  basild::control::Client c(sock);
  auto stats = json::parse(c.request("GET", "/v1/stats", "", "", std::chrono::seconds(5)).body, nullptr, false);
  basild.signal(SIGTERM);
  basild.wait();

  // ---- the same requests, emulator run directly, at the same concurrency
  std::map<std::string, std::vector<double>> direct;
  std::atomic<int> direct_seq{0};
  std::vector<std::thread> direct_threads;
  for (int t = 0; t < clients; ++t)
    direct_threads.emplace_back([&] {
      std::map<std::string, std::vector<double>> mine;
      for (int i = direct_seq++; i < 40 * clients; i = direct_seq++) {
        std::string out;
        mine["RESERVE"].push_back(run_emulator(emu_state,
            "<?xml version=\"1.0\"?>\n<BasilRequest protocol=\"1.3\" method=\"RESERVE\">\n <ReserveParamArray user_name=\"bench\" "
            "batch_id=\"direct-" + std::to_string(i) + "\">\n  <ReserveParam architecture=\"XT\" width=\"64\" nppn=\"32\"/>\n"
            " </ReserveParamArray>\n</BasilRequest>\n", &out));
        std::string id = attr(out, "reservation_id");
        mine["CONFIRM"].push_back(run_emulator(emu_state, "<?xml version=\"1.0\"?>\n<BasilRequest protocol=\"1.3\" "
            "method=\"CONFIRM\" reservation_id=\"" + id + "\" pagg_id=\"77\"/>\n", nullptr));
        mine["RELEASE"].push_back(run_emulator(emu_state, "<?xml version=\"1.0\"?>\n<BasilRequest protocol=\"1.3\" "
            "method=\"RELEASE\" reservation_id=\"" + id + "\"/>\n", nullptr));
      }
      std::lock_guard<std::mutex> lock(mu);
      for (auto& [k, v] : mine) direct[k].insert(direct[k].end(), v.begin(), v.end());
    });
  for (auto& t : direct_threads) t.join();

  std::printf("basild on emulated xc30-2256, %d clients, %d s\n", clients, seconds);
  std::printf("cycles (RESERVE+CONFIRM+RELEASE): %llu in %d s = %.1f cycles/s, errors %llu\n",
              static_cast<unsigned long long>(cycles.load()), seconds, static_cast<double>(cycles.load()) / seconds,
              static_cast<unsigned long long>(errors.load()));
  std::printf("\n%-8s %8s %12s %12s %14s %14s %14s %14s\n", "method", "calls", "client p50", "client p95",
              "transport p50", "added p50", "direct p50", "vs direct");
  std::map<std::string, double> transport_p50, decode_p50;
  if (stats.contains("calls"))
    for (const auto& k : stats["calls"]) {
      transport_p50[k["kind"].get<std::string>()] = k["transport"]["p50"].get<double>() * 1000;
      decode_p50[k["kind"].get<std::string>()] = k["decode"]["p50"].get<double>() * 1000;
    }
  for (const char* m : {"RESERVE", "CONFIRM", "RELEASE"}) {
    double client50 = median(lat[m]);
    std::printf("%-8s %8zu %10.2fms %10.2fms %12.2fms %12.3fms %12.2fms %12.3fms\n", m, lat[m].size(), client50,
                pct(lat[m], 0.95), transport_p50[m], client50 - transport_p50[m], median(direct[m]),
                client50 - median(direct[m]));
  }
  std::printf("\n'added' = client-observed median minus basild's median apbasil round trip for the same method\n"
              "(the control socket, JSON, the state database commits and the XML codec).\n"
              "'direct' = the emulator run directly on the same requests by as many threads as clients;\n"
              "'vs direct' = client median minus direct median.\n");
  if (transport_p50.count("INVENTORY"))
    std::printf("\nINVENTORY (polls): transport p50 %.2f ms, decode p50 %.2f ms\n", transport_p50["INVENTORY"],
                decode_p50["INVENTORY"]);
  return 0;
}
