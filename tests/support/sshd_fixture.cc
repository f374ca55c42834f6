#include "tests/support/sshd_fixture.h"

#include <signal.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "tests/support/files.h"
#include "tests/support/net.h"
#include "tests/support/proc.h"
#include "tests/support/wait.h"

namespace basil_test {
namespace {

using namespace std::chrono_literals;

// Every process whose parent chain leads to `root` (root included).
std::set<pid_t> process_tree(pid_t root) {
  std::set<pid_t> tree{root};
  const auto all = processes();
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& p : all)
      if (tree.count(p.ppid) != 0 && tree.insert(p.pid).second) grew = true;
  }
  return tree;
}

}  // namespace

TestSshd::TestSshd() : dir_("basild-sshd"), port_(free_tcp_port()) {
  const std::string& d = dir();
  ::mkdir("/run/sshd", 0755);  // sshd's privilege separation directory
  const auto keys = run_shell("ssh-keygen -q -t ed25519 -N '' -f " + d + "/host_key && ssh-keygen -q -t ed25519 -N '' -f " +
                              d + "/client_key && ssh-keygen -q -t ed25519 -N '' -f " + d + "/other_host_key && cp " + d +
                              "/client_key.pub " + d + "/authorized_keys");
  if (d.empty() || keys.exit_code != 0) error_ = "ssh-keygen failed";
  std::ofstream(d + "/sshd_config")
      << "Port " << port_ << "\nListenAddress 127.0.0.1\nHostKey " << d << "/host_key\n"
      << "AuthorizedKeysFile " << d << "/authorized_keys\nPidFile " << d << "/sshd.pid\n"
      << "StrictModes no\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
      << "PubkeyAuthentication yes\nPermitRootLogin prohibit-password\nLogLevel ERROR\n"
      << "MaxSessions 200\nMaxStartups 100:30:200\nPrintMotd no\n"
      // bash reads ~/.bashrc for an ssh command when SHLVL is unset; this
      // host's root .bashrc runs slow tools (pyenv), which a main system's
      // service account would not: keep the remote command's start lean.
      << "SetEnv SHLVL=1\n";
  write_known_hosts(d + "/known_hosts", "host_key.pub");
  write_known_hosts(d + "/wrong_known_hosts", "other_host_key.pub");
  write_file(d + "/empty_known_hosts", "");
}

TestSshd::~TestSshd() {
  Kill();
  if (std::getenv("BASIL_TEST_SSHD_LOG") != nullptr)
    std::fprintf(stderr, "--- sshd log ---\n%s--- end of sshd log ---\n", log().c_str());
}

bool TestSshd::Start() {
  const std::string log_path = dir() + "/sshd.log";
  sshd_ = Subprocess({"/usr/sbin/sshd", "-D", "-e", "-f", dir() + "/sshd_config"},
                     {.err = Redirect::file(log_path, /*append=*/true)});
  if (!sshd_.started()) {
    error_ = "cannot start sshd: " + sshd_.error();
    return false;
  }
  const auto up = wait_while_running(sshd_, [&] { return port_accepts(port_); }, 5s);
  if (up == Awaited::kReady) return true;
  error_ = up == Awaited::kEnded ? "sshd exited: " + read_file(log_path)
                  : "sshd does not accept connections on port " + std::to_string(port_);
  return false;
}

void TestSshd::Kill() {
  if (!sshd_.started()) return;
  if (!sshd_.try_wait()) {
    const auto tree = process_tree(sshd_.pid());
    sshd_.kill_group(SIGKILL);
    for (pid_t p : tree) ::kill(p, SIGKILL);
    sshd_.wait();
  }
  sshd_ = Subprocess();
  // The listener's socket is closed with it; a port still taken makes the
  // next Start() fail ("sshd exited: ... Address already in use").
  wait_until([&] { return !port_accepts(port_); }, 2s);
}

void TestSshd::SetOption(const std::string& key, const std::string& value) {
  std::istringstream in(read_file(dir() + "/sshd_config"));
  std::ostringstream out;
  std::string line;
  bool set = false;
  while (std::getline(in, line)) {
    if (line.rfind(key + " ", 0) == 0) {
      if (set) continue;
      line = key + " " + value;
      set = true;
    }
    out << line << "\n";
  }
  if (!set) out << key << " " << value << "\n";
  write_file(dir() + "/sshd_config", out.str());
}

std::string TestSshd::log() const { return read_file(dir() + "/sshd.log"); }

void TestSshd::write_known_hosts(const std::string& path, const std::string& pub) const {
  std::istringstream key(read_file(dir() + "/" + pub));
  std::string type, blob;
  key >> type >> blob;
  write_file(path, "[127.0.0.1]:" + std::to_string(port_) + " " + type + " " + blob + "\n");
}

std::string conduit_conf(const TestSshd& sshd, const std::string& mode, const std::string& emulator,
                         const std::string& state, const std::string& binary_dir,
                         const std::vector<const TestSshd*>& more) {
  const auto so = sshd.options(more.empty() ? "known_hosts" : "all_known_hosts");
  std::ostringstream c;
  c << "[conduit]\nmode = \"" << mode << "\"\n";
  if (more.empty()) {
    c << "host = \"" << so.host << "\"\nport = " << so.port << "\n";
  } else {
    c << "hosts = [\"" << so.host << ":" << so.port << "\"";
    for (const auto* m : more) c << ", \"" << so.host << ":" << m->port() << "\"";
    c << "]\n";
  }
  c << "user = \"" << so.user << "\"\nidentity = \"" << so.identity << "\"\nknown_hosts = \"" << so.known_hosts
    << "\"\nremote_apbasil = \"" << emulator << "\"\nremote_args = [\"--state\", \"" << state << "\"]\n"
    << "remote_apkill = \"" << emulator << "\"\nremote_apkill_args = [\"--state\", \"" << state << "\", \"apkill\"]\n"
    << "gateway_helper = \"" << binary_dir << "/basild/basil_gateway\"\n";
  return c.str();
}

void as_login_nodes(const TestSshd& first, const std::vector<TestSshd*>& more) {
  std::string known = read_file(first.dir() + "/known_hosts");
  for (auto* m : more) {
    m->SetOption("AuthorizedKeysFile", first.dir() + "/authorized_keys");
    known += read_file(m->dir() + "/known_hosts");
  }
  write_file(first.dir() + "/all_known_hosts", known);
}

}  // namespace basil_test
