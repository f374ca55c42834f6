// Other programs, as the tests and the benchmarks start them: a child with
// pipes in a process group of its own that dies with the object, and
// run-and-capture (argv, or a shell line for set-up). No gtest here.
//
//   basil_test::Subprocess p({"/usr/sbin/sshd", "-D"}, {.err = Redirect::file(log)});
//   auto r = basil_test::run({emulator, "--state", dir}, request);  // r.exit_code, r.out
#pragma once

#include <sys/types.h>
#include <sys/wait.h>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace basil_test {

// Where one of the child's standard streams goes.
struct Redirect {
  enum class Kind { kInherit, kPipe, kNull, kFile, kStdout };
  Kind kind = Kind::kInherit;
  std::string path;     // kFile
  bool append = false;  // kFile written: appended to, else truncated

  static Redirect inherit() { return {}; }
  static Redirect pipe() { return {Kind::kPipe, {}, false}; }
  static Redirect null() { return {Kind::kNull, {}, false}; }
  static Redirect file(std::string path, bool append = false) { return {Kind::kFile, std::move(path), append}; }
  // stderr only: wherever stdout goes (2>&1).
  static Redirect to_stdout() { return {Kind::kStdout, {}, false}; }
};

struct SpawnOptions {
  Redirect in{}, out{}, err{};       // inherited unless said
  bool own_group = true;             // a process group of its own, killed whole with the object
  bool search_path = false;          // argv[0] looked up in PATH
  int parent_death_signal = 0;       // sent to it when the thread that started it ends (PR_SET_PDEATHSIG)
  std::vector<std::string> env{};    // NAME=value, added to the environment or replacing a name's value
  std::optional<std::pair<uid_t, gid_t>> as_user{};  // uid:gid, no supplementary groups (needs root)
  // A session of its own (and so a group of its own), as a program started
  // from a login shell has: a child of a process in no session (session 0,
  // as under a CI runner started by init) would otherwise be in none either.
  bool own_session = false;
};

// How a child ended.
struct Exit {
  int status = 0;                    // as waitpid() gives it
  std::chrono::microseconds cpu{0};  // its user + system time
  int code() const { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }
  int signal() const { return WIFSIGNALED(status) ? WTERMSIG(status) : 0; }
};

// What run() saw.
struct Ran {
  int exit_code = -1;       // -1 when it was killed by a signal or did not start
  int signal = 0;           // the signal that ended it
  bool timed_out = false;   // killed at the deadline
  std::string out, err;     // what it wrote on piped stdout and stderr
  std::string error;        // why it did not start
  std::chrono::microseconds cpu{0};
};

// A started program. Unless it has been waited for, the destructor sends
// SIGKILL to its process group (to it alone without own_group) and reaps it;
// its pipes are close-on-exec here, so that a child started by another
// thread holds no end of them.
class Subprocess {
 public:
  enum class Read { kData, kTimeout, kEnd };

  Subprocess() = default;
  // Starts argv[0]; started() is false and error() says why when it cannot
  // (a program that cannot be executed included).
  explicit Subprocess(const std::vector<std::string>& argv, const SpawnOptions& options = {});
  ~Subprocess();
  Subprocess(Subprocess&& other) noexcept;
  Subprocess& operator=(Subprocess&& other) noexcept;
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  bool started() const { return pid_ > 0; }
  const std::string& error() const { return error_; }
  pid_t pid() const { return pid_; }

  // All of `bytes` on its stdin (a pipe); false once it closed its end (no SIGPIPE).
  bool write(std::string_view bytes);
  void close_stdin();
  // Appends to `to` what arrives on its stdout (a pipe) within `limit`.
  Read read_stdout(std::string& to, std::chrono::milliseconds limit);

  // `input` written and stdin closed, stdout and stderr read to their end
  // (where piped) and the child reaped, all by `limit`: past it the group is
  // killed and timed_out set.
  Ran communicate(std::string_view input, std::chrono::milliseconds limit);

  // How it ended, once it has: reaped then, and remembered.
  std::optional<Exit> try_wait();
  std::optional<Exit> wait_for(std::chrono::milliseconds limit);
  Exit wait();

  // To the child, while it has not been reaped.
  void signal(int sig);
  // To its process group (to it alone without own_group).
  void kill_group(int sig);

 private:
  void close_pipes();
  std::optional<Exit> reap(bool block);

  pid_t pid_ = -1;
  bool own_group_ = true;
  int in_ = -1, out_ = -1, err_ = -1;
  std::optional<Exit> exit_;
  std::string error_;
};

// Long enough for any set-up step; a hung one fails instead of hanging the run.
inline constexpr std::chrono::milliseconds kRunLimit = std::chrono::minutes(5);

// Runs argv to its end: `input` on its stdin, which is then closed; its
// stdout, and its stderr when options.err is a pipe, captured (options.in
// and options.out are pipes whatever they say).
Ran run(const std::vector<std::string>& argv, std::string_view input = {}, SpawnOptions options = {},
        std::chrono::milliseconds limit = kRunLimit);
// `command` through /bin/sh -c, likewise: test set-up only (the code under
// test never uses a shell).
Ran run_shell(const std::string& command, std::string_view input = {}, SpawnOptions options = {},
              std::chrono::milliseconds limit = kRunLimit);

// Waiting for a server a test started to be ready: `ready()` looked at
// every `every` until it is true, the server has ended (seen at once: a
// server that exits at start-up says why in its own log, and no deadline is
// waited out) or `limit` has passed.
enum class Awaited { kReady, kEnded, kTimedOut };
template <typename Ready>
Awaited wait_while_running(Subprocess& server, Ready ready, std::chrono::milliseconds limit,
                           std::chrono::milliseconds every = std::chrono::milliseconds(10)) {
  const auto until = std::chrono::steady_clock::now() + limit;
  for (;;) {
    if (server.try_wait()) return Awaited::kEnded;
    if (ready()) return Awaited::kReady;
    if (std::chrono::steady_clock::now() >= until) return Awaited::kTimedOut;
    server.wait_for(every);
  }
}

}  // namespace basil_test
