// apbasil_proxy-full: the C++ front. apbasil_proxy (lean_front.c) runs it
// when it has no usable card (card.h) for its configuration, when basild
// could not be reached, and when basild refused the call. It reads
// basild.conf (the sections it needs), writes the card that lets later
// calls take the lean path, sends the request to the local basild's
// control socket and writes the answer. Everything else (a FAILURE
// document, its own ssh session) is apbasil_proxy-fallback's, which this
// program executes with the request on its standard input and the outcome
// of the socket attempt in its arguments.
//
// It links no libssh, and libxml2 only statically, for the one answer it
// writes itself: the FAILURE when the fallback cannot be run, which must
// carry the request's protocol (a client whose request said 1.3 stops on
// any other).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "basild/config/config.h"
#include "apbasil_proxy/card.h"
#include "apbasil_proxy/handover.h"
#include "apbasil_proxy/proxy.h"

namespace {

using apbasil_proxy::write_all;

std::string self_directory() {
  std::vector<char> buf(PATH_MAX + 1);
  const ssize_t n = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n <= 0) return {};
  std::string path(buf.data(), static_cast<std::size_t>(n));
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

// Executes apbasil_proxy-fallback with `request` on its standard input; only
// returns when it cannot. The request goes through a memory file, so that
// the fallback reads exactly what this program read.
int hand_over(const apbasil_proxy::Handover& h, const std::string& request) {
  const int fd = ::memfd_create("apbasil_proxy-request", 0);
  if (fd < 0 || !write_all(fd, request) || ::lseek(fd, 0, SEEK_SET) != 0 || ::dup2(fd, 0) != 0) {
    const std::string why = std::string("apbasil_proxy: cannot pass the request on: ") + std::strerror(errno) + "\n";
    write_all(2, why);
    write_all(1, apbasil_proxy::failure_response(request, true, apbasil_proxy::kInstallFailureMessage));
    return 0;
  }
  if (fd != 0) ::close(fd);
  const auto argv_strings = apbasil_proxy::fallback_argv(h);
  std::vector<char*> argv;
  for (const auto& a : argv_strings) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const auto dir = self_directory();
  for (const auto& path : apbasil_proxy::fallback_paths(dir)) ::execv(path.c_str(), argv.data());
  const std::string why = "apbasil_proxy: cannot run apbasil_proxy-fallback beside " + dir +
                          " or in ../libexec/basild (" + std::strerror(errno) + ")\n";
  write_all(2, why);
  write_all(1, apbasil_proxy::failure_response(request, true, apbasil_proxy::kInstallFailureMessage));
  return 0;
}

// A long answer broke off after a part of it went to standard output: no
// document can follow, so the scheduler sees a cut answer (its parser
// fails) and a failed exit status, and standard error says why.
int broke_off(const apbasil_proxy::Attempt& a) {
  write_all(2, apbasil_proxy::broke_off_message(a));
  return 1;
}

// The card for apbasil_proxy's next calls (card.h). Best effort: without
// one, every call comes through this program, slower but the same.
void store_card(const std::string& config_path, const struct stat& identity, const basild::Config& config) {
  char path[BASIL_CARD_PATH_MAX];
  if (basil_card_path(path, sizeof path, basil_card_dir(), ::geteuid(), config_path.c_str()) != 0) return;
  const auto guard = std::chrono::duration_cast<std::chrono::milliseconds>(apbasil_proxy::basild_guard(config));
  const auto ms = static_cast<std::uint32_t>(std::min<std::chrono::milliseconds::rep>(guard.count(), UINT32_MAX));
  (void)basil_card_store(path, config_path.c_str(), &identity, config.control.socket.c_str(), ms);
}

}  // namespace

int main(int argc, char** argv) {
  apbasil_proxy::Handover h;
  if (const char* e = std::getenv("APBASIL_PROXY_CONFIG"); e != nullptr && *e != '\0') h.config_path = e;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--config" || a == "-c") && i + 1 < argc) {
      h.config_path = argv[++i];
    } else if (a == "--help" || a == "-h") {
      write_all(1,
                "usage: apbasil_proxy [--config FILE]   (request on stdin, answer on stdout)\n"
                "FILE defaults to $APBASIL_PROXY_CONFIG, then /etc/basild/basild.conf\n");
      return 0;
    }
    // Anything else is ignored, as apbasil ignores what it does not know.
  }

  const auto request = apbasil_proxy::read_request(0);
  if (!request || request->size() > apbasil_proxy::kMaxRequestBytes) {
    h.outcome = apbasil_proxy::SocketOutcome::kNotTried;
    h.why = "the request on stdin is unreadable or over 1 MiB";
    h.transient = false;
    // Its first MiB still tells the fallback which protocol to answer in.
    return hand_over(h, request ? *request : std::string());
  }

  // Any trouble with the configuration: the fallback reads it again and says
  // what is wrong in a FAILURE document.
  // Read with read(2), not a stream: the first stream of a program sets up
  // its locale, a tenth of this program's work.
  // The file's identity is taken before it is read, so that a card never
  // vouches for bytes other than those parsed.
  const int fd = ::open(h.config_path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat identity {};
  const bool known = fd >= 0 && ::fstat(fd, &identity) == 0;
  const auto text = fd >= 0 ? apbasil_proxy::read_request(fd) : std::nullopt;
  if (fd >= 0) ::close(fd);
  if (!text) return hand_over(h, *request);
  // Only what this program uses: reading and checking the other sections
  // too took a fifth of its instructions (the running basild checked them
  // when it started; the fallback reads the whole file).
  const auto config = basild::parse_config_sections(*text, apbasil_proxy::kFrontSections, h.config_path);
  if (!config) return hand_over(h, *request);
  if (config->control.socket.empty()) return hand_over(h, *request);
  if (known) store_card(h.config_path, identity, *config);

  auto attempt = apbasil_proxy::try_basild(*config, *request, 1);
  if (attempt.cut()) return broke_off(attempt);
  if (attempt.outcome == apbasil_proxy::SocketOutcome::kAnswered) return write_all(1, attempt.body) ? 0 : 1;
  h.outcome = attempt.outcome;
  h.why = std::move(attempt.why);
  h.transient = attempt.transient;
  return hand_over(h, *request);
}
