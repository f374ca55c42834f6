#include "process/container.h"

#include <dlfcn.h>
#include <errno.h>
#include <unistd.h>

#include <cstring>
#include <string>

namespace basil::process {
namespace {

// libjob's `jid_t job_getjid(pid_t)`: jid_t is 64 bits, (jid_t)-1 with
// errno set when the process is in no job.
using GetJid = std::uint64_t (*)(pid_t);

// The library that has job_getjid, open (the caller closes it), or null.
void* open_libjob(const char* first, GetJid* fn) {
  for (const char* name : {first, "libjob.so"}) {
    if (name == nullptr || *name == '\0') continue;
    if (void* lib = ::dlopen(name, RTLD_NOW | RTLD_LOCAL); lib != nullptr) {
      if (void* sym = ::dlsym(lib, "job_getjid"); sym != nullptr) {
        *fn = reinterpret_cast<GetJid>(sym);
        return lib;
      }
      ::dlclose(lib);
    }
  }
  return nullptr;
}

}  // namespace

std::string_view to_string(ContainerKind kind) { return kind == ContainerKind::kJob ? "job" : "session"; }

basil::Result<Container> container_of(pid_t pid, const char* libjob) {
  const pid_t who = pid == 0 ? ::getpid() : pid;
  GetJid fn = nullptr;
  // Loaded for each question (an aprun's claim, a job's CONFIRM: rare),
  // so that nothing is kept between them.
  if (void* lib = open_libjob(libjob, &fn); lib != nullptr) {
    errno = 0;
    const std::uint64_t jid = fn(who);
    const int e = errno;
    ::dlclose(lib);
    if (jid == static_cast<std::uint64_t>(-1) || jid == 0)
      return basil::Status(basil::Code::kInvalidValue,
                           "process " + std::to_string(who) + " is in no job container (job_getjid: " +
                               (e != 0 ? std::strerror(e) : "no job") + ")");
    return Container{jid, ContainerKind::kJob};
  }
  const pid_t sid = ::getsid(who);
  if (sid < 0)
    return basil::Status(basil::Code::kInvalidValue,
                         "no session for process " + std::to_string(who) + ": " + std::strerror(errno));
  return Container{static_cast<std::uint64_t>(sid), ContainerKind::kSession};
}

}  // namespace basil::process
