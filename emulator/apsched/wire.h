// The emulated apsched's local protocol: one JSON object a line each way,
// between the daemon and its clients (aprun, apkill). Pure: messages to
// lines and back; the sockets are in socket.h, the daemon in daemon.h.
//
//   aprun  -> {"op":"run","resid":R,"n":N,"N":P,"d":D,"j":J,"argv":[...],"cwd":"...","env":[...]}
//             (with its descriptors 0, 1 and 2 attached, SCM_RIGHTS)
//   daemon -> {"reply":"started","apid":A}, later {"reply":"done","status":S,"text":"..."}
//             or {"reply":"refused","text":"..."}
//   apkill -> {"op":"kill","apid":A,"signal":S}
//   daemon -> {"reply":"ok"} | {"reply":"unknown"} | {"reply":"refused","text":"..."}
//   apbasil mode, after a SWITCH -> {"op":"sync"}: the daemon reads the state
//             again and stops or continues its applications as their
//             reservations are switched out or in (it trusts the state, not
//             the message); daemon -> {"reply":"ok"}
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "basil_proto/status.h"
#include "emulator/core/claim.h"

namespace emu::apsched {

struct RunRequest {
  std::uint64_t reservation_id = 0;
  Shape shape;
  std::vector<std::string> argv;  // argv[0]: the program's absolute path
  std::string cwd;
  std::vector<std::string> env;   // NAME=VALUE, aprun's environment
  bool operator==(const RunRequest&) const = default;
};

struct KillRequest {
  std::uint64_t application_id = 0;
  int signal = 15;
  bool operator==(const KillRequest&) const = default;
};

struct SyncRequest {
  bool operator==(const SyncRequest&) const = default;
};

using Request = std::variant<RunRequest, KillRequest, SyncRequest>;

enum class ReplyKind : std::uint8_t { kStarted, kDone, kRefused, kOk, kUnknown };

struct Reply {
  ReplyKind kind = ReplyKind::kOk;
  std::uint64_t application_id = 0;  // kStarted
  int status = 0;                    // kDone: aprun's exit status
  std::string text;                  // kDone: the line for stderr ("" for none); kRefused: the sentence
  bool operator==(const Reply&) const = default;
};

// One line each, ending in '\n'.
std::string encode(const Request& request);
std::string encode(const Reply& reply);

// A line (with or without its '\n'); kInvalidValue saying what is wrong.
basil::Result<Request> decode_request(std::string_view line);
basil::Result<Reply> decode_reply(std::string_view line);

// The longest line either side accepts.
inline constexpr std::size_t kMaxLine = 1 << 20;

}  // namespace emu::apsched
