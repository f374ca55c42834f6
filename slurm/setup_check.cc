#include "slurm/setup_check.h"

namespace basild::slurm {

namespace {

SetupLine fails(std::string text) { return {false, std::move(text)}; }
SetupLine holds(std::string text) { return {true, std::move(text)}; }

SetupLine check_log(const HookConfig& c, const SetupPorts& ports, std::string_view who) {
  if (c.log_file) {
    const std::string why = ports.cannot_append(*c.log_file);
    if (!why.empty())
      return fails("log: " + *c.log_file + ": " + std::string(who) + " cannot append to it (" + why +
                   "): a hook running as this user loses its lines there");
    return holds("log: " + *c.log_file + (c.syslog ? " and syslog" : ""));
  }
  if (!c.syslog) return fails("log: neither syslog nor a file: a hook's lines go to stderr alone, which Slurm discards");
  return holds("log: syslog (the journal), ident basil-slurm");
}

SetupLine check_basild(const HookConfig& c, const SetupPorts& ports, std::string_view who) {
  const Reply r = ports.basild_health();
  const std::string where = "basild: " + c.socket;
  if (!r.reached) return fails(where + ": " + r.message);
  if (r.status == 403)
    return fails(where + ": basild refuses " + std::string(who) +
                 ": add the user to [control] allowed_users (or its group to allowed_groups) in basild.conf");
  if (r.status != 200 && r.status != 429 && r.status != 503)
    return fails(where + ": GET /v1/health answered HTTP " + std::to_string(r.status));
  return holds(where + " answers (health: HTTP " + std::to_string(r.status) + ")");
}

}  // namespace

std::vector<SetupLine> check_setup(const HookConfig& c, const SetupPorts& ports, std::string_view who) {
  std::vector<SetupLine> out = {check_log(c, ports, who), check_basild(c, ports, who)};
  if (c.scontrol) {
    const std::string why = ports.cannot_run(*c.scontrol);
    out.push_back(why.empty() ? holds("scontrol: " + *c.scontrol)
                              : fails("scontrol: " + *c.scontrol + ": " + std::string(who) + " cannot run it (" + why + ")"));
  }
  if (c.slurm_conf) {
    const std::string why = ports.cannot_read(*c.slurm_conf);
    out.push_back(why.empty() ? holds("slurm.conf: " + *c.slurm_conf)
                              : fails("slurm.conf: " + *c.slurm_conf + ": " + std::string(who) + " cannot read it (" +
                                      why + ")"));
  }
  return out;
}

}  // namespace basild::slurm
