// The last good QUERY ENGINE answer, per request protocol. A scheduler asks
// ENGINE when it starts (Slurm's slurmctld stops if that fails) and in
// every job step, before its CONFIRM and again before its RELEASE
// (slurmstepd dies on a failure, and its job then holds its nodes and its
// ALPS reservation for ever); Slurm asks none when cray.conf pins
// AlpsEngine. The answer changes
// only when ALPS is upgraded, so the memory serves twice:
// - while the main system cannot answer, a forwarded ENGINE is answered
//   with the last answer ALPS gave (recall); a restarted basild finds the
//   answers `remember` kept;
// - while the answer ALPS gave is younger than [basil] engine_max_age, a
//   forwarded ENGINE is answered with it without asking ALPS (reuse): two
//   calls of every job step that need not cross the ssh link nor run
//   apbasil on the main system. An answer a restarted basild read back is
//   not fresh, and trouble reaching ALPS (unsettle) makes none fresh, so the
//   first ENGINE after either is asked of ALPS.
// Client::forward() asks the memory; every good ENGINE answer (basild's own
// negotiation included) teaches it. Pure: the caller gives the time.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "basil_proto/model.h"

namespace basild {

class EngineMemory {
 public:
  using Time = std::chrono::steady_clock::time_point;
  // protocol -> the raw XML answer.
  using Answers = std::map<std::string, std::string>;
  using Remember = std::function<void(const std::string& protocol, const std::string& xml)>;

  EngineMemory() = default;
  // `known`: answers a basild that ran earlier remembered (none fresh).
  EngineMemory(Answers known, Remember remember);

  // `xml` (decoded: `answer`) answered an ENGINE request of `protocol` at
  // `now`: kept, and fresh from `now` (remembered when it changed), if it is
  // a SUCCESS Engine answer; anything else is ignored.
  void learn(const std::string& protocol, const std::string& xml, const basil::Response& answer, Time now);
  // The last good answer for `protocol`, counted as answered from memory
  // (ALPS could not answer).
  std::optional<std::string> recall(const std::string& protocol);
  // The answer for `protocol` if ALPS gave it at most `max_age` before
  // `now` (never when max_age is 0), counted as reused.
  std::optional<std::string> reuse(const std::string& protocol, Time now, std::chrono::nanoseconds max_age);
  // ALPS could not be reached: no answer is fresh until ALPS gives it again.
  void unsettle() { learnt_at_.clear(); }

  std::uint64_t answered_from_memory() const { return recalled_; }
  std::uint64_t reused() const { return reused_; }
  const Answers& answers() const { return answers_; }

 private:
  Answers answers_;
  std::map<std::string, Time> learnt_at_;  // protocol -> when ALPS last gave its answer
  Remember remember_;
  std::uint64_t recalled_ = 0;
  std::uint64_t reused_ = 0;
};

}  // namespace basild
