#include "emulator/sdb_command.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <optional>
#include <vector>

#include "emulator/core/sdb.h"
#include "emulator/store/store.h"
#include "process/run.h"

using basil::Code;
using basil::Result;
using basil::Status;

namespace emu {

namespace {

constexpr const char* kUsage =
    R"(usage: basil-emulator [--state DIR] sdb print [--database NAME]
       basil-emulator [--state DIR] sdb load --defaults-file MY.CNF [--database NAME]
                                   [--client PATH] [--timeout SECONDS]
       basil-emulator [--state DIR] sdb sync [--timeout SECONDS]
       basil-emulator [--state DIR] sdb forget | show
)";

constexpr const char* kTargetKey = "sdb";  // the store setting holding the SdbTarget
constexpr int kDefaultTimeoutS = 60;
constexpr int kConnectTimeoutS = 10;

// The words and options after `sdb` (and any --state before it), each
// option given once as --name VALUE or --name=VALUE.
struct Args {
  std::vector<std::string> words;
  std::map<std::string, std::string> options;
  bool help = false;
  std::string error;

  bool has(const std::string& name) const { return options.count(name) != 0; }
  std::string get(const std::string& name, std::string fallback = {}) const {
    auto it = options.find(name);
    return it == options.end() ? fallback : it->second;
  }
};

Args parse_args(int argc, char** argv, int word) {
  static const char* kOptions[] = {"state", "defaults-file", "database", "client", "timeout"};
  Args a;
  for (int i = 1; i < argc && a.error.empty(); ++i) {
    if (i == word) continue;
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      a.help = true;
      continue;
    }
    if (arg.rfind("--", 0) != 0) {
      a.words.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2), value;
    const auto eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    } else if (i + 1 < argc && i + 1 != word) {
      value = argv[++i];
    } else {
      a.error = "option --" + name + " needs a value";
      break;
    }
    if (std::find(std::begin(kOptions), std::end(kOptions), name) == std::end(kOptions))
      a.error = "unknown option --" + name;
    else if (!a.options.emplace(name, value).second)
      a.error = "option --" + name + " given twice";
  }
  return a;
}

int fail(const std::string& what) {
  std::cerr << "basil-emulator: " << what << "\n";
  return 1;
}

// An exclusive flock on the state directory while the SDB is read and
// loaded: loads from one state run one at a time, and each reads the state
// after taking the lock, so the last load to finish saw every change
// committed before it began.
class DirLock {
 public:
  explicit DirLock(const std::string& dir) : fd_(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
    if (fd_ < 0) {
      error_ = "cannot open " + dir + ": " + std::strerror(errno);
      return;
    }
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      error_ = "cannot lock " + dir + ": " + std::strerror(errno);
      return;
    }
  }
  ~DirLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;
  const std::string& error() const { return error_; }

 private:
  int fd_;
  std::string error_;
};

Result<std::vector<ProcessorRow>> current_rows(Store& store) {
  std::vector<ProcessorRow> rows;
  const Status st =
      store.read([&](const State& s) { rows = processor_rows(s.system, s.nodes); }, Store::Scope::kNodes);
  if (!st) return st;
  return rows;
}

Result<std::optional<SdbTarget>> recorded_target(Store& store) {
  auto text = store.setting(kTargetKey);
  if (!text) return text.status();
  if (!*text) return std::optional<SdbTarget>();
  auto target = parse_sdb_target(**text);
  if (!target) return target.status();
  return std::optional<SdbTarget>(std::move(*target));
}

// The client's complaint, on one line.
std::string one_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  return text.empty() ? std::string("(nothing on standard error)") : text;
}

// Loads the current state into `target`.
Status load(Store& store, const SdbTarget& target, int timeout_s, std::size_t* row_count = nullptr) {
  auto rows = current_rows(store);
  if (!rows) return rows.status();
  if (row_count != nullptr) *row_count = rows->size();
  const std::vector<std::string> argv{target.client, "--defaults-file=" + target.defaults_file, "--batch",
                                      "--connect-timeout=" + std::to_string(std::min(timeout_s, kConnectTimeoutS))};
  // The client is looked up in PATH, as a shell would find it (never through one).
  const std::string sql = sdb_sql(*rows, target.database);
  const basil::process::Program client{argv, {}, /*search_path=*/true};
  auto run = basil::process::run(client, {.input = sql, .timeout = std::chrono::seconds(timeout_s)});
  if (!run) return run.status();
  if (run->timed_out)
    return Status(Code::kTimeout, target.client + " did not finish within " + std::to_string(timeout_s) +
                                      " s (killed): " + one_line(run->err));
  if (run->status() != 0)
    return Status(Code::kTransport,
                  target.client + " exited with " + std::to_string(run->status()) + ": " + one_line(run->err));
  return Status::ok();
}

std::string where(const SdbTarget& t) { return "database " + t.database + " of " + t.defaults_file; }

int cmd_print(Store& store, const Args& args) {
  const std::string database = args.get("database", std::string(kSdbDatabase));
  if (Status st = check_database_name(database); !st) return fail(st.message());
  auto rows = current_rows(store);
  if (!rows) return fail(rows.status().message());
  std::cout << sdb_sql(*rows, database);
  std::cout.flush();
  return std::cout ? 0 : fail("cannot write the SQL");
}

int cmd_load(Store& store, const std::string& dir, const Args& args, int timeout_s) {
  if (!args.has("defaults-file")) return fail("sdb load needs --defaults-file MY.CNF");
  SdbTarget target;
  const std::string given = args.get("defaults-file");
  char resolved[PATH_MAX];
  if (::realpath(given.c_str(), resolved) == nullptr) return fail("cannot read " + given + ": " + std::strerror(errno));
  target.defaults_file = resolved;
  target.database = args.get("database", target.database);
  target.client = args.get("client", target.client);
  if (Status st = check_database_name(target.database); !st) return fail(st.message());
  DirLock lock(dir);
  if (!lock.error().empty()) return fail(lock.error());
  std::size_t rows = 0;
  if (Status st = load(store, target, timeout_s, &rows); !st) return fail("loading the SDB: " + st.message());
  if (Status st = store.put_setting(kTargetKey, sdb_target_to_json(target)); !st)
    return fail("loaded the SDB but could not record where: " + st.message());
  std::cout << "loaded " << rows << " processor rows into " << where(target) << "\n";
  return 0;
}

int cmd_sync(Store& store, const std::string& dir, int timeout_s) {
  DirLock lock(dir);
  if (!lock.error().empty()) return fail(lock.error());
  auto target = recorded_target(store);
  if (!target) return fail(target.status().message());
  if (!*target) return fail("no SDB loaded from this state (sdb load first)");
  if (Status st = load(store, **target, timeout_s); !st) return fail("loading the SDB: " + st.message());
  return 0;
}

int cmd_show(Store& store) {
  auto target = recorded_target(store);
  if (!target) return fail(target.status().message());
  std::cout << (*target ? sdb_target_to_json(**target) : std::string("none")) << "\n";
  return 0;
}

std::string state_dir_from(const Args& args) {
  if (args.has("state")) return args.get("state");
  if (const char* e = std::getenv("BASIL_EMULATOR_STATE"); e != nullptr) return e;
  return {};
}

int cmd_forget(Store& store, const std::string& dir) {
  DirLock lock(dir);
  if (!lock.error().empty()) return fail(lock.error());
  const Status st = store.put_setting(kTargetKey, std::nullopt);
  return st ? 0 : fail(st.message());
}

// The options each action takes besides --state.
struct Action {
  const char* name;
  std::vector<const char*> options;
};
const Action kActions[] = {{"print", {"database"}},
                           {"load", {"defaults-file", "database", "client", "timeout"}},
                           {"sync", {"timeout"}},
                           {"forget", {}},
                           {"show", {}}};

int run(const Action& action, const std::string& dir, const Args& args) {
  for (const auto& [name, value] : args.options)
    if (name != "state" && std::find_if(action.options.begin(), action.options.end(), [&](const char* o) {
                             return name == o;
                           }) == action.options.end())
      return fail(std::string("sdb ") + action.name + " takes no --" + name);
  int timeout_s = kDefaultTimeoutS;
  if (args.has("timeout")) {
    const std::string text = args.get("timeout");
    char* end = nullptr;
    const long v = std::strtol(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || v < 1 || v > 86400) return fail("--timeout: 1 to 86400 seconds");
    timeout_s = static_cast<int>(v);
  }
  auto store = Store::open(dir);
  if (!store) return fail(store.status().message());
  const std::string_view name = action.name;
  if (name == "print") return cmd_print(**store, args);
  if (name == "load") return cmd_load(**store, dir, args, timeout_s);
  if (name == "sync") return cmd_sync(**store, dir, timeout_s);
  if (name == "forget") return cmd_forget(**store, dir);
  return cmd_show(**store);
}

}  // namespace

int sdb_main(int argc, char** argv, int word) {
  const Args args = parse_args(argc, argv, word);
  if (!args.error.empty()) {
    std::cerr << "basil-emulator: " << args.error << "\n" << kUsage;
    return 2;
  }
  if (args.help) {
    std::cout << kUsage;
    return 0;
  }
  const Action* action = nullptr;
  for (const Action& a : kActions)
    if (args.words.size() == 1 && args.words[0] == a.name) action = &a;
  if (action == nullptr) {
    std::cerr << "basil-emulator: sdb takes print, load, sync, forget or show\n" << kUsage;
    return 2;
  }
  const std::string dir = state_dir_from(args);
  if (dir.empty()) return fail("no state directory (--state DIR or BASIL_EMULATOR_STATE)");
  return run(*action, dir, args);
}

int sdb_follow_node_change(const std::string& dir) {
  DirLock lock(dir);
  auto store = Store::open(dir);
  if (!lock.error().empty() || !store) {
    std::cerr << "basil-emulator: the node change is made, but the SDB could not be checked: "
              << (store ? lock.error() : store.status().message()) << "\n";
    return kSdbStale;
  }
  auto target = recorded_target(**store);
  if (target && !*target) return 0;
  Status st = target ? load(**store, **target, kDefaultTimeoutS) : target.status();
  if (st) return 0;
  std::cerr << "basil-emulator: the node change is made, but the SDB"
            << (target ? " (" + where(**target) + ")" : std::string()) << " was not updated: " << st.message()
            << " (basil-emulator sdb sync retries)\n";
  return kSdbStale;
}

}  // namespace emu
