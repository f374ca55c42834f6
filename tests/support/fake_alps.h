// Fakes of the daemon's ports for unit tests without processes or sockets:
// an apbasil transport that answers each request with a function of it
// (and records what it was asked), a clock the test sets, an apkill that
// records its calls, and a job-table source that answers what it is told.
// Completion handlers run on the io_context, never inside the call.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "basil_proto/codec.h"
#include "basild/core/apkill_port.h"
#include "basild/asio/asio.h"
#include "basild/core/clock.h"
#include "basild/core/job_table.h"
#include "basild/core/transport.h"

namespace basild::testing {

// An answer encoded at the request's protocol.
inline CallOutcome answer_with(const basil::Request& req, basil::ResponseBody body) {
  basil::Response r;
  r.protocol = req.protocol;
  r.dialect = req.dialect;
  r.method = req.method();
  r.body = std::move(body);
  CallOutcome o;
  auto xml = basil::encode_response(r);
  if (xml) {
    o.response = *xml;
  } else {
    o.status = basil::Status(basil::Code::kInternal, "fake: " + xml.status().message());
  }
  return o;
}

inline CallOutcome engine_answer(const basil::Request& req) {
  basil::EngineInfo e;
  e.version = "5.2.44";
  e.basil_support = {"1.3", "1.2", "1.1", "1.0"};
  return answer_with(req, e);
}

class FakeAlps final : public Transport {
 public:
  using Answer = std::function<CallOutcome(const basil::Request&)>;
  FakeAlps(boost::asio::io_context& io, Answer answer) : io_(io), answer_(std::move(answer)) {}

  void async_call(std::string request, CallSpec, Handler done) override {
    CallOutcome o;
    auto decoded = basil::decode_request(request);
    if (!decoded) {
      o.status = basil::Status(basil::Code::kTransport, "fake: undecodable request");
    } else {
      requests.push_back(*decoded);
      o = answer_(*decoded);
    }
    boost::asio::post(io_, [d = std::move(done), o = std::move(o)]() mutable { d(std::move(o)); });
  }
  std::string_view name() const override { return "fake"; }
  std::size_t running() const override { return 0; }
  std::size_t queued() const override { return 0; }

  // The requests of one method, in order.
  std::vector<basil::Request> of(basil::Method m) const {
    std::vector<basil::Request> out;
    for (const auto& r : requests)
      if (r.method() == m) out.push_back(r);
    return out;
  }

  std::vector<basil::Request> requests;

 private:
  boost::asio::io_context& io_;
  Answer answer_;
};

class FakeClock final : public ClockPort {
 public:
  std::chrono::system_clock::time_point wall() const override { return wall_; }
  std::chrono::steady_clock::time_point steady() const override { return steady_; }
  void advance(std::chrono::milliseconds d) {
    wall_ += d;
    steady_ += d;
  }

 private:
  std::chrono::system_clock::time_point wall_ = std::chrono::system_clock::now();
  std::chrono::steady_clock::time_point steady_ = std::chrono::steady_clock::now();
};

class FakeApkill final : public ApkillPort {
 public:
  explicit FakeApkill(boost::asio::io_context& io) : io_(io) {}
  void apkill(std::uint64_t apid, int signal, Done done) override {
    calls.emplace_back(apid, signal);
    boost::asio::post(io_, [done = std::move(done)] { done(CallOutcome{}); });
  }
  std::vector<std::pair<std::uint64_t, int>> calls;

 private:
  boost::asio::io_context& io_;
};

// Jobs `ids`, each RUNNING, as a source lists them.
inline std::vector<ListedJob> running_jobs(const std::vector<std::string>& ids) {
  std::vector<ListedJob> jobs;
  for (const auto& id : ids) jobs.push_back({id, "RUNNING"});
  return jobs;
}

class FakeJobSource final : public JobSourcePort {
 public:
  FakeJobSource(boost::asio::io_context& io, std::string name) : io_(io), name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  void fetch(Done done) override {
    ++fetches;
    boost::asio::post(io_, [done = std::move(done), r = next] { done(r); });
  }
  basil::Result<std::vector<ListedJob>> next = std::vector<ListedJob>{};
  int fetches = 0;

 private:
  boost::asio::io_context& io_;
  std::string name_;
};

}  // namespace basild::testing
