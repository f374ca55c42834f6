// Control socket load: basild on the emulated xc30-2256, polling
// every second and serving a reservation loop, while this process (a second
// process, as the issue asks) sends RATE requests per second for SECONDS
// (health, stats and summary in turn, plus the full inventory at 10/s), then
// opens IDLE connections that send nothing and waits for the header timeout
// to close them.
//
//   build/bench/control_load [SECONDS] [RATE] [IDLE]     (defaults 60, 1000, 1000)
//   build/bench/control_load --views [CLIENTS]           (default 1000)
//
// --views: CLIENTS connections ask for GET /v1/inventory (480 KB on the
// xc30-2256) at once and read their answers, while one more asks for
// /v1/health every 50 ms; prints the health latencies meanwhile, the time
// until every answer was read, basild's VmRSS before and at its highest,
// and the most response bytes basild held (basild_control_queued_bytes).
// BASIL_BENCH_BIN=DIR runs the basild and emulator of another build tree
// (to compare with a build before a change).
//
// Prints p50/p99/max latency per route, errors, the achieved rate, basild's
// peak memory (VmHWM) and descriptor counts, and how the idle connections
// were accepted and closed. Exit status 1 when any request failed or an idle
// connection was refused or left open.
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "basild/control_client/client.h"
#include "tests/support/files.h"
#include "tests/support/proc.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"
#include "tests/support/unix_socket.h"

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;
using namespace std::chrono_literals;
using basil_test::open_fds;
using basil_test::status_kib;

const std::string g_bin = std::getenv("BASIL_BENCH_BIN") != nullptr ? std::getenv("BASIL_BENCH_BIN") : BASIL_BINARY_DIR;

double pct(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

json get_json(const std::string& sock, const std::string& path) {
  basild::control::Client c(sock);
  auto r = c.request("GET", path, "", "", 10s);
  return r.ok() ? json::parse(r.body, nullptr, false) : json();
}

}  // namespace

// basild on a fresh emulated xc30-2256 in `dir`, its control socket open
// and its first INVENTORY and SUMMARY in; `control` is added to [control].
bool start_basild(basil_test::Subprocess& process, const std::string& dir, const std::string& control) {
  const std::string emu_state = dir + "/emulator";
  if (basil_test::run({g_bin + "/emulator/basil-emulator", "init", "--preset", "xc30-2256", "--state", emu_state})
          .exit_code != 0)
    return false;
  {
    std::ofstream conf(dir + "/basild.conf");
    conf << "[apbasil]\npath = \"" << g_bin << "/emulator/basil-emulator\"\nargs = [\"--state\", \"" << emu_state
         << "\"]\n[state]\ndatabase = \"" << dir << "/state.db\"\n[control]\nsocket = \"" << dir << "/control.sock\"\n"
         << control << "[log]\ndirectory = \"" << dir
         << "\"\n[poll]\nmode = \"summary-hybrid\"\ninterval = \"1s\"\ninventory_max_age = \"10s\"\n";
  }
  process = basil_test::Subprocess({g_bin + "/basild/basild", "--config", dir + "/basild.conf"},
                                   {.err = basil_test::Redirect::file(dir + "/basild.log")});
  if (!process.started()) return false;
  const std::string sock = dir + "/control.sock";
  for (int i = 0; i < 300; ++i) {
    auto h = get_json(sock, "/v1/health");
    auto summary = get_json(sock, "/v1/summary");
    if (h.is_object() && h["inventory_age_s"].is_number() && summary.is_object() && !summary.contains("error"))
      return true;
    std::this_thread::sleep_for(100ms);
  }
  return false;
}

// One client of the views campaign: its request sent, its answer read as
// it comes (non-blocking), done at end of file or once Content-Length
// bytes of body are in.
struct ViewClient {
  int fd = -1;
  std::string got;
  bool done = false;
  bool ok = false;
  void read_some() {
    char buf[65536];
    const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
      done = true;
      return;
    }
    if (n > 0) got.append(buf, static_cast<std::size_t>(n));
    const auto head = got.find("\r\n\r\n");
    const auto cl = got.find("Content-Length: ");
    if (head == std::string::npos || cl == std::string::npos) return;
    if (got.size() >= head + 4 + std::stoul(got.substr(cl + 16))) {
      done = true;
      ok = got.rfind("HTTP/1.1 200", 0) == 0;
    }
  }
};

int views_campaign(int clients) {
  const basil_test::TempDir scratch("basild-views", "/tmp");
  basil_test::Subprocess process;
  if (!start_basild(process, scratch.path(), "max_connections = " + std::to_string(clients + 64) + "\n")) return 1;
  const pid_t basild = process.pid();
  const std::string sock = scratch.path() + "/control.sock";
  const long rss_before = status_kib(basild, "VmRSS:");
  std::atomic<bool> running{true};
  std::atomic<long> rss_peak{rss_before};
  std::vector<double> health_ms;
  std::uint64_t health_errors = 0;
  std::thread health([&] {
    basild::control::Client c(sock);
    while (running) {
      const auto t0 = Clock::now();
      auto r = c.request("GET", "/v1/health", "", "", 60s);
      health_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      // Answered at all (200 ok, 429 degraded, 503 down) is what is measured.
      if (!r.ok() || (r.status != 200 && r.status != 429 && r.status != 503)) ++health_errors;
      rss_peak = std::max(rss_peak.load(), status_kib(basild, "VmRSS:"));
      std::this_thread::sleep_for(50ms);
    }
  });
  const auto t0 = Clock::now();
  std::vector<ViewClient> views(static_cast<std::size_t>(clients));
  const std::string get = "GET /v1/inventory HTTP/1.1\r\nHost: basild\r\nConnection: close\r\n\r\n";
  for (auto& v : views) {
    v.fd = basil_test::connect_unix(sock);
    if (v.fd < 0 || ::send(v.fd, get.data(), get.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(get.size())) v.done = true;
  }
  std::size_t left = views.size();
  while (left > 0 && Clock::now() - t0 < 300s) {
    std::vector<pollfd> fds;
    std::vector<ViewClient*> who;
    for (auto& v : views)
      if (!v.done) fds.push_back({v.fd, POLLIN, 0}), who.push_back(&v);
    if (::poll(fds.data(), fds.size(), 100) <= 0) continue;
    left = 0;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents != 0) who[i]->read_some();
      if (!who[i]->done) ++left;
    }
  }
  const double all_s = std::chrono::duration<double>(Clock::now() - t0).count();
  running = false;
  health.join();
  std::size_t good = 0;
  for (auto& v : views) {
    good += v.ok ? 1 : 0;
    if (v.fd >= 0) ::close(v.fd);
  }
  basild::control::Client c(sock);
  const auto metrics = c.request("GET", "/metrics", "", "", 10s);
  const auto peak_at = metrics.body.find("\nbasild_control_queued_bytes_peak ");
  const std::string queued_peak = peak_at == std::string::npos ? "(no gauge)" : metrics.body.substr(peak_at + 34, 12);
  std::printf("views: %d clients, %zu answers of 200 read in %.2f s; health n=%zu p50=%.1f ms max=%.1f ms errors=%llu\n",
              clients, good, all_s, health_ms.size(), pct(health_ms, 0.5), pct(health_ms, 1.0),
              static_cast<unsigned long long>(health_errors));
  std::printf("  basild VmRSS %ld KiB before, %ld KiB at most meanwhile (VmHWM %ld KiB); queued_bytes_peak %s\n",
              rss_before, rss_peak.load(), status_kib(basild, "VmHWM:"), queued_peak.substr(0, queued_peak.find('\n')).c_str());
  std::printf("  (load average %s)\n", basil_test::read_file("/proc/loadavg").substr(0, 14).c_str());
  process.signal(SIGTERM);
  process.wait();
  return good == views.size() && health_errors == 0 ? 0 : 1;
}

int main(int argc, char** argv) {
  const int seconds = argc > 1 ? std::atoi(argv[1]) : 60;
  const int rate = argc > 2 ? std::atoi(argv[2]) : 1000;
  const int idle = argc > 3 ? std::atoi(argv[3]) : 1000;
  const auto idle_timeout = 5s;

  // The unit's LimitNOFILE, for basild (inherited) and for this process.
  rlimit nofile{65536, 65536};
  if (::setrlimit(RLIMIT_NOFILE, &nofile) != 0) {
    ::getrlimit(RLIMIT_NOFILE, &nofile);
    nofile.rlim_cur = nofile.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &nofile);
  }
  std::printf("descriptor limit %llu\n", static_cast<unsigned long long>(nofile.rlim_cur));
  if (argc > 1 && std::string(argv[1]) == "--views") return views_campaign(argc > 2 ? std::atoi(argv[2]) : 1000);

  const basil_test::TempDir scratch("basild-load", "/tmp");  // removed on every way out
  const std::string& dir = scratch.path();
  basil_test::Subprocess process;
  // A connection that sends nothing is closed by the header timeout before
  // its first request: both set to the same.
  if (!start_basild(process, dir,
                    "idle_timeout = \"" + std::to_string(idle_timeout.count()) + "s\"\nheader_timeout = \"" +
                        std::to_string(idle_timeout.count()) + "s\"\nmax_connections = " + std::to_string(idle + 64) +
                        "\n"))
    return 1;
  const pid_t basild = process.pid();
  const std::string sock = dir + "/control.sock";
  int status = 0;

  // ---- load
  std::mutex mu;
  std::map<std::string, std::vector<double>> lat;  // ms, by route
  std::map<std::string, std::uint64_t> errors;
  std::atomic<std::uint64_t> sent{0}, reservations{0};
  std::atomic<bool> running{true};
  const auto start = Clock::now();
  const auto end = start + std::chrono::seconds(seconds);
  auto timed = [&](basild::control::Client& c, const char* method, const std::string& path, const std::string& body) {
    auto t0 = Clock::now();
    auto r = c.request(method, path, body, body.empty() ? "" : "application/json", 10s);
    double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    std::lock_guard lock(mu);
    if (!r.ok() || r.status != 200) {
      ++errors[path];
      return json();
    }
    lat[path].push_back(ms);
    return json::parse(r.body, nullptr, false);
  };
  // Paced workers: each owns 1/workers of the rate, on its own connection.
  const int workers = 8;
  const char* mix[] = {"/v1/health", "/v1/stats", "/v1/summary"};
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w)
    threads.emplace_back([&, w] {
      basild::control::Client c(sock);
      const auto period = std::chrono::nanoseconds(1'000'000'000LL * workers / std::max(rate, 1));
      auto next = start + period * w / workers;
      for (auto n = static_cast<std::size_t>(w); Clock::now() < end; n += static_cast<std::size_t>(workers)) {
        std::this_thread::sleep_until(next);
        next += period;
        timed(c, "GET", mix[n % 3], "");
        ++sent;
      }
    });
  threads.emplace_back([&] {  // the full inventory at 10/s
    basild::control::Client c(sock);
    for (auto next = start; Clock::now() < end; next += 100ms) {
      std::this_thread::sleep_until(next);
      timed(c, "GET", "/v1/inventory", "");
      ++sent;
    }
  });
  threads.emplace_back([&] {  // reservations go on meanwhile
    basild::control::Client c(sock);
    for (std::uint64_t n = 0; Clock::now() < end; ++n) {
      auto r = timed(c, "POST", "/v1/reserve",
                     json{{"batch_id", "load-" + std::to_string(n)}, {"user", "load"}, {"params", {{{"width", 32}}}}}.dump());
      if (r.is_object() && r.contains("reservation_id")) {
        timed(c, "POST", "/v1/release", json{{"reservation_id", r["reservation_id"]}}.dump());
        ++reservations;
      }
    }
  });
  for (auto& t : threads) t.join();
  const double took = std::chrono::duration<double>(Clock::now() - start).count();
  auto stats = get_json(sock, "/v1/stats");
  std::printf("load: %d s, %.0f requests/s achieved (%llu requests), %llu reserve+release cycles, %llu polls\n",
              seconds, static_cast<double>(sent.load()) / took, static_cast<unsigned long long>(sent.load()),
              static_cast<unsigned long long>(reservations.load()),
              static_cast<unsigned long long>(stats.value("polls", 0)));
  std::printf("  (load average %s)\n", basil_test::read_file("/proc/loadavg").substr(0, 14).c_str());
  std::uint64_t total_errors = 0;
  for (auto& [path, n] : errors) lat[path];  // routes that only failed are listed too
  for (auto& [path, v] : lat)
    std::printf("  %-14s n=%-7zu p50=%.3f ms  p99=%.3f ms  max=%.3f ms  errors=%llu\n", path.c_str(), v.size(), pct(v, 0.5),
                pct(v, 0.99), pct(v, 1.0), static_cast<unsigned long long>(errors[path]));
  for (auto& [path, n] : errors) total_errors += n;
  std::printf("  errors total %llu; basild VmHWM %ld KiB, VmRSS %ld KiB, %d descriptors\n",
              static_cast<unsigned long long>(total_errors), status_kib(basild, "VmHWM:"), status_kib(basild, "VmRSS:"),
              open_fds(basild));
  if (total_errors != 0) status = 1;

  // ---- idle connections
  const int fds_before = open_fds(basild);
  std::vector<int> fds;
  const auto t_open = Clock::now();
  for (int i = 0; i < idle; ++i) {
    int fd = basil_test::connect_unix(sock);
    if (fd < 0) break;
    fds.push_back(fd);
  }
  // Accepted: the daemon counts them open (and still answers meanwhile).
  json open_now;
  for (int i = 0; i < 100; ++i) {
    open_now = get_json(sock, "/v1/stats")["control"];
    if (open_now.is_object() && open_now.value("connections_open", 0) >= static_cast<int>(fds.size())) break;
    std::this_thread::sleep_for(20ms);
  }
  const double accept_s = std::chrono::duration<double>(Clock::now() - t_open).count();
  const int fds_open = open_fds(basild);
  std::printf("idle: %zu of %d connected, %llu open in basild after %.2f s (%d descriptors, %d before), VmRSS %ld KiB\n",
              fds.size(), idle, static_cast<unsigned long long>(open_now.value("connections_open", 0)), accept_s, fds_open,
              fds_before, status_kib(basild, "VmRSS:"));
  if (static_cast<int>(fds.size()) != idle || open_now.value("connections_open", 0) < idle) status = 1;
  // Closed by the idle timeout: every socket reads end of file.
  std::size_t closed = 0;
  const auto limit = Clock::now() + idle_timeout + 10s;
  std::vector<bool> done(fds.size(), false);
  double last_close_s = 0;
  while (closed < fds.size() && Clock::now() < limit) {
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (done[i]) continue;
      pollfd p{fds[i], POLLIN, 0};
      if (::poll(&p, 1, 0) == 1) {
        char c;
        if (::read(fds[i], &c, 1) <= 0) {
          done[i] = true;
          ++closed;
          last_close_s = std::chrono::duration<double>(Clock::now() - t_open).count();
        }
      }
    }
    std::this_thread::sleep_for(50ms);
  }
  for (int fd : fds) ::close(fd);
  auto after = get_json(sock, "/v1/stats")["control"];
  std::printf("idle: %zu of %zu closed by basild, the last %.2f s after opening (header_timeout %lld s); header_timeouts=%llu, "
              "connections_peak=%llu, %d descriptors after\n",
              closed, fds.size(), last_close_s, static_cast<long long>(idle_timeout.count()),
              static_cast<unsigned long long>(after.value("header_timeouts", 0)),
              static_cast<unsigned long long>(after.value("connections_peak", 0)), open_fds(basild));
  if (closed != fds.size()) status = 1;

  process.signal(SIGTERM);
  process.wait();
  return status;
}
