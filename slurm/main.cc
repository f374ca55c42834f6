// basil-slurm: the Slurm side of basild (basil-slurm(8)). Slurm runs it
// with no arguments as PrologSlurmctld, EpilogSlurmctld and TaskProlog; it
// tells which from SLURM_SCRIPT_CONTEXT, or from a subcommand when run by
// hand.
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "basild/control_client/client.h"
#include "process/run.h"
#include "slurm/config_path.h"
#include "slurm/hooks.h"
#include "slurm/node_confirm.h"
#include "slurm/setup_check.h"
#include "slurm/slurm_api.h"

namespace {

using namespace basild::slurm;

// Lines to stderr, to the configured file and to syslog.
class Logger {
 public:
  Logger() = default;
  ~Logger() {
    if (fd_ >= 0) ::close(fd_);
    if (syslog_) ::closelog();
  }
  Logger(const Logger&) = delete;
  Logger& operator=(const Logger&) = delete;

  void configure(const HookConfig& c) {
    if (c.log_file) fd_ = ::open(c.log_file->c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0640);
    syslog_ = c.syslog;
    if (syslog_) ::openlog("basil-slurm", LOG_PID, LOG_DAEMON);
  }

  void log(LogLevel level, const std::string& message) {
    const std::string text = std::string(log_level_name(level)) + ": " + one_line(message, 4000);
    const std::string line = timestamp() + " basil-slurm[" + std::to_string(::getpid()) + "] " + text + "\n";
    std::fputs(line.c_str(), stderr);
    if (fd_ >= 0 && ::write(fd_, line.data(), line.size()) < 0) {
      // Nothing to tell: stderr has the line.
    }
    if (syslog_) {
      const int priority = level == LogLevel::kError ? LOG_ERR : level == LogLevel::kWarning ? LOG_WARNING : LOG_INFO;
      ::syslog(priority, "%s", text.c_str());
    }
  }

 private:
  static std::string timestamp() {
    const auto now = std::chrono::system_clock::now();
    const std::time_t t = std::chrono::system_clock::to_time_t(now);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
    std::tm tm{};
    ::localtime_r(&t, &tm);
    char buf[40];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    char out[48];
    std::snprintf(out, sizeof out, "%s.%03d", buf, static_cast<int>(ms));
    return out;
  }

  int fd_ = -1;
  bool syslog_ = false;
};

class RealPorts : public Ports {
 public:
  // `one_child`: the job's record and its update through one libslurm
  // child (the prolog's; JobSession).
  RealPorts(const HookConfig& config, Logger& logger, bool one_child)
      : config_(config), logger_(logger), client_(config.socket), one_child_(one_child) {}

  Reply basild(std::string_view method, std::string_view target, const std::string& body) override {
    const auto r = client_.request(method, target, body, body.empty() ? "" : "application/json", config_.basild_timeout);
    if (!r.ok()) return {false, r.message, 0, {}};
    return {true, {}, r.status, r.body};
  }

  ProgramRun show_job(const std::string& spec) override {
    if (config_.scontrol) return scontrol({"-o", "show", "job", spec});
    if (!one_child_) return show_job_record(spec, config_.slurm_timeout);
    session_ = std::make_unique<JobSession>(spec, config_.slurm_timeout);
    return session_->show();
  }

  ProgramRun update_job(const std::string& spec, bool no_requeue, const std::string& admin_comment) override {
    if (!config_.scontrol) {
      if (auto r = session_update(spec, no_requeue, admin_comment, [] {})) return std::move(*r);
      return update_job_record(spec, no_requeue, admin_comment, config_.slurm_timeout);
    }
    std::vector<std::string> args = {"update", "JobId=" + spec};
    if (no_requeue) args.push_back("Requeue=0");
    args.push_back("AdminComment=" + admin_comment);
    return scontrol(args);
  }

  // libslurm's update in its child while `meanwhile` runs here; scontrol's
  // one after the other.
  ProgramRun update_job_while(const std::string& spec, bool no_requeue, const std::string& admin_comment,
                              const std::function<void()>& meanwhile) override {
    if (config_.scontrol) return Ports::update_job_while(spec, no_requeue, admin_comment, meanwhile);
    if (auto r = session_update(spec, no_requeue, admin_comment, meanwhile)) return std::move(*r);
    return update_job_record_while(spec, no_requeue, admin_comment, config_.slurm_timeout, meanwhile);
  }

  // libslurm's completion call, as srun makes it; slurmctld takes it from
  // root or SlurmUser, whom PrologSlurmctld runs as.
  std::string fail_job(std::uint32_t job_id, int exit_code, const std::string& message) override {
    return complete_job_failed(job_id, exit_code, message, config_.slurm_timeout);
  }

  void log(LogLevel level, const std::string& line) override { logger_.log(level, line); }

  ProgramRun apbasil(const std::string& path, const std::string& request) override {
    return program_run(basil::process::run({{path}, {}, /*search_path=*/false},
                                           {.input = request, .timeout = config_.basild_timeout}));
  }

  void pause(std::chrono::milliseconds d) override { std::this_thread::sleep_for(d); }

 private:
  // The configured scontrol with these arguments, from an argument vector.
  ProgramRun scontrol(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {*config_.scontrol};
    argv.insert(argv.end(), args.begin(), args.end());
    return program_run(basil::process::run({argv, {}, /*search_path=*/true},
                                           {.timeout = config_.slurm_timeout, .max_captured = kMaxSlurmOutput}));
  }

  static ProgramRun program_run(basil::Result<basil::process::Run> r) {
    ProgramRun out;
    if (!r) {
      out.started = false;
      out.error = r.status().message();
      return out;
    }
    out.exit_code = r->status();
    out.timed_out = r->timed_out;
    out.out = std::move(r->out);
    out.err = std::move(r->err);
    out.truncated = r->out_truncated;
    return out;
  }

  // The update through the child that showed job `spec`'s record, if one
  // waits for it.
  std::optional<ProgramRun> session_update(const std::string& spec, bool no_requeue, const std::string& admin_comment,
                                           const std::function<void()>& meanwhile) {
    if (!session_ || session_->spec() != spec) return std::nullopt;
    return session_->update_while(no_requeue, admin_comment, meanwhile);
  }

  const HookConfig& config_;
  Logger& logger_;
  basild::control::Client client_;
  bool one_child_ = false;
  std::unique_ptr<JobSession> session_;
};

// One of node-confirm's options: a job number, a reservation or pagg id
// above 0, an absolute path.
bool read_node_confirm_arg(NodeConfirm& q, const std::string& option, const std::string& value) {
  auto positive = [&](std::uint64_t& out) {
    const char* last = value.data() + value.size();
    const auto [at, ec] = std::from_chars(value.data(), last, out);
    return ec == std::errc() && at == last && !value.empty() && out > 0;
  };
  std::uint64_t job = 0;
  if (option == "--job") {
    if (!positive(job)) return false;
    q.job_id = value;
    return true;
  }
  if (option == "--reservation") return positive(q.reservation_id);
  if (option == "--pagg-id") return positive(q.pagg_id);
  if (value.empty() || value.front() != '/') return false;
  q.apbasil = value;
  return true;
}

struct Args {
  std::string config;
  bool config_given = false;
  bool check_config = false;
  std::string check_as;  // --as USER: the checks as that user (root only)
  std::optional<Hook> hook;
  std::optional<NodeConfirm> node_confirm;
};

int usage(const std::string& why, const std::string& config) {
  if (!why.empty()) std::cerr << "basil-slurm: " << why << "\n";
  std::cerr << "usage: basil-slurm [--config FILE] [prolog|epilog|task-prolog]\n"
               "       basil-slurm [--config FILE] node-confirm --job ID --reservation R --pagg-id P [--apbasil PATH]\n"
               "       basil-slurm [--config FILE] --check-config [--as USER]\n"
               "Without a subcommand the hook is SLURM_SCRIPT_CONTEXT's (prolog_slurmctld,\n"
               "epilog_slurmctld or slurmd's epilog_slurmd, prolog_task). The configuration is "
            << config << " unless --config names one.\n";
  return why.empty() ? kExitOk : kExitUsage;
}

std::optional<Args> parse_args(int argc, char** argv, int& exit_code) {
  Args a;
  a.config = default_config_path(argc > 0 ? argv[0] : "");
  const auto usage = [&a](const std::string& why) { return ::usage(why, a.config); };
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      exit_code = usage("");
      return std::nullopt;
    }
    if (arg == "--config" && i + 1 < argc) {
      a.config = argv[++i];
      a.config_given = true;
    } else if (arg == "--check-config") {
      a.check_config = true;
    } else if (arg == "--as" && a.check_config && i + 1 < argc) {
      a.check_as = argv[++i];
    } else if (arg == "node-confirm" && !a.node_confirm && !a.hook) {
      a.node_confirm.emplace();
    } else if (a.node_confirm && i + 1 < argc &&
               (arg == "--job" || arg == "--reservation" || arg == "--pagg-id" || arg == "--apbasil")) {
      if (!read_node_confirm_arg(*a.node_confirm, arg, argv[++i])) {
        exit_code = usage(arg + " " + argv[i] + ": not a valid value");
        return std::nullopt;
      }
    } else if (auto h = hook_from_name(arg); h && !a.hook) {
      a.hook = h;
    } else {
      exit_code = usage("unknown argument \"" + arg + "\"");
      return std::nullopt;
    }
  }
  if (a.node_confirm && (a.node_confirm->job_id.empty() || a.node_confirm->reservation_id == 0 ||
                         a.node_confirm->pagg_id == 0)) {
    exit_code = usage("node-confirm needs --job, --reservation and --pagg-id");
    return std::nullopt;
  }
  return a;
}

// The configuration file's settings; a missing file at the default path is
// every default.
basil::Result<HookConfig> load_config(const Args& a) {
  std::ifstream in(a.config);
  if (!in) {
    if (!a.config_given && ::access(a.config.c_str(), F_OK) != 0) return HookConfig{};
    return basil::Status(basil::Code::kInvalidValue, "cannot read " + a.config);
  }
  std::stringstream text;
  text << in.rdbuf();
  return parse_hook_config(text.str(), a.config);
}

std::optional<std::string> environment(std::string_view name) {
  const char* v = std::getenv(std::string(name).c_str());
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

// What a failure before the hook's work ends with: non-zero (a batch job is
// requeued while the set-up is wrong), but 0 for the task prolog, whose
// failure would kill the task.
int setup_failure(std::optional<Hook> hook) { return hook == Hook::kTaskProlog ? kExitOk : kExitUsage; }

// "" when the calling user can do what `mode` asks of `path` (access(2):
// the real ids, which are this process's), else why not.
std::string cannot(const std::string& path, int mode) {
  if (::access(path.c_str(), mode) == 0) return {};
  return std::strerror(errno);
}

std::string user_text(uid_t uid) {
  const passwd* pw = ::getpwuid(uid);
  return (pw != nullptr ? std::string(pw->pw_name) + " " : std::string()) + "(uid " + std::to_string(uid) + ")";
}

// The checks as this process's user; 0 when all hold.
int check_setup_here(const Args& a, const HookConfig& config) {
  SetupPorts ports;
  ports.cannot_append = [](const std::string& path) {
    if (::access(path.c_str(), F_OK) == 0) return cannot(path, W_OK);
    const std::string folder = path.substr(0, path.rfind('/') + 1);
    const std::string why = cannot(folder.empty() ? "." : folder, W_OK | X_OK);
    return why.empty() ? why : "absent, and its folder: " + why;
  };
  ports.cannot_run = [](const std::string& path) { return cannot(path, X_OK); };
  ports.cannot_read = [](const std::string& path) { return cannot(path, R_OK); };
  ports.basild_health = [&config] {
    basild::control::Client client(config.socket);
    const auto r = client.request("GET", "/v1/health", "", "", std::chrono::seconds(10));
    return r.ok() ? Reply{true, {}, r.status, r.body} : Reply{false, r.message, 0, {}};
  };
  std::cout << "configuration: " << a.config << (a.config_given ? "" : " (found by the program's name)") << "\n";
  bool all = true;
  for (const auto& line : check_setup(config, ports, user_text(::getuid()))) {
    std::cout << (line.ok ? "ok    " : "FAIL  ") << line.text << "\n";
    all = all && line.ok;
  }
  return all ? kExitOk : 1;
}

// --check-config [--as USER]: the checks as USER (its groups too), in a
// child that takes its ids, as Slurm runs a hook as that user.
int check_config(const Args& a, const HookConfig& config) {
  if (a.check_as.empty()) return check_setup_here(a, config);
  const passwd* pw = ::getpwnam(a.check_as.c_str());
  if (pw == nullptr) {
    std::cerr << "basil-slurm: --as " << a.check_as << ": no such user\n";
    return kExitUsage;
  }
  const uid_t uid = pw->pw_uid;
  const gid_t gid = pw->pw_gid;
  std::cout.flush();
  const pid_t child = ::fork();
  if (child < 0) {
    std::cerr << "basil-slurm: fork: " << std::strerror(errno) << "\n";
    return kExitUsage;
  }
  if (child == 0) {
    if (::initgroups(a.check_as.c_str(), gid) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0) {
      std::cerr << "basil-slurm: --as " << a.check_as << ": cannot take its ids (run as root): "
                << std::strerror(errno) << "\n";
      std::_Exit(kExitUsage);
    }
    const int rc = check_setup_here(a, config);
    std::cout.flush();
    std::_Exit(rc);
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : kExitUsage;
}

int run_hook(Hook hook, const HookConfig& config, Logger& logger) {
  auto env = read_job_env(environment, hook);
  if (!env) {
    logger.log(LogLevel::kError, std::string(hook_name(hook)) + ": " + env.status().message());
    return setup_failure(hook);
  }
  RealPorts ports(config, logger, hook == Hook::kProlog);
  switch (hook) {
    case Hook::kProlog: return run_prolog(*env, config, ports);
    case Hook::kEpilog: return run_epilog(*env, ports);
    case Hook::kTaskProlog: {
      std::string out;
      const int rc = run_task_prolog(*env, ports, out);
      std::fputs(out.c_str(), stdout);
      std::fflush(stdout);
      return rc;
    }
  }
  return kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  int exit_code = kExitOk;
  auto args = parse_args(argc, argv, exit_code);
  if (!args) return exit_code;
  const auto context = environment("SLURM_SCRIPT_CONTEXT");
  if (!args->hook && !args->node_confirm && context) args->hook = hook_from_context(*context);
  if (!args->hook && !args->check_config && !args->node_confirm)
    return usage(context ? "SLURM_SCRIPT_CONTEXT=" + *context + " is no hook basil-slurm serves"
                         : "no subcommand and no SLURM_SCRIPT_CONTEXT",
                 args->config);
  Logger logger;
  auto config = load_config(*args);
  if (!config) {
    logger.log(LogLevel::kError, "configuration: " + config.status().message());
    return args->check_config ? kExitUsage : setup_failure(args->hook);
  }
  if (args->check_config) return check_config(*args, *config);
  logger.configure(*config);
  // libslurm's and scontrol's configuration: Slurm gives its hooks no SLURM_CONF.
  if (config->slurm_conf) ::setenv("SLURM_CONF", config->slurm_conf->c_str(), 1);
  if (args->node_confirm) {
    RealPorts ports(*config, logger, false);
    return run_node_confirm(*args->node_confirm, ports);
  }
  return run_hook(*args->hook, *config, logger);
}
