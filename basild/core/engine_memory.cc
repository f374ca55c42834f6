#include "basild/core/engine_memory.h"

#include <utility>

#include <variant>

namespace basild {

EngineMemory::EngineMemory(Answers known, Remember remember)
    : answers_(std::move(known)), remember_(std::move(remember)) {}

void EngineMemory::learn(const std::string& protocol, const std::string& xml, const basil::Response& answer,
                         Time now) {
  if (!answer.ok() || !std::holds_alternative<basil::EngineInfo>(answer.body)) return;
  learnt_at_[protocol] = now;
  auto& kept = answers_[protocol];
  if (kept == xml) return;
  kept = xml;
  if (remember_) remember_(protocol, kept);
}

std::optional<std::string> EngineMemory::recall(const std::string& protocol) {
  const auto it = answers_.find(protocol);
  if (it == answers_.end()) return std::nullopt;
  ++recalled_;
  return it->second;
}

std::optional<std::string> EngineMemory::reuse(const std::string& protocol, Time now,
                                               std::chrono::nanoseconds max_age) {
  const auto at = learnt_at_.find(protocol);
  const auto it = answers_.find(protocol);
  if (max_age <= std::chrono::nanoseconds::zero() || at == learnt_at_.end() || it == answers_.end() ||
      now - at->second > max_age)
    return std::nullopt;
  ++reused_;
  return it->second;
}

}  // namespace basild
