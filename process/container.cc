#include "process/container.h"

#include <dlfcn.h>
#include <errno.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <string>

namespace basil::process {
namespace {

// libjob's `jid_t job_getjid(pid_t)`: jid_t is 64 bits, (jid_t)-1 with
// errno set when the process is in no job.
using GetJid = std::uint64_t (*)(pid_t);

GetJid load_getjid(const char* first) {
  for (const char* name : {first, "libjob.so"}) {
    if (name == nullptr || *name == '\0') continue;
    if (void* lib = ::dlopen(name, RTLD_NOW | RTLD_LOCAL); lib != nullptr) {
      if (void* fn = ::dlsym(lib, "job_getjid"); fn != nullptr) return reinterpret_cast<GetJid>(fn);
      ::dlclose(lib);
    }
  }
  return nullptr;
}

}  // namespace

std::string_view to_string(ContainerKind kind) { return kind == ContainerKind::kJob ? "job" : "session"; }

basil::Result<Container> container_of(pid_t pid, const char* libjob) {
  // Loaded once per library name asked for: a process asks with one.
  static std::mutex mu;
  static std::string loaded_for;
  static GetJid getjid = nullptr;
  static bool tried = false;
  GetJid fn = nullptr;
  {
    std::lock_guard lock(mu);
    const std::string want = libjob != nullptr ? libjob : "";
    if (!tried || want != loaded_for) {
      getjid = load_getjid(libjob);
      loaded_for = want;
      tried = true;
    }
    fn = getjid;
  }
  const pid_t who = pid == 0 ? ::getpid() : pid;
  if (fn != nullptr) {
    errno = 0;
    const std::uint64_t jid = fn(who);
    if (jid == static_cast<std::uint64_t>(-1) || jid == 0) {
      const int e = errno;
      return basil::Status(basil::Code::kInvalidValue,
                           "process " + std::to_string(who) + " is in no job container (job_getjid: " +
                               (e != 0 ? std::strerror(e) : "no job") + ")");
    }
    return Container{jid, ContainerKind::kJob};
  }
  const pid_t sid = ::getsid(who);
  if (sid < 0)
    return basil::Status(basil::Code::kInvalidValue,
                         "no session for process " + std::to_string(who) + ": " + std::strerror(errno));
  return Container{static_cast<std::uint64_t>(sid), ContainerKind::kSession};
}

}  // namespace basil::process
