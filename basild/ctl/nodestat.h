// `basilctl nodestat`: the machine as Cray's xtnodestat draws it, from the
// JSON of GET /v1/nodestat (basild/core/machine_map.h). Pure: the time in
// the title and the terminal's width are given.
//
//   Allocation status of xc30 at 2026-12-03T11:20:05+01:00 (INVENTORY 2 s old)
//
//         C0-0             C1-0             ...
//   c2n3  ---------------- ----------------
//   ...                                        a row per chassis and node,
//   c0n0  SSSSSSaaaa------ ----------------    top chassis and node first
//                   111111           111111
//   slot  0123456789012345 0123456789012345
//
// then the legend of the marks, the available nodes and a table of the
// reservations by letter. Cabinets go left to right by column; a row of
// cabinets, or as many of them as fit in the width, is a band of its own.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace basilctl {

// `at_text`: the time the title shows ("2026-12-03T11:20:05+01:00").
// `width` 0: no limit (one band per row of cabinets); else each band holds
// the cabinets that fit (at least one).
std::string render_nodestat(const nlohmann::json& doc, std::size_t width, const std::string& at_text);

}  // namespace basilctl
