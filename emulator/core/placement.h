// RESERVE placement: the emulator's own reading of width, depth, nppn, nppcu
// (threads used per compute unit, 0 for all; units with fewer are not
// eligible), memory per PE, labels, accelerators,
// reservation_mode and NodeParam lists. Pure: (world, request) -> allocations.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "basil_proto/model.h"
#include "emulator/core/state.h"

namespace emu {

struct Placement {
  std::vector<Allocation> allocations;       // one per reserved node, NID order per param
  std::vector<std::uint32_t> reserved_nodes;  // as ReservedNodeArray lists them
  std::vector<basil::Command> commands;      // the BASIL placeholder's, one per ReserveParam
};

struct PlacementError {
  basil::ErrorClass error_class = basil::ErrorClass::kPermanent;
  std::string message;
};

// The texts of a RESERVE that cannot be placed: a NodeParam list too short
// (PERMANENT), too few free nodes (TRANSIENT), more PEs per node than nppcu
// leaves visible (PERMANENT).
inline constexpr const char* kNidListShort = "ALPS error: at least one command's user NID list is short";
inline constexpr const char* kExceedsMaxNodes = "ALPS error: apsched: request exceeds max nodes, alloc";
inline constexpr const char* kExceedsMaxCpus = "ALPS error: apsched: request exceeds max CPUs, alloc";

// Processing elements a node of this layout offers with nppcu (0: all threads).
std::uint32_t visible_processors(const Layout& layout, std::uint32_t nppcu);

std::variant<Placement, PlacementError> place(const State& state, const basil::ReserveRequest& request,
                                              std::uint64_t reservation_id);

}  // namespace emu
