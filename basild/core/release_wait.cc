#include "basild/core/release_wait.h"

#include <algorithm>

namespace basild {

bool shares_node(const basil::ReserveRequest& request, const basil::NidList& nodes) {
  for (const auto& p : request.params)
    for (const auto& list : p.nodes)
      for (const auto& r : nodes.ranges())
        for (std::uint64_t nid = r.first; nid <= r.second; ++nid)
          if (list.contains(static_cast<std::uint32_t>(nid))) return true;
  return false;
}

std::vector<std::uint64_t> reservations_to_wait_for(const basil::ReserveRequest& request,
                                                    const std::vector<ReservationRecord>& releasing,
                                                    const std::vector<ReservationRecord>& active) {
  std::vector<std::uint64_t> out;
  auto add = [&](const ReservationRecord& r) {
    if (std::find(out.begin(), out.end(), r.res_id) == out.end() && shares_node(request, r.nodes))
      out.push_back(r.res_id);
  };
  for (const auto& r : releasing) add(r);
  for (const auto& r : active) {
    if (r.batch_id.empty() || r.batch_id == request.batch_id || r.state == ResState::kOrphan) continue;
    add(r);
  }
  return out;
}

bool still_waiting(const std::vector<ReleaseProgress>& progress, std::chrono::steady_clock::time_point now,
                   const WaitBounds& bounds) {
  return std::any_of(progress.begin(), progress.end(), [&](ReleaseProgress p) {
    return (p == ReleaseProgress::kLoopRunning && now < bounds.releasing) ||
           (p == ReleaseProgress::kHeld && now < bounds.handed);
  });
}

bool switch_may_have_freed(const std::vector<std::uint64_t>& in_before, const std::vector<std::uint64_t>& in_now,
                           const std::vector<std::uint64_t>& out_before, const std::vector<std::uint64_t>& out_now) {
  const auto any_missing_from = [](const std::vector<std::uint64_t>& ids, const std::vector<std::uint64_t>& in) {
    return std::any_of(ids.begin(), ids.end(),
                       [&](std::uint64_t id) { return std::find(in.begin(), in.end(), id) == in.end(); });
  };
  return any_missing_from(in_before, in_now) || any_missing_from(out_now, out_before);
}

}  // namespace basild
