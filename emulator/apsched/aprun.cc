// aprun: parses its placement options, finds its reservation in the
// environment and its command on PATH, and hands both to the emulated
// apsched with its own standard descriptors; then waits for the
// application's end and exits with its status.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "emulator/apsched/clients.h"
#include "emulator/apsched/socket.h"

extern char** environ;

namespace emu::apsched {

using basil::Code;
using basil::Result;
using basil::Status;

namespace {

Status usage(const std::string& why) {
  return Status(Code::kInvalidValue, "aprun: " + why + "\nusage: aprun [-n PEs] [-N PEs_per_node] [-d depth] "
                                     "[-j CPUs_per_CU] [--] command [args...]");
}

// A positive (or, for -N and -j, non-negative) number.
Result<std::uint64_t> number(const std::string& option, const std::string& text, bool zero_ok) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || text[0] == '-' || *end != '\0' || (v == 0 && !zero_ok) || v > UINT32_MAX)
    return usage(option + " takes a " + (zero_ok ? "non-negative" : "positive") + " number, not '" + text + "'");
  return static_cast<std::uint64_t>(v);
}

bool executable(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::string current_dir() {
  char buf[4096];
  return ::getcwd(buf, sizeof buf) != nullptr ? std::string(buf) : std::string(".");
}

// The command's absolute path, looked up as a shell would (PATH when it has
// no '/'); aprun sends the file, not the name.
Result<std::string> locate(const std::string& name, const std::string& cwd) {
  if (name.find('/') != std::string::npos) {
    const std::string path = name[0] == '/' ? name : cwd + "/" + name;
    if (executable(path)) return path;
  } else {
    const char* env = std::getenv("PATH");
    std::string dirs = env != nullptr ? env : "/bin:/usr/bin";
    for (std::size_t at = 0; at <= dirs.size();) {
      std::size_t colon = dirs.find(':', at);
      if (colon == std::string::npos) colon = dirs.size();
      std::string dir = dirs.substr(at, colon - at);
      if (dir.empty()) dir = ".";
      if (dir[0] != '/') dir = cwd + "/" + dir;
      if (executable(dir + "/" + name)) return dir + "/" + name;
      at = colon + 1;
    }
  }
  return Status(Code::kInvalidValue, "aprun: file " + name + " not found");
}

// The run's outcome, as the daemon tells it.
int await_end(int fd) {
  std::string buffer;
  for (;;) {
    const auto line = read_line(fd, buffer);
    if (!line) {
      std::cerr << "aprun: apsched ended the connection before the application ended\n";
      return 1;
    }
    const auto reply = decode_reply(*line);
    if (!reply) {
      std::cerr << "aprun: apsched's answer is not understood: " << reply.status().message() << "\n";
      return 1;
    }
    if (reply->kind == ReplyKind::kStarted) continue;
    if (reply->kind == ReplyKind::kRefused) {
      std::cerr << reply->text << "\n";
      return 1;
    }
    if (reply->kind == ReplyKind::kDone) {
      std::cerr << reply->text << std::flush;
      return reply->status;
    }
    std::cerr << "aprun: apsched's answer is not understood\n";
    return 1;
  }
}

}  // namespace

Where take_where(std::vector<std::string>& words, int argc, char** argv, int first, int skip, bool until_word) {
  Where w;
  if (const char* e = std::getenv("BASIL_EMULATOR_STATE"); e != nullptr) w.state_dir = e;
  bool words_only = false;
  for (int i = first; i < argc; ++i) {
    if (i == skip) continue;
    const std::string a = argv[i];
    if (words_only) {
      words.push_back(a);
    } else if ((a == "--state" || a == "--socket") && i + 1 < argc) {
      (a == "--state" ? w.state_dir : w.socket) = argv[++i];
    } else if (a.rfind("--state=", 0) == 0) {
      w.state_dir = a.substr(8);
    } else if (a.rfind("--socket=", 0) == 0) {
      w.socket = a.substr(9);
    } else {
      words.push_back(a);
      // aprun's first word that is no option begins its command.
      if (until_word && (a == "--" || a.empty() || a[0] != '-')) words_only = true;
      // An option's value is not the command.
      if (until_word && a.size() == 2 && a[0] == '-' && a != "--" && i + 1 < argc) words.push_back(argv[++i]);
    }
  }
  return w;
}

Result<AprunArgs> parse_aprun_args(const std::vector<std::string>& words) {
  AprunArgs out;
  std::size_t i = 0;
  for (; i < words.size(); ++i) {
    const std::string& a = words[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a.size() < 2 || a[0] != '-') break;
    const std::string option = a.substr(0, 2);
    if (option != "-n" && option != "-N" && option != "-d" && option != "-j") return usage("unknown option " + a);
    std::string value = a.substr(2);
    if (value.empty()) {
      if (i + 1 >= words.size()) return usage(option + " needs a value");
      value = words[++i];
    }
    auto v = number(option, value, option == "-N" || option == "-j");
    if (!v) return v.status();
    if (option == "-n") out.shape.width = *v;
    if (option == "-N") out.shape.nppn = static_cast<std::uint32_t>(*v);
    if (option == "-d") out.shape.depth = static_cast<std::uint32_t>(*v);
    if (option == "-j") out.shape.cpus_per_cu = static_cast<std::uint32_t>(*v);
  }
  out.command.assign(words.begin() + static_cast<std::ptrdiff_t>(i), words.end());
  if (out.command.empty()) return usage("no command to run");
  return out;
}

Result<std::uint64_t> reservation_from(const char* basil_reservation_id, const char* batch_partition_id) {
  const char* name = "BASIL_RESERVATION_ID";
  const char* value = basil_reservation_id;
  if (value == nullptr || *value == '\0') name = "BATCH_PARTITION_ID", value = batch_partition_id;
  if (value == nullptr || *value == '\0')
    return Status(Code::kInvalidValue,
                  "aprun: no reservation: neither BASIL_RESERVATION_ID nor BATCH_PARTITION_ID is set");
  char* end = nullptr;
  const unsigned long long v = std::strtoull(value, &end, 10);
  if (*end != '\0' || v == 0 || value[0] == '-')
    return Status(Code::kInvalidValue, std::string("aprun: ") + name + " '" + value + "' is not a reservation id");
  return static_cast<std::uint64_t>(v);
}

int aprun_main(const std::vector<std::string>& words, const Where& where) {
  auto args = parse_aprun_args(words);
  if (!args) return std::cerr << args.status().message() << "\n", 1;
  auto resid = reservation_from(std::getenv("BASIL_RESERVATION_ID"), std::getenv("BATCH_PARTITION_ID"));
  if (!resid) return std::cerr << resid.status().message() << "\n", 1;
  RunRequest r;
  r.reservation_id = *resid;
  r.shape = args->shape;
  r.cwd = current_dir();
  auto path = locate(args->command.front(), r.cwd);
  if (!path) return std::cerr << path.status().message() << "\n", 1;
  r.argv = args->command;
  r.argv.front() = *path;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) r.env.emplace_back(*e);
  const std::string socket = socket_path(where.socket, where.state_dir);
  if (socket.empty())
    return std::cerr << "aprun: no apsched to ask (--socket, BASIL_APSCHED_SOCKET or BASIL_EMULATOR_STATE)\n", 1;
  auto fd = connect_to(socket);
  if (!fd) return std::cerr << "aprun: cannot reach apsched at " << fd.status().message() << "\n", 1;
  if (const Status st = send_line(fd->get(), encode(Request{r}), {0, 1, 2}); !st)
    return std::cerr << "aprun: cannot reach apsched: " << st.message() << "\n", 1;
  return await_end(fd->get());
}

}  // namespace emu::apsched
