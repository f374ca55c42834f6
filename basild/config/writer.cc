// The configuration written back as TOML (format_config): every key with
// its effective value, defaults included, in the order of the man page.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string_view>

#include "basild/config/config.h"
#include "basild/config/writer.h"

namespace basild {

namespace config_detail {

std::string octal(std::uint32_t mode) {
  std::string out;
  for (int shift = 9; shift >= 0; shift -= 3) out += static_cast<char>('0' + ((mode >> shift) & 7u));
  return out;
}

}  // namespace config_detail

namespace {

using config_detail::octal;

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          static constexpr char kHex[] = "0123456789ABCDEF";
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += ch;
        }
    }
  }
  out += '"';
  return out;
}

std::string quote_list(const std::vector<std::string>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) out += ", ";
    out += quote(v[i]);
  }
  return out + "]";
}

std::string principal_text(const Principal& p) { return p.id ? std::to_string(*p.id) : quote(p.name); }

std::string principal_list(const std::vector<Principal>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) out += ", ";
    out += principal_text(v[i]);
  }
  return out + "]";
}

// Whole days as an integer, others as the shortest decimal that reads back.
std::string days(double v) {
  if (v == std::floor(v)) return std::to_string(static_cast<std::int64_t>(v));
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string share(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  std::string s = os.str();
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

std::string_view boolean(bool b) { return b ? "true" : "false"; }

}  // namespace

std::string format_config(const Config& c) {
  std::ostringstream o;
  auto dur = [](Duration d) { return quote(format_duration(d)); };
  o << "[apbasil]\n"
    << "path = " << quote(c.apbasil.path) << "\n"
    << "args = " << quote_list(c.apbasil.args) << "\n"
    << "timeout = " << dur(c.apbasil.timeout) << "\n"
    << "max_concurrent = " << c.apbasil.max_concurrent << "\n"
    << "max_output_bytes = " << c.apbasil.max_output_bytes << "\n\n";
  o << "[basil]\n"
    << "version = " << quote(c.basil.version ? basil::protocol_string(*c.basil.version) : "auto") << "\n"
    << "strict_decode = " << boolean(c.basil.strict_decode) << "\n"
    << "engine_max_age = " << dur(c.basil.engine_max_age) << "\n\n";
  o << "[conduit]\n"
    << "mode = " << quote(conduit_mode_name(c.conduit.mode)) << "\n"
    << (c.conduit.hosts.empty() ? "host = " + quote(c.conduit.host) : "hosts = " + quote_list(c.conduit.hosts))
    << "\n"
    << "port = " << c.conduit.port << "\n"
    << "user = " << quote(c.conduit.user) << "\n";
  if (!c.conduit.identity.empty()) o << "identity = " << quote(c.conduit.identity) << "\n";
  if (!c.conduit.known_hosts.empty()) o << "known_hosts = " << quote(c.conduit.known_hosts) << "\n";
  o << "accept_new_host_key = " << boolean(c.conduit.accept_new_host_key) << "\n"
    << "remote_apbasil = " << quote(c.conduit.remote_apbasil) << "\n"
    << "remote_args = " << quote_list(c.conduit.remote_args) << "\n"
    << "remote_apkill = " << quote(c.conduit.remote_apkill) << "\n"
    << "remote_apkill_args = " << quote_list(c.conduit.remote_apkill_args) << "\n"
    << "gateway_helper = " << quote(c.conduit.gateway_helper) << "\n"
    << "gateway_fallback_exec = " << boolean(c.conduit.gateway_fallback_exec) << "\n"
    << "connect_timeout = " << dur(c.conduit.connect_timeout) << "\n"
    << "keepalive_interval = " << dur(c.conduit.keepalive_interval) << "\n"
    << "keepalive_count = " << c.conduit.keepalive_count << "\n"
    << "ciphers = " << quote_list(c.conduit.ciphers) << "\n"
    << "reconnect_min = " << dur(c.conduit.reconnect_min) << "\n"
    << "reconnect_max = " << dur(c.conduit.reconnect_max) << "\n\n";
  o << "[state]\n"
    << "database = " << quote(c.state.database) << "\n"
    << "audit_days = " << days(c.state.audit_days) << "\n"
    << "released_days = " << days(c.state.released_days) << "\n"
    << "quick_check_interval = " << dur(c.state.quick_check_interval) << "\n\n";
  o << "[control]\n"
    << "socket = " << quote(c.control.socket) << "\n"
    << "mode = " << quote(octal(c.control.mode)) << "\n"
    << "group = " << (c.control.group ? principal_text(*c.control.group) : quote("")) << "\n"
    << "allowed_users = " << principal_list(c.control.allowed_users) << "\n"
    << "allowed_groups = " << principal_list(c.control.allowed_groups) << "\n"
    << "max_request_bytes = " << c.control.max_request_bytes << "\n"
    << "idle_timeout = " << dur(c.control.idle_timeout) << "\n"
    << "max_connections = " << c.control.max_connections << "\n"
    << "max_connections_per_uid = " << c.control.max_connections_per_uid << "\n"
    << "header_timeout = " << dur(c.control.header_timeout) << "\n\n";
  o << "[metrics]\n"
    << "listen = " << quote(c.metrics.listen) << "\n\n";
  o << "[log]\n"
    << "level = " << quote(log_level_name(c.log.level)) << "\n"
    << "directory = " << quote(c.log.directory) << "\n"
    << "xml_log = " << boolean(c.log.xml_log) << "\n"
    << "xml_log_loc = " << quote(c.log.xml_log_loc) << "\n"
    << "xml_log_max_bytes = " << c.log.xml_log_max_bytes << "\n"
    << "xml_log_keep = " << c.log.xml_log_keep << "\n\n";
  o << "[poll]\n"
    << "mode = " << quote(poll_mode_name(c.poll.mode)) << "\n"
    << "interval = " << dur(c.poll.interval) << "\n"
    << "inventory_max_age = " << dur(c.poll.inventory_max_age) << "\n"
    << "orphan_check_interval = " << dur(c.poll.orphan_check_interval) << "\n\n";
  o << "[geometry]\n"
    << "one_task_per_core = " << boolean(c.geometry.one_task_per_core) << "\n"
    << "allocation = " << quote(c.geometry.allocation == basil::AllocationMode::kSubNode ? "sub-node" : "whole-node")
    << "\n"
    << "shared = " << boolean(c.geometry.shared) << "\n\n";
  o << "[slurm]\n"
    << "node_sync = " << boolean(c.slurm.node_sync) << "\n"
    << "scontrol = " << quote(c.slurm.scontrol) << "\n"
    << "slurm_conf = " << quote(c.slurm.slurm_conf) << "\n"
    << "node_name_format = " << quote(c.slurm.node_name_format) << "\n"
    << "max_changes_per_cycle = " << c.slurm.max_changes_per_cycle << "\n"
    << "reason_prefix = " << quote(c.slurm.reason_prefix) << "\n"
    << "timeout = " << dur(c.slurm.timeout) << "\n"
    << "slurmctld_host = " << quote(c.slurm.slurmctld_host) << "\n"
    << "suspend_sync = " << boolean(c.slurm.suspend_sync) << "\n"
    << "suspend_poll = " << dur(c.slurm.suspend_poll) << "\n"
    << "suspend_reserve_wait = " << dur(c.slurm.suspend_reserve_wait) << "\n\n";
  o << "[reconcile]\n"
    << "grace = " << dur(c.reconcile.grace) << "\n"
    << "consecutive = " << c.reconcile.consecutive << "\n"
    << "max_releases_per_cycle = " << c.reconcile.max_releases_per_cycle << "\n"
    << "max_release_share = " << share(c.reconcile.max_release_share) << "\n"
    << "release_share_floor = " << c.reconcile.release_share_floor << "\n"
    << "dry_run = " << boolean(c.reconcile.dry_run) << "\n"
    << "interactive_batch_ids = " << quote_list(c.reconcile.interactive_batch_ids) << "\n"
    << "apkill = " << quote(c.reconcile.apkill) << "\n"
    << "apkill_args = " << quote_list(c.reconcile.apkill_args) << "\n"
    << "claims_timeout = " << dur(c.reconcile.claims_timeout) << "\n";
  for (const auto& s : c.reconcile.sources) {
    o << "\n[[reconcile.source]]\n"
      << "type = " << quote(job_source_type_name(s.type)) << "\n"
      << "name = " << quote(s.name) << "\n"
      << "timeout = " << dur(s.timeout) << "\n";
    if (s.type == JobSourceType::kCommand) {
      o << "command = " << quote_list(s.command) << "\n";
    } else if (s.type == JobSourceType::kSqlite) {
      o << "database = " << quote(s.database) << "\n"
        << "query = " << quote(s.query) << "\n";
    }
  }
  return o.str();
}

}  // namespace basild
