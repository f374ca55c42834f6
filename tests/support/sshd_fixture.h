// A real OpenSSH sshd on 127.0.0.1 for the conduit tests and the
// benchmarks of the external-login paths: its own host key, a client key,
// authorized_keys and sshd_config in a temp dir, started with -D on a free
// port in its own process group. Kill() takes down the listener and every
// per-connection sshd it forked (as a crash of the main system's sshd
// would); Start() again reuses the port and the keys. No gtest here.
#pragma once

#include <pwd.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "basild/conduit/ssh_session.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace basil_test {

class TestSshd {
 public:
  TestSshd();
  ~TestSshd();  // killed, its directory removed
  TestSshd(const TestSshd&) = delete;
  TestSshd& operator=(const TestSshd&) = delete;

  // Starts sshd and waits until it accepts connections.
  bool Start();
  // SIGKILL to the listener and to every sshd it forked (and their children).
  void Kill();
  // Sets `key` to `value` in sshd_config, replacing its line (sshd takes a
  // keyword's first value). Takes effect at the next Start().
  void SetOption(const std::string& key, const std::string& value);

  const std::string& error() const { return error_; }
  std::string log() const;
  int port() const { return port_; }
  const std::string& dir() const { return dir_.path(); }

  // How a client reaches it: the generated client key, and the known_hosts
  // file named (known_hosts, wrong_known_hosts or empty_known_hosts).
  basild::conduit::SshOptions options(const std::string& known_hosts = "known_hosts") const {
    basild::conduit::SshOptions o;
    o.host = "127.0.0.1";
    o.port = static_cast<std::uint16_t>(port_);
    const passwd* pw = ::getpwuid(::getuid());
    o.user = pw != nullptr ? pw->pw_name : "root";
    o.identity = dir() + "/client_key";
    o.known_hosts = dir() + "/" + known_hosts;
    o.connect_timeout = std::chrono::seconds(5);
    return o;
  }

 private:
  void write_known_hosts(const std::string& path, const std::string& pub) const;

  TempDir dir_;
  int port_ = 0;
  Subprocess sshd_;
  std::string error_;
};

// The [conduit] section of a basild.conf that reaches `sshd` in `mode`
// ("ssh-exec" or "ssh-gateway"), with `emulator --state STATE` as the main
// system's apbasil and `emulator --state STATE apkill` as its apkill, and
// the helper built in `binary_dir`.
// With `more`, sshd and the more are the system's login nodes in that order
// ([conduit] hosts), and basild knows every one's host key (as_login_nodes).
std::string conduit_conf(const TestSshd& sshd, const std::string& mode, const std::string& emulator,
                         const std::string& state, const std::string& binary_dir,
                         const std::vector<const TestSshd*>& more = {});

// Makes `more` login nodes of the same system as `first`, before they start:
// each admits first's client key, and first's all_known_hosts holds every
// host key.
void as_login_nodes(const TestSshd& first, const std::vector<TestSshd*>& more);

}  // namespace basil_test
