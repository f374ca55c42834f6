#include "tests/support/prometheus_text.h"

#include <map>
#include <set>

namespace basil_test {

namespace {

struct Family {
  bool help = false;
  std::string type;
};

// The family a sample's name belongs to, given the families declared.
std::string family_of(const std::string& name, const std::map<std::string, Family>& families) {
  if (families.count(name) != 0) return name;
  for (std::string_view suffix : {"_sum", "_count", "_bucket"}) {
    if (name.size() <= suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const std::string base = name.substr(0, name.size() - suffix.size());
    auto it = families.find(base);
    if (it != families.end() && (it->second.type == "summary" || it->second.type == "histogram") &&
        (suffix != "_bucket" || it->second.type == "histogram"))
      return base;
  }
  return name;
}

}  // namespace

std::vector<std::string> prometheus_problems(std::string_view text) {
  std::vector<std::string> problems;
  std::map<std::string, Family> families;
  std::set<std::string> sampled;  // families whose samples have started
  std::string last;               // the family of the previous sample
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string line(text.substr(pos, end - pos));
    pos = end + 1;
    if (line.empty()) continue;
    if (line.rfind("# HELP ", 0) == 0 || line.rfind("# TYPE ", 0) == 0) {
      const std::string rest = line.substr(7);
      const std::string name = rest.substr(0, rest.find(' '));
      Family& f = families[name];
      if (line[2] == 'H') {
        if (f.help) problems.push_back(name + ": a second HELP");
        f.help = true;
      } else {
        if (!f.type.empty()) problems.push_back(name + ": a second TYPE");
        f.type = rest.size() > name.size() ? rest.substr(name.size() + 1) : "";
        if (f.type == "counter" && !name.ends_with("_total"))
          problems.push_back(name + ": a counter whose name does not end in _total");
      }
      if (sampled.count(name) != 0) problems.push_back(name + ": HELP or TYPE after its samples");
      continue;
    }
    if (line[0] == '#') continue;
    const std::string name = line.substr(0, line.find_first_of("{ "));
    const std::string family = family_of(name, families);
    auto it = families.find(family);
    if (it == families.end() || !it->second.help || it->second.type.empty()) {
      problems.push_back(name + ": a sample without HELP and TYPE before it");
    } else if (family != last && sampled.count(family) != 0) {
      problems.push_back(name + ": samples of one family apart from each other");
    }
    sampled.insert(family);
    last = family;
  }
  return problems;
}

}  // namespace basil_test
