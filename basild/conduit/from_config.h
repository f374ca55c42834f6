// The ssh conduit's options from a configuration's [conduit] and [apbasil]
// sections: for basild's conduit (basild/transport/conduit.h) and for
// apbasil_proxy-fallback's own session.
#pragma once

#include "basild/conduit/ssh_transport.h"
#include "basild/config/config.h"

namespace basild {

conduit::SshTransportOptions ssh_transport_options(const Config& config);

}  // namespace basild
