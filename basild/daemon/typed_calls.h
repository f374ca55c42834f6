// The typed calls of the control API (POST /v1/reserve, /v1/confirm,
// /v1/release): RESERVE with an intent committed first and the granted
// reservation recorded before the caller hears of it (a job asking again
// gets what it holds; one whose earlier answer may have been lost is looked
// for in ALPS first), its job form planned from the cached INVENTORY by the
// site's [geometry] policy, and RELEASE loops that end only when ALPS proves
// the reservation gone. A job-form RESERVE ALPS refuses for good is checked
// against a fresh INVENTORY: a listed node that went down makes it transient.
//
// A release of a whole job (POST /v1/release with batch_id: a scheduler's
// epilog) is handed to the RELEASE loops once recorded, and answered then;
// a RESERVE naming a node of a reservation whose RELEASE loop is running
// waits for that loop to end (at most one apbasil call timeout) before it
// goes to ALPS, so that the next job on the nodes is not refused for them.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "basild/config/config.h"
#include "basild/control/registry.h"
#include "basild/core/geometry.h"
#include "basild/core/reconciler.h"
#include "basild/core/release_wait.h"
#include "basild/daemon/call_parts.h"

namespace basild {

class TypedCalls : public std::enable_shared_from_this<TypedCalls> {
 public:
  // How long a RESERVE waits for another job's reservation on its nodes
  // whose release has not been handed to basild: the scheduler's epilog
  // (Slurm under load, measured: 12 and 32 ms after the next job's RESERVE)
  // is waited for, a reservation nobody releases is not. ALPS then refuses.
  static constexpr std::chrono::milliseconds kReleaseHandOffWait{5000};

  TypedCalls(CallParts parts, GeometryConfig geometry);

  void reserve(const nlohmann::json& body, control::Responder reply);
  void confirm(const nlohmann::json& body, control::Responder reply);
  void release(const nlohmann::json& body, control::Responder reply);

  void set_geometry(const GeometryConfig& g) { geometry_ = g; }
  // The site's [geometry] policy, with nppcu only when the dialect has it.
  basil::GeometryPolicy geometry_policy() const;

 private:
  bool refresh_pool();
  std::optional<control::Response> reserve_from_job(const nlohmann::json& body, basil::ReserveRequest& out);
  void recheck_refusal(const nlohmann::json& job, const std::string& batch, const basil::Status& alps,
                       control::Responder reply);
  // The RESERVE once planned: intent, call, record, answer. `job` is the
  // job form's body (null for the params form).
  // `wait`: this is the RESERVE tried again once a switch poll has
  // switched out (or basild released) a reservation on its nodes.
  struct SwitchWait;
  void reserve_now(basil::ReserveRequest request, bool earlier_attempt, nlohmann::json job, control::Responder reply,
                   std::shared_ptr<SwitchWait> wait = nullptr);
  // The reservations of other jobs on a node `request` names that basild
  // holds in `state` (confirmed: a switch may free them; suspended: one did).
  std::vector<std::uint64_t> others_on_nodes(const basil::ReserveRequest& request, ResState state);
  // A RESERVE ALPS refused while another job's reservation is switched in
  // on its nodes: gang scheduling starts a job (and runs its prolog) on
  // nodes whose job Slurm suspends only at the next time slice. After each
  // switch poll, until [slurm] suspend_reserve_wait has passed: a
  // reservation there newly switched out, or one switched in there at the
  // refusal gone, sends the RESERVE once more; none switched in there any
  // more, or the time passed, and the last refusal stands.
  struct SwitchWait {
    basil::ReserveRequest request;
    nlohmann::json job;
    control::Responder reply;
    basil::Status refusal;                        // ALPS's last
    std::vector<std::uint64_t> in_before;         // others_on_nodes(confirmed) at that refusal
    std::vector<std::uint64_t> suspended_before;  // others_on_nodes(suspended) at that refusal
    std::chrono::steady_clock::time_point until;
  };
  void after_switch_poll(const std::shared_ptr<SwitchWait>& w);
  // The reservations on a node `request` names that its RESERVE waits for
  // (basild/core/release_wait.h), from basild's records.
  std::vector<std::uint64_t> held_under(const basil::ReserveRequest& request);
  ReleaseProgress release_progress(std::uint64_t id);
  // `go` once none of `ids` is waited for any more (still_waiting).
  void after_releases(std::vector<std::uint64_t> ids, WaitBounds bounds, std::function<void()> go);
  void release_job(const std::string& batch, control::Responder reply, bool looked = false);
  void note(const basil::Status& s);
  control::Response unrecorded(std::string_view call, std::uint64_t res_id, std::string_view done,
                               const basil::Status& why);

  CallParts parts_;
  GeometryConfig geometry_;
  // The nodes of the cached INVENTORY by layout, for job-form reserves.
  std::optional<basil::NodePool> pool_;
  WallTime pool_at_{};
  // The reservations of the last full INVENTORY taken to name the holders
  // of a refused job's nodes, and when: refusals within kHoldersReuse of it
  // use it, so that a storm of refusals asks ALPS for one INVENTORY, not one
  // each.
  std::vector<AlpsReservation> holders_;
  std::optional<std::chrono::steady_clock::time_point> holders_at_;
};

}  // namespace basild
