#include "basild/config/config.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <charconv>
#include <sstream>
#include <toml++/toml.h>
#include <utility>

#include "basild/config/reader.h"
#include "basild/config/writer.h"

namespace basild {

using config_detail::Errors;
using config_detail::octal;

std::string_view conduit_mode_name(ConduitMode m) {
  for (const auto& w : config_detail::kConduitModes) {
    if (w.value == m) return w.word;
  }
  return "?";
}
std::optional<ConduitHost> parse_conduit_host(std::string_view entry, std::uint32_t default_port) {
  std::string_view name = entry, port;
  if (entry.starts_with('[')) {
    const auto close = entry.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    name = entry.substr(1, close - 1);
    const auto rest = entry.substr(close + 1);
    if (!rest.empty() && (!rest.starts_with(':') || rest.size() == 1)) return std::nullopt;
    if (!rest.empty()) port = rest.substr(1);
  } else if (const auto colon = entry.find(':'); colon != std::string_view::npos && entry.rfind(':') == colon) {
    name = entry.substr(0, colon);
    port = entry.substr(colon + 1);
    if (port.empty()) return std::nullopt;
  }
  if (name.empty()) return std::nullopt;
  ConduitHost h{std::string(name), default_port};
  if (!port.empty()) {
    std::uint32_t n = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), n);
    if (ec != std::errc() || end != port.data() + port.size() || n == 0 || n > 65535) return std::nullopt;
    h.port = n;
  }
  return h;
}

std::vector<ConduitHost> conduit_hosts(const ConduitConfig& c) {
  std::vector<ConduitHost> out;
  for (const auto& e : c.hosts)
    if (auto h = parse_conduit_host(e, c.port)) out.push_back(std::move(*h));
  if (c.hosts.empty() && !c.host.empty()) out.push_back({c.host, c.port});
  return out;
}

std::string_view log_level_name(LogLevel l) {
  for (const auto& w : config_detail::kLogLevels) {
    if (w.value == l) return w.word;
  }
  return "?";
}
std::string_view poll_mode_name(PollMode m) {
  for (const auto& w : config_detail::kPollModes) {
    if (w.value == m) return w.word;
  }
  return "?";
}
std::string_view job_source_type_name(JobSourceType t) {
  for (const auto& w : config_detail::kJobSourceTypes) {
    if (w.value == t) return w.word;
  }
  return "?";
}

std::optional<Duration> parse_duration(std::string_view text) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 12) return std::nullopt;  // 12 digits: no overflow below
  std::int64_t n = 0;
  std::from_chars(text.data(), text.data() + digits, n);
  std::string_view unit = text.substr(digits);
  if (unit == "ms") return Duration(n);
  if (unit == "s") return std::chrono::seconds(n);
  if (unit == "m") return std::chrono::minutes(n);
  if (unit == "h") return std::chrono::hours(n);
  return std::nullopt;
}

std::string format_duration(Duration d) {
  const auto ms = d.count();
  if (ms == 0) return "0s";
  if (ms % 3'600'000 == 0) return std::to_string(ms / 3'600'000) + "h";
  if (ms % 60'000 == 0) return std::to_string(ms / 60'000) + "m";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

ListenParse parse_listen_address(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) return {std::nullopt, "must be ADDRESS:PORT"};
  std::string_view host = text.substr(0, colon);
  const std::string_view port_text = text.substr(colon + 1);
  unsigned port = 0;
  const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() || port == 0 ||
      port > 65535)
    return {std::nullopt, "must end in :PORT, a port from 1 to 65535"};
  const bool bracketed = host.size() >= 2 && host.front() == '[' && host.back() == ']';
  if (bracketed) host = host.substr(1, host.size() - 2);
  const std::string address(host);
  in6_addr buf{};
  const bool v4 = !bracketed && ::inet_pton(AF_INET, address.c_str(), &buf) == 1;
  const bool v6 = bracketed && ::inet_pton(AF_INET6, address.c_str(), &buf) == 1;
  if (!v4 && !v6)
    return {std::nullopt, "must name a numeric address: an IPv4 one (127.0.0.1, 0.0.0.0) or an IPv6 one in brackets "
                          "([::1]); host names are not looked up"};
  return {ListenAddress{address, static_cast<std::uint16_t>(port)}, {}};
}

std::string ConfigError::to_string(std::string_view origin) const {
  std::string out(origin);
  if (line > 0) {
    out += ':';
    out += std::to_string(line);
    out += ':';
    out += std::to_string(column);
  }
  out += ": ";
  if (!key.empty()) {
    out += key;
    out += ": ";
  }
  out += message;
  return out;
}

namespace {

// The whole file (`only` empty: every section and the checks across them),
// or just the sections `only` names.
ConfigParse parse_sections(std::string_view text, std::span<const std::string_view> only) {
  ConfigParse out;
  Errors errors;
  toml::table root;
  try {
    root = toml::parse(text);
  } catch (const toml::parse_error& e) {
    out.errors.push_back({"", e.source().begin.line, e.source().begin.column,
                          "TOML syntax: " + std::string(e.description())});
    return out;
  }

  config_detail::read_sections(root, out.config, errors, only);
  if (only.empty()) config_detail::cross_checks(out.config, errors);
  out.errors = errors.take();
  std::stable_sort(out.errors.begin(), out.errors.end(), [](const ConfigError& a, const ConfigError& b) {
    return a.line != b.line ? a.line < b.line : a.column < b.column;
  });
  return out;
}

basil::Result<Config> result_of(ConfigParse p, std::string_view origin) {
  if (p.ok()) return std::move(p.config);
  std::string message;
  for (const auto& e : p.errors) {
    if (!message.empty()) message += '\n';
    message += e.to_string(origin);
  }
  basil::Status st(basil::Code::kInvalidValue, std::move(message));
  st.at(static_cast<int>(p.errors.front().line), static_cast<int>(p.errors.front().column),
        p.errors.front().key);
  return st;
}

}  // namespace

ConfigParse parse_config_all(std::string_view text) { return parse_sections(text, {}); }

basil::Result<Config> parse_config(std::string_view text, std::string_view origin) {
  return result_of(parse_config_all(text), origin);
}

basil::Result<Config> parse_config_sections(std::string_view text, std::span<const std::string_view> sections,
                                            std::string_view origin) {
  return result_of(parse_sections(text, sections), origin);
}

bool speaks_for_scheduler(const ReconcileConfig& c) {
  for (const auto& s : c.sources)
    if (s.type != JobSourceType::kBasild) return true;
  return false;
}

std::vector<std::string> config_warnings(const Config& c) {
  std::vector<std::string> w;
  for (const auto& k : c.retired_keys)
    w.push_back(k + " no longer does anything (a setting of an older basild): remove it");
  if (!speaks_for_scheduler(c.reconcile)) {
    w.push_back("reconcile: no job-table source that speaks for the scheduler (a [[reconcile.source]] of type "
                "command or sqlite): jobs that reserved through basild are not the whole job table, so orphans are reported and never released (dry run)");
  } else if (c.reconcile.dry_run) {
    w.push_back("reconcile.dry_run = true: orphans are reported and never released");
  }
  if (c.reconcile.grace == Duration::zero()) {
    w.push_back("reconcile.grace = 0s: a reservation made moments ago, before the job table lists its job, "
                "is protected only by reconcile.consecutive");
  }
  if (c.conduit.mode != ConduitMode::kLocal && c.conduit.accept_new_host_key) {
    w.push_back("conduit.accept_new_host_key = true: an unknown host key is trusted on first use and recorded in " +
                c.conduit.known_hosts + "; set it back to false once the key is there");
  }
  if (c.conduit.mode != ConduitMode::kLocal && c.conduit.keepalive_interval == Duration::zero()) {
    w.push_back("conduit.keepalive_interval = 0s: a dead link is found only when a call fails on it");
  }
  if (c.poll.mode == PollMode::kSummaryHybrid && c.basil.version &&
      !basil::at_least(*c.basil.version, basil::Dialect::k1_3)) {
    w.push_back("poll.mode = \"summary-hybrid\" with basil.version = \"" +
                std::string(basil::protocol_string(*c.basil.version)) +
                "\": QUERY SUMMARY needs 1.3, so every poll is an INVENTORY (with the last changecount when ALPS "
                "honours that form)");
  }
  if (!c.log.xml_log && !c.log.xml_log_loc.empty()) {
    w.push_back("log.xml_log_loc is set but log.xml_log = false: it applies only when XML_LOG is set in the "
                "environment");
  }
  if ((c.control.mode & 0007u) != 0) {
    w.push_back("control.mode = \"" + octal(c.control.mode) +
                "\" lets any local user connect to the socket; the allow-lists still apply");
  }
  if ((c.control.mode & 0200u) == 0) {
    w.push_back("control.mode = \"" + octal(c.control.mode) +
                "\": without the owner's write bit only root can connect");
  }
  if (c.reconcile.claims_timeout < c.poll.orphan_check_interval) {
    w.push_back("reconcile.claims_timeout is shorter than poll.orphan_check_interval: apkill follows the "
                "first RELEASE that leaves claims");
  }
  return w;
}

namespace config_detail {

ConfigCheck check_report(const ConfigParse& p, std::string_view origin, const std::vector<std::string>& more_errors,
                         const std::vector<std::string>& more_warnings) {
  ConfigCheck out;
  std::ostringstream r;
  const std::size_t n_errors = p.errors.size() + more_errors.size();
  if (n_errors > 0) {
    r << origin << ": " << n_errors << (n_errors == 1 ? " error" : " errors") << "\n";
    for (const auto& e : p.errors) r << e.to_string(origin) << "\n";
    for (const auto& e : more_errors) r << origin << ": " << e << "\n";
    if (!p.ok()) {
      out.report = r.str();
      return out;
    }
  } else {
    out.ok = true;
    r << origin << ": OK\n";
  }
  auto warnings = config_warnings(p.config);
  warnings.insert(warnings.end(), more_warnings.begin(), more_warnings.end());
  if (!warnings.empty()) {
    r << "\nwarnings:\n";
    for (const auto& w : warnings) r << "  - " << w << "\n";
  }
  r << "\n# effective configuration (defaults included)\n" << format_config(p.config);
  out.report = r.str();
  return out;
}

}  // namespace config_detail

ConfigCheck check_config(std::string_view text, std::string_view origin) {
  return config_detail::check_report(parse_config_all(text), origin, {}, {});
}

}  // namespace basild
