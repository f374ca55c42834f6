#include "slurm/spank/settings.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <string_view>

#include "slurm/spank/cpu_set.h"

namespace basild::spank {

namespace {

constexpr unsigned kMaxCpus = 1u << 16;  // a node of more CPUs is a typing error

std::optional<unsigned> positive(std::string_view s) {
  unsigned v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v == 0 || v > kMaxCpus) return std::nullopt;
  return v;
}

struct Shape {
  unsigned sockets = 0, cores = 0, threads = 0;
};

// "2x8x2"
std::optional<Shape> parse_shape(std::string_view s) {
  const std::size_t x1 = s.find('x');
  const std::size_t x2 = x1 == std::string_view::npos ? x1 : s.find('x', x1 + 1);
  if (x2 == std::string_view::npos) return std::nullopt;
  const auto a = positive(s.substr(0, x1));
  const auto b = positive(s.substr(x1 + 1, x2 - x1 - 1));
  const auto c = positive(s.substr(x2 + 1));
  if (!a || !b || !c || std::size_t{*a} * *b * *c > kMaxCpus) return std::nullopt;
  return Shape{*a, *b, *c};
}

std::string site_error(const std::string& what) { return "plugstack.conf: reduced_auto_affinity: " + what; }

// The layout from layout=, numbering= and cpus=.
SiteParse layout_from(const std::map<std::string, std::string>& given) {
  SiteParse out;
  const auto layout = given.find("layout");
  const auto numbering = given.find("numbering");
  const auto cpus = given.find("cpus");
  if (layout == given.end()) {
    if (numbering != given.end() || cpus != given.end())
      out.error = site_error("numbering= and cpus= describe a layout= and there is none");
    return out;
  }
  const auto shape = parse_shape(layout->second);
  if (!shape) {
    out.error = site_error("layout=" + layout->second +
                           " is not SOCKETSxCORESxTHREADS (sockets, cores per socket, threads per core: 2x8x2)");
    return out;
  }
  if (numbering != given.end() && cpus != given.end()) {
    out.error = site_error("numbering= and cpus= both number the layout's CPUs: give one");
    return out;
  }
  if (cpus != given.end()) {
    const std::size_t want = std::size_t{shape->sockets} * shape->cores * shape->threads;
    std::vector<unsigned> list;
    // The CPU numbers in the order given: a list of single numbers and ranges.
    std::string_view rest = cpus->second;
    bool good = !rest.empty();
    while (good && !rest.empty()) {
      const std::size_t comma = rest.find(',');
      const auto part = parse_cpu_list(rest.substr(0, comma), kMaxCpus);
      good = part && !part->empty();
      if (good) list.insert(list.end(), part->begin(), part->end());
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    CpuSet distinct = list;
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    if (!good || list.size() != want || distinct.size() != want) {
      out.error = site_error("cpus=" + cpus->second + " must give " + std::to_string(want) +
                             " different CPU numbers, one per (socket, core, thread) of layout=" + layout->second);
      return out;
    }
    out.settings.layout = listed_layout(shape->sockets, shape->cores, shape->threads, list);
    return out;
  }
  Numbering n = Numbering::kCoresFirst;
  if (numbering != given.end()) {
    if (numbering->second == "threads") {
      n = Numbering::kThreadsAdjacent;
    } else if (numbering->second != "cores") {
      out.error = site_error("numbering=" + numbering->second + " is neither cores nor threads");
      return out;
    }
  }
  out.settings.layout = uniform_layout(shape->sockets, shape->cores, shape->threads, n);
  return out;
}

}  // namespace

SiteParse parse_site_arguments(const std::vector<std::string>& args) {
  std::map<std::string, std::string> given;
  for (const std::string& a : args) {
    const std::size_t eq = a.find('=');
    const std::string key = a.substr(0, eq);
    if (eq == std::string::npos || (key != "layout" && key != "numbering" && key != "cpus"))
      return {{}, site_error("unknown argument '" + a + "' (the arguments are layout=, numbering= and cpus=)")};
    if (!given.emplace(key, a.substr(eq + 1)).second) return {{}, site_error(key + "= is given twice")};
  }
  return layout_from(given);
}

UserParse parse_user_option(const std::string& value) {
  UserParse out;
  bool off = false, help = false;
  std::string_view rest = value;
  std::size_t words = 0;
  while (true) {
    const std::size_t comma = rest.find(',');
    std::string_view w = rest.substr(0, comma);
    while (!w.empty() && w.front() == ' ') w.remove_prefix(1);
    while (!w.empty() && w.back() == ' ') w.remove_suffix(1);
    if (w == "on") {
      // the default of any value but off and help
    } else if (w == "off") {
      off = true;
    } else if (w == "help") {
      help = true;
    } else if (w == "v" || w == "verbose") {
      out.choice.verbose = true;
    } else {
      out.error = "--reduced-auto-affinity=" + value + ": '" + std::string(w) +
                  "' is not one of on, off, verbose (v) and help (on,v binds and prints each task's mask)";
      return out;
    }
    ++words;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  if (help) {
    out.choice.mode = UserChoice::Mode::kHelp;
  } else if (off && words > 1) {
    out.error = "--reduced-auto-affinity=" + value + ": off takes no other word";
  } else {
    out.choice.mode = off ? UserChoice::Mode::kOff : UserChoice::Mode::kOn;
  }
  return out;
}

std::string help_text() {
  return "--reduced-auto-affinity=on|off|verbose|help  (reduced_auto_affinity(8))\n"
         "  on       bind each task to CPUs as ALPS does on a Cray: one CPU per core, a task's\n"
         "           CPUs (--cpus-per-task) on consecutive cores of one socket, sockets filled\n"
         "           with whole tasks from their first core; a step that does not fit so is\n"
         "           refused (bind it with srun --cpu-bind=mask_cpu:... instead)\n"
         "  verbose  (or v, or on,v) as on, and print each task's mask as --cpu-bind=verbose does\n"
         "  off      leave the binding to Slurm (the default)\n"
         "  help     print this\n";
}

}  // namespace basild::spank
