#include "tests/support/slurm_fixture.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <sstream>
#include <utility>

#include "tests/support/files.h"
#include "tests/support/net.h"
#include "tests/support/wait.h"

namespace basil_test {

using namespace std::chrono_literals;

namespace {

bool executable(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

// key=value fields of one `scontrol -o show` line.
std::map<std::string, std::string> fields_of(const std::string& line) {
  std::map<std::string, std::string> out;
  std::istringstream in(line);
  for (std::string word; in >> word;) {
    const auto eq = word.find('=');
    if (eq != std::string::npos) out.emplace(word.substr(0, eq), word.substr(eq + 1));
  }
  return out;
}

// Run by /bin/sh in a controller's new namespaces (mounts private, so
// nothing shows outside): $1 the hostname, $2 the /etc/hosts, $3 over $4
// (the pid file's directory), $5 over $6 (the hooks), then slurmctld.
constexpr const char* kEnterNamespace =
    "set -e; /bin/hostname \"$1\"; /bin/mount --bind \"$2\" /etc/hosts; /bin/mount --bind \"$3\" \"$4\"; "
    "/bin/mount --bind \"$5\" \"$6\"; shift 6; exec \"$@\"";

// The name of controller i's log (the primary's as without a backup).
std::string log_name(std::size_t which) { return which == 0 ? "slurmctld" : "slurmctld" + std::to_string(which); }

std::string short_hostname() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  std::string h = name;
  return h.substr(0, h.find('.'));
}

}  // namespace

std::optional<std::string> slurm_unavailable() {
  if (::geteuid() != 0) return "the Slurm tests need root (slurmd runs jobs as their user)";
  for (const char* p : {"/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/sbin/munged", "/usr/sbin/mungekey",
                        "/usr/bin/sbatch", "/usr/bin/scontrol", "/usr/bin/squeue"})
    if (!executable(p)) return std::string(p) + " is missing (scripts/setup.sh installs Slurm)";
  return std::nullopt;
}

SlurmCluster::SlurmCluster(SlurmOptions options)
    : options_(std::move(options)), dir_(options_.tag, options_.parent), host_(short_hostname()) {}

SlurmCluster::~SlurmCluster() { stop_all(); }

bool SlurmCluster::write_config(const std::string& topology) {
  for (const char* d : {"/state", "/spool", "/log", "/munge", "/msock"})
    if (::mkdir((dir() + d).c_str(), 0755) != 0 && errno != EEXIST) return false;
  ::chmod((dir() + "/munge").c_str(), 0700);
  ::chmod(dir().c_str(), 0755);  // jobs of other users reach their spool and munge's socket
  // The controller's, slurmd's default and each node's: all different.
  const std::vector<int> ports = free_tcp_ports(2 + options_.nodes.size());
  controller_port_ = ports[0];
  std::ostringstream c;
  c << "ClusterName=basiltest\n";
  for (std::size_t i = 0; i < controller_count(); ++i)
    c << "SlurmctldHost=" << controller_host(i) << "(" << controller_address(i) << ")\n";
  // Both controllers listen on the one port, each on its own address.
  if (options_.backup) c << "CommunicationParameters=NoCtldInAddrAny\nSlurmctldTimeout=6\n";
  c << "SlurmctldPort=" << controller_port_ << "\n"
    << "SlurmdPort=" << ports[1] << "\n"
    << "AuthType=auth/munge\nCredType=cred/munge\n"
    << "AuthInfo=socket=" << dir() << "/msock/socket\n"
    << "SlurmUser=root\nSlurmdUser=root\n"
    << "StateSaveLocation=" << dir() << "/state\n"
    << "SlurmdSpoolDir=" << dir() << "/spool/%n\n"
    << "SlurmctldPidFile=" << dir() << (options_.backup ? "/run" : "") << "/slurmctld.pid\n"
    << "SlurmdPidFile=" << dir() << "/spool/%n.pid\n"
    << "SlurmctldLogFile=" << dir() << "/log/slurmctld.log\n"
    << "SlurmdLogFile=" << dir() << "/log/%n.log\n"
    << "SlurmctldDebug=info\nSlurmdDebug=info\n"
    << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
    << "JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n"
    << "JobCompType=jobcomp/none\nMpiDefault=none\nSwitchType=switch/none\n"
    << "SelectType=select/cons_tres\nSelectTypeParameters=CR_Core_Memory\n"
    << "SlurmdParameters=config_overrides\nReturnToService=2\n"
    << "KillWait=2\nMessageTimeout=20\nInactiveLimit=0\n"
    // Pending jobs are looked at every second (Slurm: every 60 s, and 30 s
    // for backfill), so that a test waits for its jobs, not for a timer.
    << "SchedulerParameters=batch_sched_delay=0,sched_interval=1,bf_interval=1\n";
  if (!topology.empty()) {
    write_file(dir() + "/topology.conf", topology);
    c << "TopologyPlugin=topology/tree\n";
  }
  c << options_.extra_conf << "\n";
  for (std::size_t i = 0; i < options_.nodes.size(); ++i) {
    const std::string& n = options_.nodes[i];
    const auto own = options_.node_fields_of.find(n);
    c << "NodeName=" << n << " NodeHostname=" << host_ << " NodeAddr=127.0.0.1 Port=" << ports[2 + i] << " "
      << (own != options_.node_fields_of.end() ? own->second : options_.node_fields) << " State=UNKNOWN\n";
  }
  c << "PartitionName=batch Nodes=ALL " << options_.partition << "\n";
  write_file(conf(), c.str());
  return !options_.backup || write_controller_files();
}

// What each controller's namespace binds: its own pid directory (a
// slurmctld starting kills the one its pid file names), an /etc/hosts that
// resolves its hostname (slurmctld will not start without), its hooks.
bool SlurmCluster::write_controller_files() {
  for (const char* tool : {"/usr/bin/unshare", "/bin/mount", "/bin/hostname"})
    if (!executable(tool)) {
      error_ = std::string(tool) + " is missing: a backup controller needs it";
      return false;
    }
  std::error_code ec;
  std::filesystem::create_directories(dir() + "/run", ec);
  std::filesystem::create_directories(hooks_dir(), ec);
  const std::string hosts = read_file("/etc/hosts");
  for (std::size_t i = 0; i < controller_count(); ++i) {
    const std::string own = dir() + "/controller" + std::to_string(i);
    std::filesystem::create_directories(own + "/run", ec);
    std::filesystem::create_directories(controller_dir(i), ec);
    write_file(own + "/hosts", hosts + "\n" + controller_address(i) + " " + controller_host(i) + "\n");
  }
  return true;
}

std::string SlurmCluster::controller_host(std::size_t which) const {
  return options_.backup ? "basilctl" + std::to_string(which + 1) : host_;
}

std::string SlurmCluster::controller_address(std::size_t which) const { return "127.0.0." + std::to_string(which + 1); }

std::string SlurmCluster::hooks_dir() const {
  return options_.hooks_dir.empty() ? dir() + "/hooks" : options_.hooks_dir;
}

std::string SlurmCluster::controller_dir(std::size_t which) const {
  return which < options_.controller_dirs.size() ? options_.controller_dirs[which]
                                                 : dir() + "/ctl/" + std::to_string(which);
}

bool SlurmCluster::start_munge() {
  const std::string key = dir() + "/munge/munge.key";
  Ran made = run({"/usr/sbin/mungekey", "-c", "-k", key}, {}, {.err = Redirect::pipe()});
  if (made.exit_code != 0) {
    error_ = "mungekey: " + made.err;
    return false;
  }
  ::chmod(key.c_str(), 0600);
  const std::string socket = dir() + "/msock/socket";
  munged_ = Subprocess({"/usr/sbin/munged", "-F", "-f", "--key-file=" + key, "--socket=" + socket,
                        "--pid-file=" + dir() + "/munge/munged.pid", "--seed-file=" + dir() + "/munge/seed",
                        "--log-file=" + dir() + "/log/munged.log"},
                       {.err = Redirect::file(dir() + "/log/munged.out")});
  if (!munged_.started() ||
      wait_while_running(munged_, [&] { return ::access(socket.c_str(), F_OK) == 0; }, 20s) != Awaited::kReady) {
    error_ = "munged did not start: " + read_file(dir() + "/log/munged.out");
    return false;
  }
  return true;
}

// slurmctld, or with a backup slurmctld in namespaces of its own: unshare
// execs the shell, which execs slurmctld, so the child is slurmctld itself.
std::vector<std::string> SlurmCluster::controller_argv(std::size_t which) const {
  std::vector<std::string> slurmctld = {"/usr/sbin/slurmctld", "-D", "-i", "-f", conf()};
  if (!options_.backup) return slurmctld;
  slurmctld.insert(slurmctld.end(), {"-L", dir() + "/log/" + log_name(which) + ".log"});
  const std::string own = dir() + "/controller" + std::to_string(which);
  std::vector<std::string> argv = {"/usr/bin/unshare", "-m", "-u", "--propagation", "private"};
  argv.insert(argv.end(), {"/bin/sh", "-c", kEnterNamespace, "sh"});
  argv.insert(argv.end(), {controller_host(which), own + "/hosts", own + "/run", dir() + "/run", controller_dir(which),
                           hooks_dir()});
  argv.insert(argv.end(), slurmctld.begin(), slurmctld.end());
  return argv;
}

// Whether a `scontrol ping` found controller `which` UP (without a backup:
// whether it succeeded).
bool SlurmCluster::up_in(const Ran& ping, std::size_t which) const {
  if (!options_.backup) return ping.exit_code == 0;
  return ping.out.find(" at " + controller_host(which) + " is UP") != std::string::npos;
}

bool SlurmCluster::controller_up(std::size_t which) const { return up_in(client({"scontrol", "ping"}, 10s), which); }

std::optional<std::size_t> SlurmCluster::controller_in_charge() const {
  const Ran ping = client({"scontrol", "ping"}, 10s);
  for (std::size_t i = 0; i < controller_count(); ++i) {
    if (!up_in(ping, i)) continue;
    // A primary answers only once it has control; a backup answers ping in
    // standby too, and the client keeps asking it anything else until it
    // takes over: one that answers at once is in charge.
    if (i == 0 || client({"scontrol", "show", "config"}, 2s).exit_code == 0) return i;
    break;
  }
  return std::nullopt;
}

bool SlurmCluster::start_controller(std::size_t which) {
  Subprocess& ctld = slurmctld_.at(which);
  ctld = Subprocess(controller_argv(which),
                    {.err = Redirect::file(dir() + "/log/" + log_name(which) + ".out", true), .env = env()});
  const auto up = ctld.started() ? wait_while_running(
                                       ctld, [&] { return controller_up(which); }, options_.controller_budget, 100ms)
                                 : Awaited::kEnded;
  if (up != Awaited::kReady)
    error_ = std::string(up == Awaited::kEnded ? "slurmctld exited at start-up: " : "slurmctld did not come up: ") +
             controller_log(which);
  return up == Awaited::kReady;
}

void SlurmCluster::stop_controller(int sig, std::size_t which) {
  Subprocess& ctld = slurmctld_.at(which);
  if (!ctld.started()) return;
  ctld.kill_group(sig);
  if (!ctld.wait_for(20s)) ctld.kill_group(SIGKILL);
  ctld = Subprocess();
}

bool SlurmCluster::start_slurmds() {
  slurmds_.clear();
  for (const std::string& n : options_.nodes) {
    slurmds_.emplace_back(std::vector<std::string>{"/usr/sbin/slurmd", "-D", "-N", n, "-f", conf()},
                          SpawnOptions{.err = Redirect::file(dir() + "/log/" + n + ".out"), .env = env()});
    if (!slurmds_.back().started()) {
      error_ = "slurmd -N " + n + ": " + slurmds_.back().error();
      return false;
    }
  }
  return true;
}

bool SlurmCluster::wait_nodes_idle(std::chrono::milliseconds limit) {
  std::string last;
  std::string ended;  // a slurmd that exited: no need to wait out the limit
  const bool idle = wait_until(
      [&] {
        for (std::size_t i = 0; i < slurmds_.size() && ended.empty(); ++i)
          if (slurmds_[i].try_wait()) ended = options_.nodes[i];
        if (!ended.empty()) return true;
        Ran r = client({"sinfo", "-h", "-N", "-o", "%N %t"}, 10s);
        last = r.out + r.err;
        std::istringstream in(r.out);
        std::set<std::string> seen;  // a node in several partitions is listed once for each
        for (std::string name, state; in >> name >> state; seen.insert(name))
          if (state != "idle") return false;
        return seen.size() == options_.nodes.size();
      },
      limit, 100ms);
  if (!ended.empty()) {
    error_ = "slurmd -N " + ended + " exited at start-up:\n" + slurmd_log(ended);
    return false;
  }
  if (!idle) {
    error_ = "the nodes did not all become idle: " + last + "\n" + controller_log();
    // The log of each node that is not idle: why its slurmd did not register.
    std::istringstream in(last);
    for (std::string name, state; in >> name >> state;)
      if (state != "idle") error_ += "\n--- slurmd " + name + ":\n" + slurmd_log(name);
  }
  return idle;
}

bool SlurmCluster::start(const std::string& topology) {
  if (dir().empty()) {
    error_ = "no directory under " + options_.parent;
    return false;
  }
  if (auto why = slurm_unavailable()) {
    error_ = *why;
    return false;
  }
  return write_config(topology) && start_munge() && start_controller(0) && (!options_.backup || start_controller(1)) &&
         start_slurmds() && wait_nodes_idle(60s);
}

std::string SlurmCluster::controller_log(std::size_t which) const {
  const std::string base = dir() + "/log/" + log_name(which);
  return read_file(base + ".log") + read_file(base + ".out");
}

std::string SlurmCluster::slurmd_log(const std::string& node) const {
  return read_file(dir() + "/log/" + node + ".log") + read_file(dir() + "/log/" + node + ".out");
}

Ran SlurmCluster::client(const std::vector<std::string>& argv, std::chrono::milliseconds limit,
                         const std::vector<std::string>& env_more) const {
  std::vector<std::string> a = argv;
  if (!a.empty() && a[0].find('/') == std::string::npos) a[0] = "/usr/bin/" + a[0];
  std::vector<std::string> e = env();
  e.insert(e.end(), env_more.begin(), env_more.end());
  // In a session of its own, as from a user's login shell: srun and salloc
  // send Slurm their session as the allocation's (AllocNode:Sid), which a
  // session 0 (a test runner started by init without one) would make 0.
  return run(a, {}, {.err = Redirect::pipe(), .env = e, .own_session = true}, limit);
}

std::optional<std::uint32_t> SlurmCluster::sbatch(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"sbatch", "--parsable"};
  argv.insert(argv.end(), args.begin(), args.end());
  Ran r = client(argv);
  if (r.exit_code != 0) {
    error_ = "sbatch: " + r.err;
    return std::nullopt;
  }
  try {
    return static_cast<std::uint32_t>(std::stoul(r.out.substr(0, r.out.find(';'))));
  } catch (const std::exception&) {
    error_ = "sbatch printed '" + r.out + "'";
    return std::nullopt;
  }
}

std::map<std::string, std::string> SlurmCluster::job(std::uint32_t id) const {
  Ran r = client({"scontrol", "-o", "show", "job", std::to_string(id)}, 20s);
  return r.exit_code == 0 ? fields_of(r.out) : std::map<std::string, std::string>{};
}

std::string SlurmCluster::job_state(std::uint32_t id) const {
  auto f = job(id);
  auto it = f.find("JobState");
  return it == f.end() ? "" : it->second;
}

bool SlurmCluster::wait_job_state(std::uint32_t id, const std::string& states,
                                  std::chrono::milliseconds limit) const {
  return wait_until(
      [&] {
        const std::string s = job_state(id);
        if (s.empty()) return false;
        std::istringstream in(states);
        for (std::string want; std::getline(in, want, ',');)
          if (want == s) return true;
        return false;
      },
      limit, 100ms);
}

bool SlurmCluster::wait_queue_empty(std::chrono::milliseconds limit) const {
  return wait_until(
      [&] {
        Ran r = client({"squeue", "-h", "-o", "%A"}, 10s);
        return r.exit_code == 0 && r.out.find_first_not_of(" \n") == std::string::npos;
      },
      limit, 100ms);
}

std::map<std::string, std::string> SlurmCluster::node(const std::string& name) const {
  Ran r = client({"scontrol", "-o", "show", "node", name}, 20s);
  return r.exit_code == 0 ? fields_of(r.out) : std::map<std::string, std::string>{};
}

bool SlurmCluster::save_state(std::uint32_t id, std::chrono::milliseconds limit) {
  const std::string saved = dir() + "/state/job_state";
  const auto since = std::filesystem::file_time_type::clock::now();
  if (client({"scontrol", "update", "JobId=" + std::to_string(id), "Comment=state-saved"}).exit_code != 0) return false;
  std::error_code ec;
  return wait_until(
      [&] { return std::filesystem::exists(saved, ec) && std::filesystem::last_write_time(saved, ec) > since; },
      limit, 100ms);
}

void SlurmCluster::stop_all() {
  if (slurmctld_[0].started() || slurmctld_[1].started()) {
    Ran q = client({"squeue", "-h", "-o", "%A"}, 10s);
    std::istringstream in(q.out);
    std::vector<std::string> cancel = {"scancel"};
    for (std::string id; in >> id;) cancel.push_back(id);
    if (cancel.size() > 1) {
      client(cancel, 10s);
      wait_queue_empty(30s);
    }
  }
  for (Subprocess& d : slurmds_)
    if (d.started()) d.signal(SIGTERM);
  for (Subprocess& d : slurmds_)
    if (d.started() && !d.wait_for(10s)) d.kill_group(SIGKILL);
  slurmds_.clear();
  // The backup first: it would otherwise take over from the primary.
  for (std::size_t i = controller_count(); i-- > 0;) stop_controller(SIGTERM, i);
  if (munged_.started()) {
    munged_.signal(SIGTERM);
    if (!munged_.wait_for(10s)) munged_.kill_group(SIGKILL);
  }
  munged_ = Subprocess();
}

}  // namespace basil_test
