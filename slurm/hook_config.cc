#include "slurm/hook_config.h"

#include <functional>
#include <toml++/toml.h>
#include <vector>

#include "basild/config/config.h"
#include "slurm/text.h"

namespace basild::slurm {

using basil::Code;
using basil::Result;
using basil::Status;
using Ms = std::chrono::milliseconds;
using namespace std::chrono_literals;

namespace {

struct Errors {
  std::string origin;
  std::vector<std::string> lines;
  void add(const toml::source_region& at, std::string_view key, const std::string& message) {
    lines.push_back(origin + ":" + std::to_string(at.begin.line) + ":" + std::to_string(at.begin.column) + ": " +
                    std::string(key) + ": " + message);
  }
};

// Reads one key's value into the configuration, or adds an error.
using Reader = std::function<void(const toml::node&, const std::string& key, Errors&, HookConfig&)>;

std::optional<std::string> read_text(const toml::node& n, const std::string& key, Errors& e) {
  const auto* s = n.as_string();
  if (!s) {
    e.add(n.source(), key, "must be a string");
    return std::nullopt;
  }
  if (!control_free(s->get())) {
    e.add(n.source(), key, "holds a control character");
    return std::nullopt;
  }
  return s->get();
}

std::optional<std::string> read_path(const toml::node& n, const std::string& key, Errors& e) {
  auto s = read_text(n, key, e);
  if (s && (s->empty() || s->front() != '/')) {
    e.add(n.source(), key, "must be an absolute path (got \"" + *s + "\")");
    return std::nullopt;
  }
  return s;
}

Reader path(std::string HookConfig::*field) {
  return [field](const toml::node& n, const std::string& key, Errors& e, HookConfig& c) {
    if (auto p = read_path(n, key, e)) c.*field = *p;
  };
}

Reader optional_path(std::optional<std::string> HookConfig::*field) {
  return [field](const toml::node& n, const std::string& key, Errors& e, HookConfig& c) {
    if (auto p = read_path(n, key, e)) c.*field = *p;
  };
}

Reader duration(Ms HookConfig::*field, Ms lo, Ms hi) {
  return [=](const toml::node& n, const std::string& key, Errors& e, HookConfig& c) {
    std::optional<Ms> d;
    if (const auto* i = n.as_integer(); i && i->get() >= 0 && i->get() <= hi.count() / 1000) {
      d = std::chrono::seconds(i->get());
    } else if (const auto* s = n.as_string()) {
      d = parse_duration(s->get());
    }
    if (!d || *d < lo || *d > hi)
      return e.add(n.source(), key,
                   "must be a duration from " + format_duration(lo) + " to " + format_duration(hi) +
                       " (an integer of seconds or a string such as \"30s\")");
    c.*field = *d;
  };
}

// confirm: "node" or "controller"; true and false, the older spelling,
// are "controller" and "node".
void read_confirm(const toml::node& n, const std::string& key, Errors& e, HookConfig& c) {
  if (const auto* b = n.as_boolean()) {
    c.confirm = b->get() ? ConfirmAt::kController : ConfirmAt::kNode;
    return;
  }
  const auto* s = n.as_string();
  if (s && s->get() == "node") {
    c.confirm = ConfirmAt::kNode;
  } else if (s && s->get() == "controller") {
    c.confirm = ConfirmAt::kController;
  } else {
    e.add(n.source(), key, "must be \"node\" or \"controller\"");
  }
}

void read_rule(const toml::node& n, const std::string& key, Errors& e, HookConfig& c) {
  auto s = read_text(n, key, e);
  if (!s) return;
  auto rule = NodeNameRule::parse(*s);
  if (!rule) return e.add(n.source(), key, rule.status().message());
  c.node_name_rule = std::move(*rule);
}

Reader flag(bool HookConfig::*field) {
  return [field](const toml::node& n, const std::string& key, Errors& e, HookConfig& c) {
    const auto* b = n.as_boolean();
    if (!b) return e.add(n.source(), key, "must be true or false");
    c.*field = b->get();
  };
}

struct Key {
  std::string_view section, name;
  Reader read;
};

const std::vector<Key>& keys() {
  static const std::vector<Key> k = {
      {"basild", "socket", path(&HookConfig::socket)},
      {"basild", "timeout", duration(&HookConfig::basild_timeout, 100ms, 1h)},
      {"basild", "confirm", read_confirm},
      {"basild", "outage_wait", duration(&HookConfig::outage_wait, 0ms, 24h)},
      {"slurm", "scontrol", optional_path(&HookConfig::scontrol)},
      {"slurm", "slurm_conf", optional_path(&HookConfig::slurm_conf)},
      {"slurm", "timeout", duration(&HookConfig::slurm_timeout, 100ms, 1h)},
      {"slurm", "node_name_rule", read_rule},
      {"log", "file", optional_path(&HookConfig::log_file)},
      {"log", "syslog", flag(&HookConfig::syslog)},
  };
  return k;
}

void read_section(const toml::key& name, const toml::node& node, Errors& e, HookConfig& c) {
  const auto* table = node.as_table();
  bool known = false;
  for (const Key& k : keys()) known = known || k.section == name.str();
  if (!known) return e.add(name.source(), name.str(), "unknown section [" + std::string(name.str()) + "] (known: basild, slurm, log)");
  if (!table) return e.add(node.source(), name.str(), "must be a table ([" + std::string(name.str()) + "])");
  for (auto&& [key, value] : *table) {
    const std::string dotted = std::string(name.str()) + "." + std::string(key.str());
    const Key* found = nullptr;
    for (const Key& k : keys())
      if (k.section == name.str() && k.name == key.str()) found = &k;
    if (!found) {
      std::string list;
      for (const Key& k : keys())
        if (k.section == name.str()) list += (list.empty() ? "" : ", ") + std::string(k.name);
      e.add(key.source(), dotted, "unknown key (known in [" + std::string(name.str()) + "]: " + list + ")");
      continue;
    }
    found->read(value, dotted, e, c);
  }
}

}  // namespace

Result<HookConfig> parse_hook_config(std::string_view source, std::string_view origin) {
  Errors e{std::string(origin), {}};
  toml::table root;
  try {
    root = toml::parse(source);
  } catch (const toml::parse_error& err) {
    e.add(err.source(), "TOML", std::string(err.description()));
    return Status(Code::kInvalidValue, e.lines.front());
  }
  HookConfig c;
  for (auto&& [name, node] : root) read_section(name, node, e, c);
  if (e.lines.empty()) return c;
  std::string all;
  for (const auto& l : e.lines) all += (all.empty() ? "" : "\n") + l;
  return Status(Code::kInvalidValue, std::move(all));
}

std::string config_path_for(std::string_view argv0, const std::function<bool(const std::string&)>& exists) {
  const auto slash = argv0.rfind('/');
  std::string name(slash == std::string_view::npos ? argv0 : argv0.substr(slash + 1));
  if (name.empty()) name = "basil-slurm";
  if (slash != std::string_view::npos) {
    const std::string beside = std::string(argv0.substr(0, slash + 1)) + name + ".conf";
    if (exists(beside)) return beside;
  }
  return "/etc/basild/" + name + ".conf";
}

}  // namespace basild::slurm
