#include "basild/core/state_store.h"

namespace basild {

bool transition_allowed(ResState from, ResState to) {
  if (is_terminal(from)) return false;
  switch (to) {
    case ResState::kReserved: return from == ResState::kOrphan;
    case ResState::kConfirmed:
      return from == ResState::kReserved || from == ResState::kOrphan || from == ResState::kSuspended;
    case ResState::kSuspended: return from == ResState::kConfirmed;
    case ResState::kOrphan:
      return from == ResState::kReserved || from == ResState::kConfirmed || from == ResState::kSuspended;
    case ResState::kReleasing: return from != ResState::kReleasing;
    case ResState::kReleased:
    case ResState::kGone: return true;
  }
  return false;
}

basil::Status check_intent_pending(const std::optional<Intent>& intent, std::int64_t id, std::string_view what) {
  using basil::Code;
  using basil::Status;
  if (!intent) {
    return Status(Code::kInvalidValue, std::string(what) + ": no intent " + std::to_string(id) +
                                           " in the state database");
  }
  if (intent->state != IntentState::kPending) {
    return Status(Code::kInvalidValue, std::string(what) + ": intent " + std::to_string(id) + " is already " +
                                           std::string(intent_state_name(intent->state)));
  }
  return Status::ok();
}

}  // namespace basild
