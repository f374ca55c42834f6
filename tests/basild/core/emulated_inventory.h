// The INVENTORY an emulator preset answers (emulator/core/handler.h), in the
// highest dialect of its CLE or one a test picks: the node layouts of real
// systems for the tests of pure code, without a process.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "basil_proto/dialect.h"
#include "basil_proto/model.h"
#include "emulator/core/handler.h"
#include "emulator/core/state.h"
#include "emulator/core/system.h"

namespace basild::testing {

// The dialect the preset's CLE speaks at best.
inline basil::Dialect preset_dialect(const std::string& preset) {
  const auto system = emu::preset(preset);
  const auto cle = basil::cle_release(system->cle);
  return *basil::negotiate(cle->engine_version, cle->basil_support);
}

// A full INVENTORY of a fresh emulated system; `change` edits the system
// first (layouts, labels, node ranges).
template <typename Change>
basil::Inventory preset_inventory(const std::string& preset, std::optional<basil::Dialect> dialect, Change change) {
  auto system = emu::preset(preset);
  change(*system);
  const emu::State state = emu::initial_state(*system);
  return emu::build_inventory(state, dialect.value_or(preset_dialect(preset)), basil::InventoryQuery{}, 1380000000);
}

inline basil::Inventory preset_inventory(const std::string& preset, std::optional<basil::Dialect> dialect = {}) {
  return preset_inventory(preset, dialect, [](emu::System&) {});
}

}  // namespace basild::testing
