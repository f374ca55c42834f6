// A node's processors as the binding sees them: sockets, their cores, and
// each core's hardware threads as the operating system numbers them (the
// numbers sched_setaffinity takes). Intel's Linux numbering gives core c's
// two threads the numbers c and c + 16 on a 2 x 8 x 2 node; others number a
// core's threads next to each other: both are layouts here. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "slurm/spank/cpu_set.h"

namespace basild::spank {

struct Core {
  std::vector<unsigned> threads;  // OS CPU numbers, the core's first thread first
};

struct Socket {
  std::vector<Core> cores;  // in the order tasks fill them
};

struct NodeLayout {
  std::vector<Socket> sockets;

  // "2 sockets x 8 cores x 2 threads" (uneven sockets: "2 sockets of 8 and
  // 6 cores, 1 to 2 threads per core").
  std::string describe() const;
  // Every CPU number of the node, sorted.
  CpuSet cpus() const;
};

// How a declared layout numbers its CPUs.
enum class Numbering : std::uint8_t {
  // Every core's first thread, socket by socket, then every core's second
  // thread in the same order, ...: Linux on Intel (core c: c, c + S*C, ...).
  kCoresFirst,
  // A core's threads next to each other (core c: c*T, c*T + 1, ...).
  kThreadsAdjacent,
};

// S sockets x C cores x T threads numbered as `numbering` says.
NodeLayout uniform_layout(unsigned sockets, unsigned cores, unsigned threads, Numbering numbering);
// S x C x T taking the CPU numbers from `cpus`, given in (socket, core,
// thread) order: cpus[(s*C + c)*T + t]. Needs S*C*T numbers.
NodeLayout listed_layout(unsigned sockets, unsigned cores, unsigned threads, const std::vector<unsigned>& cpus);

}  // namespace basild::spank
