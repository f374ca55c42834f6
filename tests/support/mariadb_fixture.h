// A private MariaDB server for tests: a data directory made by
// mariadb-install-db in a fresh directory under `parent` (the build tree),
// mariadbd on 127.0.0.1 with a free port and its own socket, pid file and
// error log there, a user with a password and a my.cnf for it. The
// destructor stops the server (TERM, then KILL past a deadline) and removes
// the directory (TempDir); the server also gets SIGKILL if the test process
// dies first (PR_SET_PDEATHSIG). Programs run through basil_test::run; no
// gtest here. Needs Debian's mariadb-server and mariadb-client (scripts/setup.sh
// installs them): without them error() says so, and the test is to fail.
#pragma once

#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "basil_proto/status.h"
#include "tests/support/files.h"
#include "tests/support/net.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wait.h"

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
    if (!server_.started()) return;
    server_.signal(SIGTERM);
    if (!server_.wait_for(std::chrono::seconds(30))) server_.kill_group(SIGKILL);
    server_.wait();
    server_ = Subprocess();
  }

 private:
  basil::Result<std::string> client(std::vector<std::string> args, const std::string& sql) const {
    args.insert(args.begin(), kClient);
    const auto ran = run(args, sql, {.err = Redirect::pipe()}, std::chrono::seconds(120));
    if (!ran.error.empty()) return basil::Status(basil::Code::kTransport, ran.error);
    if (ran.exit_code != 0 || ran.timed_out)
      return basil::Status(basil::Code::kTransport, "mariadb exited with " + std::to_string(ran.exit_code) + ": " +
                                                        ran.err);
    return ran.out;
  }

  static std::string os_user() {
    const passwd* pw = ::getpwuid(::geteuid());
    return pw != nullptr ? pw->pw_name : "root";
  }

  std::string log_tail() const {
    const std::string text = read_file(dir_ + "/error.log");
    return text.size() > 2000 ? text.substr(text.size() - 2000) : text;
  }

  bool install() {
    const auto ran = run({kInstallDb, "--no-defaults", "--datadir=" + dir_ + "/data", "--user=" + os_user(),
                          "--auth-root-authentication-method=socket", "--skip-test-db", "--skip-name-resolve"},
                         // Its temporary tables in the test's own directory: a
                         // sweep of /tmp by anything else running must not break it.
                         "", {.err = Redirect::pipe(), .env = {"TMPDIR=" + dir_}}, std::chrono::seconds(120));
    if (ran.exit_code == 0) return true;
    error_ = "mariadb-install-db failed: " + (ran.error.empty() ? ran.out + ran.err : ran.error);
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

  // Its output in mariadbd.out; it dies with the test process.
  bool start(std::chrono::seconds budget) {
    server_ = Subprocess(server_args(), {.out = Redirect::file(dir_ + "/mariadbd.out"),
                                         .err = Redirect::to_stdout(),
                                         .parent_death_signal = SIGKILL});
    if (!server_.started()) {
      error_ = "cannot start mariadbd: " + server_.error();
      return false;
    }
    const auto up = wait_while_running(
        server_, [&] { return port_accepts(port_) && ::access(socket().c_str(), F_OK) == 0; }, budget);
    if (up == Awaited::kReady) return true;
    if (up == Awaited::kEnded) {
      server_ = Subprocess();
      error_ = "mariadbd exited at start: " + log_tail();
    } else {
      error_ = "mariadbd does not accept connections on port " + std::to_string(port_) + " after " +
               std::to_string(budget.count()) + " s: " + log_tail();
    }
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
  Subprocess server_;
  std::string error_;
};

}  // namespace basil_test
