// The daemon's parts as the control routes and views see them. Service
// builds them from the configuration and owns them; they outlive every
// request (Service is destroyed only after its io_context has run out of
// work).
#pragma once

#include <functional>
#include <string>

#include "basild/calls/client.h"
#include "basild/config/config.h"
#include "basild/control/server.h"
#include "basild/core/clock.h"
#include "basild/core/engine_memory.h"
#include "basild/core/timings.h"
#include "basild/daemon/alps_poller.h"
#include "basild/daemon/forwarder.h"
#include "basild/daemon/node_sync_runner.h"
#include "basild/daemon/switch_runner.h"
#include "basild/daemon/reconcile_runner.h"
#include "basild/daemon/request_audit.h"
#include "basild/daemon/state_watch.h"
#include "basild/daemon/typed_calls.h"
#include "basild/core/state_store.h"
#include "basild/transport/conduit.h"

namespace basild {

class SharedViews;

struct DaemonParts {
  const Config* config = nullptr;  // as last reloaded
  const ClockPort* clock = nullptr;
  ReservationStore* store = nullptr;
  HistoryReader* history = nullptr;
  const StateWatch* state_watch = nullptr;
  const Client* client = nullptr;
  const Conduit* transport = nullptr;
  const EngineMemory* engine_memory = nullptr;
  const Timings* timings = nullptr;
  const control::Server* server = nullptr;
  AlpsPoller* poller = nullptr;
  const ReconcileRunner* runner = nullptr;
  const NodeSyncRunner* node_sync = nullptr;  // null: no node sync part (tests)
  const SwitchRunner* switches = nullptr;     // null: no suspend sync part (tests)
  const ControllerWatch* controller = nullptr;  // null: none (tests)
  Forwarder* forwarder = nullptr;
  TypedCalls* typed = nullptr;
  RequestAudit* requests = nullptr;  // null: changes are not audited with their caller (tests)
  const bool* stopping = nullptr;
  SharedViews* views = nullptr;  // views.h; null: each view encoded for its response
  WallTime started_at{};
  std::string version;  // basild's (debian/changelog's)
};

}  // namespace basild
