#include "emulator/core/faults.h"

#include <algorithm>

namespace emu {
namespace {

std::uint64_t splitmix(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double uniform(std::uint64_t& x) { return static_cast<double>(splitmix(x) >> 11) * 0x1.0p-53; }

std::uint64_t hash_str(const std::string& s) {
  std::uint64_t h = 1469598103934665603ULL;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  return h;
}

}  // namespace

double cscs_latency_ms(const std::string& method, std::uint64_t nodes) {
  // Two points per method (8-node TDS, 2256-node XC30), linear in nodes between
  // and beyond them, never below the smaller of the two.
  struct Point {
    const char* method;
    double at8, at2256;
  };
  static constexpr Point kPoints[] = {
      {"INVENTORY", 48, 201}, {"SUMMARY", 44, 29},  {"RESERVE", 213, 108}, {"CONFIRM", 213, 395},
      {"RELEASE", 213, 107},  {"ENGINE", 40, 29},   {"STATUS", 44, 29},    {"SWITCH", 213, 108},
  };
  for (const Point& p : kPoints) {
    if (method != p.method) continue;
    const double slope = (p.at2256 - p.at8) / (2256.0 - 8.0);
    const double v = p.at8 + slope * (static_cast<double>(nodes) - 8.0);
    return std::max(v, std::min(p.at8, p.at2256));
  }
  return 40;
}

FaultPlan plan_faults(const FaultConfig& faults, const std::string& method, std::uint64_t nodes,
                      std::uint64_t seq) {
  FaultPlan plan;
  const MethodFaults* m = nullptr;
  auto it = faults.methods.find(method);
  if (it != faults.methods.end()) m = &it->second;
  else if ((it = faults.methods.find("*")) != faults.methods.end()) m = &it->second;
  if (faults.cscs_model) plan.latency_ms += faults.cscs_scale * cscs_latency_ms(method, nodes);
  if (m == nullptr) return plan;
  std::uint64_t x = faults.seed ^ (seq * 0x2545f4914f6cdd1dULL) ^ hash_str(method);
  // One die per fault, always rolled in the same order.
  const double d_transient = uniform(x), d_hang = uniform(x), d_truncate = uniform(x), d_garbage = uniform(x),
               d_exit = uniform(x), d_stderr = uniform(x);
  plan.latency_ms += m->latency_ms + m->latency_per_node_us * static_cast<double>(nodes) / 1000.0;
  plan.transient = d_transient < m->transient_rate;
  plan.hang = d_hang < m->hang_rate;
  plan.truncate = d_truncate < m->truncate_rate;
  plan.garbage = d_garbage < m->garbage_rate;
  plan.exit_code = d_exit < m->exit_rate ? faults.exit_code : 0;
  plan.stderr_noise = d_stderr < m->stderr_rate;
  return plan;
}

std::string garbage_bytes(std::uint64_t seed, std::uint64_t seq, std::size_t size) {
  std::uint64_t x = seed ^ (seq << 1) ^ 0x5bd1e995ULL;
  std::string out;
  out.reserve(size);
  while (out.size() < size) {
    const auto c = static_cast<char>(splitmix(x) & 0xff);
    out.push_back(c == '<' ? '#' : c);
  }
  return out;
}

}  // namespace emu
