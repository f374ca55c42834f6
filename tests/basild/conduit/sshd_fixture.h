// A real OpenSSH sshd on 127.0.0.1 for the conduit tests and the conduit
// benchmark: its own host key, a client key, authorized_keys and
// sshd_config in a temp dir, started with -D on a free port in its own
// process group. Kill() takes down the listener and every per-connection
// sshd it forked (as a crash of the main system's sshd would); Start()
// again reuses the port and the keys. Also run_piped(), a process run as a
// scheduler runs apbasil. No gtest here: the benchmark uses it too.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "basild/conduit/ssh_session.h"
#include "tests/support/net.h"

extern char** environ;

namespace basild::testing {

using basil_test::free_tcp_port;
using basil_test::port_accepts;

// A fresh directory under $TMPDIR (or /tmp).
inline std::string sshd_temp_dir(const std::string& tag) {
  const char* t = std::getenv("TMPDIR");
  std::string tmpl = std::string(t != nullptr && *t != '\0' ? t : "/tmp") + "/basild-" + tag + "-XXXXXX";
  return ::mkdtemp(tmpl.data()) != nullptr ? tmpl : std::string();
}

// Runs a shell command line (set-up only); its exit code.
inline int shell(const std::string& cmd) {
  const int st = std::system(cmd.c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

struct Piped {
  int exit_code = -1;
  std::string out;
};

enum class Stderr { kInherit, kDiscard };

// As a scheduler runs apbasil: `input` written on stdin, stdin closed,
// stdout read to its end, the child reaped (by pid); stderr inherited, or
// sent to /dev/null as Slurm and PBS do. Safe to call from several threads
// at once: the pipes are close-on-exec, so a child spawned by another
// thread holds no end of them (which would delay this one's end of file).
inline Piped run_piped(const std::vector<std::string>& args, const std::string& input,
                       Stderr err = Stderr::kInherit) {
  Piped r;
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0) return r;
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]);
    ::close(in[1]);
    return r;
  }
  posix_spawn_file_actions_t fa;
  ::posix_spawn_file_actions_init(&fa);
  ::posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  ::posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  if (err == Stderr::kDiscard) ::posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int e = ::posix_spawn(&pid, copy[0].c_str(), &fa, nullptr, argv.data(), environ);
  ::posix_spawn_file_actions_destroy(&fa);
  ::close(in[0]);
  ::close(out[1]);
  std::size_t off = 0;
  while (e == 0 && off < input.size()) {
    const ssize_t w = ::write(in[1], input.data() + off, input.size() - off);
    if (w <= 0) break;
    off += static_cast<std::size_t>(w);
  }
  ::close(in[1]);
  std::array<char, 65536> buf{};
  ssize_t n = 0;
  while ((n = ::read(out[0], buf.data(), buf.size())) > 0) r.out.append(buf.data(), static_cast<std::size_t>(n));
  ::close(out[0]);
  int st = 0;
  if (e == 0 && ::waitpid(pid, &st, 0) == pid && WIFEXITED(st)) r.exit_code = WEXITSTATUS(st);
  return r;
}

// SIGKILL to every process whose command line mentions `needle` (a unique
// temp dir): cleans up a remote apbasil that outlived its ssh session.
inline void kill_processes_mentioning(const std::string& needle) {
  DIR* d = ::opendir("/proc");
  if (d == nullptr) return;
  while (dirent* e = ::readdir(d)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0 || pid == ::getpid()) continue;
    std::ifstream in("/proc/" + std::string(e->d_name) + "/cmdline", std::ios::binary);
    std::string cmd;
    std::getline(in, cmd, '\x01');  // the whole file: NUL-separated words, no \x01 in them
    if (cmd.find(needle) != std::string::npos) ::kill(pid, SIGKILL);
  }
  ::closedir(d);
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every process whose parent chain leads to `root` (root included).
inline std::set<pid_t> process_tree(pid_t root) {
  std::set<pid_t> tree{root};
  bool grew = true;
  while (grew) {
    grew = false;
    DIR* d = ::opendir("/proc");
    if (d == nullptr) break;
    while (dirent* e = ::readdir(d)) {
      const pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
      if (pid <= 0 || tree.count(pid) != 0) continue;
      const std::string stat = read_file("/proc/" + std::string(e->d_name) + "/stat");
      const auto close = stat.rfind(')');
      if (close == std::string::npos) continue;
      std::istringstream rest(stat.substr(close + 2));
      char state = 0;
      pid_t ppid = 0;
      rest >> state >> ppid;
      if (tree.count(ppid) != 0) {
        tree.insert(pid);
        grew = true;
      }
    }
    ::closedir(d);
  }
  return tree;
}

class TestSshd {
 public:
  TestSshd() {
    dir_ = sshd_temp_dir("sshd");
    port_ = free_tcp_port();
    ::mkdir("/run/sshd", 0755);  // sshd's privilege separation directory
    const int rc = shell("ssh-keygen -q -t ed25519 -N '' -f " + dir_ + "/host_key && ssh-keygen -q -t ed25519 -N '' -f " +
                         dir_ + "/client_key && ssh-keygen -q -t ed25519 -N '' -f " + dir_ + "/other_host_key && cp " +
                         dir_ + "/client_key.pub " + dir_ + "/authorized_keys");
    if (rc != 0) error_ = "ssh-keygen failed";
    std::ofstream(dir_ + "/sshd_config")
        << "Port " << port_ << "\nListenAddress 127.0.0.1\nHostKey " << dir_ << "/host_key\n"
        << "AuthorizedKeysFile " << dir_ << "/authorized_keys\nPidFile " << dir_ << "/sshd.pid\n"
        << "StrictModes no\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
        << "PubkeyAuthentication yes\nPermitRootLogin prohibit-password\nLogLevel ERROR\n"
        << "MaxSessions 200\nMaxStartups 100:30:200\nPrintMotd no\n"
        // bash reads ~/.bashrc for an ssh command when SHLVL is unset; this
        // host's root .bashrc runs slow tools (pyenv), which a main system's
        // service account would not: keep the remote command's start lean.
        << "SetEnv SHLVL=1\n";
    write_known_hosts(dir_ + "/known_hosts", "host_key.pub");
    write_known_hosts(dir_ + "/wrong_known_hosts", "other_host_key.pub");
    std::ofstream(dir_ + "/empty_known_hosts") << "";
  }
  ~TestSshd() {
    Kill();
    if (std::getenv("BASIL_TEST_SSHD_LOG") != nullptr)
      std::fprintf(stderr, "--- sshd log ---\n%s--- end of sshd log ---\n", log().c_str());
    shell("rm -rf " + dir_);
  }
  TestSshd(const TestSshd&) = delete;
  TestSshd& operator=(const TestSshd&) = delete;

  // Starts sshd and waits until it accepts connections.
  bool Start() {
    const std::string log = dir_ + "/sshd.log";
    std::vector<std::string> args{"/usr/sbin/sshd", "-D", "-e", "-f", dir_ + "/sshd_config"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    ::posix_spawn_file_actions_init(&fa);
    ::posix_spawnattr_init(&attr);
    ::posix_spawn_file_actions_addopen(&fa, 2, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    ::posix_spawnattr_setpgroup(&attr, 0);
    ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    const int e = ::posix_spawn(&pid_, args[0].c_str(), &fa, &attr, argv.data(), environ);
    ::posix_spawn_file_actions_destroy(&fa);
    ::posix_spawnattr_destroy(&attr);
    if (e != 0) {
      error_ = "cannot start sshd";
      return false;
    }
    for (int i = 0; i < 500; ++i) {
      if (port_accepts(port_)) return true;
      int st = 0;
      if (::waitpid(pid_, &st, WNOHANG) == pid_) {
        pid_ = -1;
        error_ = "sshd exited: " + read_file(log);
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    error_ = "sshd does not accept connections on port " + std::to_string(port_);
    return false;
  }

  // SIGKILL to the listener and to every sshd it forked (and their children).
  void Kill() {
    if (pid_ <= 0) return;
    const auto tree = process_tree(pid_);
    ::kill(-pid_, SIGKILL);
    for (pid_t p : tree) ::kill(p, SIGKILL);
    int st = 0;
    ::waitpid(pid_, &st, 0);
    pid_ = -1;
    for (int i = 0; i < 200 && port_accepts(port_); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }

  // Sets `key` to `value` in sshd_config, replacing its line (sshd takes a
  // keyword's first value). Takes effect at the next Start().
  void SetOption(const std::string& key, const std::string& value) {
    std::istringstream in(read_file(dir_ + "/sshd_config"));
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
    std::ofstream(dir_ + "/sshd_config") << out.str();
  }

  pid_t pid() const { return pid_; }
  const std::string& error() const { return error_; }
  std::string log() const { return read_file(dir_ + "/sshd.log"); }
  int port() const { return port_; }
  const std::string& dir() const { return dir_; }

  conduit::SshOptions options(const std::string& known_hosts = "known_hosts") const {
    conduit::SshOptions o;
    o.host = "127.0.0.1";
    o.port = static_cast<std::uint16_t>(port_);
    const passwd* pw = ::getpwuid(::getuid());
    o.user = pw != nullptr ? pw->pw_name : "root";
    o.identity = dir_ + "/client_key";
    o.known_hosts = dir_ + "/" + known_hosts;
    o.connect_timeout = std::chrono::seconds(5);
    return o;
  }

 private:
  void write_known_hosts(const std::string& path, const std::string& pub) {
    std::istringstream key(read_file(dir_ + "/" + pub));
    std::string type, blob;
    key >> type >> blob;
    std::ofstream(path) << "[127.0.0.1]:" << port_ << " " << type << " " << blob << "\n";
  }

  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
  std::string error_;
};

// The [conduit] section of a basild.conf that reaches `sshd` in `mode`
// ("ssh-exec" or "ssh-gateway"), with `emulator --state STATE` as the main
// system's apbasil and `emulator --state STATE apkill` as its apkill, and
// the helper built in `binary_dir`.
inline std::string conduit_conf(const TestSshd& sshd, const std::string& mode, const std::string& emulator,
                                const std::string& state, const std::string& binary_dir) {
  const auto so = sshd.options();
  std::ostringstream c;
  c << "[conduit]\nmode = \"" << mode << "\"\nhost = \"" << so.host << "\"\nport = " << so.port << "\nuser = \""
    << so.user << "\"\nidentity = \"" << so.identity << "\"\nknown_hosts = \"" << so.known_hosts
    << "\"\nremote_apbasil = \"" << emulator << "\"\nremote_args = [\"--state\", \"" << state << "\"]\n"
    << "remote_apkill = \"" << emulator << "\"\nremote_apkill_args = [\"--state\", \"" << state << "\", \"apkill\"]\n"
    << "gateway_helper = \"" << binary_dir << "/basild/basil_gateway\"\n";
  return c.str();
}

}  // namespace basild::testing
