#include "emulator/core/claim.h"

#include <algorithm>

namespace emu {

using basil::Code;
using basil::Result;
using basil::Status;

namespace {

// The reservation's processors on one node that -j leaves usable.
std::uint32_t usable_processors(const Layout& layout, const Allocation& a, std::uint32_t cpus_per_cu) {
  if (cpus_per_cu == 0) return static_cast<std::uint32_t>(a.processors.size());
  const std::uint32_t threads = std::max<std::uint32_t>(1, layout.threads_per_cu);
  return static_cast<std::uint32_t>(std::count_if(a.processors.begin(), a.processors.end(),
                                                  [&](std::uint32_t p) { return p % threads < cpus_per_cu; }));
}

// Each reserved node's PEs at -d (and -j), before -N.
std::vector<std::uint64_t> per_node(const State& state, std::uint64_t reservation_id, const Shape& shape) {
  std::vector<std::uint64_t> out;
  const auto it = state.allocations.find(reservation_id);
  if (it == state.allocations.end()) return out;
  const std::uint32_t depth = std::max<std::uint32_t>(1, shape.depth);
  for (const Allocation& a : it->second) {
    const NodeRange* r = state.find_node(a.nid);
    if (r == nullptr) continue;
    out.push_back(usable_processors(state.system.layouts[r->layout], a, shape.cpus_per_cu) / depth);
  }
  return out;
}

std::string shape_words(const Shape& s) {
  return (s.nppn != 0 ? "-N " + std::to_string(s.nppn) + " " : std::string()) + "-d " + std::to_string(s.depth) +
         (s.cpus_per_cu != 0 ? " -j " + std::to_string(s.cpus_per_cu) : std::string());
}

// The sentence refusing a shape that does not fit, or "".
std::string misfit(const State& state, const Claim& c) {
  const std::string res = "resId " + std::to_string(c.reservation_id);
  std::uint32_t most_threads = 0;
  if (const auto it = state.allocations.find(c.reservation_id); it != state.allocations.end())
    for (const Allocation& a : it->second)
      if (const NodeRange* r = state.find_node(a.nid))
        most_threads = std::max(most_threads, state.system.layouts[r->layout].threads_per_cu);
  if (c.shape.cpus_per_cu > most_threads)
    return "apsched: -j " + std::to_string(c.shape.cpus_per_cu) + " exceeds the " + std::to_string(most_threads) +
           " CPUs per compute unit of " + res + "'s nodes";
  const std::vector<std::uint64_t> nodes = per_node(state, c.reservation_id, c.shape);
  const std::uint64_t widest = nodes.empty() ? 0 : *std::max_element(nodes.begin(), nodes.end());
  if (c.shape.nppn != 0 && c.shape.nppn > widest)
    return "apsched: claim exceeds reservation's CPUs per node: " + shape_words(c.shape) + " on " + res;
  const std::uint64_t fits = claim_capacity(state, c.reservation_id, c.shape);
  if (fits >= c.shape.width) return "";
  return std::string("apsched: claim exceeds reservation's ") + (c.shape.nppn != 0 ? "node-count" : "CPUs") + ": " +
         res + " places " + std::to_string(fits) + " of the " + std::to_string(c.shape.width) + " PEs at " +
         shape_words(c.shape);
}

}  // namespace

std::uint64_t claim_capacity(const State& state, std::uint64_t reservation_id, const Shape& shape) {
  std::uint64_t total = 0;
  for (std::uint64_t n : per_node(state, reservation_id, shape))
    total += shape.nppn != 0 ? std::min<std::uint64_t>(n, shape.nppn) : n;
  return total;
}

Result<Delta> claim(const State& state, const Claim& c, std::uint64_t now, std::uint64_t* application_id) {
  const std::string id = std::to_string(c.reservation_id);
  const auto it = state.reservations.find(c.reservation_id);
  if (it == state.reservations.end() || it->second.released)
    return Status(Code::kReservationUnknown, kNoReservation + id);
  const ReservationRec& r = it->second;
  if (!r.confirmed) return Status(Code::kInvalidValue, kNotConfirmed + id);
  if (c.container != r.pagg_id)
    return Status(Code::kInvalidValue, "apsched: claim refused: the caller's " + c.container_kind + " " +
                                           std::to_string(c.container) + " is not the container resId " + id +
                                           " was confirmed with (" + std::to_string(r.pagg_id) + ")");
  if (c.shape.width == 0 || c.shape.depth == 0)
    return Status(Code::kInvalidValue, "apsched: claim refused: -n and -d must be at least 1");
  if (std::string why = misfit(state, c); !why.empty()) return Status(Code::kInvalidValue, why);
  AppStart start;
  start.reservation_id = c.reservation_id;
  start.user_id = c.user_id;
  start.group_id = c.group_id;
  start.cmd = c.cmd;
  start.width = c.shape.width;
  auto d = start_application(state, start, now, application_id);
  if (!d) return d;
  // The command as aprun placed it: its own depth and PEs per node.
  basil::Command& cmd = d->add_applications.front().commands.front();
  cmd.depth = c.shape.depth;
  cmd.nppn = c.shape.nppn;
  return d;
}

}  // namespace emu
