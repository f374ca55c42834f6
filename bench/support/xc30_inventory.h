// Builds XC30-like 1.3 INVENTORY models of any size for benchmarks and
// tests: 2 sockets x 1 segment x 8 compute units x 2 threads = 32
// processors, 32 GiB per segment (64 GiB per node), the first nodes
// allocated to `reservations` reservations of `nodes_per_reservation` nodes.
#pragma once

#include <cstdint>
#include <string>

#include "basil_proto/model.h"

namespace basil::bench {

inline std::string cname(std::uint32_t nid) {
  // Cray cnames c<X>-<Y>c<C>s<S>n<N>: 3 chassis x 8 slots x 4
  // nodes = 96 nodes per cabinet, 16 cabinets per row.
  std::uint32_t cab = nid / 96, in_cab = nid % 96;
  std::uint32_t chassis = in_cab / 32, slot = (in_cab % 32) / 4, node = nid % 4;
  return "c" + std::to_string(cab % 16) + "-" + std::to_string(cab / 16) + "c" + std::to_string(chassis) +
         "s" + std::to_string(slot) + "n" + std::to_string(node);
}

inline Response xc30_inventory(std::uint32_t nodes, std::uint32_t reservations,
                               std::uint32_t nodes_per_reservation = 20) {
  Inventory inv;
  inv.mpp_host = "xc30";
  inv.timestamp = 1380000000;
  inv.changecount = 14;
  inv.schedchangecount = 9;
  inv.nodes.reserve(nodes);
  for (std::uint32_t i = 0; i < nodes; ++i) {
    Node n;
    n.node_id = 24 + i;
    n.name = cname(24 + i);
    std::uint32_t r = i / nodes_per_reservation;
    bool allocated = r < reservations;
    for (std::uint32_t s = 0; s < 2; ++s) {
      Socket sock;
      sock.ordinal = s;
      sock.clock_mhz = 2600;
      Segment seg;
      seg.ordinal = 0;
      for (std::uint32_t c = 0; c < 8; ++c) {
        ComputeUnit cu;
        cu.ordinal = c;
        for (std::uint32_t t = 0; t < 2; ++t) {
          Processor p;
          p.ordinal = t;
          if (allocated) p.allocations.push_back(r + 1);
          cu.processors.push_back(std::move(p));
        }
        seg.compute_units.push_back(std::move(cu));
      }
      Memory m{MemoryType::kOS, 4, 8388608, {}};
      if (allocated) m.allocations.push_back(MemoryAllocation{r + 1, 16 * 1000 * 256});
      seg.memory.push_back(std::move(m));
      sock.segments.push_back(std::move(seg));
      n.sockets.push_back(std::move(sock));
    }
    inv.nodes.push_back(std::move(n));
  }
  for (std::uint32_t r = 0; r < reservations; ++r) {
    Reservation res;
    res.reservation_id = r + 1;
    res.user_name = "user" + std::to_string(r % 17);
    res.time_stamp = 1380000000 + r;
    res.batch_id = std::to_string(149700 + r);
    res.reservation_mode = ReservationMode::kExclusive;
    res.gpc_mode = GpcMode::kNone;
    Application placeholder{1000 + r, 0, 0, 0, {Command{std::uint64_t{nodes_per_reservation} * 32, 1, 32, 1000, "XT", "BASIL"}}};
    Application aprun{230893 + r, 12345, 100, 1380000100 + r, {Command{std::uint64_t{nodes_per_reservation} * 32, 1, 32, 1000, "XT", "a.out"}}};
    res.applications = {placeholder, aprun};
    inv.reservations.push_back(std::move(res));
  }
  Response resp;
  resp.protocol = "1.3";
  resp.dialect = Dialect::k1_3;
  resp.method = Method::kQuery;
  resp.body = std::move(inv);
  return resp;
}

}  // namespace basil::bench
