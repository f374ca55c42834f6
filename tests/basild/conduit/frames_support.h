// What the gateway writes, spelt out for the frame readers' tests.
#pragma once

#include <cstdint>
#include <string>

namespace basild::conduit {

// An R frame: the answer to request `id` (how it ended, its value), then
// apbasil's stdout and stderr.
inline std::string answer(std::uint64_t id, int how, int value, const std::string& out, const std::string& err) {
  return "R " + std::to_string(id) + " " + std::to_string(how) + " " + std::to_string(value) + " " +
         std::to_string(out.size()) + " " + std::to_string(err.size()) + "\n" + out + err;
}

}  // namespace basild::conduit
