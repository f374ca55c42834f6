// A real OpenSSH sshd on 127.0.0.1 for the conduit tests: its own host key,
// a client key, authorized_keys and sshd_config in a temp dir, started with
// -D on a free port in its own process group. Kill() takes down the listener
// and every per-connection sshd it forked (as a crash of the main system's
// sshd would); Start() again reuses the port and the keys.
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

#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "conduit/ssh_session.h"
#include "basild/io/emulator_support.h"

extern char** environ;

namespace basild::testing {

inline int free_tcp_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  const int port = ntohs(a.sin_port);
  ::close(fd);
  return port;
}

inline bool port_accepts(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
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
    dir_ = make_temp_dir("sshd");
    port_ = free_tcp_port();
    ::mkdir("/run/sshd", 0755);  // sshd's privilege separation directory
    auto r = run_command("ssh-keygen -q -t ed25519 -N '' -f " + dir_ + "/host_key && ssh-keygen -q -t ed25519 -N '' -f " +
                         dir_ + "/client_key && ssh-keygen -q -t ed25519 -N '' -f " + dir_ + "/other_host_key && cp " +
                         dir_ + "/client_key.pub " + dir_ + "/authorized_keys");
    EXPECT_EQ(r.exit_code, 0) << r.out;
    std::ofstream(dir_ + "/sshd_config")
        << "Port " << port_ << "\nListenAddress 127.0.0.1\nHostKey " << dir_ << "/host_key\n"
        << "AuthorizedKeysFile " << dir_ << "/authorized_keys\nPidFile " << dir_ << "/sshd.pid\n"
        << "StrictModes no\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
        << "PubkeyAuthentication yes\nPermitRootLogin prohibit-password\nLogLevel ERROR\n"
        << "MaxSessions 200\nMaxStartups 100:30:200\nPrintMotd no\n";
    write_known_hosts(dir_ + "/known_hosts", "host_key.pub");
    write_known_hosts(dir_ + "/wrong_known_hosts", "other_host_key.pub");
    std::ofstream(dir_ + "/empty_known_hosts") << "";
  }
  ~TestSshd() {
    Kill();
    // sshd's own log helps when a test failed.
    if (::testing::Test::HasFailure() || std::getenv("BASIL_TEST_SSHD_LOG") != nullptr)
      std::fprintf(stderr, "--- sshd log ---\n%s--- end of sshd log ---\n", read_file(dir_ + "/sshd.log").c_str());
    run_command("rm -rf " + dir_);
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
    if (e != 0) return false;
    for (int i = 0; i < 500; ++i) {
      if (port_accepts(port_)) return true;
      int st = 0;
      if (::waitpid(pid_, &st, WNOHANG) == pid_) {
        pid_ = -1;
        ADD_FAILURE() << "sshd exited: " << read_file(log);
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
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

  pid_t pid() const { return pid_; }
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
};

}  // namespace basild::testing
