// The last good QUERY ENGINE answer, per request protocol. A scheduler asks
// ENGINE when it starts (Slurm's slurmctld stops if that fails, unless
// cray.conf pins AlpsEngine) and in every job step that ends (slurmstepd
// dies on a failure, and its job then holds its nodes and its ALPS
// reservation for ever). So while the main system cannot answer, a forwarded
// ENGINE is answered with the last answer ALPS gave (the engine does not
// change while it is down): Client::forward() recalls it, every good ENGINE
// answer (basild's own negotiation included) teaches it, and `remember`
// keeps it where a restarted basild finds it again. Pure.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

namespace basild {

class EngineMemory {
 public:
  // protocol -> the raw XML answer.
  using Answers = std::map<std::string, std::string>;
  using Remember = std::function<void(const std::string& protocol, const std::string& xml)>;

  EngineMemory() = default;
  // `known`: answers a basild that ran earlier remembered.
  EngineMemory(Answers known, Remember remember);

  // `xml` answered an ENGINE request of `protocol`: kept (and remembered when
  // it changed) if it is a SUCCESS Engine answer; anything else is ignored.
  void learn(const std::string& protocol, const std::string& xml);
  // The last good answer for `protocol`, counted as answered from memory.
  std::optional<std::string> recall(const std::string& protocol);

  std::uint64_t answered_from_memory() const { return recalled_; }
  const Answers& answers() const { return answers_; }

 private:
  Answers answers_;
  Remember remember_;
  std::uint64_t recalled_ = 0;
};

}  // namespace basild
