// apstat's tables, from the emulated world. Pure: (state, now) -> text.
//
// apstat -r: one line per reservation command, the layout PROTOCOL.md 7
// records for Cray's `apstat -r -v` ("ResId ApId From Arch PEs N d Memory
// State"); -v adds a "Res[i]: ..." line per command, "Batch System ID" and
// "Reservation flags". apstat -a: the aprun applications (the emulator's
// own layout, basil-emulator(1)).
#pragma once

#include <cstdint>
#include <string>

#include "emulator/core/state.h"

namespace emu::apsched {

std::string format_reservations(const State& state, bool verbose);
std::string format_applications(const State& state, bool verbose);

}  // namespace emu::apsched
