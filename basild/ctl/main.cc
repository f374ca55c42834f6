// basilctl: the command-line tool of basild.
//   basilctl decode [--strict] FILE    decode any BASIL document, print JSON
//   basilctl slurm-conf ...            Slurm's node lines and topology.conf from ALPS
//   basilctl [--socket PATH] [--json] COMMAND ...   talk to basild's control socket
// Parsing and planning (ctl/invocation.h) and the tables (ctl/format.h) are
// pure; this file only does the I/O.
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "basild/control_client/client.h"
#include "basild/core/xml_log_format.h"
#include "basild/ctl/decode_summary.h"
#include "basild/ctl/format.h"
#include "basild/ctl/format_events.h"
#include "basild/ctl/invocation.h"
#include "basild/ctl/nodestat.h"
#include "basild/ctl/plan.h"
#include "basild/ctl/slurm_conf_cmd.h"
#include "basild/ctl/timing_report.h"
#include "basild/core/job_json.h"

namespace {

constexpr const char* kDecodeUsage = "usage: basilctl decode [--strict] FILE\n";

constexpr int kExitOk = 0;
constexpr int kExitError = 1;
constexpr int kExitUsage = 2;
constexpr int kExitUnreachable = 3;

// The terminal's columns when standard output is one (else $COLUMNS, else
// 0: no limit, for a pipe or a file).
std::size_t terminal_width() {
  winsize w{};
  if (::isatty(STDOUT_FILENO) && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 0) return w.ws_col;
  const char* columns = std::getenv("COLUMNS");
  const long n = columns != nullptr ? std::strtol(columns, nullptr, 10) : 0;
  return n > 0 ? static_cast<std::size_t>(n) : 0;
}

// How the tables write a time: local ISO 8601, or with --epoch as basild
// gives it, milliseconds since the epoch.
basilctl::TimeText time_text_of(const basilctl::Invocation& inv) {
  if (inv.epoch) return [](std::int64_t ms) { return std::to_string(ms); };
  return basilctl::local_time_text;
}

int cmd_decode(const std::vector<std::string>& args) {
  basil::DecodeOptions options;
  std::string file;
  for (const auto& a : args) {
    if (a == "--strict") {
      options.strict = true;
    } else if (file.empty() && (a == "-" || a.rfind("-", 0) != 0)) {
      file = a;
    } else {
      std::cerr << kDecodeUsage;
      return 2;
    }
  }
  if (file.empty()) {
    std::cerr << kDecodeUsage;
    return 2;
  }
  std::FILE* in = file == "-" ? stdin : std::fopen(file.c_str(), "rb");
  if (in == nullptr) {
    std::cerr << file << ": " << std::strerror(errno) << "\n";
    return 1;
  }
  // Stream the document through the decoder in 64 KiB chunks.
  basil::Decoder decoder(options);
  std::vector<char> buf(64 * 1024);
  basil::Status fed;
  while (fed.is_ok()) {
    std::size_t n = std::fread(buf.data(), 1, buf.size(), in);
    if (n == 0) break;
    fed = decoder.feed(std::string_view(buf.data(), n));
  }
  bool read_error = std::ferror(in) != 0;
  if (in != stdin) std::fclose(in);
  if (read_error) {
    std::cerr << file << ": read error\n";
    return 1;
  }
  auto result = decoder.finish();
  if (!result) {
    const auto& s = result.status();
    std::cerr << file << ':' << s.line() << ':' << s.column() << ": " << s.message();
    if (!s.path().empty()) std::cerr << " (at " << s.path() << ')';
    std::cerr << '\n';
    return 1;
  }
  std::cout << basilctl::summarize(*result).dump() << '\n';
  return 0;
}

// basilctl health: the answer printed whatever its HTTP status (200 ok,
// 429 degraded, 503 down), and the exit status a Nagios plugin's.
int cmd_health(const basilctl::Invocation& inv, const basilctl::HttpCall& call) {
  auto reply = basild::control::request_once(inv.socket, call.method, call.target, "", "", inv.timeout);
  if (!reply.ok()) {
    std::cerr << "basilctl: " << reply.message << "\n";
    return basilctl::kHealthUnknown;
  }
  auto doc = nlohmann::json::parse(reply.body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("status")) {
    std::cerr << "basilctl: health: HTTP " << reply.status << " without a health status\n";
    if (!reply.body.empty()) std::cerr << reply.body << (reply.body.ends_with('\n') ? "" : "\n");
    return basilctl::kHealthUnknown;
  }
  if (inv.json) {
    std::cout << reply.body << (reply.body.ends_with('\n') ? "" : "\n");
  } else {
    std::cout << basilctl::render_health(doc);
  }
  std::cout.flush();
  return basilctl::health_exit_code(doc);
}

int cmd_control(const basilctl::Invocation& inv) {
  auto plan = basilctl::plan_call(inv);
  if (!plan.call) {
    std::cerr << "basilctl: " << plan.error << "\n";
    return inv.command == "health" ? basilctl::kHealthUnknown : kExitUsage;
  }
  if (inv.command == "health") return cmd_health(inv, *plan.call);
  basilctl::HttpCall& call = *plan.call;
  if (call.stdin_body) {
    std::vector<char> buf(64 * 1024);
    std::size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), stdin)) > 0) call.body.append(buf.data(), n);
    if (std::ferror(stdin) != 0) {
      std::cerr << "basilctl: raw: error reading stdin\n";
      return kExitError;
    }
    if (call.body.empty()) {
      std::cerr << "basilctl: raw: no request on stdin\n";
      return kExitUsage;
    }
  }
  auto reply = basild::control::request_once(inv.socket, call.method, call.target, call.body,
                                             call.content_type, inv.timeout);
  if (!reply.ok()) {
    std::cerr << "basilctl: " << reply.message << "\n";
    return kExitUnreachable;
  }
  const bool success = reply.status >= 200 && reply.status < 300;
  auto doc = nlohmann::json::parse(reply.body, nullptr, false);
  const bool is_json = !doc.is_discarded();
  // An error answer in the JSON error shape goes to stderr, whatever the mode.
  if (!success && is_json && doc.is_object() && doc.contains("error") &&
      doc["error"].is_string()) {
    // basild's message may name the command already ("release: reservation
    // 5 ..."): said once.
    const std::string error = doc["error"].get<std::string>();
    const std::string said = inv.command + ": ";
    std::cerr << "basilctl: " << (error.rfind(said, 0) == 0 ? "" : said) << error << " (HTTP " << reply.status;
    if (doc.contains("result")) std::cerr << ", result " << doc["result"].dump();
    std::cerr << ")\n";
    if (inv.json) std::cout << reply.body << (reply.body.ends_with('\n') ? "" : "\n");
    return kExitError;
  }
  if (call.raw_output || inv.json || !is_json) {
    std::cout << reply.body;
    if (!call.raw_output && !reply.body.empty() && !reply.body.ends_with('\n')) std::cout << '\n';
  } else if (inv.command == "events") {
    std::cout << basilctl::render_events(doc, terminal_width(), time_text_of(inv));
  } else if (inv.command == "nodestat") {
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    std::cout << basilctl::render_nodestat(
        doc, terminal_width(),
        basilctl::local_time_text(std::chrono::duration_cast<std::chrono::milliseconds>(now).count()));
  } else {
    std::cout << basilctl::render_human(inv.command, inv.epoch ? doc : basilctl::with_local_times(doc, time_text_of(inv)));
  }
  std::cout.flush();
  if (!success) {
    std::cerr << "basilctl: " << inv.command << ": HTTP " << reply.status << "\n";
    return kExitError;
  }
  return kExitOk;
}

// The whole of FILE ("-": stdin); nullopt, with the reason on stderr, when
// it cannot be opened.
std::optional<std::string> read_input(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (file != "-" && !in) {
    std::cerr << file << ": cannot open\n";
    return std::nullopt;
  }
  std::ostringstream text;
  text << (file == "-" ? std::cin.rdbuf() : in.rdbuf());
  return text.str();
}

// Draws `chart` into `file` (.svg or .png) with gnuplot.
int draw_chart(const basilctl::Chart& chart, const std::string& file) {
  std::FILE* gp = ::popen("gnuplot", "w");
  if (gp == nullptr) {
    std::cerr << "basilctl: cannot run gnuplot\n";
    return kExitError;
  }
  const std::string script = basilctl::gnuplot_script(chart, file);
  std::fwrite(script.data(), 1, script.size(), gp);
  if (::pclose(gp) != 0) {
    std::cerr << "basilctl: gnuplot failed to draw " << file << "\n";
    return kExitError;
  }
  return kExitOk;
}

// basilctl stats --chart FILE: the stats table and a chart of the timings.
int cmd_stats_chart(const basilctl::Invocation& inv) {
  if (inv.args.size() != 2 || inv.args[0] != "--chart") {
    std::cerr << "usage: basilctl stats [--chart FILE]\n";
    return kExitUsage;
  }
  auto reply = basild::control::request_once(inv.socket, "GET", "/v1/stats", "", "", inv.timeout);
  if (!reply.ok()) {
    std::cerr << "basilctl: " << reply.message << "\n";
    return kExitUnreachable;
  }
  auto doc = nlohmann::json::parse(reply.body, nullptr, false);
  if (reply.status != 200 || doc.is_discarded()) {
    std::cerr << "basilctl: stats: HTTP " << reply.status << "\n";
    return kExitError;
  }
  std::cout << (inv.json ? doc.dump() + "\n" : basilctl::render_human("stats", doc));
  return draw_chart(basilctl::stats_chart(basilctl::method_rows(doc), "basild timings (" + inv.socket + ")"),
                    inv.args[1]);
}

// basilctl replay [--xml] [--stats [--chart FILE]] FILE: every exchange of an
// XML log with its timing, or (--stats) the per-method timings of its
// responses; records cut short (a log being written) are reported, not fatal.
constexpr const char* kReplayUsage = "usage: basilctl replay [--xml] [--stats [--chart FILE]] FILE\n";
int cmd_replay(const std::vector<std::string>& args) {
  constexpr const char* kUsage = kReplayUsage;
  basild::ReplayOptions options;
  std::string file, chart;
  bool stats = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    if (a == "--xml") {
      options.show_xml = true;
    } else if (a == "--stats") {
      stats = true;
    } else if (a == "--chart" && i + 1 < args.size()) {
      chart = args[++i];
    } else if (file.empty() && (a == "-" || a.rfind("-", 0) != 0)) {
      file = a;
    } else {
      std::cerr << kUsage;
      return kExitUsage;
    }
  }
  if (file.empty() || (!chart.empty() && !stats)) {
    std::cerr << kUsage;
    return kExitUsage;
  }
  auto text = read_input(file);
  if (!text) return kExitError;
  auto parsed = basild::parse_xml_log(*text);
  if (stats) {
    const auto rows = basilctl::method_rows(basilctl::stats_from_xml_log(parsed.records));
    std::cout << basilctl::method_table_text(rows);
    if (!chart.empty() && draw_chart(basilctl::stats_chart(rows, "BASIL timings of " + file), chart) != kExitOk)
      return kExitError;
  } else {
    std::cout << basild::replay_text(parsed.records, options);
  }
  for (const auto& p : parsed.problems) std::cerr << file << ": " << p << "\n";
  return parsed.records.empty() && !parsed.problems.empty() ? kExitError : kExitOk;
}

// A BASIL QUERY INVENTORY response file ("-": stdin), decoded; nullopt
// with the reason on stderr.
std::optional<basil::Response> inventory_response(const std::string& file) {
  auto text = read_input(file);
  if (!text) return std::nullopt;
  auto response = basil::decode_response(*text);
  if (!response) {
    std::cerr << file << ": " << response.status().to_string() << "\n";
    return std::nullopt;
  }
  const auto* inventory = std::get_if<basil::Inventory>(&response->body);
  if (!response->ok() || inventory == nullptr || !inventory->has_node_array) {
    std::cerr << file << ": not a successful QUERY INVENTORY response with nodes\n";
    return std::nullopt;
  }
  return std::move(*response);
}

// basild's GET /v1/inventory; no document, with the reason on stderr, when
// basild is unreachable or has none.
struct BasildInventory {
  std::optional<nlohmann::json> doc;
  bool unreachable = false;
};

BasildInventory basild_inventory(const basilctl::Invocation& inv) {
  auto reply = basild::control::request_once(inv.socket, "GET", "/v1/inventory", "", "", inv.timeout);
  if (!reply.ok()) {
    std::cerr << "basilctl: " << reply.message << "\n";
    return {std::nullopt, true};
  }
  auto doc = nlohmann::json::parse(reply.body, nullptr, false);
  if (reply.status != 200 || doc.is_discarded()) {
    std::cerr << "basilctl: " << inv.command << ": basild has no inventory (HTTP " << reply.status << "): "
              << (doc.is_object() && doc.contains("error") ? doc["error"].dump() : reply.body) << "\n";
    return {};
  }
  return {std::move(doc), false};
}

// basilctl plan ...: the geometry of a job against basild's cached inventory
// (GET /v1/inventory) or a BASIL INVENTORY response file; reserves nothing.
int cmd_plan(const basilctl::Invocation& inv) {
  auto parsed = basilctl::parse_plan_args(inv.args);
  if (!parsed.args) {
    std::cerr << "basilctl: " << parsed.error << "\n" << basilctl::plan_usage();
    return kExitUsage;
  }
  const basilctl::PlanArgs& args = *parsed.args;
  basil::NodePool pool;
  basil::GeometryPolicy base;
  std::string source;
  if (args.inventory_file) {
    const auto response = inventory_response(*args.inventory_file);
    if (!response) return kExitError;
    pool = basil::node_pool(std::get<basil::Inventory>(response->body));
    base.nppcu_in_dialect = basil::at_least(response->dialect, basil::Dialect::k1_3);
    source = *args.inventory_file;
  } else {
    const auto fetched = basild_inventory(inv);
    if (!fetched.doc) return fetched.unreachable ? kExitUnreachable : kExitError;
    const nlohmann::json& doc = *fetched.doc;
    auto from = basild::pool_from_inventory_json(doc);
    if (!from) {
      std::cerr << "basilctl: plan: " << from.status().message() << "\n";
      return kExitError;
    }
    pool = std::move(*from);
    if (doc.contains("geometry_policy") && doc["geometry_policy"].is_object()) {
      // basild's own [geometry] policy and whether its dialect has nppcu.
      nlohmann::json site = doc["geometry_policy"];
      base.nppcu_in_dialect = site.value("nppcu_in_dialect", true);
      site.erase("nppcu_in_dialect");
      if (auto p = basild::policy_from_json(site, base)) base = *p;
    }
    source = "basild (" + inv.socket + ")";
  }
  const auto plan = basilctl::plan_json(args.job, basilctl::plan_policy(args, base), pool, source);
  std::cout << (inv.json ? plan.dump() + "\n" : basilctl::render_plan(plan));
  return plan.contains("rejection") ? kExitError : kExitOk;
}

// The nodes Slurm gets, from the INVENTORY file or basild; nullopt with
// `exit_code` set (the reason on stderr).
std::optional<basild::SlurmNodes> slurm_nodes_of(const basilctl::Invocation& inv,
                                                 const basilctl::SlurmConfArgs& args, int& exit_code) {
  exit_code = basilctl::kSlurmConfTrouble;
  if (args.inventory_file) {
    const auto response = inventory_response(*args.inventory_file);
    if (!response) return std::nullopt;
    return basild::slurm_nodes(std::get<basil::Inventory>(response->body), args.rule);
  }
  const auto fetched = basild_inventory(inv);
  if (!fetched.doc) {
    if (fetched.unreachable) exit_code = basilctl::kSlurmConfUnreachable;
    return std::nullopt;
  }
  auto facts = basild::facts_from_inventory_json(*fetched.doc);
  if (!facts) {
    std::cerr << "basilctl: slurm-conf: " << facts.status().message() << "\n";
    return std::nullopt;
  }
  return basild::slurm_nodes(*facts, args.rule);
}

// A slurm.conf, or a file it includes, read whole: at most 64 MiB.
basil::Result<std::string> read_conf_file(const std::string& path) {
  constexpr std::size_t kMax = std::size_t{64} << 20;
  std::ifstream in(path, std::ios::binary);
  if (path != "-" && !in) return basil::Status(basil::Code::kInvalidValue, std::strerror(errno));
  std::istream& from = path == "-" ? std::cin : in;
  std::string text;
  std::vector<char> buf(64 * 1024);
  while (from.read(buf.data(), static_cast<std::streamsize>(buf.size())) || from.gcount() > 0) {
    text.append(buf.data(), static_cast<std::size_t>(from.gcount()));
    if (text.size() > kMax) return basil::Status(basil::Code::kInvalidValue, "larger than 64 MiB");
  }
  if (from.bad()) return basil::Status(basil::Code::kInvalidValue, "read error");
  return text;
}

// basilctl slurm-conf ...: Slurm's node lines or topology.conf from ALPS,
// or (--check) an existing slurm.conf's node lines compared with ALPS.
int cmd_slurm_conf(const basilctl::Invocation& inv) {
  auto parsed = basilctl::parse_slurm_conf_args(inv.args);
  if (!parsed.args || inv.json) {
    std::cerr << "basilctl: " << (inv.json ? "slurm-conf: --json: its output is Slurm's text" : parsed.error) << "\n"
              << basilctl::slurm_conf_usage();
    return basilctl::kSlurmConfTrouble;
  }
  const basilctl::SlurmConfArgs& args = *parsed.args;
  std::optional<std::vector<basild::ConfNode>> conf;
  if (args.check_file) {  // read first: a bad slurm.conf needs no inventory
    const std::string& file = *args.check_file;
    auto text = read_conf_file(file);
    if (!text) {
      std::cerr << "basilctl: slurm-conf: " << file << ": " << text.status().message() << "\n";
      return basilctl::kSlurmConfTrouble;
    }
    // A relative include is in slurm.conf's directory, as slurmctld has it.
    const auto slash = file.rfind('/');
    const std::string conf_dir = file == "-" || slash == std::string::npos ? "" : file.substr(0, slash + 1);
    const basild::IncludeLoader loader = [&conf_dir](const std::string& path,
                                                     const std::string&) -> basil::Result<basild::IncludedFile> {
      std::string name = path.rfind('/', 0) == 0 ? path : conf_dir + path;
      auto content = read_conf_file(name);
      if (!content) return content.status();
      return basild::IncludedFile{std::move(name), std::move(*content)};
    };
    auto nodes = basild::parse_slurm_conf_nodes(*text, file == "-" ? "stdin" : file, loader);
    if (!nodes) {
      std::cerr << "basilctl: slurm-conf: " << nodes.status().message() << "\n";
      return basilctl::kSlurmConfTrouble;
    }
    conf = std::move(*nodes);
  }
  int exit_code = basilctl::kSlurmConfOk;
  const auto nodes = slurm_nodes_of(inv, args, exit_code);
  if (!nodes) return exit_code;
  const basilctl::SlurmConfRun run = conf ? basilctl::slurm_conf_check(args, *nodes, *conf)
                                          : basilctl::slurm_conf_text(args, *nodes);
  std::cout << run.out;
  std::cout.flush();
  std::cerr << run.err;
  return run.exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const char* env = std::getenv("BASILD_SOCKET");
  auto parsed = basilctl::parse_invocation(args, env == nullptr ? "" : env);
  if (!parsed.invocation) {
    std::cerr << "basilctl: " << parsed.error << "\n" << basilctl::usage();
    // A monitoring check's mistake is UNKNOWN, not CRITICAL.
    return std::find(args.begin(), args.end(), "health") != args.end() ? basilctl::kHealthUnknown : kExitUsage;
  }
  const basilctl::Invocation& inv = *parsed.invocation;
  if (inv.help) {
    std::cout << (inv.command == "plan"         ? basilctl::plan_usage()
                  : inv.command == "slurm-conf" ? basilctl::slurm_conf_usage()
                  : inv.command == "replay"     ? kReplayUsage
                                                : basilctl::usage());
    return kExitOk;
  }
  if (inv.version) {
    std::cout << "basilctl " << BASIL_VERSION << "\n";
    return kExitOk;
  }
  if (inv.command == "decode") return cmd_decode(inv.args);
  if (inv.command == "replay") return cmd_replay(inv.args);
  if (inv.command == "plan") return cmd_plan(inv);
  if (inv.command == "slurm-conf") return cmd_slurm_conf(inv);
  if (inv.command == "stats" && !inv.args.empty()) return cmd_stats_chart(inv);
  return cmd_control(inv);
}
