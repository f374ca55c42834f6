// What the test command's ASan+UBSan tree changes in what a test may expect
// of the processes it starts (every program of that tree is instrumented).
// Bounds on memory and on time that catch a leak or a hang in the normal
// tree get this much room there; the normal tree keeps them tight.
#pragma once

#include <chrono>
#include <string>

namespace basil_test {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
// Freed blocks wait in ASan's quarantine (256 MiB by default) and count as
// resident: 58 MiB of VmRSS growth was seen where the normal tree grows 0.
inline constexpr long kMemorySlackKib = 512 * 1024;
#else
inline constexpr bool kSanitized = false;
inline constexpr long kMemorySlackKib = 0;
#endif

// A call's CPU under ASan is several times the normal tree's; on a loaded
// 2-core machine a process spawn (every apbasil call is one) costs hundreds
// of milliseconds.
inline constexpr int kSlowdown = kSanitized ? 3 : 1;

// `seconds` times kSlowdown, as basild.conf writes a duration ("3s").
inline std::string slowed_seconds(int seconds) { return std::to_string(seconds * kSlowdown) + "s"; }

}  // namespace basil_test
