// The local apbasil transport: runs the configured apbasil (an argv, never a
// shell) as a child process per call, on the io_context's event loop.
//
// Each call is a basil::process::AsyncChild (process/async_child.h, which
// says what the child gets: its own process group, default signal
// dispositions, an empty signal mask, no descriptor but its pipes, SIGKILL
// when basild dies, its group recorded in the io_context's ChildGroups
// service): the request on its standard input, stdout and stderr read on
// the loop, the call's timeout as its deadline (which kills the whole
// process group), max_output_bytes as its stdout limit (over it: the group
// killed) and max_stderr_bytes of stderr kept for the diagnostics.
//
// Outcomes: spawn failure, timeout (kTimeout), output over the limit, death
// by a signal, empty or non-XML output, and a non-zero exit without a
// complete-looking XML document are errors (kTransport unless timeout; both
// transient) with the exit status and stderr in the diagnostics (its start,
// escaped, as core/apbasil_output.h's stderr_excerpt shows it). A non-zero
// exit after a complete XML answer is a success whose diagnostics say so (as
// Slurm did: the answer is used, the status logged).
//
// Not thread-safe: use it from the thread that runs the io_context.
#pragma once

#include "basild/asio/asio.h"
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "basild/core/apbasil_output.h"
#include "basild/core/transport.h"

namespace basild {

// What a call's output must be. kXml: an apbasil answer (see the outcomes
// above). kText: any output; the call succeeds when the command exits 0
// (the job-table command, apkill).
enum class LocalOutput : std::uint8_t { kXml, kText };

struct LocalTransportOptions {
  std::vector<std::string> argv{"/usr/bin/apbasil"};  // argv[0] is the path
  LocalOutput output = LocalOutput::kXml;
  std::string label = "apbasil";                      // names the command in errors
  std::size_t max_concurrent = 4;                     // calls running at once
  std::size_t max_output_bytes = std::size_t{1} << 30;  // stdout limit (1 GiB)
  std::size_t max_stderr_bytes = kStderrExcerptBytes;   // kept for diagnostics (the rest counted)
  std::vector<std::string> env_set{};  // "NAME=VALUE" in place of basild's NAME in the child's environment
};

class LocalTransport final : public Transport {
 public:
  LocalTransport(boost::asio::io_context& io, LocalTransportOptions options);
  // Shuts down (see shutdown()).
  ~LocalTransport() override;
  LocalTransport(const LocalTransport&) = delete;
  LocalTransport& operator=(const LocalTransport&) = delete;

  void async_call(std::string request, CallSpec spec, Handler done) override;
  std::string_view name() const override { return "local"; }
  std::size_t running() const override;
  std::size_t queued() const override;

  // Fails queued calls and kills running ones (their handlers still run, on
  // the loop, with kTransport "transport shut down"); later calls fail the
  // same way. Children are reaped on the loop.
  void shutdown();

 private:
  class Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace basild
