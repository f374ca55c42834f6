#include "slurm/spank/layout.h"

#include <algorithm>

namespace basild::spank {

namespace {

std::string plural(std::size_t n, const char* one) { return std::to_string(n) + " " + one + (n == 1 ? "" : "s"); }

}  // namespace

std::string NodeLayout::describe() const {
  std::size_t min_cores = SIZE_MAX, max_cores = 0, min_threads = SIZE_MAX, max_threads = 0;
  for (const Socket& s : sockets) {
    min_cores = std::min(min_cores, s.cores.size());
    max_cores = std::max(max_cores, s.cores.size());
    for (const Core& c : s.cores) {
      min_threads = std::min(min_threads, c.threads.size());
      max_threads = std::max(max_threads, c.threads.size());
    }
  }
  if (sockets.empty() || max_cores == 0) return "no cores";
  std::string out = plural(sockets.size(), "socket");
  if (min_cores == max_cores) {
    out += " x " + plural(max_cores, "core");
  } else {
    out += " of ";
    for (std::size_t i = 0; i < sockets.size(); ++i)
      out += (i == 0 ? "" : i + 1 == sockets.size() ? " and " : ", ") + std::to_string(sockets[i].cores.size());
    out += " cores";
  }
  if (min_threads == max_threads) return out + " x " + plural(max_threads, "thread");
  return out + ", " + std::to_string(min_threads) + " to " + std::to_string(max_threads) + " threads per core";
}

CpuSet NodeLayout::cpus() const {
  CpuSet out;
  for (const Socket& s : sockets)
    for (const Core& c : s.cores) out.insert(out.end(), c.threads.begin(), c.threads.end());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

NodeLayout uniform_layout(unsigned sockets, unsigned cores, unsigned threads, Numbering numbering) {
  std::vector<unsigned> cpus;
  cpus.reserve(std::size_t{sockets} * cores * threads);
  const unsigned all_cores = sockets * cores;
  for (unsigned core = 0; core < all_cores; ++core)  // core = s*C + c, across the node
    for (unsigned t = 0; t < threads; ++t)
      cpus.push_back(numbering == Numbering::kCoresFirst ? t * all_cores + core : core * threads + t);
  return listed_layout(sockets, cores, threads, cpus);
}

NodeLayout listed_layout(unsigned sockets, unsigned cores, unsigned threads, const std::vector<unsigned>& cpus) {
  NodeLayout out;
  std::size_t next = 0;
  out.sockets.resize(sockets);
  for (Socket& s : out.sockets) {
    s.cores.resize(cores);
    for (Core& c : s.cores)
      for (unsigned t = 0; t < threads && next < cpus.size(); ++t) c.threads.push_back(cpus[next++]);
  }
  return out;
}

}  // namespace basild::spank
