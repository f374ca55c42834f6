// What the plugin is told: the site's arguments in plugstack.conf and the
// user's --reduced-auto-affinity value. Pure: words in, settings or the
// sentence that says what is wrong out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "slurm/spank/layout.h"

namespace basild::spank {

// plugstack.conf's arguments after the plugin's path:
//   layout=SxCxT              the node's layout instead of hwloc's (2x8x2)
//   numbering=cores|threads   how its CPUs are numbered (default cores:
//                             Linux on Intel, core c's threads c, c+S*C, ...;
//                             threads: c*T, c*T+1, ...)
//   cpus=LIST                 or each (socket, core, thread)'s CPU number,
//                             in that order, as a CPU list (0,16,1,17,...)
struct SiteSettings {
  std::optional<NodeLayout> layout;  // none: the machine's own (hwloc)
};

struct SiteParse {
  SiteSettings settings;
  std::string error;  // "" when the arguments are good
};
SiteParse parse_site_arguments(const std::vector<std::string>& args);

// The user's --reduced-auto-affinity=VALUE: comma-separated words, on,
// off, help, verbose or v ("on,v", "v"); verbose alone means on.
struct UserChoice {
  enum class Mode : std::uint8_t { kOff, kOn, kHelp };
  Mode mode = Mode::kOff;
  bool verbose = false;
};

struct UserParse {
  UserChoice choice;
  std::string error;  // "" when the value is good
};
UserParse parse_user_option(const std::string& value);

// The text `--reduced-auto-affinity=help` prints.
std::string help_text();

}  // namespace basild::spank
