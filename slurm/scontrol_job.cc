#include "slurm/scontrol_job.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <vector>

#include "basild/core/slurm_names.h"
#include "slurm/text.h"

namespace basild::slurm {

using basil::Result;
using basil::Status;

namespace {

Status bad(std::string m) { return invalid(std::move(m)); }

bool space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// The output split at whitespace: scontrol's separators, and whatever a
// job's own strings hold.
std::vector<std::string_view> tokens(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && space(text[i])) ++i;
    const std::size_t start = i;
    while (i < text.size() && !space(text[i])) ++i;
    if (i > start) out.push_back(text.substr(start, i - start));
  }
  return out;
}

// A field name as Slurm prints it: letters, digits, '/', ':' and '_'.
bool key_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '/' || c == ':' || c == '_';
}

struct Field {
  std::string_view key, value;
};

std::optional<Field> field(std::string_view token) {
  const auto eq = token.find('=');
  if (eq == 0 || eq == std::string_view::npos) return std::nullopt;
  const std::string_view key = token.substr(0, eq);
  if (!std::all_of(key.begin(), key.end(), key_char)) return std::nullopt;
  return Field{key, token.substr(eq + 1)};
}

template <typename T>
std::optional<T> number(std::string_view text) {
  if (!all_digits(text)) return std::nullopt;
  T v{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (;;) {
    const auto at = text.find(sep, start);
    out.push_back(text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

// The record must be job `job_id`'s: scontrol prints JobId first, before
// any of the job's own text.
Status check_record(const std::vector<std::string_view>& toks, std::string_view job_id) {
  if (toks.empty()) return bad("scontrol printed nothing for job " + std::string(job_id));
  if (toks.front() != "JobId=" + std::string(job_id))
    return bad("scontrol's output is not job " + std::string(job_id) + "'s record (it begins \"" +
               std::string(toks.front().substr(0, 40)) + "\")");
  return {};
}

using Block = std::map<std::string_view, std::string_view>;

// Every block: from a NodeList= token, whitespace-free fields up to
// MinTmpDiskNode=, no key twice. A run that breaks off is no block.
std::vector<Block> blocks(const std::vector<std::string_view>& toks) {
  constexpr std::size_t kMaxFields = 40;
  std::vector<Block> out;
  for (std::size_t i = 0; i < toks.size(); ++i) {
    auto first = field(toks[i]);
    if (!first || first->key != "NodeList") continue;
    Block b;
    for (std::size_t j = i; j < toks.size() && j - i < kMaxFields; ++j) {
      auto f = field(toks[j]);
      if (!f || !b.emplace(f->key, f->value).second) break;
      if (f->key == "MinTmpDiskNode") {
        out.push_back(std::move(b));
        break;
      }
    }
  }
  return out;
}

// "NumNodes=2" or, for a range, its lower bound ("2-4").
Result<std::uint32_t> node_count(std::string_view text) {
  const auto dash = text.find('-');
  auto n = number<std::uint32_t>(text.substr(0, dash));
  if (!n) return bad("NumNodes=" + std::string(text) + " is not a node count");
  return *n;
}

// A count or N/A (none); `zero_is_none` for fields where 0 means unset.
Result<std::optional<std::uint64_t>> count_or_none(const Block& b, std::string_view key, bool zero_is_none = false) {
  const auto it = b.find(key);
  if (it == b.end() || it->second == "N/A" || it->second == "*") return std::optional<std::uint64_t>();
  auto n = number<std::uint64_t>(it->second);
  if (!n) return bad(std::string(key) + "=" + std::string(it->second) + " is not a number");
  if (zero_is_none && *n == 0) return std::optional<std::uint64_t>();
  return std::optional<std::uint64_t>(*n);
}

std::optional<std::uint32_t> to_u32(std::optional<std::uint64_t> v) {
  if (!v || *v > UINT32_MAX) return std::nullopt;
  return static_cast<std::uint32_t>(*v);
}

// NtasksPerN:B:S:C=8:0:*:2 -> tasks per node 8, per core 2.
Status read_tasks_per(const Block& b, JobShape& s) {
  const auto it = b.find("NtasksPerN:B:S:C");
  if (it == b.end()) return bad("no NtasksPerN:B:S:C field");
  const auto parts = split(it->second, ':');
  if (parts.size() != 4) return bad("NtasksPerN:B:S:C=" + std::string(it->second) + " does not have four fields");
  Block one{{"n", parts[0]}, {"c", parts[3]}};
  auto per_node = count_or_none(one, "n", true);
  auto per_core = count_or_none(one, "c", true);
  if (!per_node || !per_core) return bad("NtasksPerN:B:S:C=" + std::string(it->second) + " does not parse");
  s.ntasks_per_node = to_u32(*per_node);
  s.ntasks_per_core = to_u32(*per_core);
  return {};
}

Status read_memory(const Block& b, JobShape& s) {
  for (auto [key, field] : {std::pair{"MinMemoryNode", &JobShape::mem_per_node_mb},
                            std::pair{"MinMemoryCPU", &JobShape::mem_per_cpu_mb}}) {
    const auto it = b.find(key);
    if (it == b.end()) continue;
    auto mb = parse_memory_mb(it->second);
    if (!mb) return bad(std::string(key) + "=" + std::string(it->second) + " is not a memory size");
    if (*mb > 0) s.*field = *mb;
  }
  return {};
}

Result<JobShape> read_block(const Block& b) {
  for (const char* key : {"NumNodes", "NumTasks", "CPUs/Task", "NtasksPerN:B:S:C"})
    if (!b.count(key)) return bad(std::string("the job's fields have no ") + key);
  JobShape s;
  s.node_list = std::string(b.at("NodeList"));
  auto nodes = node_count(b.at("NumNodes"));
  if (!nodes) return nodes.status();
  s.num_nodes = *nodes;
  auto tasks = count_or_none(b, "NumTasks");
  if (!tasks) return tasks.status();
  s.ntasks = *tasks;
  auto cpt = count_or_none(b, "CPUs/Task");
  if (!cpt) return cpt.status();
  s.cpus_per_task = to_u32(*cpt);
  if (auto st = read_tasks_per(b, s); !st) return st;
  if (auto st = read_memory(b, s); !st) return st;
  return s;
}

bool same_nodes(std::string_view a, std::string_view b) {
  auto x = expand_hostlist(a);
  auto y = expand_hostlist(b);
  if (!x || !y) return a == b;
  std::sort(x->begin(), x->end());
  std::sort(y->begin(), y->end());
  return *x == *y;
}

// The GPUs per node of the TresPer* fields, all occurrences agreeing.
Result<std::uint32_t> read_gpus(const std::vector<std::string_view>& toks, const JobShape& s) {
  std::map<std::string_view, std::set<std::string_view>> seen;
  for (const auto& t : toks)
    if (auto f = field(t); f && (f->key == "TresPerNode" || f->key == "TresPerJob" || f->key == "TresPerTask"))
      seen[f->key].insert(f->value);
  std::map<std::string_view, std::uint64_t> count;
  for (const auto& [key, values] : seen) {
    if (values.size() > 1)
      return bad("scontrol's output has " + std::to_string(values.size()) + " different " + std::string(key) +
                 " fields (a job string imitating one?)");
    auto n = gpu_count(*values.begin());
    if (!n) return bad(std::string(key) + "=" + std::string(*values.begin()) + " does not parse");
    count[key] = *n;
  }
  const std::uint64_t nodes = std::max<std::uint64_t>(s.num_nodes, 1);
  std::uint64_t per_node = count["TresPerNode"];
  if (per_node == 0 && count["TresPerJob"] > 0) per_node = (count["TresPerJob"] + nodes - 1) / nodes;
  if (per_node == 0 && count["TresPerTask"] > 0) {
    const std::uint64_t tasks = s.ntasks_per_node.value_or((s.ntasks.value_or(1) + nodes - 1) / nodes);
    per_node = count["TresPerTask"] * std::max<std::uint64_t>(tasks, 1);
  }
  if (per_node > UINT32_MAX) return bad("the job asks more than 2^32-1 GPUs per node");
  return static_cast<std::uint32_t>(per_node);
}

}  // namespace

std::optional<std::uint64_t> parse_memory_mb(std::string_view text) {
  if (text.empty()) return std::nullopt;
  // The unit as a power of 1024 over KB: K 0, M 1 (also a bare number), G 2, T 3, P 4.
  unsigned power = 1;
  if (!is_digit(text.back())) {
    constexpr std::string_view kUnits = "KMGTP";
    const auto unit = kUnits.find(text.back());
    if (unit == std::string_view::npos) return std::nullopt;
    power = static_cast<unsigned>(unit);
    text.remove_suffix(1);
  }
  const auto dot = text.find('.');
  auto whole = number<std::uint64_t>(text.substr(0, dot));
  if (!whole) return std::nullopt;
  std::uint64_t hundredths = 0;
  if (dot != std::string_view::npos) {
    const auto frac = text.substr(dot + 1);
    auto f = frac.size() <= 2 ? number<std::uint64_t>(frac) : std::nullopt;
    if (!f) return std::nullopt;
    hundredths = frac.size() == 1 ? *f * 10 : *f;
  }
  // Hundredths of a KB (overflow: no size), then whole MB or nothing.
  std::uint64_t kb100 = 0;
  if (__builtin_mul_overflow(*whole, std::uint64_t{100}, &kb100) || __builtin_add_overflow(kb100, hundredths, &kb100))
    return std::nullopt;
  for (unsigned i = 0; i < power; ++i)
    if (__builtin_mul_overflow(kb100, std::uint64_t{1024}, &kb100)) return std::nullopt;
  constexpr std::uint64_t kMb = 100 * 1024;
  if (kb100 % kMb != 0) return std::nullopt;
  return kb100 / kMb;
}

std::optional<std::uint64_t> gpu_count(std::string_view tres) {
  std::uint64_t total = 0;
  for (std::string_view item : split(tres, ',')) {
    if (item.starts_with("gres:") || item.starts_with("gres/")) item.remove_prefix(5);
    if (item == "gpu") {  // no count: one
      ++total;
      continue;
    }
    if (!item.starts_with("gpu:") && !item.starts_with("gpu=")) continue;  // another TRES
    // COUNT, TYPE (one) or TYPE:COUNT.
    const auto parts = split(item.substr(4), ':');
    auto n = number<std::uint64_t>(parts.back());
    if (parts.size() > 2 || (parts.size() == 2 && !n) || parts.front().empty()) return std::nullopt;
    total += n.value_or(1);
  }
  return total;
}

Result<JobShape> parse_job_shape(std::string_view output, std::string_view job_id, std::string_view node_list) {
  const auto toks = tokens(output);
  if (auto s = check_record(toks, job_id); !s) return s;
  std::optional<JobShape> shape;
  for (const Block& b : blocks(toks)) {
    if (!node_list.empty() && !same_nodes(b.at("NodeList"), node_list)) continue;
    auto s = read_block(b);
    if (!s) return s.status();
    if (shape && !(*shape == *s))
      return bad("scontrol's output holds different job shapes for nodes " + std::string(node_list) +
                 " (a job string imitating scontrol's fields?)");
    shape = std::move(*s);
  }
  if (!shape)
    return bad("scontrol's output for job " + std::string(job_id) + " has no NodeList ... MinTmpDiskNode fields" +
               (node_list.empty() ? std::string() : " for nodes " + std::string(node_list)));
  auto gpus = read_gpus(toks, *shape);
  if (!gpus) return gpus.status();
  shape->gpus_per_node = *gpus;
  return *shape;
}

Result<JobStart> parse_job_start(std::string_view output, std::string_view job_id) {
  const auto toks = tokens(output);
  if (auto s = check_record(toks, job_id); !s) return s;
  std::set<std::string_view> batch, sid;
  for (std::string_view t : toks) {
    const auto f = field(t);
    if (!f) continue;
    if (f->key == "BatchFlag") batch.insert(f->value);
    if (f->key == "AllocNode:Sid") sid.insert(f->value.substr(f->value.rfind(':') + 1));
  }
  if (batch.size() > 1 || sid.size() > 1)
    return bad("scontrol's output holds different BatchFlag or AllocNode:Sid fields (a job string imitating them?)");
  if (batch.empty() || (*batch.begin() != "0" && *batch.begin() != "1"))
    return bad("scontrol's output for job " + std::string(job_id) + " has no BatchFlag of 0 or 1");
  JobStart start{.batch = *batch.begin() == "1"};
  if (!sid.empty()) {
    const auto n = number<std::uint64_t>(*sid.begin());
    if (!n) return bad("scontrol's AllocNode:Sid ends in \"" + std::string(*sid.begin()) + "\", not a session id");
    start.alloc_sid = *n;
  }
  return start;
}

Result<std::optional<std::uint64_t>> parse_reservation_comment(std::string_view output, std::string_view job_id) {
  const auto toks = tokens(output);
  if (auto s = check_record(toks, job_id); !s) return s;
  std::set<std::uint64_t> ids;
  for (std::size_t i = 0; i + 2 < toks.size(); ++i) {
    if (toks[i] != "AdminComment=basil:" || toks[i + 1] != "reservation") continue;
    if (auto id = number<std::uint64_t>(toks[i + 2])) ids.insert(*id);
  }
  if (ids.size() > 1)
    return bad("scontrol's output names " + std::to_string(ids.size()) +
               " different basil reservations (a job string imitating the AdminComment?)");
  if (ids.empty()) return std::optional<std::uint64_t>();
  return std::optional<std::uint64_t>(*ids.begin());
}

}  // namespace basild::slurm
