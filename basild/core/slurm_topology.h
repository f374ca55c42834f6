// topology.conf for Slurm's topology/tree plugin from the Cray hierarchy
// in ALPS's node names (`basilctl slurm-conf --topology`). Pure.
//
// A cname c<X>-<Y>c<C>s<S>n<N> is node N of blade (slot) S of chassis C of
// the cabinet in column X of row Y. The tree, leaves first:
//   blade    c0-0c0s2  its nodes, by Slurm name
//   chassis  c0-0c0    its blades
//   cabinet  c0-0      its chassis
//   group    g0-0      on XC (Aries) only: the two cabinets of an electrical
//                      group, columns 2k and 2k+1 of one row (g<k>-<Y>)
//   top      top       every group (XC) or every cabinet
// so Slurm, placing a job on the fewest switches, keeps it in one blade,
// then one chassis, one cabinet, one group. On XT/XE/XK (SeaStar, Gemini:
// a 3D torus) the tree is only an approximation of nearness.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "basil_proto/status.h"
#include "basild/core/slurm_conf.h"

namespace basild {

struct CrayPlace {
  std::uint32_t column = 0;
  std::uint32_t row = 0;
  std::uint32_t chassis = 0;
  std::uint32_t slot = 0;
  std::uint32_t node = 0;
  bool operator==(const CrayPlace&) const = default;
};

// The place a cname names; nullopt for anything else (numbers of at most 9
// digits, no signs, nothing before or after).
std::optional<CrayPlace> parse_cname(std::string_view cname);

enum class XcGroups : std::uint8_t { kAuto, kYes, kNo };

// Whether the tree has the XC group level. kAuto: yes when the nodes are
// described with sockets (BASIL 1.3, CLE 5.1 on: XC systems) or a slot
// number above 7 occurs (an XC chassis holds 16 blades, XT/XE/XK ones 8).
// A CLE 5.2 XE/XK speaks 1.3 as well: its site says kNo.
bool has_xc_groups(const SlurmNodes& nodes, XcGroups groups);

enum class BladeLevel : std::uint8_t { kAuto, kYes, kNo };

// Slurm 22.05's topology/tree keeps a table of every pair of switches: a
// 100000-node XC's 27346 switches (25000 of them blades) kept slurmctld
// loading for more than 15 minutes and 5 GB; its 2346 without the blade
// level load in 20 s and 270 MB. kAuto keeps the blade level up to this
// many blades (16384 nodes).
inline constexpr std::size_t kMaxBladeSwitches = 4096;

// Whether the tree has the blade level: kAuto, when the nodes fill at most
// kMaxBladeSwitches blades; else each chassis holds its nodes itself.
bool has_blade_level(const SlurmNodes& nodes, BladeLevel blades);

// The topology.conf text: a comment header, then SwitchName lines leaves
// first, Nodes= and Switches= as compressed host lists. An error names the
// first node whose ALPS name is not a cname.
basil::Result<std::string> topology_conf(const SlurmNodes& nodes, XcGroups groups = XcGroups::kAuto,
                                         BladeLevel blades = BladeLevel::kAuto);

}  // namespace basild
