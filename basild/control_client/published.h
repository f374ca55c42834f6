// What basild publishes beside its control socket for the programs that
// call it for a scheduler (apbasil_proxy, apkill_proxy): they read no
// basild.conf. SOCKET.json (published_path), written by basild when it
// starts:
//   {"config": "/etc/basild/basild.conf", "wait_ms": 125000, "max_output_bytes": 268435456}
// config: basild's configuration, which the proxy's fallback reads for its
// own ssh session; wait_ms: how long a call through basild may take (its
// queue and apbasil's time-out: twice [apbasil] timeout, and 5 s);
// max_output_bytes: [apbasil] max_output_bytes, the most a caller passes on.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "basil_proto/status.h"

namespace basild::control {

struct Published {
  std::string config = "/etc/basild/basild.conf";
  std::chrono::milliseconds wait{125'000};  // basild's defaults: a 60-s apbasil time-out
  std::uint64_t max_output_bytes = std::uint64_t{256} << 20;
  bool operator==(const Published&) const = default;
};

// How long a caller waits for basild to answer a call, given [apbasil]
// timeout: twice it (the queue and the call) and 5 s.
inline std::chrono::milliseconds published_wait(std::chrono::milliseconds apbasil_timeout) {
  return apbasil_timeout * 2 + std::chrono::seconds(5);
}

// The control socket a caller uses when told none: basild.conf's default.
inline constexpr std::string_view kDefaultSocket = "/run/basild/control.sock";

std::string published_path(std::string_view socket);
std::string encode_published(const Published& p);
// Unknown keys are ignored (a later basild may publish more); a known key
// of the wrong type or range is an error.
basil::Result<Published> decode_published(std::string_view json);

// Reads what basild published beside `socket` (also when basild stopped and
// the socket is gone): only a regular file owned by its folder's owner (or
// root) that nobody else may write, opened without blocking (a FIFO or
// another user's file there is never read, nor waited on); an error says
// why it was not taken.
basil::Result<Published> read_published(const std::string& socket);
// Writes it beside `socket`, mode 0644, replacing the last atomically.
basil::Status write_published(const std::string& socket, const Published& p);

}  // namespace basild::control
