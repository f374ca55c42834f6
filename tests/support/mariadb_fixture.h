// A private MariaDB server for tests: a data directory made by
// mariadb-install-db in a fresh directory under `parent` (the build tree),
// mariadbd on 127.0.0.1 with a free port and its own socket, pid file and
// error log there, a user with a password and a my.cnf for it. The
// destructor stops the server (TERM, then KILL past a deadline) and removes
// the directory (TempDir); the server also gets SIGKILL if the test process
// dies first (PR_SET_PDEATHSIG). Programs run through emu::run_program; no
// gtest here. Needs Debian's mariadb-server and mariadb-client (scripts/setup.sh
// installs them): without them error() says so, and the test is to fail.
#pragma once

#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "emulator/run_program.h"
#include "tests/support/net.h"
#include "tests/support/temp_dir.h"

namespace basil_test {

class MariaDb {
 public:
  static constexpr const char* kServer = "/usr/sbin/mariadbd";
  static constexpr const char* kInstallDb = "/usr/bin/mariadb-install-db";
  static constexpr const char* kClient = "/usr/bin/mariadb";
  static constexpr const char* kUser = "basil";
  static constexpr const char* kPassword = "sdb-test-pw";

  explicit MariaDb(const std::string& parent, std::chrono::seconds start_budget = std::chrono::seconds(30))
      : tmp_("mariadb", parent), dir_(tmp_.path()) {
    for (const char* program : {kServer, kInstallDb, kClient}) {
      if (::access(program, X_OK) != 0) {
        error_ = std::string(program) + " is not installed (scripts/setup.sh installs mariadb-server and mariadb-client)";
        return;
      }
    }
    if (tmp_.path().empty()) {
      error_ = "cannot make a directory under " + parent;
      return;
    }
    port_ = free_tcp_port();
    if (install() && start(start_budget) && add_user()) write_defaults_file();
  }
  ~MariaDb() { stop(); }  // then tmp_ goes
  MariaDb(const MariaDb&) = delete;
  MariaDb& operator=(const MariaDb&) = delete;

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  int port() const { return port_; }
  const std::string& dir() const { return dir_; }
  std::string socket() const { return dir_ + "/mysqld.sock"; }
  // [client] host, port, user and password of the test user.
  std::string defaults_file() const { return dir_ + "/my.cnf"; }

  // Runs `sql` with the client as the test user (or `defaults_file`):
  // the rows, tab-separated, without column names.
  basil::Result<std::string> query(const std::string& sql, const std::string& defaults_file = {}) const {
    return client({"--defaults-file=" + (defaults_file.empty() ? this->defaults_file() : defaults_file), "--batch",
                   "--skip-column-names"},
                  sql);
  }

  // SIGTERM and a wait (then SIGKILL); idempotent.
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    pid_ = -1;
  }

 private:
  basil::Result<std::string> client(std::vector<std::string> args, const std::string& sql) const {
    args.insert(args.begin(), kClient);
    auto run = emu::run_program(args, sql, std::chrono::seconds(120), std::size_t{256} << 20);
    if (!run) return run.status();
    if (run->exit_code != 0 || run->timed_out)
      return basil::Status(basil::Code::kTransport, "mariadb exited with " + std::to_string(run->exit_code) + ": " +
                                                        run->err);
    return run->out;
  }

  static std::string os_user() {
    const passwd* pw = ::getpwuid(::geteuid());
    return pw != nullptr ? pw->pw_name : "root";
  }

  std::string log_tail() const {
    std::ifstream in(dir_ + "/error.log");
    std::stringstream s;
    s << in.rdbuf();
    const std::string text = s.str();
    return text.size() > 2000 ? text.substr(text.size() - 2000) : text;
  }

  bool install() {
    auto run = emu::run_program({kInstallDb, "--no-defaults", "--datadir=" + dir_ + "/data", "--user=" + os_user(),
                                 "--auth-root-authentication-method=socket", "--skip-test-db",
                                 "--skip-name-resolve"},
                                "", std::chrono::seconds(120));
    if (run && run->exit_code == 0) return true;
    error_ = "mariadb-install-db failed: " + (run ? run->out + run->err : run.status().message());
    return false;
  }

  std::vector<std::string> server_args() const {
    std::vector<std::string> a{kServer,
                               "--no-defaults",
                               "--datadir=" + dir_ + "/data",
                               "--socket=" + socket(),
                               "--port=" + std::to_string(port_),
                               "--bind-address=127.0.0.1",
                               "--pid-file=" + dir_ + "/mariadbd.pid",
                               "--log-error=" + dir_ + "/error.log",
                               "--tmpdir=" + dir_,
                               "--skip-name-resolve",
                               "--skip-log-bin",
                               "--innodb-buffer-pool-size=64M"};
    if (::geteuid() == 0) a.push_back("--user=root");
    return a;
  }

  // fork + exec (not posix_spawn) for PR_SET_PDEATHSIG; the child only
  // makes async-signal-safe calls before exec.
  bool start(std::chrono::seconds budget) {
    std::vector<std::string> args = server_args();
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const std::string out = dir_ + "/mariadbd.out";
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(127);
      const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd >= 0) {
        ::dup2(fd, 1);
        ::dup2(fd, 2);
      }
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    if (pid_ < 0) {
      error_ = "cannot fork for mariadbd";
      return false;
    }
    const auto deadline = std::chrono::steady_clock::now() + budget;
    while (std::chrono::steady_clock::now() < deadline) {
      if (port_accepts(port_) && ::access(socket().c_str(), F_OK) == 0) return true;
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        error_ = "mariadbd exited at start: " + log_tail();
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    error_ = "mariadbd does not accept connections on port " + std::to_string(port_) + " after " +
             std::to_string(budget.count()) + " s: " + log_tail();
    return false;
  }

  bool add_user() {
    const std::string user = std::string("'") + kUser + "'@'127.0.0.1'";
    auto done = client({"--no-defaults", "--socket=" + socket(), "--user=" + os_user(), "--batch"},
                       "CREATE USER " + user + " IDENTIFIED BY '" + kPassword + "';\nGRANT ALL PRIVILEGES ON *.* TO " +
                           user + ";\n");
    if (done) return true;
    error_ = "cannot create the test user: " + done.status().message();
    return false;
  }

  void write_defaults_file() const {
    std::ofstream(defaults_file()) << "[client]\nhost=127.0.0.1\nport=" << port_ << "\nprotocol=TCP\nuser=" << kUser
                                   << "\npassword=" << kPassword << "\n";
  }

  TempDir tmp_;
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
  std::string error_;
};

}  // namespace basil_test
