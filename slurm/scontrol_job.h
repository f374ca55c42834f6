// What basil-slurm reads of `scontrol show job -o ID` (Slurm 22.05): the
// job's shape and the reservation basil-slurm wrote into its AdminComment.
// Pure: text in, values out.
//
// scontrol prints each field as KEY=VALUE with no quoting, so a job's own
// strings (its name, comment, working directory, output paths, mail user)
// can hold text that looks like fields, newlines included: a job named
// "x NumTasks=99" puts a second NumTasks into the output. The reader
// therefore never takes a field by its first or last occurrence. The shape
// is one *block*: the run of whitespace-free KEY=VALUE tokens that starts
// at NodeList= and ends at MinTmpDiskNode=, which Slurm prints whole and
// in which no value is the job's free text. Every block in the output is
// read, and all must say the same: the real one is always there, so a copy
// that agrees changes nothing and one that differs makes the output
// ambiguous, an error (the job misled only about itself). The same rule
// holds for the GPU fields (TresPerNode, TresPerJob, TresPerTask), which
// Slurm prints outside the block, and for the AdminComment.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "basil_proto/status.h"
#include "slurm/reservation_env.h"

namespace basild::slurm {

// A job's shape as Slurm states it once it has nodes.
struct JobShape {
  std::string node_list;                         // NodeList: a Slurm host list
  std::uint32_t num_nodes = 0;                   // NumNodes (the lower bound of a range)
  std::optional<std::uint64_t> ntasks;           // NumTasks; N/A: none
  std::optional<std::uint32_t> cpus_per_task;    // CPUs/Task; N/A: none
  std::optional<std::uint32_t> ntasks_per_node;  // NtasksPerN:B:S:C, first field; 0 or *: none
  std::optional<std::uint32_t> ntasks_per_core;  // NtasksPerN:B:S:C, fourth field; *: none
  std::optional<std::uint64_t> mem_per_node_mb;  // MinMemoryNode; 0: none
  std::optional<std::uint64_t> mem_per_cpu_mb;   // MinMemoryCPU
  std::uint32_t gpus_per_node = 0;               // from TresPerNode, TresPerJob or TresPerTask

  bool operator==(const JobShape&) const = default;
};

// The shape of job `job_id` from scontrol's output. Only blocks whose
// NodeList names the nodes in `node_list` (SLURM_JOB_NODELIST, which
// slurmctld gives the prolog) count: the output of a heterogeneous job's
// first component holds every component's record, each with its nodes.
// Errors (kInvalidValue) say what is wrong: not that job's record (the
// output must begin with "JobId=ID "), no block for those nodes, blocks or
// GPU fields that differ, a value that does not parse.
basil::Result<JobShape> parse_job_shape(std::string_view output, std::string_view job_id,
                                        std::string_view node_list);

// A memory size as scontrol prints it, in MB: "0", "1000M", "2G", "1.50G"
// (at most two decimals, exact in MB), "1T". nullopt when it does not parse
// or is no whole number of MB.
std::optional<std::uint64_t> parse_memory_mb(std::string_view text);

// The GPUs per node a TRES-per-X value asks ("gres:gpu:2", "gres:gpu:a100:1",
// "gres/gpu:1", "gpu:1", comma-separated with other TRES); 0 when it names
// no GPU, nullopt when a GPU count does not parse.
std::optional<std::uint64_t> gpu_count(std::string_view tres);

// How a job was started, as its record says: a batch script (BatchFlag=1),
// or an interactive allocation (salloc, srun) and the session id of the
// process that asked for it (AllocNode:Sid=HOST:SID), which an salloc
// shell and its aprun share.
struct JobStart {
  bool batch = false;
  std::uint64_t alloc_sid = 0;  // 0: Slurm names none
  bool operator==(const JobStart&) const = default;
};

// Job `job_id`'s start from scontrol's output. Every BatchFlag and every
// AllocNode:Sid token must say the same (a job name imitating them
// otherwise makes the output ambiguous, an error); BatchFlag must be there.
basil::Result<JobStart> parse_job_start(std::string_view output, std::string_view job_id);

// The reservation id of an AdminComment basil-slurm wrote
// (reservation_comment, slurm/reservation_env.h) in scontrol's output for job
// `job_id`: nullopt when there is none; an error when there are several
// that differ or the output is not that job's.
basil::Result<std::optional<std::uint64_t>> parse_reservation_comment(std::string_view output,
                                                                      std::string_view job_id);

}  // namespace basild::slurm
