#include "basild/io/scontrol.h"

#include "basild/core/scontrol_nodes.h"

namespace basild {

namespace {

basil::Status failure_of(const CallOutcome& o) {
  std::string m = o.status.message();
  if (!o.diagnostics.empty()) m += " (" + o.diagnostics + ")";
  return basil::Status(o.status.code(), m);
}

}  // namespace

std::vector<std::string> scontrol_list_argv(const ScontrolOptions& o, const std::optional<std::string>& name) {
  std::vector<std::string> argv{o.scontrol, "--all", "-o", "show", "node"};
  if (name) argv.push_back(*name);
  return argv;
}

std::vector<std::string> scontrol_drain_argv(const ScontrolOptions& o, const std::string& name,
                                             const std::string& reason) {
  return {o.scontrol, "update", "NodeName=" + name, "State=DRAIN", "Reason=" + reason};
}

std::vector<std::string> scontrol_resume_argv(const ScontrolOptions& o, const std::string& name) {
  return {o.scontrol, "update", "NodeName=" + name, "State=RESUME"};
}

std::vector<std::string> scontrol_ping_argv(const ScontrolOptions& o) { return {o.scontrol, "ping"}; }

std::vector<std::string> scontrol_annotate_job_argv(const ScontrolOptions& o, const std::string& job_id,
                                                    const std::string& note) {
  return {o.scontrol, "update", "JobId=" + job_id, "AdminComment=" + note};
}
std::vector<std::string> scontrol_resume_job_argv(const ScontrolOptions& o, const std::string& job_id) {
  return {o.scontrol, "resume", job_id};
}
std::vector<std::string> scontrol_requeue_job_argv(const ScontrolOptions& o, const std::string& job_id) {
  return {o.scontrol, "requeue", job_id};
}

ScontrolNodeControl::ScontrolNodeControl(boost::asio::io_context& io, ScontrolOptions options)
    : options_(std::move(options)), calls_(io) {}

void ScontrolNodeControl::list(std::optional<std::string> name, ListDone done) {
  run(scontrol_list_argv(options_, name), [done = std::move(done)](CallOutcome o) {
    if (!o.status) return done(failure_of(o));
    done(parse_scontrol_nodes(o.response));
  });
}

void ScontrolNodeControl::drain(const std::string& name, const std::string& reason, Done done) {
  run(scontrol_drain_argv(options_, name, reason), [done = std::move(done)](CallOutcome o) {
    done(o.status ? basil::Status::ok() : failure_of(o));
  });
}

void ScontrolNodeControl::resume(const std::string& name, Done done) {
  run(scontrol_resume_argv(options_, name), [done = std::move(done)](CallOutcome o) {
    done(o.status ? basil::Status::ok() : failure_of(o));
  });
}

void ScontrolNodeControl::annotate_job(const std::string& job_id, const std::string& note, Done done) {
  run(scontrol_annotate_job_argv(options_, job_id, note), [done = std::move(done)](CallOutcome o) {
    done(o.status ? basil::Status::ok() : failure_of(o));
  });
}

void ScontrolNodeControl::resume_job(const std::string& job_id, Done done) {
  run(scontrol_resume_job_argv(options_, job_id), [done = std::move(done)](CallOutcome o) {
    done(o.status ? basil::Status::ok() : failure_of(o));
  });
}

void ScontrolNodeControl::requeue_job(const std::string& job_id, Done done) {
  run(scontrol_requeue_job_argv(options_, job_id), [done = std::move(done)](CallOutcome o) {
    done(o.status ? basil::Status::ok() : failure_of(o));
  });
}

void ScontrolNodeControl::ping(std::function<void(basil::Result<std::string>)> done) {
  run(scontrol_ping_argv(options_), [done = std::move(done)](CallOutcome o) {
    if (!o.status) return done(failure_of(o));
    done(std::move(o.response));
  });
}

void ScontrolNodeControl::run(std::vector<std::string> argv, Transport::Handler done) {
  LocalTransportOptions lo;
  lo.argv = std::move(argv);
  lo.output = LocalOutput::kText;
  lo.label = "scontrol";
  lo.max_concurrent = 1;
  lo.max_output_bytes = std::size_t{256} << 20;
  if (!options_.slurm_conf.empty()) lo.env_set = {"SLURM_CONF=" + options_.slurm_conf};
  calls_.run(std::move(lo), options_.timeout, std::move(done));
}

}  // namespace basild
