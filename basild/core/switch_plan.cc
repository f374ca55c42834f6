#include "basild/core/switch_plan.h"

#include <algorithm>

namespace basild {

bool moves_a_reservation(std::string_view job_state) {
  return job_state == kJobSuspended || job_state == kJobRunning;
}

std::vector<SwitchMove> plan_switches(const SwitchPlanInput& in) {
  std::vector<SwitchMove> outs, ins;
  for (const ReservationRecord& r : in.active) {
    if (r.origin == ResOrigin::kSeen || r.batch_id.empty()) continue;
    if (r.state != ResState::kConfirmed && r.state != ResState::kSuspended) continue;
    auto job = in.job_states.find(r.batch_id);
    if (job == in.job_states.end()) continue;
    const bool suspended = r.state == ResState::kSuspended;
    if (in.refused.count(r.res_id) != 0) {
      if (job->second == kJobSuspended && !suspended) outs.push_back({r.res_id, r.batch_id, true, true});
      continue;
    }
    if (job->second == kJobSuspended) {
      if (!suspended || in.switched_out.count(r.res_id) == 0) outs.push_back({r.res_id, r.batch_id, true});
    } else if (job->second == kJobRunning && suspended) {
      ins.push_back({r.res_id, r.batch_id, false});
    }
  }
  auto by_id = [](const SwitchMove& a, const SwitchMove& b) { return a.res_id < b.res_id; };
  std::sort(outs.begin(), outs.end(), by_id);
  std::sort(ins.begin(), ins.end(), by_id);
  outs.insert(outs.end(), ins.begin(), ins.end());
  return outs;
}

}  // namespace basild
