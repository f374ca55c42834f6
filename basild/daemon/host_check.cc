#include "basild/daemon/host_check.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "basild/control/server.h"

namespace basild {

namespace {

using Kind = FileFacts::Kind;

std::string folder_of(const std::string& path) { return std::filesystem::path(path).parent_path().string(); }

bool contains(const std::vector<std::uint32_t>& v, std::uint32_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// The checks of one configuration on one host, each adding its problems.
class HostCheck {
 public:
  HostCheck(const Config& c, const HostView& h, HostProblems& out) : c_(c), h_(h), out_(out) {}

  void programs();
  void read_files();
  void folders();
  void socket_access();

 private:
  void error(const std::string& key, const std::string& text) { out_.errors.push_back(key + ": " + text); }
  std::string who() const { return "uid " + std::to_string(h_.uid); }

  // PATH exists, is a file (links followed), and basild's user may `how` it.
  void file_allows(const std::string& key, const std::string& path, int how);
  void program(const std::string& key, const std::string& path) { file_allows(key, path, X_OK); }
  void readable(const std::string& key, const std::string& path) { file_allows(key, path, R_OK); }
  // A folder basild makes files in: it exists and basild's user may write in it.
  void writable_folder(const std::string& key, const std::string& dir, const std::string& what);
  void writable_file_or_folder(const std::string& key, const std::string& path);
  void known_hosts();
  void xml_log();
  void socket_folder();
  std::uint32_t socket_gid() const;
  void allowed_user(const Principal& p, std::uint32_t gid);
  void allowed_group(const Principal& p, std::uint32_t gid);
  std::optional<std::string> blocking_folder(std::uint32_t uid, const std::vector<std::uint32_t>& groups) const;

  const Config& c_;
  const HostView& h_;
  HostProblems& out_;
};

void HostCheck::file_allows(const std::string& key, const std::string& path, int how) {
  const auto f = h_.stat(path);
  if (!f) return error(key, path + " does not exist");
  if (f->kind != Kind::kRegular) return error(key, path + " is not a file");
  if (const int e = h_.access_error(path, how); e != 0)
    error(key, path + " cannot be " + (how == X_OK ? "run" : "read") + " by " + who() + " (" + std::strerror(e) + ")");
}

void HostCheck::writable_folder(const std::string& key, const std::string& dir, const std::string& what) {
  const auto f = h_.stat(dir);
  if (!f) return error(key, "the folder " + dir + " (" + what + ") does not exist");
  if (f->kind != Kind::kDirectory) return error(key, dir + " (" + what + ") is not a folder");
  if (const int e = h_.access_error(dir, W_OK | X_OK); e != 0)
    error(key, "the folder " + dir + " (" + what + ") cannot be written by " + who() + " (" + std::strerror(e) + ")");
}

// An existing file must be writable; a missing one, its folder.
void HostCheck::writable_file_or_folder(const std::string& key, const std::string& path) {
  if (!h_.stat(path)) return writable_folder(key, folder_of(path), "where " + path + " is made");
  if (const int e = h_.access_error(path, R_OK | W_OK); e != 0)
    error(key, path + " cannot be written by " + who() + " (" + std::strerror(e) + ")");
}

void HostCheck::programs() {
  if (c_.conduit.mode == ConduitMode::kLocal) {
    program("apbasil.path", c_.apbasil.path);
    program("reconcile.apkill", c_.reconcile.apkill);
  }
  for (std::size_t i = 0; i < c_.reconcile.sources.size(); ++i) {
    const JobSource& s = c_.reconcile.sources[i];
    const std::string key = "reconcile.source[" + std::to_string(i + 1) + "] (" + s.name + ")";
    if (s.type == JobSourceType::kCommand && !s.command.empty()) program(key + ".command", s.command.front());
    if (s.type == JobSourceType::kSqlite) readable(key + ".database", s.database);
  }
  if (c_.slurm.node_sync) program("slurm.scontrol", c_.slurm.scontrol);
}

void HostCheck::read_files() {
  if (c_.slurm.node_sync && !c_.slurm.slurm_conf.empty()) readable("slurm.slurm_conf", c_.slurm.slurm_conf);
  if (c_.conduit.mode == ConduitMode::kLocal) return;
  if (!c_.conduit.identity.empty()) {
    readable("conduit.identity", c_.conduit.identity);
  } else if (!h_.env("SSH_AUTH_SOCK")) {
    error("conduit.identity", "none is given and there is no ssh agent (SSH_AUTH_SOCK is not set)");
  }
  known_hosts();
}

void HostCheck::known_hosts() {
  const std::string& path = c_.conduit.known_hosts;
  if (path.empty()) return;  // the parser requires it in the ssh modes
  if (!c_.conduit.accept_new_host_key) {
    readable("conduit.known_hosts", path);
  } else {
    writable_file_or_folder("conduit.known_hosts", path);
  }
}

void HostCheck::xml_log() {
  const bool on = c_.log.xml_log || h_.env("XML_LOG").has_value();
  if (!on) return;
  const auto env_loc = h_.env("XML_LOG_LOC");
  const std::string loc = env_loc ? *env_loc : c_.log.xml_log_loc;
  if (loc == "SLURM") return;
  if (loc.empty()) return writable_file_or_folder("log.directory", c_.log.directory + "/basil_xml.log");
  writable_file_or_folder(env_loc ? "XML_LOG_LOC" : "log.xml_log_loc", loc);
}

void HostCheck::folders() {
  const std::string& db = c_.state.database;
  writable_folder("state.database", folder_of(db), "the state database's");
  if (h_.stat(db)) writable_file_or_folder("state.database", db);
  xml_log();
  socket_folder();
}

void HostCheck::socket_folder() {
  const std::string parent = folder_of(c_.control.socket);
  const std::uint32_t mode = control::ServerOptions{}.parent_dir_mode;
  for (auto& p : unsafe_folders(parent, h_.uid, mode, h_.lstat, h_.realpath)) error("control.socket", p);
  // The socket's folder, or the deepest one that exists above it, where the
  // rest is made.
  std::string dir = parent;
  while (!h_.stat(dir) && dir != "/") dir = folder_of(dir);
  writable_folder("control.socket", dir, dir == parent ? "the control socket's" : "where " + parent + " is made");
}

// ------------------------------------------------------ the control socket

std::uint32_t HostCheck::socket_gid() const {
  if (const ControlIds ids = resolve_control_names(c_.control, h_.names); ids.socket_gid) return *ids.socket_gid;
  const auto parent = h_.stat(folder_of(c_.control.socket));
  if (parent && parent->kind == Kind::kDirectory && (parent->mode & S_ISGID) != 0) return parent->gid;
  return h_.gid;
}

void HostCheck::socket_access() {
  if (c_.control.group && !resolve_control_names(c_.control, h_.names).socket_gid) return;  // an error already
  const std::uint32_t gid = socket_gid();
  if (c_.control.group && h_.uid != 0 && gid != h_.gid && !contains(h_.groups_of(h_.uid), gid))
    error("control.group", who() + ", basild's user, is not in group " + std::to_string(gid) +
                               " and cannot give the control socket to it");
  for (const auto& p : c_.control.allowed_users) allowed_user(p, gid);
  for (const auto& p : c_.control.allowed_groups) allowed_group(p, gid);
}

// The first folder above the socket that does not let `uid` through, as
// it is or as basild makes it.
std::optional<std::string> HostCheck::blocking_folder(std::uint32_t uid,
                                                      const std::vector<std::uint32_t>& groups) const {
  const std::uint32_t made_mode = control::ServerOptions{}.parent_dir_mode;
  for (const auto& step : folder_chain(folder_of(c_.control.socket), h_.stat)) {
    const FileFacts f = step.facts ? *step.facts : FileFacts{Kind::kDirectory, h_.uid, h_.gid, made_mode};
    const std::uint32_t bit = f.uid == uid ? S_IXUSR : contains(groups, f.gid) ? S_IXGRP : S_IXOTH;
    if ((f.mode & bit) == 0)
      return step.path + " (mode " + octal_mode(f.mode) + ", owner uid " + std::to_string(f.uid) + ", group " +
             std::to_string(f.gid) + (step.facts ? ")" : ", as basild would make it)");
  }
  return std::nullopt;
}

void HostCheck::allowed_user(const Principal& p, std::uint32_t gid) {
  const auto id = p.id ? p.id : h_.names.user(p.name);
  if (!id || *id == 0) return;  // unknown: a warning already; root opens any file
  const std::string label =
      p.name.empty() ? "uid " + std::to_string(*id) : "'" + p.name + "' (uid " + std::to_string(*id) + ")";
  const std::string mode = octal_mode(c_.control.mode);
  const auto groups = h_.groups_of(*id);
  std::string why;
  if (*id == h_.uid) {
    if ((c_.control.mode & S_IWUSR) == 0)
      why = "it is basild's own user and mode " + mode + " does not let the owner write";
  } else if (contains(groups, gid)) {
    if ((c_.control.mode & S_IWGRP) == 0)
      why =
          "it is in the socket's group " + std::to_string(gid) + " and mode " + mode + " does not let the group write";
  } else if ((c_.control.mode & S_IWOTH) == 0) {
    why = "the socket is owned by uid " + std::to_string(h_.uid) + " and group " + std::to_string(gid) +
          ", which it is not in, with mode " + mode +
          " (set control.group to one of its groups, or a control.mode that lets others write)";
  }
  if (!why.empty()) return error("control.allowed_users", label + " cannot open the control socket: " + why);
  if (auto blocked = blocking_folder(*id, groups))
    error("control.allowed_users",
          label + " cannot reach the control socket: " + *blocked + " does not let it through");
}

void HostCheck::allowed_group(const Principal& p, std::uint32_t gid) {
  const auto id = p.id ? p.id : h_.names.group(p.name);
  if (!id || *id == gid || (c_.control.mode & S_IWOTH) != 0) return;
  const std::string which =
      p.name.empty() ? "gid " + std::to_string(*id) : "'" + p.name + "' (gid " + std::to_string(*id) + ")";
  out_.warnings.push_back(
      "control.allowed_groups: " + which + ": the control socket's group is " + std::to_string(gid) + " and its mode " +
      octal_mode(c_.control.mode) +
      ", so members get in only through that group or as its owner (control.group = the group lets them in)");
}

}  // namespace

HostProblems check_host(const Config& config, const HostView& host) {
  HostProblems out;
  HostCheck check(config, host, out);
  check.programs();
  check.read_files();
  check.folders();
  check.socket_access();
  return out;
}

ConfigCheck check_config_on_host(std::string_view text, std::string_view origin, const HostView& host) {
  return check_config(text, origin, host.names,
                      [&host](const Config& c, std::vector<std::string>& errors, std::vector<std::string>& warnings) {
                        HostProblems p = check_host(c, host);
                        errors.insert(errors.end(), p.errors.begin(), p.errors.end());
                        warnings.insert(warnings.end(), p.warnings.begin(), p.warnings.end());
                      });
}

}  // namespace basild
