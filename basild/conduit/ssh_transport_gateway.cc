// Gateway mode: one long-lived helper on the main system, calls as frames
// over its channel (frames.h).
#include <libssh/libssh.h>

#include "basild/conduit/ssh_transport_impl.h"
#include "basild/core/apbasil_output.h"

namespace basild::conduit {

void SshTransport::Impl::helper_start_failed() {
  helper_delay = helper_delay.count() == 0 ? options.reconnect_min : std::min(helper_delay * 2, options.reconnect_max);
  last_helper_failure = Clock::now();
  next_helper_attempt = last_helper_failure + helper_delay;
}

void SshTransport::Impl::start_helper() {
  helper_ready = false;
  reader.emplace(options.max_output_bytes, options.max_stderr_bytes);
  helper_err.clear();
  std::vector<std::string> argv{options.gateway_helper,
                                "--max-running", std::to_string(options.max_concurrent),
                                "--max-output", std::to_string(options.max_output_bytes),
                                "--max-request", std::to_string(options.max_request_bytes)};
  if (!options.remote_apkill.empty()) {
    argv.insert(argv.end(), {"--apkill", options.remote_apkill.front()});
    for (std::size_t i = 1; i < options.remote_apkill.size(); ++i)
      argv.insert(argv.end(), {"--apkill-arg", options.remote_apkill[i]});
  }
  argv.insert(argv.end(), options.remote_apbasil.begin(), options.remote_apbasil.end());
  auto ch = open_exec_channel(session.get(), remote_command_line(argv));
  {
    std::lock_guard lock(mu);
    ++st.helper_starts;
  }
  if (!ch) {
    if (!session_alive()) {
      on_drop(ch.status().message());
      return;
    }
    down_error = "gateway helper: " + ch.status().message();
    helper_start_failed();
    set_state("down", down_error);
    return;
  }
  helper = std::move(*ch);
  watch(helper.get());
  helper_deadline = Clock::now() + options.ssh.connect_timeout;
}

void SshTransport::Impl::start_gateway_call(Job job) {
  const auto id = job.id;
  const auto frame = job.apkill ? encode_apkill_frame(id, job.apkill->signal, job.apkill->apid)
                                : encode_request_frame(id, job.request);
  Active a;
  a.job = std::move(job);
  active.emplace(id, std::move(a));
  if (auto s = write_all(helper.get(), frame); !s) {
    if (!session_alive()) {
      on_drop(s.message());
      return;
    }
    // The helper's channel failed: treated as the helper dying. This
    // request never reached a helper, so it waits for the next one whatever
    // its method; the others may have been carried out.
    helper.reset();
    helper_ready = false;
    std::vector<Job> jobs = take_active();
    for (auto it = jobs.rbegin(); it != jobs.rend(); ++it) {
      if (it->id == id) {
        queued_count.fetch_add(1);
        waiting.push_front(std::move(*it));
      } else {
        lost(std::move(*it), "gateway helper: " + s.message());
      }
    }
  }
}

// The complete frames the helper sent: greeting, pieces, answers; an error
// when it broke the protocol or reported a fatal error.
Status SshTransport::Impl::take_frames() {
  for (;;) {
    auto f = reader->next();
    if (!f) return f.status();
    if (!*f) return {};
    if (const auto* hello = std::get_if<GatewayHello>(&**f)) {
      if (auto g = greeted(*hello); !g) return g;
      continue;
    }
    if (auto* e = std::get_if<GatewayError>(&**f)) return Status(Code::kTransport, "gateway helper failed: " + e->message);
    if (auto* d = std::get_if<GatewayData>(&**f)) {
      if (auto it = active.find(d->id); it != active.end()) take_output(it->second.job, std::move(d->bytes), it->second.out);
      continue;  // else a call that timed out
    }
    auto& ans = std::get<GatewayAnswer>(**f);
    auto it = active.find(ans.id);
    if (it == active.end()) continue;  // answer to a call that timed out
    Active a = std::move(it->second);
    active.erase(it);
    running_count.fetch_sub(1);
    std::string diag;
    Status status;
    const std::string program = a.job.program();
    switch (ans.how) {
      case ExitHow::kExited:
        diag = "remote exit status " + std::to_string(ans.value);
        break;
      case ExitHow::kSignaled:
        status = Status(Code::kTransport, "remote " + program + " killed by signal " + std::to_string(ans.value));
        break;
      case ExitHow::kSpawnFailed:
        status = Status(Code::kTransport, "gateway helper cannot start " + program + ": " + stderr_shown(ans.err));
        break;
      case ExitHow::kOverflow:
        status = Status(Code::kTransport, program + " output exceeds " + std::to_string(options.max_output_bytes) + " bytes");
        break;
    }
    // The end of stdout: after what D frames brought (version 2 helpers).
    take_output(a.job, std::move(ans.out), a.out);
    if (status.is_ok())
      status = a.job.apkill ? judge_apkill(static_cast<int>(ans.value), a.out, ans.err)
                            : judge_apbasil_output("remote apbasil", output_of(a.job, a.out), static_cast<int>(ans.value),
                                                   "exit status " + std::to_string(ans.value));
    if (!ans.err.empty() && ans.how != ExitHow::kSpawnFailed) diag += "; stderr: " + stderr_shown(ans.err);
    complete(a.job, std::move(status), std::move(a.out), std::move(diag));
  }
}

// The helper's greeting: it is told who this conduit is (version 6 on),
// and to compress its answers when it can; then calls may start.
Status SshTransport::Impl::greeted(const GatewayHello& hello) {
  if (hello.version >= 6 && !options.identity.empty()) {
    if (auto w = write_all(helper.get(), encode_identity_frame(options.identity)); !w) return w;
  }
  // Compression before any request: the calls started below come compressed.
  if (hello.lz4) {
    if (auto z = write_all(helper.get(), encode_lz4_frame()); !z) return z;
    reader->expect_lz4();
  }
  {
    std::lock_guard lock(mu);
    st.helper_version = hello.version;
    st.compression = hello.lz4 ? "lz4" : "none";
  }
  helper_ready = true;
  helper_delay = milliseconds(0);
  down_error.clear();
  set_state("up");
  return Status::ok();
}

void SshTransport::Impl::service_helper() {
  if (!helper) return;
  ssh_channel ch = helper.get();
  // Stderr of the helper: kept for the message if it dies.
  for (;;) {
    const int n = ssh_channel_read_nonblocking(ch, buf.data(), static_cast<uint32_t>(buf.size()), 1);
    if (n <= 0) break;
    if (helper_err.size() < options.max_stderr_bytes) helper_err.append(buf.data(), static_cast<std::size_t>(n));
  }
  // Each read's frames are taken before the next read: a long answer's
  // pieces go on as they come, and a short answer behind them is not held
  // up by more of the long one.
  bool eof = false;
  Status broken;
  for (;;) {
    const int n = ssh_channel_read_nonblocking(ch, buf.data(), static_cast<uint32_t>(buf.size()), 0);
    if (n > 0) {
      reader->feed(std::string_view(buf.data(), static_cast<std::size_t>(n)));
      broken = take_frames();
      if (!broken.is_ok()) break;
      continue;
    }
    if (n == SSH_EOF || n == SSH_ERROR || ssh_channel_is_closed(ch) != 0) eof = true;
    break;
  }
  const bool start_timed_out = !helper_ready && Clock::now() >= helper_deadline;
  if (!eof && broken.is_ok() && !start_timed_out) return;

  // The helper is gone (or misbehaved): figure out why, fail or re-queue its calls, restart it.
  std::string why;
  if (!broken.is_ok()) {
    why = broken.message();
  } else if (start_timed_out) {
    why = "gateway helper did not greet within " + std::to_string(options.ssh.connect_timeout.count()) + " ms";
  } else {
    const int code = ssh_channel_get_exit_status(ch);
    why = "gateway helper exited" + (code >= 0 ? " with status " + std::to_string(code) : std::string());
    if (code == 127) why = "gateway helper " + options.gateway_helper + " missing on the main system (exit 127)";
  }
  if (!helper_err.empty()) why += ": " + stderr_shown(helper_err);
  const bool never_started = !helper_ready;
  helper.reset();
  helper_ready = false;
  std::vector<Job> jobs = take_active();
  if (!session_alive()) {
    for (auto& j : jobs) {
      Active a;
      a.job = std::move(j);
      active.emplace(a.job.id, std::move(a));
    }
    running_count.store(active.size());
    on_drop(session ? session_error(session.get()) : why);
    return;
  }
  if (never_started) {
    if (options.gateway_fallback_exec) {
      use_gateway = false;
      down_error.clear();
      set_state("up", why + "; using exec mode for this session");
    } else {
      down_error = why;
      helper_start_failed();
      set_state("down", why);
    }
  } else {
    next_helper_attempt = Clock::now();  // restart at once
    set_state("up", why + "; restarting it");
  }
  for (auto it = jobs.rbegin(); it != jobs.rend(); ++it) lost(std::move(*it), why);
}

}  // namespace basild::conduit
