#include "slurm/libslurm.h"

#include <dlfcn.h>

namespace basild::slurm {
namespace {

// Sets `fn` to the library's `name`; false, with why in `error`, when it
// has none.
template <typename Fn>
bool bind(void* library, const char* soname, const char* name, Fn& fn, std::string& error) {
  void* symbol = ::dlsym(library, name);
  if (symbol == nullptr) {
    error = std::string(soname) + " has no " + name;
    return false;
  }
  fn = reinterpret_cast<Fn>(symbol);
  return true;
}

}  // namespace

std::optional<Libslurm> open_libslurm(const char* soname, std::string& error) {
  void* library = ::dlopen(soname, RTLD_NOW | RTLD_GLOBAL);
  if (library == nullptr) {
    const char* why = ::dlerror();
    error = "cannot load " + std::string(soname) + ": " + (why != nullptr ? why : "dlopen failed");
    return std::nullopt;
  }
  Libslurm a;
  auto b = [&](const char* name, auto& fn) { return bind(library, soname, name, fn, error); };
  if (!b("slurm_init", a.init) || !b("slurm_load_job", a.load_job) || !b("slurm_sprint_job_info", a.sprint_job_info) ||
      !b("slurm_init_job_desc_msg", a.init_job_desc_msg) || !b("slurm_update_job2", a.update_job2) ||
      !b("slurm_notify_job", a.notify_job) || !b("slurm_complete_job", a.complete_job) ||
      !b("slurm_strerror", a.strerror) || !b("slurm_get_errno", a.get_errno))
    return std::nullopt;
  return a;
}

const Libslurm* load_libslurm(std::string& error) {
  static std::optional<Libslurm> api;
  if (!api) api = open_libslurm(kLibslurmSoname, error);
  return api ? &*api : nullptr;
}

}  // namespace basild::slurm
