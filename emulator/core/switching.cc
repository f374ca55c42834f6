#include "emulator/core/switching.h"

#include <algorithm>
#include <map>
#include <optional>

namespace emu {
namespace {

using basil::ErrorClass;

SwitchRefusal refusal(ErrorClass c, std::string message) { return SwitchRefusal{c, std::move(message)}; }

bool under_way(const ReservationRec& r, std::uint64_t now_ms) { return now_ms < r.switch_done_ms; }

// Another switched-in reservation holding one of `resid`'s processors.
std::optional<std::uint64_t> holder_of_processors(const State& state, std::uint64_t resid) {
  const auto mine = state.allocations.find(resid);
  if (mine == state.allocations.end()) return std::nullopt;
  for (const auto& [other, allocs] : state.allocations) {
    if (other == resid) continue;
    const auto rec = state.reservations.find(other);
    if (rec == state.reservations.end() || rec->second.suspended) continue;
    for (const Allocation& a : allocs)
      for (const Allocation& m : mine->second)
        if (a.nid == m.nid && std::any_of(a.processors.begin(), a.processors.end(), [&](std::uint32_t p) {
              return std::binary_search(m.processors.begin(), m.processors.end(), p);
            }))
          return other;
  }
  return std::nullopt;
}

}  // namespace

std::variant<basil::Switched, SwitchRefusal> switch_reservations(const State& state, const basil::SwitchRequest& request,
                                                                 std::uint64_t now_ms, Delta& delta) {
  // Every item names a reservation (or an aprun application) ALPS holds,
  // else the whole request fails PERMANENT "No entry", the form of
  // CONFIRM's and RELEASE's answers that clients recognise. A per-item
  // FAILURE inside a SUCCESS would be read as done by a client that looks
  // at ResponseData alone (Slurm), so it is never written.
  for (const auto& item : request.reservations)
    if (!state.reservations.count(item.id))
      return refusal(ErrorClass::kPermanent, "ALPS error: apsched: No entry for resId " + std::to_string(item.id));
  for (const auto& item : request.applications) {
    const auto app = state.applications.find(item.id);
    if (app == state.applications.end() || app->second.time_stamp == 0 ||
        !state.reservations.count(app->second.reservation_id))
      return refusal(ErrorClass::kPermanent, "ALPS error: apsched: No entry for apid " + std::to_string(item.id));
  }
  if (!state.system.switching.enabled) return refusal(ErrorClass::kPermanent, kSwitchDisabled);

  // What each reservation is asked to become, items in order (an
  // application's SWITCH is its reservation's).
  std::map<std::uint64_t, bool> out_of;
  for (const auto& item : request.reservations) out_of[item.id] = item.action == basil::SwitchAction::kOut;
  for (const auto& item : request.applications)
    out_of[state.applications.at(item.id).reservation_id] = item.action == basil::SwitchAction::kOut;

  std::vector<ReservationRec> changed;
  for (const auto& [resid, out] : out_of) {
    const ReservationRec& r = state.reservations.at(resid);
    const std::string id = std::to_string(resid);
    if (r.mode == basil::ReservationMode::kExclusive)
      return refusal(ErrorClass::kPermanent, "ALPS error: apsched: at least resid " + id + " is exclusive");
    if (under_way(r, now_ms))
      return refusal(ErrorClass::kTransient, "ALPS error: apsched: resId " + id + ": the previous switch has not completed");
    if (r.suspended == out) continue;  // already there
    if (!out)
      if (const auto holder = holder_of_processors(state, resid))
        return refusal(ErrorClass::kTransient, "ALPS error: apsched: resId " + id +
                                                   " cannot switch in: its processors are held by resId " +
                                                   std::to_string(*holder));
    ReservationRec next = r;
    next.suspended = out;
    next.switch_done_ms = state.system.switching.switch_ms == 0 ? 0 : now_ms + state.system.switching.switch_ms;
    changed.push_back(std::move(next));
  }
  for (auto& r : changed) delta.put_reservations.push_back(std::move(r));

  basil::Switched result;
  for (const auto& item : request.reservations) result.reservations.push_back({item.id, basil::ItemStatus::kSuccess});
  for (const auto& item : request.applications) result.applications.push_back({item.id, basil::ItemStatus::kSuccess});
  return result;
}

basil::ItemStatus reservation_status(const State& state, std::uint64_t reservation_id, std::uint64_t now_ms) {
  const auto it = state.reservations.find(reservation_id);
  if (it == state.reservations.end()) return basil::ItemStatus::kInvalid;
  const ReservationRec& r = it->second;
  if (under_way(r, now_ms))
    return r.suspended && state.system.switching.empty_early ? basil::ItemStatus::kEmpty : basil::ItemStatus::kSwitch;
  if (state.claims(reservation_id) == 0) return basil::ItemStatus::kEmpty;
  return r.suspended ? basil::ItemStatus::kSuspend : basil::ItemStatus::kRun;
}

basil::ItemStatus application_status(const State& state, std::uint64_t application_id, std::uint64_t now_ms) {
  const auto it = state.applications.find(application_id);
  if (it == state.applications.end() || it->second.time_stamp == 0) return basil::ItemStatus::kInvalid;
  const auto r = state.reservations.find(it->second.reservation_id);
  if (r == state.reservations.end()) return basil::ItemStatus::kInvalid;
  if (under_way(r->second, now_ms)) return basil::ItemStatus::kSwitch;
  return r->second.suspended ? basil::ItemStatus::kSuspend : basil::ItemStatus::kRun;
}

}  // namespace emu
