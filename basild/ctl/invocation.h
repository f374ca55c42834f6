// basilctl's command line, parsed strictly (unknown options are errors that
// name the option), and the HTTP call each control command makes. Pure: no
// sockets, no files, no environment (the caller passes BASILD_SOCKET in).
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace basilctl {

inline constexpr const char* kDefaultSocket = "/run/basild/control.sock";

struct Invocation {
  std::string command;                       // "health", "stats", ..., "decode"
  std::string socket = kDefaultSocket;       // --socket, else BASILD_SOCKET, else default
  bool json = false;                         // --json
  bool epoch = false;                        // --epoch: tables print times as epoch milliseconds
  std::chrono::milliseconds timeout{30'000}; // --timeout SECONDS
  std::vector<std::string> args;             // what follows the command, minus global options
  bool help = false;
  bool version = false;                      // --version: print the version, do nothing else
};

// Parses argv[1..]. Global options (--socket, --json, --epoch, --timeout,
// -h/--help, --version) may come before or after the command; `env_socket` is
// BASILD_SOCKET (empty when unset). Returns the invocation or an error message.
struct ParseResult {
  std::optional<Invocation> invocation;
  std::string error;
};
ParseResult parse_invocation(const std::vector<std::string>& argv, std::string_view env_socket);

// The HTTP call of a control command.
struct HttpCall {
  std::string method;        // "GET" / "POST"
  std::string target;        // path + query
  std::string body;
  std::string content_type;  // for POST
  bool raw_output = false;   // print the body as is (metrics, raw)
  bool stdin_body = false;   // the body is stdin (raw): the caller reads it
};

struct PlanResult {
  std::optional<HttpCall> call;
  std::string error;
};

// Commands served over the socket; decode is not one of them.
bool is_control_command(std::string_view command);

// Builds the call from the command and its arguments:
//   GET commands: KEY=VALUE arguments become query parameters; events also
//     takes --since T and --limit N.
//   reserve/confirm/release: KEY=VALUE (a JSON string) and KEY:=JSON (any
//     JSON value) build the JSON body; --body TEXT gives it whole.
//     confirm RESID PAGG and release RESID are shortcuts for
//     reservation_id:=RESID pagg_id:=PAGG.
//   raw: no arguments; the body is stdin.
PlanResult plan_call(const Invocation& inv);

// The usage text.
const char* usage();

}  // namespace basilctl
