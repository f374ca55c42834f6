// The configuration's sections, one reader each, [[reconcile.source]]
// tables, and the checks across keys.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <iterator>

#include "basild/config/reader.h"
#include "basild/core/slurm_names.h"
#include "basild/core/ssh_ciphers.h"

namespace basild::config_detail {

using namespace std::chrono_literals;

namespace {

// Pinned protocol versions ("1.1" covers both 1.1 dialects: the engine tells them apart).
constexpr Word<basil::Dialect> kPins[] = {
    {"1.0", basil::Dialect::k1_0},
    {"1.1", basil::Dialect::k1_1},
    {"1.2", basil::Dialect::k1_2},
    {"1.3", basil::Dialect::k1_3},
};

void read_version(const Field& f, std::optional<basil::Dialect>& out) {
  if (const auto* d = f.node.as_floating_point()) {
    // `version = 1.2` written as a number: accepted, the same as "1.2".
    for (const auto& p : kPins) {
      double want = 0;
      std::from_chars(p.word.data(), p.word.data() + p.word.size(), want);
      if (std::fabs(d->get() - want) < 1e-9) {
        out = p.value;
        return;
      }
    }
    f.fail("must be \"auto\", \"1.0\", \"1.1\", \"1.2\" or \"1.3\" (got " + std::to_string(d->get()) + ")");
    return;
  }
  auto s = read_string(f);
  if (!s) return;
  if (*s == "auto") {
    out.reset();
    return;
  }
  for (const auto& p : kPins) {
    if (p.word == *s) {
      out = p.value;
      return;
    }
  }
  std::string hint;
  if (*s == "1.1+") hint = "; pin \"1.1\": the engine version tells 1.1 from 1.1+";
  f.fail("must be \"auto\", \"1.0\", \"1.1\", \"1.2\" or \"1.3\" (got \"" + *s + "\")" + hint);
}

const toml::table* section_table(const toml::table& root, std::string_view name, Errors& errors) {
  const toml::node* n = root.get(name);
  if (!n) return nullptr;
  const auto* t = n->as_table();
  if (!t) {
    errors.add(std::string(name), place_of(n->source()),
               "must be a table ([" + std::string(name) + "]), not " + std::string(type_word(*n)));
  }
  return t;
}

void read_apbasil(const toml::table& t, ApbasilConfig& c, Errors& errors) {
  Section s("apbasil", t, errors);
  s.key("path", [&](const Field& f) { assign(c.path, read_absolute_path(f)); });
  s.key("args", [&](const Field& f) { assign(c.args, read_string_list(f, true)); });
  s.key("timeout", [&](const Field& f) { assign(c.timeout, read_duration(f, 100ms, 1h)); });
  s.key("max_concurrent", [&](const Field& f) { assign(c.max_concurrent, read_u32(f, 1, 256)); });
  s.key("max_output_bytes",
        [&](const Field& f) { assign(c.max_output_bytes, read_uint(f, 4096, 1ull << 32)); });
  s.finish();
}

void read_basil(const toml::table& t, BasilConfig& c, Errors& errors) {
  Section s("basil", t, errors);
  s.key("version", [&](const Field& f) { read_version(f, c.version); });
  s.key("strict_decode", [&](const Field& f) { assign(c.strict_decode, read_bool(f)); });
  s.key("engine_max_age", [&](const Field& f) { assign(c.engine_max_age, read_duration(f, 0ms, 24h)); });
  s.finish();
}

void read_conduit(const toml::table& t, ConduitConfig& c, std::vector<std::string>& retired, Errors& errors) {
  Section s("conduit", t, errors);
  s.key("mode", [&](const Field& f) { assign(c.mode, read_enum(f, kConduitModes)); });
  s.key("host", [&](const Field& f) { assign(c.host, read_string(f)); });
  s.key("hosts", [&](const Field& f) {
    auto list = read_string_list(f, false);
    if (!list) return;
    if (list->empty()) return f.fail("names no login node");
    for (const auto& entry : *list) {
      if (!parse_conduit_host(entry, 22))
        return f.fail("\"" + entry + "\" is not a login node: write \"name\", \"name:port\" or \"[address]:port\"");
      if (std::count(list->begin(), list->end(), entry) > 1) return f.fail("names \"" + entry + "\" twice");
    }
    assign(c.hosts, std::move(list));
  });
  s.key("port", [&](const Field& f) { assign(c.port, read_u32(f, 1, 65535)); });
  s.key("user", [&](const Field& f) { assign(c.user, read_string(f)); });
  s.key("identity", [&](const Field& f) { assign(c.identity, read_absolute_path(f)); });
  s.key("known_hosts", [&](const Field& f) { assign(c.known_hosts, read_absolute_path(f)); });
  s.key("accept_new_host_key", [&](const Field& f) { assign(c.accept_new_host_key, read_bool(f)); });
  s.key("remote_apbasil", [&](const Field& f) { assign(c.remote_apbasil, read_absolute_path(f)); });
  s.key("remote_args", [&](const Field& f) { assign(c.remote_args, read_string_list(f, true)); });
  s.key("remote_apkill", [&](const Field& f) { assign(c.remote_apkill, read_absolute_path(f)); });
  s.key("remote_apkill_args", [&](const Field& f) { assign(c.remote_apkill_args, read_string_list(f, false)); });
  s.key("gateway_helper", [&](const Field& f) { assign(c.gateway_helper, read_absolute_path(f)); });
  s.key("gateway_fallback_exec", [&](const Field& f) { assign(c.gateway_fallback_exec, read_bool(f)); });
  // The spare apbasil and the compression switch of the helper's protocol 4
  // and 5: gone with protocol 6 (a helper built with LZ4 always compresses).
  s.retired("gateway_spare_apbasil", retired);
  s.retired("gateway_compress", retired);
  s.key("connect_timeout", [&](const Field& f) { assign(c.connect_timeout, read_duration(f, 100ms, 10min)); });
  s.key("keepalive_interval", [&](const Field& f) { assign(c.keepalive_interval, read_duration(f, 0ms, 1h)); });
  s.key("keepalive_count", [&](const Field& f) { assign(c.keepalive_count, read_u32(f, 1, 100)); });
  s.key("ciphers", [&](const Field& f) {
    auto list = read_string_list(f, false);
    if (!list) return;
    for (const auto& name : *list) {
      const auto& known = known_ciphers();
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        std::string all;
        for (const auto& k : known) all += (all.empty() ? "" : ", ") + k;
        return f.fail("names an unknown cipher \"" + name + "\" (known: " + all + ")");
      }
    }
    assign(c.ciphers, std::move(list));
  });
  s.key("reconnect_min", [&](const Field& f) { assign(c.reconnect_min, read_duration(f, 10ms, 1h)); });
  s.key("reconnect_max", [&](const Field& f) { assign(c.reconnect_max, read_duration(f, 10ms, 24h)); });
  s.finish();
}

// A number of days, whole or not, from 0 (for ever) to 100 years.
std::optional<double> read_days(const Field& f) {
  auto v = read_number(f, "a number of days");
  if (v && !(*v >= 0.0 && *v <= 36500.0)) {
    f.fail("must be between 0 (for ever) and 36500 days (got " + std::to_string(*v) + ")");
    return std::nullopt;
  }
  return v;
}

void read_state(const toml::table& t, StateConfig& c, Errors& errors) {
  Section s("state", t, errors);
  s.key("database", [&](const Field& f) { assign(c.database, read_absolute_path(f)); });
  s.key("audit_days", [&](const Field& f) { assign(c.audit_days, read_days(f)); });
  s.key("released_days", [&](const Field& f) { assign(c.released_days, read_days(f)); });
  s.key("quick_check_interval", [&](const Field& f) {
    auto d = read_duration(f, 0ms, 168h);
    if (d && d->count() != 0 && *d < 1min) return f.fail("must be 0 (at start only) or at least 1m");
    assign(c.quick_check_interval, d);
  });
  s.finish();
}

void read_control(const toml::table& t, ControlConfig& c, Errors& errors) {
  Section s("control", t, errors);
  s.key("socket", [&](const Field& f) {
    auto p = read_absolute_path(f);
    // sun_path holds 108 bytes with the NUL.
    if (p && p->size() > 107) {
      f.fail("is too long for a Unix socket path (" + std::to_string(p->size()) + " bytes, at most 107)");
      return;
    }
    assign(c.socket, std::move(p));
  });
  s.key("mode", [&](const Field& f) { assign(c.mode, read_mode(f)); });
  s.key("allowed_users", [&](const Field& f) { assign(c.allowed_users, read_principals(f)); });
  s.key("allowed_groups", [&](const Field& f) { assign(c.allowed_groups, read_principals(f)); });
  s.key("group", [&](const Field& f) {
    // "" (the default): basild's own group.
    if (const auto* v = f.node.as_string(); v != nullptr && v->get().empty()) {
      c.group.reset();
    } else if (auto g = read_principal(f)) {
      c.group = std::move(*g);
    }
  });
  s.key("max_request_bytes",
        [&](const Field& f) { assign(c.max_request_bytes, read_uint(f, 1024, 64ull << 20)); });
  s.key("idle_timeout", [&](const Field& f) { assign(c.idle_timeout, read_duration(f, 100ms, 1h)); });
  s.key("max_connections",
        [&](const Field& f) { assign(c.max_connections, read_uint(f, 1, 60000)); });
  s.key("max_connections_per_uid",
        [&](const Field& f) { assign(c.max_connections_per_uid, read_uint(f, 1, 60000)); });
  s.key("header_timeout", [&](const Field& f) { assign(c.header_timeout, read_duration(f, 100ms, 1h)); });
  s.finish();
}

void read_metrics(const toml::table& t, MetricsConfig& c, Errors& errors) {
  Section s("metrics", t, errors);
  s.key("listen", [&](const Field& f) {
    // "" (the default): no listener.
    if (const auto* v = f.node.as_string(); v != nullptr && v->get().empty()) {
      c.listen.clear();
    } else if (read_listen_address(f)) {
      c.listen = f.node.as_string()->get();
    }
  });
  s.finish();
}

void read_log(const toml::table& t, LogConfig& c, Errors& errors) {
  Section s("log", t, errors);
  s.key("level", [&](const Field& f) { assign(c.level, read_enum(f, kLogLevels)); });
  s.key("directory", [&](const Field& f) { assign(c.directory, read_absolute_path(f)); });
  s.key("xml_log", [&](const Field& f) { assign(c.xml_log, read_bool(f)); });
  s.key("xml_log_loc", [&](const Field& f) {
    auto v = read_string(f);
    if (!v) return;
    if (auto bad = control_character_in(*v)) return f.fail(std::move(*bad));
    if (!v->empty() && *v != "SLURM" && v->front() != '/') {
      f.fail("must be \"\" (basil_xml.log in log.directory), \"SLURM\" (the main log) or an absolute "
             "path (got \"" + *v + "\")");
      return;
    }
    c.xml_log_loc = std::move(*v);
  });
  s.key("xml_log_max_bytes",
        [&](const Field& f) { assign(c.xml_log_max_bytes, read_uint(f, 4096, 1ull << 40)); });
  s.key("xml_log_keep", [&](const Field& f) { assign(c.xml_log_keep, read_u32(f, 0, 1000)); });
  s.finish();
}

void read_poll(const toml::table& t, PollConfig& c, Errors& errors) {
  Section s("poll", t, errors);
  s.key("mode", [&](const Field& f) { assign(c.mode, read_enum(f, kPollModes)); });
  s.key("interval", [&](const Field& f) { assign(c.interval, read_duration(f, 100ms, 1h)); });
  s.key("inventory_max_age",
        [&](const Field& f) { assign(c.inventory_max_age, read_duration(f, 100ms, 24h)); });
  s.key("orphan_check_interval",
        [&](const Field& f) { assign(c.orphan_check_interval, read_duration(f, 100ms, 24h)); });
  s.finish();
}

void read_geometry(const toml::table& t, GeometryConfig& c, Errors& errors) {
  Section s("geometry", t, errors);
  s.key("one_task_per_core", [&](const Field& f) { assign(c.one_task_per_core, read_bool(f)); });
  s.key("allocation", [&](const Field& f) { assign(c.allocation, read_enum(f, kAllocationModes)); });
  s.key("shared", [&](const Field& f) { assign(c.shared, read_bool(f)); });
  s.finish();
}

// The mark of basild's drains: Slurm shows it to admins, and basild
// resumes only nodes whose reason starts with it (core/node_sync.h).
std::optional<std::string> read_reason_prefix(const Field& f) {
  auto v = read_string(f);
  if (!v) return std::nullopt;
  const auto allowed = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view(" :()._/-").find(c) != std::string_view::npos;
  };
  if (v->empty() || v->size() > 40 || v->front() == ' ' || v->back() == ' ' ||
      !std::all_of(v->begin(), v->end(), allowed)) {
    f.fail("must be 1 to 40 letters, digits, blanks or \":()._/-\", not starting or ending with a blank (got \"" +
           *v + "\")");
    return std::nullopt;
  }
  return v;
}

void read_slurm(const toml::table& t, SlurmConfig& c, Errors& errors) {
  Section s("slurm", t, errors);
  s.key("node_sync", [&](const Field& f) { assign(c.node_sync, read_bool(f)); });
  s.key("scontrol", [&](const Field& f) { assign(c.scontrol, read_absolute_path(f)); });
  s.key("slurm_conf", [&](const Field& f) {
    if (const auto* v = f.node.as_string(); v != nullptr && v->get().empty()) {
      c.slurm_conf.clear();  // "": scontrol's own default
      return;
    }
    assign(c.slurm_conf, read_absolute_path(f));
  });
  s.key("node_name_format", [&](const Field& f) {
    auto v = read_string(f);
    if (!v) return;
    if (auto rule = NodeNameRule::parse(*v); !rule) return f.fail(rule.status().message());
    c.node_name_format = std::move(*v);
  });
  s.key("max_changes_per_cycle", [&](const Field& f) { assign(c.max_changes_per_cycle, read_u32(f, 1, 100000)); });
  s.key("reason_prefix", [&](const Field& f) { assign(c.reason_prefix, read_reason_prefix(f)); });
  s.key("timeout", [&](const Field& f) { assign(c.timeout, read_duration(f, 100ms, 10min)); });
  s.key("suspend_sync", [&](const Field& f) { assign(c.suspend_sync, read_bool(f)); });
  s.key("suspend_poll", [&](const Field& f) { assign(c.suspend_poll, read_duration(f, 1s, 60s)); });
  s.key("suspend_reserve_wait",
        [&](const Field& f) { assign(c.suspend_reserve_wait, read_duration(f, 0s, 4min)); });
  s.key("slurmctld_host", [&](const Field& f) {
    auto v = read_string(f);
    if (!v) return;
    const bool host_name = v->size() <= 64 && std::all_of(v->begin(), v->end(), [](char ch) {
      return std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '-' || ch == '.' || ch == '_';
    });
    if (!host_name)
      return f.fail("must be a host name as slurm.conf's SlurmctldHost gives it (letters, digits, \".-_\"), or \"\"");
    c.slurmctld_host = std::move(*v);
  });
  s.finish();
}

void read_source(const Field& f, std::size_t index, std::vector<JobSource>& out) {
  const auto* t = f.node.as_table();
  if (!t) {
    f.wrong_type("a table");
    return;
  }
  JobSource src;
  Section s(f.key, *t, f.errors);
  bool have_type = false;
  bool good = true;
  s.key("type", [&](const Field& k) {
    auto v = read_enum(k, kJobSourceTypes);
    if (v) {
      src.type = *v;
      have_type = true;
    } else {
      good = false;
    }
  });
  s.key("name", [&](const Field& k) {
    auto v = read_string(k);
    if (v && v->empty()) {
      k.fail("must not be empty");
      v.reset();
    }
    if (!v) good = false;
    assign(src.name, std::move(v));
  });
  s.key("timeout", [&](const Field& k) {
    auto v = read_duration(k, 100ms, 1h);
    if (!v) good = false;
    assign(src.timeout, v);
  });
  std::optional<Field> command, database, query;
  s.key("command", [&](const Field& k) { command.emplace(k); });
  s.key("database", [&](const Field& k) { database.emplace(k); });
  s.key("query", [&](const Field& k) { query.emplace(k); });
  s.finish();
  if (!have_type) {
    if (good) f.fail("needs type = \"command\", \"sqlite\" or \"basild\"");
    return;
  }
  auto only_for = [](const std::optional<Field>& k, std::string_view type) {
    if (k) k->fail("is only for type = \"" + std::string(type) + "\"");
  };
  if (src.type == JobSourceType::kBasild) {
    for (const auto* k : {&command, &database, &query})
      if (*k) {
        (*k)->fail("is not for type = \"basild\" (it takes no keys)");
        good = false;
      }
  } else if (src.type == JobSourceType::kCommand) {
    only_for(database, "sqlite");
    only_for(query, "sqlite");
    if (database || query) good = false;
    if (!command) {
      f.fail("type = \"command\" needs command = [\"/path/to/program\", \"arg\", ...]");
      return;
    }
    auto argv = read_string_list(*command, true);
    if (!argv) return;
    if (!argv->empty()) {
      if (auto bad = control_character_in(argv->front())) return command->fail(std::move(*bad));
    }
    if (argv->empty() || argv->front().empty() || argv->front().front() != '/') {
      command->fail("must start with the program's absolute path (it runs without a shell)");
      return;
    }
    src.command = std::move(*argv);
  } else {
    only_for(command, "command");
    if (command) good = false;
    if (!database || !query) {
      f.fail("type = \"sqlite\" needs database = \"/path/file.db\" and query = \"SELECT ...\"");
      return;
    }
    auto db = read_absolute_path(*database);
    auto q = read_string(*query);
    if (q && q->find_first_not_of(" \t\r\n") == std::string::npos) {
      query->fail("must not be empty");
      q.reset();
    }
    if (!db || !q) return;
    src.database = std::move(*db);
    src.query = std::move(*q);
  }
  if (!good) return;
  if (src.name.empty()) {
    src.name = std::string(job_source_type_name(src.type)) + "-" + std::to_string(index + 1);
  }
  out.push_back(std::move(src));
}

void read_reconcile(const toml::table& t, ReconcileConfig& c, Errors& errors) {
  Section s("reconcile", t, errors);
  s.key("source", [&](const Field& f) {
    const auto* a = f.node.as_array();
    if (!a) {
      f.fail("must be an array of tables: write [[reconcile.source]], one per job-table source");
      return;
    }
    std::vector<JobSource> sources;
    for (std::size_t i = 0; i < a->size(); ++i) {
      read_source(Field{"reconcile.source[" + std::to_string(i) + "]", *a->get(i), errors}, i, sources);
    }
    std::set<std::string> names;
    for (std::size_t i = 0; i < sources.size(); ++i) {
      if (!names.insert(sources[i].name).second) {
        f.fail("two sources are named \"" + sources[i].name + "\"");
      }
    }
    c.sources = std::move(sources);
  });
  s.key("grace", [&](const Field& f) { assign(c.grace, read_duration(f, 0ms, 24h)); });
  s.key("consecutive", [&](const Field& f) { assign(c.consecutive, read_u32(f, 1, 1000)); });
  s.key("max_releases_per_cycle",
        [&](const Field& f) { assign(c.max_releases_per_cycle, read_u32(f, 1, 100000)); });
  s.key("max_release_share", [&](const Field& f) {
    auto v = read_number(f, "a number between 0 and 1");
    if (v && !(*v > 0.0 && *v <= 1.0))
      return f.fail("must be greater than 0 and at most 1 (got " + std::to_string(*v) + ")");
    assign(c.max_release_share, v);
  });
  s.key("dry_run", [&](const Field& f) { assign(c.dry_run, read_bool(f)); });
  s.key("interactive_batch_ids",
        [&](const Field& f) { assign(c.interactive_batch_ids, read_string_list(f, false)); });
  s.key("release_share_floor", [&](const Field& f) { assign(c.release_share_floor, read_u32(f, 0, 100000)); });
  s.key("apkill", [&](const Field& f) { assign(c.apkill, read_absolute_path(f)); });
  s.key("apkill_args", [&](const Field& f) { assign(c.apkill_args, read_string_list(f, false)); });
  s.key("claims_timeout", [&](const Field& f) { assign(c.claims_timeout, read_duration(f, 1s, 24h)); });
  s.finish();
}

}  // namespace

void read_sections(const toml::table& root, Config& c, Errors& errors, std::span<const std::string_view> only) {
  using Reader = void (*)(const toml::table&, Config&, Errors&);
  struct SectionReader {
    std::string_view name;
    Reader read;
  };
  static constexpr SectionReader kSections[] = {
      {"apbasil", [](const toml::table& t, Config& cf, Errors& e) { read_apbasil(t, cf.apbasil, e); }},
      {"basil", [](const toml::table& t, Config& cf, Errors& e) { read_basil(t, cf.basil, e); }},
      {"conduit", [](const toml::table& t, Config& cf, Errors& e) { read_conduit(t, cf.conduit, cf.retired_keys, e); }},
      {"state", [](const toml::table& t, Config& cf, Errors& e) { read_state(t, cf.state, e); }},
      {"control", [](const toml::table& t, Config& cf, Errors& e) { read_control(t, cf.control, e); }},
      {"metrics", [](const toml::table& t, Config& cf, Errors& e) { read_metrics(t, cf.metrics, e); }},
      {"log", [](const toml::table& t, Config& cf, Errors& e) { read_log(t, cf.log, e); }},
      {"poll", [](const toml::table& t, Config& cf, Errors& e) { read_poll(t, cf.poll, e); }},
      {"reconcile", [](const toml::table& t, Config& cf, Errors& e) { read_reconcile(t, cf.reconcile, e); }},
      {"geometry", [](const toml::table& t, Config& cf, Errors& e) { read_geometry(t, cf.geometry, e); }},
      {"slurm", [](const toml::table& t, Config& cf, Errors& e) { read_slurm(t, cf.slurm, e); }},
  };
  const auto wanted = [&](std::string_view name) {
    return only.empty() || std::find(only.begin(), only.end(), name) != only.end();
  };
  // Unknown sections: only a reading of the whole file knows them all.
  for (auto&& [k, v] : root) {
    if (!only.empty()) break;
    const std::string_view key = k.str();  // clang 14 cannot capture a structured binding
    bool known = std::any_of(std::begin(kSections), std::end(kSections),
                             [&](const SectionReader& s) { return s.name == key; });
    if (known) continue;
    std::string name(k.str());
    errors.add(name, place_of(k.source()),
               v.is_table() ? "unknown section [" + name + "]"
                            : "unknown key \"" + name + "\" outside any section");
  }
  for (const auto& s : kSections) {
    if (!wanted(s.name)) continue;
    if (const toml::table* t = section_table(root, s.name, errors)) s.read(*t, c, errors);
  }
}

// Checks across keys, reported at the later key's line.
void cross_checks(const Config& c, Errors& errors) {
  auto at = [&](const char* key, const char* fallback) {
    if (const Place* p = errors.where(key)) return std::make_pair(std::string(key), *p);
    if (const Place* p = errors.where(fallback)) return std::make_pair(std::string(fallback), *p);
    return std::make_pair(std::string(key), Place{});
  };
  if (c.poll.inventory_max_age < c.poll.interval) {
    auto [k, p] = at("poll.inventory_max_age", "poll.interval");
    errors.add(k, p, "poll.inventory_max_age (" + format_duration(c.poll.inventory_max_age) +
                         ") must not be shorter than poll.interval (" + format_duration(c.poll.interval) + ")");
  }
  if (!c.conduit.host.empty() && !c.conduit.hosts.empty()) {
    auto [k, p] = at("conduit.hosts", "conduit.host");
    errors.add(k, p, "conduit.host and conduit.hosts are both set: name the login node in one of them");
  }
  if (c.conduit.mode != ConduitMode::kLocal) {
    const std::string mode = "conduit.mode = \"" + std::string(conduit_mode_name(c.conduit.mode)) + "\"";
    auto [k, p] = at("conduit.mode", "conduit.mode");
    if (c.conduit.host.empty() && c.conduit.hosts.empty())
      errors.add(k, p, "conduit.host is required with " + mode + " (or conduit.hosts, a list)");
    if (c.conduit.known_hosts.empty()) errors.add(k, p, "conduit.known_hosts is required with " + mode);
  }
  if (c.conduit.reconnect_max < c.conduit.reconnect_min) {
    auto [k, p] = at("conduit.reconnect_max", "conduit.reconnect_min");
    errors.add(k, p, "conduit.reconnect_max must not be shorter than conduit.reconnect_min");
  }
  if (c.poll.orphan_check_interval < c.poll.interval) {
    auto [k, p] = at("poll.orphan_check_interval", "poll.interval");
    errors.add(k, p, "poll.orphan_check_interval (" + format_duration(c.poll.orphan_check_interval) +
                         ") must not be shorter than poll.interval (" + format_duration(c.poll.interval) + ")");
  }
}

}  // namespace basild::config_detail
