#include "slurm/node_confirm_args.h"

namespace basild::slurm {

namespace {

bool absolute(std::string_view path) { return !path.empty() && path.front() == '/'; }

}  // namespace

std::variant<NodeConfirmSettings, std::string> parse_node_confirm_args(const std::vector<std::string_view>& args,
                                                                       std::string default_program) {
  NodeConfirmSettings s;
  s.basil_slurm = std::move(default_program);
  bool confirm_seen = false;
  for (const std::string_view arg : args) {
    const std::string a(arg);
    auto path_of = [&](std::string_view prefix) { return std::string(arg.substr(prefix.size())); };
    if (arg.starts_with("confirm=")) {
      if (confirm_seen) return "\"" + a + "\": confirm= is given twice";
      confirm_seen = true;
      if (arg == "confirm=basild") {
        s.via = ConfirmVia::kBasild;
      } else if (arg.starts_with("confirm=apbasil:") && absolute(path_of("confirm=apbasil:"))) {
        s.via = ConfirmVia::kApbasil;
        s.apbasil = path_of("confirm=apbasil:");
      } else {
        return "\"" + a + "\": confirm= takes basild or apbasil:PATH (an absolute path)";
      }
    } else if (arg.starts_with("basil_slurm=") && absolute(path_of("basil_slurm="))) {
      s.basil_slurm = path_of("basil_slurm=");
    } else if (arg.starts_with("config=") && absolute(path_of("config="))) {
      s.config = path_of("config=");
    } else {
      return "\"" + a + "\": not an argument of basil_reservation (confirm=basild, confirm=apbasil:PATH, "
                        "basil_slurm=PATH, config=PATH; paths absolute)";
    }
  }
  return s;
}

std::vector<std::string> node_confirm_argv(const NodeConfirmSettings& s, std::string_view job_id,
                                           std::uint64_t reservation_id, std::uint64_t pagg_id) {
  std::vector<std::string> argv = {s.basil_slurm};
  if (s.config) argv.insert(argv.end(), {"--config", *s.config});
  argv.insert(argv.end(), {"node-confirm", "--job", std::string(job_id), "--reservation",
                           std::to_string(reservation_id), "--pagg-id", std::to_string(pagg_id)});
  if (s.via == ConfirmVia::kApbasil) argv.insert(argv.end(), {"--apbasil", s.apbasil});
  return argv;
}

}  // namespace basild::slurm
