// The job container ALPS knows a process by: the one rule both sides use,
// basil-slurm when it CONFIRMs a reservation with the container of a job's
// batch step, and the emulated ALPS when it checks that an aprun comes
// from the container its reservation was confirmed with.
//
//   - On CLE, the id of the job module's container the process is in
//     (job_getjid() of Cray's libjob, which the job module's PAGG-based
//     proctrack puts every process of a Slurm job step in). libjob is
//     loaded at run time, so the same binaries run where it is not.
//   - Elsewhere (no libjob to load), the process's session id: as Slurm's
//     select/alps did without the job module, "the alloc_sid to equal the
//     session ID (getsid()) of the process executing the aprun/mpirun
//     commands". With Debian's Slurm 22.05 a batch script and everything
//     it starts share the batch step's session; each srun step's tasks
//     have a session of their own on each node.
//
// Where libjob loads but cannot name the process's container (it is in no
// job), that is an error: a session id would be a number ALPS does not
// know there, and every aprun of the job would be refused.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string_view>

#include "basil_proto/status.h"

namespace basil::process {

enum class ContainerKind : std::uint8_t { kJob, kSession };

struct Container {
  std::uint64_t id = 0;
  ContainerKind kind = ContainerKind::kSession;
  bool operator==(const Container&) const = default;
};

// "job" or "session", as messages and logs say it.
std::string_view to_string(ContainerKind kind);

// The libraries tried, in order, when no other is named: CLE's libjob by
// its soname, then by its development name.
inline constexpr const char* kLibjob = "libjob.so.0";

// The container of process `pid` (0: the caller). `libjob` names the
// library to try first (a path or a soname); "libjob.so" is tried after it.
// A process that is not there or, under libjob, one in no job container:
// kInvalidValue naming the pid and why.
basil::Result<Container> container_of(pid_t pid, const char* libjob = kLibjob);

}  // namespace basil::process
