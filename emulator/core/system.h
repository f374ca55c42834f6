// The emulated machine: cabinet geometry (cnames from NIDs), node layout
// classes, node ranges, and the presets. Pure data and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "basil_proto/model.h"
#include "basil_proto/status.h"

namespace emu {

// NID = cabinet * cabinet_stride + chassis * chassis_stride + slot * nodes_per_slot + node,
// cabinet = column * rows + row, as NIDs were laid out on a real 2-row XT5
// (c1-1c2s1n3 is NID 455). XT cabinets have a stride of 128 with 96 nodes
// (3 chassis x 8 slots x 4), so their NIDs have gaps; XC cabinets
// (3 chassis x 16 slots x 4 = 192) have none.
// Where a NID sits: cabinet column and row, chassis, slot and node in the slot.
struct Position {
  std::uint32_t column = 0;
  std::uint32_t row = 0;
  std::uint32_t chassis = 0;
  std::uint32_t slot = 0;
  std::uint32_t node = 0;
  bool operator==(const Position&) const = default;
};

struct Geometry {
  std::uint32_t rows = 2;
  std::uint32_t chassis_per_cabinet = 3;
  std::uint32_t slots_per_chassis = 16;
  std::uint32_t nodes_per_slot = 4;
  std::uint32_t cabinet_stride = 0;  // 0: chassis_per_cabinet * chassis_stride()

  std::uint32_t chassis_stride() const { return slots_per_chassis * nodes_per_slot; }
  std::uint32_t cab_stride() const {
    return cabinet_stride != 0 ? cabinet_stride : chassis_per_cabinet * chassis_stride();
  }
  // True when the NID names a node position that exists in this geometry.
  bool valid(std::uint32_t nid) const;
  Position position(std::uint32_t nid) const;
  // "c<col>-<row>c<chassis>s<slot>n<node>".
  std::string cname(std::uint32_t nid) const;
  // The first `count` valid NIDs from `first` on, as inclusive ranges.
  std::vector<basil::NidList::Range> positions(std::uint32_t first, std::uint32_t count) const;
};

struct AccelSpec {
  std::string type = "GPU";
  std::string family = "UNKNOWN";
  std::uint32_t memory_mb = 0;
  std::uint32_t clock_mhz = 0;
};

// A node layout class: every node of a class looks the same. Processors are
// numbered node-wide: ((socket * segments + segment) * cus + cu) * threads + thread.
struct Layout {
  std::string name;
  std::uint32_t sockets = 1;
  std::uint32_t segments_per_socket = 1;
  std::uint32_t cus_per_segment = 1;
  std::uint32_t threads_per_cu = 1;
  basil::ProcArch proc_arch = basil::ProcArch::kX86_64;
  std::uint32_t clock_mhz = 2600;
  std::uint64_t memory_mb = 0;
  std::uint32_t page_size_kb = 4;
  std::vector<basil::Label> labels;
  std::optional<AccelSpec> accel;

  std::uint32_t segments() const { return sockets * segments_per_socket; }
  std::uint32_t compute_units() const { return segments() * cus_per_segment; }
  std::uint32_t processors() const { return compute_units() * threads_per_cu; }
  std::uint32_t procs_per_segment() const { return cus_per_segment * threads_per_cu; }
  std::uint64_t pages() const { return memory_mb * 1024 / page_size_kb; }
};

// A run of NIDs whose nodes share everything the emulator tracks per node.
// Node changes split and merge runs, so storage follows runs, not nodes.
struct NodeRange {
  std::uint32_t first = 0;
  std::uint32_t last = 0;  // inclusive
  std::uint32_t layout = 0;  // index into System::layouts
  basil::NodeRole role = basil::NodeRole::kBatch;
  basil::NodeState state = basil::NodeState::kUp;
  basil::NodeArch arch = basil::NodeArch::kXT;
  basil::AccelState accel_state = basil::AccelState::kUp;

  std::uint64_t size() const { return std::uint64_t{last} - first + 1; }
  bool same_kind(const NodeRange& o) const {
    return layout == o.layout && role == o.role && state == o.state && arch == o.arch &&
           accel_state == o.accel_state;
  }
};

// Faults the emulator injects per method, to test clients: latency, TRANSIENT
// failures, hangs, truncated or garbage output, a non-zero exit, stderr
// output; rates are probabilities in [0, 1].
struct MethodFaults {
  double latency_ms = 0;
  double latency_per_node_us = 0;
  double transient_rate = 0;
  double hang_rate = 0;
  double truncate_rate = 0;
  double garbage_rate = 0;
  double exit_rate = 0;
  double stderr_rate = 0;
  bool operator==(const MethodFaults&) const = default;
};

struct FaultConfig {
  std::uint64_t seed = 0;
  bool cscs_model = false;  // latency model calibrated on the CSCS paper's XC30 timings
  double cscs_scale = 1.0;
  int exit_code = 1;
  // A CONFIRM less than this many seconds (on the reservation's time_stamp,
  // whole seconds) after its RESERVE is answered PERMANENT "cannot find
  // resId", as an apsched that has not taken the reservation in yet
  // (Torque's TRQ-3023). 0: never.
  std::uint32_t confirm_too_soon_s = 0;
  // Keys: ENGINE INVENTORY SUMMARY STATUS RESERVE CONFIRM RELEASE SWITCH, or "*"
  // for every method without its own entry.
  std::map<std::string, MethodFaults> methods;
  bool operator==(const FaultConfig&) const = default;
};

// SWITCH as the emulated apsched does it (basil-emulator(1) SWITCH): ALPS's
// suspend/resume setting and its preconditions, and how long a switch takes.
struct SwitchModel {
  bool enabled = true;              // off: every SWITCH is refused PERMANENT
  std::uint32_t switch_ms = 500;    // a switch's length; QUERY STATUS says SWITCH meanwhile
  std::uint32_t max_coresident = 2; // reservations one node may hold, switched in or out
  bool empty_early = false;         // fault: STATUS says EMPTY while a SWITCH OUT is under way
  bool operator==(const SwitchModel&) const = default;
};

struct System {
  std::string mpp_host = "UNKNOWN";
  std::string cle = "5.2";
  bool gemini = false;              // Gemini interconnect (else the geometry decides: sdb.h)
  bool inventory_forms = true;      // honour INVENTORY's reduced request forms
  bool fsync = false;               // each change on disk before the answer (store.h)
  bool apsched_serial = false;      // apsched handles one change at a time (apsched/serial.h)
  SwitchModel switching;
  Geometry geometry;
  std::vector<Layout> layouts;
  std::vector<NodeRange> nodes;     // initial node ranges
  FaultConfig faults;
};

// Merges adjacent ranges of the same kind; input sorted by NID.
std::vector<NodeRange> merge_ranges(std::vector<NodeRange> ranges);

// Presets: tds-8, xc30-2256, xt5-1844, xk7-gpu, and big-100k (benchmarks).
std::vector<std::string> preset_names();
basil::Result<System> preset(std::string_view name);

// A system from its JSON description (conf/emulator-system.example). Strict:
// unknown keys and out-of-range values are errors.
// `require_nodes` false: the store's copy, whose nodes live in their own table.
basil::Result<System> parse_system(std::string_view json_text, bool require_nodes = true);
std::string system_to_json(const System& system);
basil::Result<FaultConfig> parse_faults(std::string_view json_text);
std::string faults_to_json(const FaultConfig& faults);

// The method key used by FaultConfig ("RESERVE", "INVENTORY", ...).
std::string method_key(const basil::Request& request);

}  // namespace emu
