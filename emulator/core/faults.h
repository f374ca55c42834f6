// Fault planning: which faults hit one request. Pure and deterministic: the
// same seed, sequence number and method give the same plan.
#pragma once

#include <cstdint>
#include <string>

#include "emulator/core/system.h"

namespace emu {

struct FaultPlan {
  double latency_ms = 0;
  bool transient = false;
  bool hang = false;
  bool truncate = false;
  bool garbage = false;
  int exit_code = 0;
  bool stderr_noise = false;
};

// Text of the injected TRANSIENT failure.
inline constexpr const char* kInjectedTransient = "ALPS error: apsched: resources temporarily unavailable (injected)";

FaultPlan plan_faults(const FaultConfig& faults, const std::string& method, std::uint64_t nodes,
                      std::uint64_t seq);

// The latency model calibrated on the CSCS paper's XC30 timings (8-node TDS
// and 2256 nodes, controller on the system): milliseconds for a method on a
// system of `nodes` nodes.
double cscs_latency_ms(const std::string& method, std::uint64_t nodes);

// Deterministic bytes that are not XML, for the garbage fault.
std::string garbage_bytes(std::uint64_t seed, std::uint64_t seq, std::size_t size);

}  // namespace emu
