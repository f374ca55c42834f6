// Exec mode: a channel per call, apbasil (or apkill) run by sshd.
#include <libssh/libssh.h>

#include "basild/conduit/ssh_transport_impl.h"
#include "basild/core/apbasil_output.h"

namespace basild::conduit {

void SshTransport::Impl::start_exec(Job job) {
  const std::vector<std::string> argv = job.apkill ? apkill_argv(*job.apkill) : options.remote_apbasil;
  auto ch = open_exec_channel(session.get(), remote_command_line(argv));
  Status sent;
  if (ch) {
    watch(ch->get());
    sent = write_all(ch->get(), job.request);
    if (sent) ssh_channel_send_eof(ch->get());
  }
  if (!ch || !sent) {
    const Status& e = ch ? sent : ch.status();
    running_count.fetch_sub(1);
    if (!session_alive()) {
      Active a;
      a.job = std::move(job);
      running_count.fetch_add(1);
      active.emplace(a.job.id, std::move(a));
      on_drop(e.message());
      return;
    }
    complete(job, e, {}, {});
    return;
  }
  Active a;
  a.job = std::move(job);
  a.channel = std::move(*ch);
  const auto id = a.job.id;
  active.emplace(id, std::move(a));
}

void SshTransport::Impl::service_exec() {
  std::vector<std::uint64_t> finished;
  for (auto& [id, a] : active) {
    ssh_channel ch = a.channel.get();
    for (int which = 0; which < 2; ++which) {
      bool& eof = which == 0 ? a.out_eof : a.err_eof;
      std::string& into = which == 0 ? a.out : a.err;
      while (!eof) {
        const int n = ssh_channel_read_nonblocking(ch, buf.data(), static_cast<uint32_t>(buf.size()), which);
        if (n > 0) {
          const std::size_t limit = which == 0 ? options.max_output_bytes : options.max_stderr_bytes;
          const std::size_t had = which == 0 ? into.size() + a.job.streamed : into.size();
          if (had + static_cast<std::size_t>(n) > limit) {
            if (which == 0) {
              a.overflow = true;
              eof = a.err_eof = true;
              break;
            }
            continue;  // stderr beyond the limit is dropped
          }
          if (which == 0) {
            take_output(a.job, std::string(buf.data(), static_cast<std::size_t>(n)), into);
          } else {
            into.append(buf.data(), static_cast<std::size_t>(n));
          }
          continue;
        }
        if (n == SSH_EOF || (n == 0 && ssh_channel_is_eof(ch) != 0 && ssh_channel_poll(ch, which) <= 0)) {
          eof = true;
          break;
        }
        if (n == SSH_ERROR) {
          if (!session_alive()) {
            on_drop(session_error(session.get()));
            return;
          }
          eof = a.out_eof = a.err_eof = true;
        }
        break;
      }
    }
    if (a.overflow || (a.out_eof && a.err_eof && (ssh_channel_is_closed(ch) != 0 || ssh_channel_is_eof(ch) != 0)))
      finished.push_back(id);
  }
  for (auto id : finished) {
    auto it = active.find(id);
    if (it == active.end()) continue;
    // The close normally follows the exit status closely.
    if (!it->second.overflow && ssh_channel_is_closed(it->second.channel.get()) == 0) {
      const int r = ssh_channel_poll_timeout(it->second.channel.get(), 0, 0);
      (void)r;
      if (ssh_channel_is_closed(it->second.channel.get()) == 0) continue;
    }
    Active a = std::move(it->second);
    active.erase(it);
    running_count.fetch_sub(1);
    finish_exec(a);
  }
}

void SshTransport::Impl::finish_exec(Active& a) {
  std::string diag;
  Status status;
  if (a.overflow) {
    ssh_channel_request_send_signal(a.channel.get(), "KILL");
    status = Status(Code::kTransport, std::string(a.job.program()) + " output exceeds " +
                                          std::to_string(options.max_output_bytes) + " bytes");
  } else {
    const int code = ssh_channel_get_exit_status(a.channel.get());
    const auto exit_code = code >= 0 ? std::optional<int>(code) : std::nullopt;
    diag = code >= 0 ? "remote exit status " + std::to_string(code) : "no remote exit status";
    status = a.job.apkill ? judge_apkill(exit_code, a.out, a.err)
                          : judge_apbasil_output("remote apbasil", output_of(a.job, a.out), exit_code,
                                                 "exit status " + std::to_string(code));
  }
  if (!a.err.empty()) diag += "; stderr: " + stderr_shown(a.err);
  a.channel.reset();
  complete(a.job, std::move(status), std::move(a.out), std::move(diag));
}

}  // namespace basild::conduit
