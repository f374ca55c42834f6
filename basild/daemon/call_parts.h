// What the scheduler's calls act through: the ports and the daemon's parts
// that outlive every call (Service owns them, and is destroyed only after
// its io_context has run out of work).
#pragma once

#include "basild/asio/asio.h"
#include "basild/calls/client.h"
#include "basild/core/apkill_port.h"
#include "basild/core/clock.h"
#include "basild/daemon/alps_poller.h"
#include "basild/daemon/log.h"
#include "basild/daemon/reconcile_runner.h"
#include "basild/daemon/request_audit.h"
#include "basild/daemon/switch_runner.h"
#include "basild/core/state_store.h"

namespace basild {

struct CallParts {
  boost::asio::io_context& io;
  Logger& log;
  ReservationStore& store;
  AuditLog& audit;
  Client& client;
  const ClockPort& clock;
  AlpsPoller& poller;
  ReconcileRunner& runner;
  ApkillPort& apkill;
  RequestAudit& requests;  // who asked for each change
  SwitchRunner* switches = nullptr;  // [slurm] suspend_sync; null: none (tests)
};

// A reservation granted to a forwarded RESERVE whose answer never reached
// its caller (who was told the call failed and will reserve again): a
// stray, released now.
void release_stray(ReconcileRunner& runner, const ReservationRecord& rec);

}  // namespace basild
