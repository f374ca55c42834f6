// The machine map as a web page, served on the [metrics] listener at GET /
// (basild.conf(5), [metrics]): the map of basilctl nodestat, nodes
// coloured by state and reservation, hover for a node's name, NID, state
// and reservation, drawn again from GET /nodestat.json every 10 seconds
// without a reload. Read-only, and no user names: whoever reaches the
// listener reads it.
#pragma once

#include <string_view>

namespace basild {

std::string_view nodestat_page();

}  // namespace basild
