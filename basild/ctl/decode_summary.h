// What `basilctl decode` prints: a JSON summary of any BASIL document.
#pragma once

#include <nlohmann/json.hpp>

#include "basil_proto/codec.h"

namespace basilctl {

// One JSON object with protocol, dialect, kind, method, type, status and the
// figures of the document's body (inventory counts, failure details, ...).
nlohmann::json summarize(const basil::Decoded& decoded);

}  // namespace basilctl
