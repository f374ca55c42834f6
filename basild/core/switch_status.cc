#include "basild/core/switch_status.h"

namespace basild {

SwitchReading read_switch_status(bool out, basil::ItemStatus status, std::chrono::milliseconds since,
                                 std::chrono::milliseconds empty_final_after) {
  using basil::ItemStatus;
  const std::string said = "STATUS says " + std::string(basil::to_string(status));
  switch (status) {
    case ItemStatus::kSuspend:
      return out ? SwitchReading{SwitchProgress::kDone, ""} : SwitchReading{SwitchProgress::kPending, said};
    case ItemStatus::kRun:
      return out ? SwitchReading{SwitchProgress::kPending, said} : SwitchReading{SwitchProgress::kDone, ""};
    case ItemStatus::kEmpty:
      if (!out || since >= empty_final_after) return {SwitchProgress::kDone, ""};
      return {SwitchProgress::kPending, said + " (not believed before " +
                                            std::to_string(empty_final_after.count()) + " ms)"};
    case ItemStatus::kInvalid:
      return {SwitchProgress::kFailed, said + ": ALPS does not know the reservation"};
    default:  // SWITCH, MIX, UNKNOWN: under way
      return {SwitchProgress::kPending, said};
  }
}

}  // namespace basild
