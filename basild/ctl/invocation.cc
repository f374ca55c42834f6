#include "basild/ctl/invocation.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>

#include "basild/control_client/url.h"

namespace basilctl {

namespace {

struct CommandSpec {
  std::string_view name;
  std::string_view method;
  std::string_view path;
};

constexpr std::array<CommandSpec, 14> kCommands = {{
    {"health", "GET", "/v1/health"},
    {"stats", "GET", "/v1/stats"},
    {"metrics", "GET", "/metrics"},
    {"inventory", "GET", "/v1/inventory"},
    {"summary", "GET", "/v1/summary"},
    {"nodestat", "GET", "/v1/nodestat"},
    {"reservations", "GET", "/v1/reservations"},
    {"jobs", "GET", "/v1/jobs"},
    {"events", "GET", "/v1/events"},
    {"orphans", "GET", "/v1/orphans"},
    {"reserve", "POST", "/v1/reserve"},
    {"confirm", "POST", "/v1/confirm"},
    {"release", "POST", "/v1/release"},
    {"raw", "POST", "/v1/basil"},
}};

const CommandSpec* find_command(std::string_view name) {
  for (const auto& c : kCommands) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
  });
}

// A reservation id or pagg id: a JSON number when it is one, else a string.
nlohmann::json id_value(const std::string& s) {
  if (all_digits(s) && s.size() <= 19) {
    std::uint64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && p == s.data() + s.size()) return v;
  }
  return s;
}

bool valid_key(std::string_view k) {
  return !k.empty() && std::all_of(k.begin(), k.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.';
  });
}

}  // namespace

const char* usage() {
  return "usage: basilctl [--socket PATH] [--json] [--epoch] [--timeout SECONDS] COMMAND [ARGS]\n"
         "       basilctl --version\n"
         "\n"
         "Commands over the control socket (default /run/basild/control.sock, or $BASILD_SOCKET):\n"
         "  health                     daemon health and why; exit 0 ok, 1 degraded, 2 down,\n"
         "                             3 unknown (basild unreachable), as a Nagios plugin\n"
         "  stats [--chart FILE]       BASIL call timings and counters (like sdiag); a gnuplot chart\n"
         "  metrics                    Prometheus text\n"
         "  inventory                  cached inventory\n"
         "  summary                    cached summary, with its age\n"
         "  nodestat                   the machine as xtnodestat draws it: a mark per node, the\n"
         "                             legend, the reservations by letter\n"
         "  reservations               reservations basild knows\n"
         "  jobs                       the scheduler's jobs as basild knows them\n"
         "  events [--since T] [--limit N]   the newest N (100) events at or after T\n"
         "                             (T: epoch ms, 15m/2h/7d ago, or UTC 2024-05-01[ 13:30])\n"
         "  orphans                    reservations ALPS holds that no job owns\n"
         "  reserve KEY=VALUE|KEY:=JSON...    typed RESERVE (JSON body built from the pairs)\n"
         "  confirm RESID PAGG | KEY=VALUE... typed CONFIRM\n"
         "  release RESID | KEY=VALUE...      typed RELEASE\n"
         "  raw                        BASIL request on stdin -> ALPS response on stdout\n"
         "  plan [JOB OPTIONS]         RESERVE parameters, node count and pending estimate of a job\n"
         "                             (basild's inventory, or --inventory FILE offline); reserves\n"
         "                             nothing; basilctl plan --help lists the job options\n"
         "  slurm-conf [--inventory FILE] [--name-format FMT]\n"
         "             [--topology [--groups auto|yes|no] [--blades auto|yes|no]]\n"
         "                             Slurm's NodeName lines (or topology.conf) from ALPS\n"
         "  slurm-conf [--inventory FILE] [--name-format FMT] --check SLURM_CONF\n"
         "                             name every difference between slurm.conf's nodes and ALPS\n"
         "                             (exit 0 none, 1 differences, 2 trouble)\n"
         "GET commands take KEY=VALUE query parameters (those the route takes; basild refuses\n"
         "others). --body JSON gives a POST body whole.\n"
         "\n"
         "Local commands:\n"
         "  decode [--strict] FILE     decode a BASIL document (FILE may be -), print JSON\n"
         "  replay [--xml] FILE        each exchange of an XML log (XML_LOG) with its timing\n"
         "  replay --stats [--chart FILE] FILE   per-method timings of an XML log (and a chart)\n"
         "\n"
         "Options, before or after the command:\n"
         "  --socket PATH              the control socket\n"
         "  --json                     basild's JSON as it is, for scripts (every field)\n"
         "  --epoch                    tables print times as epoch milliseconds (default: local\n"
         "                             time, ISO 8601 with the zone's offset)\n"
         "  --timeout SECONDS          give up when basild has not answered (default 30)\n"
         "  -h, --help                 this text; plan, slurm-conf and replay --help: theirs\n"
         "  --version                  basilctl's version\n"
         "\n"
         "Exit status: 0 success, 1 basild answered an error, 2 usage error,\n"
         "3 basild unreachable (no socket, refused, timed out).\n";
}

bool is_control_command(std::string_view command) { return find_command(command) != nullptr; }

ParseResult parse_invocation(const std::vector<std::string>& argv, std::string_view env_socket) {
  ParseResult result;
  Invocation inv;
  if (!env_socket.empty()) inv.socket = std::string(env_socket);
  bool after_dashdash = false;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    auto value_of = [&](std::string_view name, std::string& out) -> bool {
      // --name VALUE or --name=VALUE
      std::string prefix = std::string(name) + "=";
      if (a.rfind(prefix, 0) == 0) {
        out = a.substr(prefix.size());
        return true;
      }
      if (i + 1 >= argv.size()) {
        result.error = "option " + std::string(name) + " needs a value";
        return false;
      }
      out = argv[++i];
      return true;
    };
    auto is_opt = [&](std::string_view name) {
      return a == name || a.rfind(std::string(name) + "=", 0) == 0;
    };
    if (!after_dashdash && a == "--") {
      after_dashdash = true;
      continue;
    }
    if (!after_dashdash && is_opt("--socket")) {
      if (!value_of("--socket", inv.socket)) return result;
      if (inv.socket.empty()) {
        result.error = "--socket needs a path";
        return result;
      }
      continue;
    }
    if (!after_dashdash && is_opt("--timeout")) {
      std::string v;
      if (!value_of("--timeout", v)) return result;
      double seconds = 0;
      auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), seconds);
      if (ec != std::errc() || p != v.data() + v.size() || !(seconds > 0) || seconds > 86400) {
        result.error = "--timeout needs a number of seconds in (0, 86400], not '" + v + "'";
        return result;
      }
      inv.timeout = std::chrono::milliseconds(static_cast<long long>(seconds * 1000.0 + 0.5));
      if (inv.timeout.count() == 0) inv.timeout = std::chrono::milliseconds(1);
      continue;
    }
    if (!after_dashdash && a == "--json") {
      inv.json = true;
      continue;
    }
    if (!after_dashdash && a == "--epoch") {
      inv.epoch = true;
      continue;
    }
    if (!after_dashdash && (a == "-h" || a == "--help")) {
      inv.help = true;
      continue;
    }
    if (!after_dashdash && a == "--version") {
      inv.version = true;
      continue;
    }
    if (inv.command.empty()) {
      if (a.size() > 1 && a[0] == '-') {
        result.error = "unknown option '" + a + "'";
        return result;
      }
      inv.command = a;
      continue;
    }
    inv.args.push_back(a);
  }
  if (inv.command.empty() && !inv.help && !inv.version) {
    result.error = "no command given";
    return result;
  }
  if (!inv.command.empty() && inv.command != "decode" && inv.command != "replay" && inv.command != "plan" &&
      inv.command != "slurm-conf" && !is_control_command(inv.command)) {
    result.error = "unknown command '" + inv.command + "'";
    return result;
  }
  result.invocation = std::move(inv);
  return result;
}

PlanResult plan_call(const Invocation& inv) {
  PlanResult result;
  const CommandSpec* spec = find_command(inv.command);
  if (spec == nullptr) {
    result.error = "'" + inv.command + "' is not a control socket command";
    return result;
  }
  HttpCall call;
  call.method = std::string(spec->method);
  std::string path(spec->path);

  if (inv.command == "raw") {
    if (!inv.args.empty()) {
      result.error = "raw takes no arguments (the request is read from stdin)";
      return result;
    }
    call.target = path;
    call.content_type = "application/xml";
    call.raw_output = true;
    call.stdin_body = true;
    result.call = std::move(call);
    return result;
  }

  if (call.method == "GET") {
    std::map<std::string, std::string> query;
    const bool paged = inv.command == "events";
    for (std::size_t i = 0; i < inv.args.size(); ++i) {
      const std::string& a = inv.args[i];
      if (paged && (a == "--since" || a == "--limit")) {
        if (i + 1 >= inv.args.size()) {
          result.error = a + " needs a value";
          return result;
        }
        const std::string& v = inv.args[++i];
        if (a == "--limit" && !all_digits(v)) {
          result.error = "--limit needs a number, not '" + v + "'";
          return result;
        }
        query[a.substr(2)] = v;
        continue;
      }
      auto eq = a.find('=');
      if (a.rfind("-", 0) == 0 || eq == std::string::npos || !valid_key(a.substr(0, eq))) {
        result.error = inv.command + ": unexpected argument '" + a + "' (expected KEY=VALUE" +
                       (paged ? ", --since T or --limit N)" : ")");
        return result;
      }
      query[a.substr(0, eq)] = a.substr(eq + 1);
    }
    std::string target = path;
    char sep = '?';
    for (const auto& [k, v] : query) {
      target += sep;
      target += basild::control::url_encode(k) + "=" + basild::control::url_encode(v);
      sep = '&';
    }
    call.target = std::move(target);
    call.raw_output = inv.command == "metrics";
    result.call = std::move(call);
    return result;
  }

  // reserve / confirm / release: a JSON body.
  nlohmann::json body = nlohmann::json::object();
  std::vector<std::string> positional;
  std::optional<std::string> whole_body;
  for (std::size_t i = 0; i < inv.args.size(); ++i) {
    const std::string& a = inv.args[i];
    if (a == "--body" || a.rfind("--body=", 0) == 0) {
      if (a == "--body") {
        if (i + 1 >= inv.args.size()) {
          result.error = "--body needs a JSON object";
          return result;
        }
        whole_body = inv.args[++i];
      } else {
        whole_body = a.substr(7);
      }
      continue;
    }
    if (a.rfind("-", 0) == 0) {
      result.error = inv.command + ": unknown option '" + a + "'";
      return result;
    }
    auto colon_eq = a.find(":=");
    auto eq = a.find('=');
    if (colon_eq != std::string::npos && colon_eq < eq) {
      std::string key = a.substr(0, colon_eq);
      if (!valid_key(key)) {
        result.error = "bad key in '" + a + "'";
        return result;
      }
      auto v = nlohmann::json::parse(a.substr(colon_eq + 2), nullptr, false);
      if (v.is_discarded()) {
        result.error = "'" + a + "': the value after := is not JSON";
        return result;
      }
      body[key] = std::move(v);
    } else if (eq != std::string::npos) {
      std::string key = a.substr(0, eq);
      if (!valid_key(key)) {
        result.error = "bad key in '" + a + "'";
        return result;
      }
      body[key] = a.substr(eq + 1);
    } else {
      positional.push_back(a);
    }
  }
  if (whole_body) {
    if (!body.empty() || !positional.empty()) {
      result.error = "--body cannot be combined with other arguments";
      return result;
    }
    auto v = nlohmann::json::parse(*whole_body, nullptr, false);
    if (v.is_discarded() || !v.is_object()) {
      result.error = "--body: not a JSON object";
      return result;
    }
    body = std::move(v);
  }
  std::size_t max_positional = inv.command == "confirm" ? 2 : inv.command == "release" ? 1 : 0;
  if (positional.size() > max_positional) {
    result.error = inv.command + ": unexpected argument '" + positional[max_positional] + "'";
    return result;
  }
  if (!positional.empty()) body["reservation_id"] = id_value(positional[0]);
  if (positional.size() > 1) body["pagg_id"] = id_value(positional[1]);
  if (body.empty()) {
    result.error = inv.command + " needs arguments (see basilctl --help)";
    return result;
  }
  call.target = path;
  call.content_type = "application/json";
  try {
    call.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::strict);
  } catch (const nlohmann::json::exception&) {
    result.error = inv.command + ": an argument is not valid UTF-8";
    return result;
  }
  result.call = std::move(call);
  return result;
}

}  // namespace basilctl
