// The ssh conduit's options from a configuration's [conduit] and [apbasil]
// sections: for basild's conduit (basild/transport/conduit.h) and for
// apbasil_proxy-fallback's own session.
#pragma once

#include "basild/conduit/ssh_transport.h"
#include "basild/config/config.h"

namespace basild {

// The options basild's own conduit uses, its identity included (a caller
// that is not that basild, apbasil_proxy-fallback, clears it: a helper
// started under basild's identity would end basild's own).
conduit::SshTransportOptions ssh_transport_options(const Config& config);

// Who basild's conduit is, for the gateway helper (frames.h, the I frame):
// this host's name and the state database, which one basild holds at a
// time ("login1:/var/lib/basild/state.db").
std::string conduit_identity(const Config& config);

}  // namespace basild
