// The pure request handler: (request, world, now) -> (response, delta).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "basil_proto/model.h"
#include "basil_proto/status.h"
#include "emulator/core/state.h"

namespace emu {

struct Handled {
  basil::Response response;
  Delta delta;
};

// Answers one decoded request. The response's dialect follows the request's
// protocol and the system's CLE; its protocol echoes the request. `now` in
// seconds since the epoch (time stamps), `now_ms` in milliseconds (a
// SWITCH's length; 0: now * 1000).
Handled handle(const basil::Request& request, const State& state, std::uint64_t now, std::uint64_t now_ms = 0);

// The FAILURE for a request the decoder refused: PARSER for XML that is not
// well-formed, SYNTAX otherwise, the decoder's located message; or the
// version mismatch for an unsupported protocol. `document` is the raw
// request: the answer carries its protocol (and method) when its root start
// tag could be read, protocol "" only when it could not.
basil::Response decode_failure(const State& state, const basil::Status& status, std::string_view document);

// The "us=..." list of the version-mismatch FAILURE ("BASIL version
// mismatch: us=<list>, them=<protocol>") for this CLE.
std::string supported_protocols(const State& state);

// The model answers, exposed for tests and benchmarks.
basil::Inventory build_inventory(const State& state, basil::Dialect dialect, const basil::InventoryQuery& query,
                                 std::uint64_t now);
basil::Summary build_summary(const State& state, std::uint64_t now);

// A reservation made as another party would (admin): an orphan with a batch id,
// or an interactive one with batch_id UNKNOWN. Confirmed with `pagg_id` when non-zero.
basil::Result<Delta> create_reservation(const State& state, const basil::ReserveRequest& request,
                                        std::uint64_t pagg_id, std::uint64_t now,
                                        std::uint64_t* reservation_id = nullptr);

}  // namespace emu
