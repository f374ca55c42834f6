// What slurmctld's own log (Slurm 22.05, SlurmctldDebug=info) says of how
// soon a freed node is used again and of how long a job holds it: for
// benchmarks that ask whether Slurm waits for a timer rather than starting
// a waiting job at once, and what a job's hooks add to its time on a node.
#pragma once

#include <string_view>
#include <vector>

namespace basil_test {

// For each job started on one node that became free while the job waited
// (submitted before that node's previous job ended): the time from the
// previous job's end ("_job_complete: JobId=N done") to this job's start
// ("sched: Allocate JobId=N NodeList=X" or "sched/backfill: _start_job:
// Started JobId=N in P on X"), in ms, in the log's order. Lines it does
// not know, and jobs on several nodes, are passed over.
std::vector<double> freed_node_waits_ms(std::string_view log);

// For each job started on one node: the time from its start (as above) to
// its end ("_job_complete: JobId=N done"), in ms, in the order of the ends:
// how long a job held its node, its PrologSlurmctld, launch, TaskProlog and
// script included.
std::vector<double> node_hold_ms(std::string_view log);

// For each job started on one node whose PrologSlurmctld ran: the time from
// its start (as above) to slurmctld's "prolog_running_decr: Configuration
// for JobId=N is complete", in ms, in the order of those lines: how long
// the job waited for its PrologSlurmctld (slurmscriptd's start of the hook,
// the hook, and slurmctld taking its end), the part of a node's hold that
// a PrologSlurmctld adds.
std::vector<double> configuring_ms(std::string_view log);

}  // namespace basil_test
