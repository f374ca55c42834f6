// The job-control port: the changes basild makes to a Slurm job when ALPS
// cannot follow it (a SWITCH refused): a note the user and the admin read
// (`scontrol show job` prints it as AdminComment), and the job resumed or
// requeued. The daemon's adapter runs Slurm's scontrol (basild/io/scontrol.h);
// tests keep an in-memory one. `done` is called exactly once, on the
// io_context, never inside the call itself.
#pragma once

#include <functional>
#include <string>

#include "basil_proto/status.h"

namespace basild {

class JobControlPort {
 public:
  using Done = std::function<void(basil::Status)>;
  virtual ~JobControlPort() = default;

  // Sets the job's AdminComment to `note`.
  virtual void annotate_job(const std::string& job_id, const std::string& note, Done done) = 0;
  // scontrol resume: a suspended job runs again.
  virtual void resume_job(const std::string& job_id, Done done) = 0;
  // scontrol requeue: the job ends (its epilog releases the reservation)
  // and waits to run again.
  virtual void requeue_job(const std::string& job_id, Done done) = 0;
};

}  // namespace basild
