// libslurm, loaded (dlopen) by the child that calls it, not at
// basil-slurm's start: the epilog, which makes no Slurm call, and the
// prolog's own process then do not pay for loading and relocating it
// (about 1 ms of CPU per run measured on the test machine, perf stat).
// Each function keeps libslurm's own type (slurm/slurm.h), so a call is
// checked as a direct one would be.
#pragma once

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

#include <optional>
#include <string>

namespace basild::slurm {

// The SONAME basil-slurm was built against (the build reads it from
// libslurm.so): the library of the same interface version.
inline constexpr const char* kLibslurmSoname = BASIL_LIBSLURM_SONAME;

struct Libslurm {
  decltype(&::slurm_init) init = nullptr;
  decltype(&::slurm_load_job) load_job = nullptr;
  decltype(&::slurm_sprint_job_info) sprint_job_info = nullptr;
  decltype(&::slurm_init_job_desc_msg) init_job_desc_msg = nullptr;
  decltype(&::slurm_update_job2) update_job2 = nullptr;
  decltype(&::slurm_notify_job) notify_job = nullptr;
  decltype(&::slurm_complete_job) complete_job = nullptr;
  decltype(&::slurm_strerror) strerror = nullptr;
  decltype(&::slurm_get_errno) get_errno = nullptr;
};

// The library `soname`'s functions; nullopt, with why in `error`, when it
// or one of them cannot be found. Loaded RTLD_GLOBAL: the plugins libslurm
// loads in turn find its symbols there. A library that lacks one stays
// loaded (the child ends soon after).
std::optional<Libslurm> open_libslurm(const char* soname, std::string& error);

// kLibslurmSoname's, opened once per process (the child's); nullptr, with
// why in `error`, when it cannot be.
const Libslurm* load_libslurm(std::string& error);

}  // namespace basild::slurm
