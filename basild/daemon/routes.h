// The control API's routes: one named handler per route, all registered
// from one table (method, path, body, one-line summary), which GET /v1 and
// basild(8) list.
#pragma once

#include "basild/control/registry.h"
#include "basild/daemon/daemon_parts.h"

namespace basild {

// Registers every route on `registry`; the handlers read and act through
// `parts`, which must outlive the registry's use.
void register_routes(control::Registry& registry, const DaemonParts& parts);

// The routes of the [metrics] listener (control/tcp_listener.h): what
// whoever reaches its TCP address may read, nothing that changes anything.
void register_public_routes(control::Registry& registry, const DaemonParts& parts);

}  // namespace basild
