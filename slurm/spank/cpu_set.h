// A set of the operating system's CPU numbers, and its two written forms:
// the Linux list form of /proc/PID/status's Cpus_allowed_list and cpuset(7)
// ("0-2,8,16-17") and the hexadecimal mask Slurm's --cpu-bind prints and
// takes ("0x30007"). Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace basild::spank {

// Sorted, no number twice.
using CpuSet = std::vector<unsigned>;

// "0-2,8,16-17"; "" for the empty set.
std::string cpu_list(const CpuSet& cpus);
// "0x30007"; "0x0" for the empty set.
std::string hex_mask(const CpuSet& cpus);
// The list form back ("" is the empty set; spaces around the parts and a
// final newline are allowed); nullopt when it is not one, or names a CPU
// past `limit`.
std::optional<CpuSet> parse_cpu_list(std::string_view text, unsigned limit = 1u << 20);

// The CPUs of `cpus` that are not in `of` (both sorted).
CpuSet cpus_outside(const CpuSet& cpus, const CpuSet& of);

}  // namespace basild::spank
