#include "basild/core/slurm_conf_check.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <set>
#include <utility>

namespace basild {

using basil::Code;
using basil::Result;
using basil::Status;

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

bool space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

// Control characters of hostile input written as \xNN, so that a message
// is one line that cannot move a terminal's cursor.
std::string printable(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  return out;
}

Status located(const std::string& where, const std::string& what) {
  return Status(Code::kInvalidValue, printable(where + ": " + what));
}

// A logical line: comments gone, continuations joined, and where it began.
struct Line {
  std::string text;
  std::size_t number = 0;
};

// The logical lines of a file.
Result<std::vector<Line>> logical_lines(std::string_view text, const std::string& file, std::size_t max_line) {
  std::vector<Line> out;
  Line cur;
  bool continuing = false;
  std::size_t number = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t nl = std::min(text.find('\n', pos), text.size());
    std::string_view raw = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++number;
    if (!continuing) cur = Line{"", number};
    // Up to the first '#' not written "\#".
    std::string part;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '\\' && i + 1 < raw.size() && raw[i + 1] == '#') {
        part += '#';
        ++i;
      } else if (raw[i] == '#') {
        break;
      } else {
        part += raw[i];
      }
      if (cur.text.size() + part.size() > max_line) break;
    }
    std::string_view body = trim(part);
    continuing = !body.empty() && body.back() == '\\';
    if (continuing) body.remove_suffix(1);
    cur.text += std::string(body) + (continuing ? " " : "");
    if (cur.text.size() > max_line)
      return located(file + ":" + std::to_string(cur.number),
                     "a line longer than " + std::to_string(max_line) + " characters");
    if (!continuing) out.push_back(std::move(cur));
  }
  if (continuing) out.push_back(std::move(cur));
  return out;
}

// KEY=VALUE words; a value may be in double quotes.
Result<std::vector<std::pair<std::string, std::string>>> words(std::string_view line, const std::string& where) {
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t i = 0;
  while (true) {
    while (i < line.size() && space(line[i])) ++i;
    if (i >= line.size()) return out;
    const std::size_t start = i;
    while (i < line.size() && line[i] != '=' && !space(line[i])) ++i;
    if (i >= line.size() || line[i] != '=' || i == start) {
      std::size_t end = start;
      while (end < line.size() && !space(line[end]) && end - start < 80) ++end;
      return located(where, "'" + std::string(line.substr(start, end - start)) + "' is not KEY=VALUE");
    }
    std::string key(line.substr(start, i - start));
    std::string value;
    ++i;
    if (i < line.size() && line[i] == '"') {
      const std::size_t close = line.find('"', i + 1);
      if (close == std::string_view::npos) return located(where, "the value of " + key + " has no closing quote");
      value = std::string(line.substr(i + 1, close - i - 1));
      i = close + 1;
    } else {
      while (i < line.size() && !space(line[i])) value += line[i++];
    }
    out.emplace_back(std::move(key), std::move(value));
  }
}

template <typename T>
Result<T> number(const std::string& key, const std::string& value, const std::string& where) {
  T v = 0;
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (value.empty() || value[0] == '-' || value[0] == '+' || ec != std::errc() || p != value.data() + value.size())
    return located(where, key + "=" + value.substr(0, 80) + " is not a whole number in range");
  return v;
}

// The gpu count of a Gres value: "gpu:2", "gpu:tesla:2", "gpu" (one), summed.
Result<std::uint32_t> gres_gpus(const std::string& value, const std::string& where) {
  std::uint64_t total = 0;
  std::size_t start = 0;
  while (start <= value.size()) {
    const std::size_t comma = std::min(value.find(',', start), value.size());
    const std::string item = value.substr(start, comma - start);
    start = comma + 1;
    const std::size_t colon = item.find(':');
    if (lower(item.substr(0, colon)) != "gpu") continue;
    const std::size_t last = item.rfind(':');
    const std::string count = colon == std::string::npos ? "" : item.substr(last + 1);
    if (!count.empty() && std::all_of(count.begin(), count.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      auto n = number<std::uint32_t>("Gres", count, where);
      if (!n) return n.status();
      total += *n;
    } else {
      total += 1;
    }
    if (total > UINT32_MAX) return located(where, "Gres=" + value.substr(0, 80) + " counts too many GPUs");
  }
  return static_cast<std::uint32_t>(total);
}

std::vector<std::string> feature_list(const std::string& value) {
  std::set<std::string> out;
  std::size_t start = 0;
  while (start <= value.size()) {
    const std::size_t comma = std::min(value.find(',', start), value.size());
    const std::string_view item = trim(std::string_view(value).substr(start, comma - start));
    if (!item.empty()) out.emplace(item);
    start = comma + 1;
  }
  return {out.begin(), out.end()};
}

// One key of a NodeName line into `node`; unknown keys are not ours.
Status apply_key(const std::string& key, const std::string& value, const std::string& where, ConfNode& node) {
  using U32 = std::optional<ConfSetting<std::uint32_t>> ConfNode::*;
  static const std::map<std::string, U32> kCounts = {
      {"cpus", &ConfNode::cpus},
      {"procs", &ConfNode::cpus},
      {"boards", &ConfNode::boards},
      {"sockets", &ConfNode::sockets},
      {"socketsperboard", &ConfNode::sockets_per_board},
      {"corespersocket", &ConfNode::cores_per_socket},
      {"threadspercore", &ConfNode::threads_per_core},
  };
  const std::string k = lower(key);
  if (auto it = kCounts.find(k); it != kCounts.end()) {
    auto n = number<std::uint32_t>(key, value, where);
    if (!n) return n.status();
    node.*(it->second) = ConfSetting<std::uint32_t>{*n, where};
  } else if (k == "realmemory") {
    auto n = number<std::uint64_t>(key, value, where);
    if (!n) return n.status();
    node.real_memory = ConfSetting<std::uint64_t>{*n, where};
  } else if (k == "gres") {
    auto n = gres_gpus(value, where);
    if (!n) return n.status();
    node.gpus = ConfSetting<std::uint32_t>{*n, where};
  } else if (k == "feature" || k == "features") {
    node.features = ConfSetting<std::vector<std::string>>{feature_list(value), where};
  }
  return Status();
}

struct Reader {
  const IncludeLoader& include;
  const ConfLimits& limits;
  ConfNode defaults;
  std::vector<ConfNode> nodes;
  std::size_t names = 0;
  std::string cluster;  // ClusterName, for an Include's %c

  Status node_line(const std::vector<std::pair<std::string, std::string>>& kv, const std::string& where) {
    ConfNode node = defaults;
    for (std::size_t i = 1; i < kv.size(); ++i)
      if (Status s = apply_key(kv[i].first, kv[i].second, where, node); !s.is_ok()) return s;
    if (lower(kv[0].second) == "default") {
      defaults = std::move(node);
      return Status();
    }
    auto list = expand_hostlist(kv[0].second, limits.max_nodes - names);
    if (!list) return located(where, "NodeName: " + list.status().message());
    if (list->empty()) return located(where, "NodeName has no name");
    names += list->size();
    node.where = where;
    for (std::string& name : *list) {
      nodes.push_back(node);
      nodes.back().name = std::move(name);
    }
    return Status();
  }

  Status file(std::string_view text, const std::string& name, int depth) {
    auto lines = logical_lines(text, name, limits.max_line);
    if (!lines) return lines.status();
    for (const Line& line : *lines) {
      const std::string where = name + ":" + std::to_string(line.number);
      const std::string_view t = line.text;
      const std::size_t first_space = std::min(t.find_first_of(" \t"), t.size());
      if (lower(t.substr(0, first_space)) == "include") {
        if (Status s = included(std::string(trim(t.substr(first_space))), name, where, depth); !s.is_ok()) return s;
        continue;
      }
      if (lower(t.substr(0, std::min<std::size_t>(12, t.size()))) == "clustername=") {
        auto kv = words(t, where);
        if (kv && !kv->empty()) cluster = kv->front().second;
        continue;
      }
      if (lower(t.substr(0, std::min<std::size_t>(9, t.size()))) != "nodename=") continue;
      auto kv = words(t, where);
      if (!kv) return kv.status();
      if (Status s = node_line(*kv, where); !s.is_ok()) return s;
    }
    return Status();
  }

  Status included(std::string path, const std::string& from, const std::string& where, int depth) {
    if (path.empty()) return located(where, "Include names no file");
    for (std::size_t at = path.find("%c"); at != std::string::npos; at = path.find("%c", at + cluster.size()))
      path.replace(at, 2, cluster);
    if (depth >= limits.max_include_depth)
      return located(where, "includes nested deeper than " + std::to_string(limits.max_include_depth) + " (a loop?)");
    if (!include) return located(where, "Include " + path + ": includes are not read here");
    auto loaded = include(path, from);
    if (!loaded) return located(where, "Include " + path + ": " + loaded.status().message());
    return file(loaded->text, loaded->name, depth + 1);
  }
};

}  // namespace

// ---------------------------------------------------------------- comparison

namespace {

enum Field : std::size_t { kCpus, kSockets, kCores, kThreads, kMemory, kGres, kFeatures, kFieldCount };
constexpr std::array<const char*, kFieldCount> kFieldNames = {"CPUs",           "Sockets",    "CoresPerSocket",
                                                              "ThreadsPerCore", "RealMemory", "Gres",
                                                              "Features"};

using Values = std::array<std::string, kFieldCount>;

std::string gres_text(std::uint32_t gpus) { return gpus == 0 ? "none" : "gpu:" + std::to_string(gpus); }

std::string features_text(const std::vector<std::string>& features) {
  std::string out;
  for (const std::string& f : features) out += (out.empty() ? "" : ",") + f;
  return out.empty() ? "none" : out;
}

Values alps_values(const SlurmLayout& l) {
  return {std::to_string(l.cpus),           std::to_string(l.sockets),        std::to_string(l.cores_per_socket),
          std::to_string(l.threads_per_core), std::to_string(l.real_memory_mb), gres_text(l.gpus),
          features_text(l.features)};
}

// The values slurmctld gives the node, and where each comes from.
std::pair<Values, Values> conf_values(const ConfNode& n) {
  Values v, where;
  auto pick = [&](Field f, const auto& setting, auto fallback, const char* why) {
    v[f] = std::to_string(setting ? setting->value : fallback);
    where[f] = setting ? setting->where : why;
    return setting ? setting->value : fallback;
  };
  const std::uint64_t threads = pick(kThreads, n.threads_per_core, 1u, "not set: Slurm's default");
  const std::uint64_t cores = pick(kCores, n.cores_per_socket, 1u, "not set: Slurm's default");
  const std::uint64_t boards = n.boards ? n.boards->value : 1;
  std::uint64_t sockets = boards;
  where[kSockets] = "not set: Slurm's default";
  if (n.sockets_per_board) {
    sockets = boards * n.sockets_per_board->value;
    where[kSockets] = n.sockets_per_board->where + ", Boards x SocketsPerBoard";
  } else if (n.sockets) {
    sockets = boards * n.sockets->value;
    where[kSockets] = n.sockets->where;
  } else if (n.cpus) {
    sockets = std::max<std::uint64_t>(1, n.cpus->value / std::max<std::uint64_t>(1, cores * threads));
    where[kSockets] = "not set: CPUs / (CoresPerSocket x ThreadsPerCore)";
  }
  v[kSockets] = std::to_string(sockets);
  v[kCpus] = std::to_string(n.cpus ? std::uint64_t{n.cpus->value} : sockets * cores * threads);
  where[kCpus] = n.cpus ? n.cpus->where : "not set: Sockets x CoresPerSocket x ThreadsPerCore";
  pick(kMemory, n.real_memory, std::uint64_t{1}, "not set: Slurm's default");
  v[kGres] = gres_text(n.gpus ? n.gpus->value : 0);
  where[kGres] = n.gpus ? n.gpus->where : "not set";
  v[kFeatures] = features_text(n.features ? n.features->value : std::vector<std::string>{});
  where[kFeatures] = n.features ? n.features->where : "not set";
  return {v, where};
}

// Lines of the report, each naming its nodes as one host list: the nodes
// with the same sentence, in the order their first node came.
class Report {
 public:
  void add(std::size_t section, const std::string& sentence, const std::string& name) {
    auto [it, fresh] = index_.try_emplace({section, sentence}, entries_.size());
    if (fresh) entries_.push_back({section, sentence, {}});
    entries_[it->second].names.push_back(name);
  }
  std::vector<std::string> lines() const {
    std::vector<const Entry*> order;
    for (const Entry& e : entries_) order.push_back(&e);
    std::stable_sort(order.begin(), order.end(), [](const Entry* a, const Entry* b) { return a->section < b->section; });
    std::vector<std::string> out;
    for (const Entry* e : order) out.push_back(compress_hostlist(e->names) + ": " + e->sentence);
    return out;
  }

 private:
  struct Entry {
    std::size_t section;
    std::string sentence;
    std::vector<std::string> names;
  };
  std::map<std::pair<std::size_t, std::string>, std::size_t> index_;
  std::vector<Entry> entries_;
};

enum Section : std::size_t { kMissing, kExtra, kTwice, kFields };

}  // namespace

ConfComparison compare_slurm_conf(const std::vector<ConfNode>& conf, const SlurmNodes& alps,
                                  const NodeNameRule& rule) {
  std::map<std::string, std::vector<const ConfNode*>> by_name;
  for (const ConfNode& n : conf) by_name[n.name].push_back(&n);
  std::map<std::uint32_t, const SlurmConfNode*> by_nid;
  for (const SlurmConfNode& n : alps.nodes) by_nid[n.nid] = &n;
  Report report, aside;
  for (const SlurmConfNode& n : alps.nodes)
    if (by_name.find(n.name) == by_name.end()) report.add(kMissing, "in ALPS, not in slurm.conf", n.name);
  for (const ConfNode& c : conf) {
    const auto& defs = by_name[c.name];
    if (defs.front() != &c) continue;  // compared once, at its first definition
    if (defs.size() > 1) {
      std::string wheres;
      for (const ConfNode* d : defs) wheres += (wheres.empty() ? "" : ", ") + d->where;
      report.add(kTwice, "defined " + std::to_string(defs.size()) + " times in slurm.conf (" + wheres + ")", c.name);
    }
    const auto nid = rule.nid(c.name);
    const auto it = nid ? by_nid.find(*nid) : by_nid.end();
    if (it == by_nid.end() && nid && alps.without_layout.count(*nid) != 0) {
      aside.add(0, "in slurm.conf (" + c.where + "), not compared: " + alps.left_out.at(*nid), c.name);
      continue;
    }
    if (it == by_nid.end()) {
      std::string why = "not in ALPS";
      if (!nid) why += " (not a name of the rule " + rule.format() + ")";
      else if (auto l = alps.left_out.find(*nid); l != alps.left_out.end()) why = "left out by ALPS: " + l->second;
      report.add(kExtra, "in slurm.conf (" + c.where + "), " + why, c.name);
      continue;
    }
    const Values want = alps_values(it->second->layout);
    const auto [have, where] = conf_values(c);
    for (std::size_t f = 0; f < kFieldCount; ++f)
      if (have[f] != want[f])
        report.add(kFields + f, std::string(kFieldNames[f]) + " is " + have[f] + " in slurm.conf (" + where[f] +
                                    "), " + want[f] + " in ALPS",
                   c.name);
  }
  return ConfComparison{report.lines(), aside.lines()};
}

Result<std::vector<ConfNode>> parse_slurm_conf_nodes(std::string_view text, const std::string& file,
                                                     const IncludeLoader& include, const ConfLimits& limits) {
  Reader reader{include, limits, {}, {}, 0, {}};
  if (Status s = reader.file(text, file, 0); !s.is_ok()) return s;
  return std::move(reader.nodes);
}

}  // namespace basild
