// Helpers of the emulator core's pure tests (core_test.cc,
// core_handler_test.cc, core_property_test.cc): a preset's initial state, a
// request in a protocol, a one-parameter RESERVE, and a request run with its
// delta applied as the store would.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>

#include "emulator/core/handler.h"
#include "emulator/core/state.h"
#include "emulator/core/system.h"

namespace emu {

inline State world(const char* name, const char* cle = nullptr) {
  auto sys = preset(name);
  EXPECT_TRUE(sys.is_ok()) << sys.status().message();
  if (cle != nullptr) sys->cle = cle;
  return initial_state(*sys);
}

inline basil::Request request(const char* protocol, basil::RequestBody body) {
  basil::Request r;
  r.protocol = protocol;
  r.dialect = basil::dialect_from_id(protocol).value_or(basil::Dialect::k1_3);
  r.body = std::move(body);
  return r;
}

inline basil::ReserveRequest reserve_req(std::uint64_t width, std::optional<std::uint32_t> nppn = std::nullopt,
                                         std::optional<std::uint32_t> depth = std::nullopt,
                                         std::optional<std::uint32_t> nppcu = std::nullopt) {
  basil::ReserveRequest r;
  r.user_name = "alice";
  r.batch_id = "42";
  basil::ReserveParam p;
  p.width = width;
  p.nppn = nppn;
  p.depth = depth;
  p.nppcu = nppcu;
  r.params.push_back(p);
  return r;
}

// Runs a request and applies its delta, as the store would.
inline basil::Response run(State& s, const basil::Request& req, std::uint64_t now = 1000) {
  Handled h = handle(req, s, now);
  apply(s, h.delta);
  return h.response;
}

inline std::string message(const basil::Response& r) { return r.messages.empty() ? "" : r.messages[0].text; }


}  // namespace emu
