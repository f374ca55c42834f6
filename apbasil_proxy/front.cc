// apbasil_proxy: the apbasil of an external login node. The scheduler runs
// it for every BASIL call, the request on stdin, the answer on stdout; it
// sends the request to the local basild's control socket and writes basild's
// answer as it comes. It reads no basild.conf: the socket is --socket, else
// $APBASIL_PROXY_SOCKET, else /run/basild/control.sock (basild's default),
// and how long to wait and how much to pass on are what basild published
// beside its socket (basild/control_client/published.h; basild's defaults
// without it). When basild cannot be reached at all (nothing was sent),
// apbasil_proxy-fallback, beside this program or in ../libexec/basild,
// takes the call: its own ssh session, or a FAILURE. See apbasil_proxy(8).
//
// Every FAILURE it writes carries the request's protocol (Slurm's
// select/alps stops on any other). A call basild refused without acting on
// it is sent once more; a call whose exchange broke is never sent again (it
// may be with ALPS).
#include <limits.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "apbasil_proxy/exchange.h"
#include "apbasil_proxy/proxy.h"
#include "basild/control_client/published.h"
#include "process/write_all.h"

namespace {

using basil::process::write_all;

struct Options {
  std::string socket{basild::control::kDefaultSocket};
  std::optional<std::string> config;  // for the fallback; else what basild published
};

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

// Arguments apbasil would not know are ignored, as apbasil ignores them.
std::optional<Options> parse_args(int argc, char** argv) {
  Options o;
  if (const char* s = env("APBASIL_PROXY_SOCKET")) o.socket = s;
  if (const char* c = env("APBASIL_PROXY_CONFIG")) o.config = c;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--socket" || a == "--config" || a == "-c") && i + 1 < argc) {
      (a == "--socket" ? o.socket : o.config.emplace()) = argv[++i];
    } else if (a == "--help" || a == "-h") {
      return std::nullopt;
    }
  }
  return o;
}

std::string self_directory() {
  std::vector<char> buf(PATH_MAX + 1);
  const ssize_t n = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n <= 0) return {};
  std::string path(buf.data(), static_cast<std::size_t>(n));
  return path.substr(0, path.rfind('/'));
}

// Executes apbasil_proxy-fallback with the request on its standard input
// (a memory file: it reads exactly what this program read); returns only
// when it cannot, with the FAILURE written here.
int fall_back(const std::string& request, const std::string& config, const std::string& socket,
              const std::string& why) {
  const int fd = ::memfd_create("apbasil_proxy-request", 0);
  if (fd < 0 || !write_all(fd, request) || ::lseek(fd, 0, SEEK_SET) != 0 || ::dup2(fd, 0) != 0)
    return apbasil_proxy::answer_failure(request, true, why + "; cannot pass the request on: " + std::strerror(errno));
  if (fd != 0) ::close(fd);
  std::vector<std::string> args{"apbasil_proxy-fallback", "--config", config, "--socket", socket, "--why", why};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const auto dir = self_directory();
  for (const auto& path : apbasil_proxy::fallback_paths(dir)) ::execv(path.c_str(), argv.data());
  return apbasil_proxy::answer_failure(request, true,
                                      why + "; cannot run apbasil_proxy-fallback beside " + dir +
                                          " or in ../libexec/basild (" + std::strerror(errno) + ")");
}

}  // namespace

int main(int argc, char** argv) {
  const auto options = parse_args(argc, argv);
  if (!options) {
    write_all(1,
              "usage: apbasil_proxy [--socket PATH] [--config FILE]   (request on stdin, answer on stdout)\n"
              "PATH defaults to $APBASIL_PROXY_SOCKET, then /run/basild/control.sock; FILE (read by the fallback)\n"
              "to $APBASIL_PROXY_CONFIG, then the one basild published, then /etc/basild/basild.conf\n");
    return 0;
  }
  const auto request = apbasil_proxy::read_request(0);
  if (!request || request->size() > apbasil_proxy::kMaxRequestBytes)
    return apbasil_proxy::answer_failure(request.value_or(""), false,
                                         "the request on stdin is unreadable or over 1 MiB");

  // What basild published; its defaults when there is nothing to read (an
  // older basild, or none running).
  basild::control::Published settings;
  if (auto p = basild::control::read_published(options->socket)) settings = *p;
  const std::string config = options->config.value_or(settings.config);

  return apbasil_proxy::call_through_basild(
      options->socket, *request, settings.wait, settings.max_output_bytes, [&](const std::string& why) {
        return fall_back(*request, config, options->socket, "control socket " + options->socket + ": " + why);
      });
}
