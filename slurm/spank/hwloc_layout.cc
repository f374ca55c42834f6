#include "slurm/spank/hwloc_layout.h"

#include <hwloc.h>

#include <memory>

namespace basild::spank {

namespace {

struct TopologyDeleter {
  void operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }
};
using Topology = std::unique_ptr<hwloc_topology, TopologyDeleter>;

// The cores inside `cpuset`, each with its PUs' OS numbers, in hwloc's
// (logical) order; each PU a core of its own on a machine hwloc finds no
// cores on.
Socket cores_in(hwloc_topology_t topology, hwloc_const_cpuset_t cpuset) {
  Socket socket;
  if (hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE) == 0) {
    hwloc_obj_t pu = nullptr;
    while ((pu = hwloc_get_next_obj_inside_cpuset_by_type(topology, cpuset, HWLOC_OBJ_PU, pu)) != nullptr)
      socket.cores.push_back(Core{{pu->os_index}});
    return socket;
  }
  hwloc_obj_t core = nullptr;
  while ((core = hwloc_get_next_obj_inside_cpuset_by_type(topology, cpuset, HWLOC_OBJ_CORE, core)) != nullptr) {
    Core c;
    hwloc_obj_t pu = nullptr;
    while ((pu = hwloc_get_next_obj_inside_cpuset_by_type(topology, core->cpuset, HWLOC_OBJ_PU, pu)) != nullptr)
      c.threads.push_back(pu->os_index);
    if (!c.threads.empty()) socket.cores.push_back(std::move(c));
  }
  return socket;
}

}  // namespace

HwlocLayout hwloc_layout(const std::string& synthetic) {
  HwlocLayout out;
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) {
    out.error = "hwloc could not start (hwloc_topology_init)";
    return out;
  }
  Topology topology(raw);
  if (!synthetic.empty() && hwloc_topology_set_synthetic(raw, synthetic.c_str()) != 0) {
    out.error = "hwloc does not take the synthetic topology '" + synthetic + "'";
    return out;
  }
  if (hwloc_topology_load(raw) != 0) {
    out.error = "hwloc could not read this node's topology (hwloc_topology_load)";
    return out;
  }
  const int packages = hwloc_get_nbobjs_by_type(raw, HWLOC_OBJ_PACKAGE);
  for (int i = 0; i < packages; ++i) {
    const hwloc_obj_t p = hwloc_get_obj_by_type(raw, HWLOC_OBJ_PACKAGE, static_cast<unsigned>(i));
    Socket s = cores_in(raw, p->cpuset);
    if (!s.cores.empty()) out.layout.sockets.push_back(std::move(s));
  }
  if (out.layout.sockets.empty()) {
    Socket s = cores_in(raw, hwloc_topology_get_topology_cpuset(raw));
    if (!s.cores.empty()) out.layout.sockets.push_back(std::move(s));
  }
  if (out.layout.sockets.empty()) out.error = "hwloc finds no core on this node";
  return out;
}

}  // namespace basild::spank
