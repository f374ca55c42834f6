#include "basild/core/store_records.h"

namespace basild {

namespace {

struct ResStateName {
  ResState state;
  std::string_view name;
};
constexpr ResStateName kResStates[] = {
    {ResState::kReserved, "reserved"},   {ResState::kConfirmed, "confirmed"}, {ResState::kOrphan, "orphan"},
    {ResState::kSuspended, "suspended"},
    {ResState::kReleasing, "releasing"}, {ResState::kReleased, "released"},   {ResState::kGone, "gone"},
};
struct ResOriginName {
  ResOrigin origin;
  std::string_view name;
};
constexpr ResOriginName kResOrigins[] = {
    {ResOrigin::kReserved, "reserved"}, {ResOrigin::kAdopted, "adopted"}, {ResOrigin::kSeen, "seen"}};
struct IntentStateName {
  IntentState state;
  std::string_view name;
};
constexpr IntentStateName kIntentStates[] = {
    {IntentState::kPending, "pending"}, {IntentState::kGranted, "granted"},
    {IntentState::kAdopted, "adopted"}, {IntentState::kDropped, "dropped"}, {IntentState::kStray, "stray"}};

}  // namespace

std::string_view res_state_name(ResState s) {
  for (const auto& n : kResStates) {
    if (n.state == s) return n.name;
  }
  return "?";
}
std::optional<ResState> res_state_from_name(std::string_view name) {
  for (const auto& n : kResStates) {
    if (n.name == name) return n.state;
  }
  return std::nullopt;
}
std::string_view res_origin_name(ResOrigin o) {
  for (const auto& n : kResOrigins) {
    if (n.origin == o) return n.name;
  }
  return "?";
}
std::optional<ResOrigin> res_origin_from_name(std::string_view name) {
  for (const auto& n : kResOrigins) {
    if (n.name == name) return n.origin;
  }
  return std::nullopt;
}
std::string_view intent_state_name(IntentState s) {
  for (const auto& n : kIntentStates) {
    if (n.state == s) return n.name;
  }
  return "?";
}
std::optional<IntentState> intent_state_from_name(std::string_view name) {
  for (const auto& s : kIntentStates) {
    if (s.name == name) return s.state;
  }
  return std::nullopt;
}
bool is_terminal(ResState s) { return s == ResState::kReleased || s == ResState::kGone; }

}  // namespace basild
