// daemon/host_check.h: what `basild --check-config` finds on a made-up host
// (files with owners and modes, what basild's user may do, users and their
// groups), one problem per line.
#include "basild/daemon/host_check.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <set>

namespace basild {
namespace {

using Kind = FileFacts::Kind;

constexpr std::uint32_t kSlurm = 64030;
constexpr std::uint32_t kSlurmGroup = 64030;
constexpr std::uint32_t kOperators = 5000;

FileFacts dir(std::uint32_t mode, std::uint32_t uid = 0, std::uint32_t gid = 0) {
  return {Kind::kDirectory, uid, gid, mode};
}
FileFacts file(std::uint32_t mode, std::uint32_t uid = 0) { return {Kind::kRegular, uid, 0, mode}; }

// A Debian host as the package leaves it, basild running as root, with the
// programs of the configuration below.
struct FakeHost {
  std::map<std::string, FileFacts> files = {
      {"/", dir(0755)},
      {"/usr", dir(0755)},
      {"/usr/bin", dir(0755)},
      {"/usr/bin/apbasil", file(0755)},
      {"/usr/bin/apkill", file(0755)},
      {"/usr/bin/squeue", file(0755)},
      {"/usr/bin/scontrol", file(0755)},
      {"/var", dir(0755)},
      {"/var/lib", dir(0755)},
      {"/var/lib/basild", dir(0700)},
      {"/var/log", dir(0755)},
      {"/var/log/basild", dir(0750)},
      {"/run", dir(0755)},
      {"/run/basild", dir(0755)},
      {"/tmp", dir(01777)},
      {"/etc", dir(0755)},
      {"/etc/basild", dir(0755)},
  };
  std::map<std::string, int> refused;  // path -> the errno access gives basild's user
  std::map<std::string, std::string> env;
  std::map<std::string, std::uint32_t> users = {{"root", 0}, {"slurm", kSlurm}, {"alice", 1000}};
  std::map<std::string, std::uint32_t> groups = {{"root", 0}, {"slurm", kSlurmGroup}, {"operators", kOperators}};
  std::map<std::uint32_t, std::vector<std::uint32_t>> member_of = {
      {0, {0}}, {kSlurm, {kSlurmGroup}}, {1000, {1000, kOperators}}};

  HostView view(std::uint32_t uid = 0, std::uint32_t gid = 0) const {
    HostView h;
    h.uid = uid;
    h.gid = gid;
    h.lstat = [this](const std::string& p) -> std::optional<FileFacts> {
      auto it = files.find(p);
      if (it == files.end()) return std::nullopt;
      return it->second;
    };
    h.stat = h.lstat;
    h.realpath = [this](const std::string& p) -> std::optional<std::string> {
      if (!files.count(p)) return std::nullopt;
      return p;
    };
    h.access_error = [this](const std::string& p, int) {
      if (!files.count(p)) return ENOENT;
      auto it = refused.find(p);
      return it == refused.end() ? 0 : it->second;
    };
    h.groups_of = [this](std::uint32_t u) {
      auto it = member_of.find(u);
      return it == member_of.end() ? std::vector<std::uint32_t>{} : it->second;
    };
    h.env = [this](const std::string& n) -> std::optional<std::string> {
      auto it = env.find(n);
      if (it == env.end()) return std::nullopt;
      return it->second;
    };
    h.names.user = [this](const std::string& n) -> std::optional<std::uint32_t> {
      auto it = users.find(n);
      if (it == users.end()) return std::nullopt;
      return it->second;
    };
    h.names.group = [this](const std::string& n) -> std::optional<std::uint32_t> {
      auto it = groups.find(n);
      if (it == groups.end()) return std::nullopt;
      return it->second;
    };
    return h;
  }
};

// The packaged configuration's defaults, with the squeue source.
Config site_config() {
  Config c;
  JobSource squeue;
  squeue.name = "squeue";
  squeue.command = {"/usr/bin/squeue", "-h", "-t", "all", "-o", "%A"};
  c.reconcile.sources.push_back(squeue);
  return c;
}

std::vector<std::string> errors(const Config& c, const FakeHost& h, std::uint32_t uid = 0, std::uint32_t gid = 0) {
  return check_host(c, h.view(uid, gid)).errors;
}

TEST(HostCheckTest, ThePackagedConfigurationOnItsHostHasNoProblem) {
  FakeHost h;
  const HostProblems p = check_host(site_config(), h.view());
  EXPECT_EQ(p.errors, std::vector<std::string>{});
  EXPECT_EQ(p.warnings, std::vector<std::string>{});
}

TEST(HostCheckTest, EveryProgramBasildRunsMustExistBeAFileAndBeExecutable) {
  FakeHost h;
  h.files.erase("/usr/bin/apbasil");
  h.files["/usr/bin/apkill"] = dir(0755);
  h.refused["/usr/bin/squeue"] = EACCES;
  h.files.erase("/usr/bin/scontrol");
  Config c = site_config();
  c.slurm.node_sync = true;
  EXPECT_EQ(errors(c, h),
            (std::vector<std::string>{
                "apbasil.path: /usr/bin/apbasil does not exist",
                "reconcile.apkill: /usr/bin/apkill is not a file",
                "reconcile.source[1] (squeue).command: /usr/bin/squeue cannot be run by uid 0 (Permission denied)",
                "slurm.scontrol: /usr/bin/scontrol does not exist",
            }));
}

TEST(HostCheckTest, ProgramsOnTheLoginNodeAreNotLookedForHere) {
  FakeHost h;
  h.files.erase("/usr/bin/apbasil");
  h.files.erase("/usr/bin/apkill");
  h.files["/etc/basild/id_ed25519"] = file(0600);
  h.files["/etc/basild/known_hosts"] = file(0644);
  Config c = site_config();
  c.conduit.mode = ConduitMode::kSshGateway;
  c.conduit.host = "login1";
  c.conduit.identity = "/etc/basild/id_ed25519";
  c.conduit.known_hosts = "/etc/basild/known_hosts";
  EXPECT_EQ(errors(c, h), std::vector<std::string>{});
}

TEST(HostCheckTest, TheSshKeyAndKnownHostsMustBeReadableAndTheAgentThereWithoutAKey) {
  FakeHost h;
  h.files["/etc/basild/id_ed25519"] = file(0600);
  h.refused["/etc/basild/id_ed25519"] = EACCES;
  Config c = site_config();
  c.conduit.mode = ConduitMode::kSshExec;
  c.conduit.host = "login1";
  c.conduit.identity = "/etc/basild/id_ed25519";
  c.conduit.known_hosts = "/etc/basild/known_hosts";
  EXPECT_EQ(errors(c, h), (std::vector<std::string>{
                              "conduit.identity: /etc/basild/id_ed25519 cannot be read by uid 0 (Permission denied)",
                              "conduit.known_hosts: /etc/basild/known_hosts does not exist",
                          }));
  c.conduit.identity.clear();
  c.conduit.accept_new_host_key = true;  // made on first use: its folder must take it
  h.refused["/etc/basild"] = EROFS;
  EXPECT_EQ(errors(c, h), (std::vector<std::string>{
                              "conduit.identity: none is given and there is no ssh agent (SSH_AUTH_SOCK is not set)",
                              "conduit.known_hosts: the folder /etc/basild (where /etc/basild/known_hosts is made) "
                              "cannot be written by uid 0 (Read-only file system)",
                          }));
  h.env["SSH_AUTH_SOCK"] = "/run/agent.sock";
  h.refused.clear();
  EXPECT_EQ(errors(c, h), std::vector<std::string>{});
}

TEST(HostCheckTest, FilesASourceOrNodeSyncReadMustBeReadable) {
  FakeHost h;
  Config c = site_config();
  JobSource db;
  db.type = JobSourceType::kSqlite;
  db.name = "jobs-db";
  db.database = "/var/lib/scheduler/jobs.db";
  db.query = "SELECT id FROM jobs";
  c.reconcile.sources.push_back(db);
  c.slurm.node_sync = true;
  c.slurm.slurm_conf = "/etc/slurm/slurm.conf";
  EXPECT_EQ(errors(c, h), (std::vector<std::string>{
                              "reconcile.source[2] (jobs-db).database: /var/lib/scheduler/jobs.db does not exist",
                              "slurm.slurm_conf: /etc/slurm/slurm.conf does not exist",
                          }));
}

TEST(HostCheckTest, TheStateLogAndSocketFoldersMustBeWritable) {
  FakeHost h;
  h.refused["/var/lib/basild"] = EROFS;
  h.files.erase("/var/log/basild");
  h.refused["/run"] = EACCES;
  h.files.erase("/run/basild");
  Config c = site_config();
  c.log.xml_log = true;
  EXPECT_EQ(
      errors(c, h),
      (std::vector<std::string>{
          "state.database: the folder /var/lib/basild (the state database's) cannot be written by uid 0 (Read-only "
          "file system)",
          "log.directory: the folder /var/log/basild (where /var/log/basild/basil_xml.log is made) does not exist",
          "control.socket: the folder /run (where /run/basild is made) cannot be written by uid 0 (Permission denied)",
      }));
}

TEST(HostCheckTest, TheXmlLogIsLookedAtOnlyWhenItIsOnByTheFileOrTheEnvironment) {
  FakeHost h;
  h.files.erase("/var/log/basild");
  Config c = site_config();
  EXPECT_EQ(errors(c, h), std::vector<std::string>{}) << "off: its folder is never written";
  h.env["XML_LOG"] = "1";
  EXPECT_EQ(errors(c, h).size(), 1u);
  h.env["XML_LOG_LOC"] = "SLURM";
  EXPECT_EQ(errors(c, h), std::vector<std::string>{}) << "into the main log";
}

TEST(HostCheckTest, ASocketFolderOthersCouldSwapIsAnError) {
  FakeHost h;
  h.files["/srv"] = dir(0777);
  Config c = site_config();
  c.control.socket = "/srv/basild/control.sock";
  EXPECT_EQ(errors(c, h), (std::vector<std::string>{
                              "control.socket: /srv can be written by others (mode 0777) and is not sticky: anyone "
                              "could rename what is in it and plant a fake control socket",
                          }));
  c.control.socket = "/tmp/basild/control.sock";  // sticky, and basild makes /tmp/basild
  EXPECT_EQ(errors(c, h), std::vector<std::string>{});
}

TEST(HostCheckTest, AnAllowedUserTheSocketsOwnerGroupAndModeShutOutIsAnError) {
  FakeHost h;
  Config c = site_config();
  c.control.allowed_users = {{"slurm", std::nullopt}};
  EXPECT_EQ(errors(c, h), (std::vector<std::string>{
                              "control.allowed_users: 'slurm' (uid 64030) cannot open the control socket: the socket "
                              "is owned by uid 0 and group 0, which it is not in, with mode 0660 (set control.group to "
                              "one of its groups, or a control.mode that lets others write)",
                          }));
  c.control.group = Principal{"slurm", std::nullopt};
  EXPECT_EQ(errors(c, h), std::vector<std::string>{});
  c.control.mode = 0640;
  EXPECT_EQ(errors(c, h), (std::vector<std::string>{
                              "control.allowed_users: 'slurm' (uid 64030) cannot open the control socket: it is in the "
                              "socket's group 64030 and mode 0640 does not let the group write",
                          }));
}

TEST(HostCheckTest, AnAllowedUserTheFoldersAboveTheSocketDoNotLetThroughIsAnError) {
  FakeHost h;
  h.files["/root"] = dir(0700);
  Config c = site_config();
  c.control.socket = "/root/basild/control.sock";
  c.control.mode = 0666;
  c.control.allowed_users = {{"", kSlurm}};
  EXPECT_EQ(errors(c, h), (std::vector<std::string>{
                              "control.allowed_users: uid 64030 cannot reach the control socket: /root (mode 0700, "
                              "owner uid 0, group 0) does not let it through",
                          }));
}

TEST(HostCheckTest, RootNeedsNoModeAndASetGroupIdFolderGivesItsGroup) {
  FakeHost h;
  h.files["/run/basild"] = dir(02750, 0, kSlurmGroup);  // the socket takes the folder's group
  Config c = site_config();
  c.control.allowed_users = {{"root", std::nullopt}, {"slurm", std::nullopt}};
  EXPECT_EQ(errors(c, h), std::vector<std::string>{});
}

TEST(HostCheckTest, BasildMustBeInTheSocketsGroupUnlessItIsRoot) {
  FakeHost h;
  h.files["/run/basild"] = dir(0755, 1000);
  h.files["/var/lib/basild"] = dir(0700, 1000);
  Config c = site_config();
  c.control.group = Principal{"slurm", std::nullopt};
  EXPECT_EQ(
      errors(c, h, 1000, 1000),
      (std::vector<std::string>{
          "control.group: uid 1000, basild's user, is not in group 64030 and cannot give the control socket to it"}));
  c.control.group = Principal{"operators", std::nullopt};
  EXPECT_EQ(errors(c, h, 1000, 1000), std::vector<std::string>{});
}

TEST(HostCheckTest, AnAllowedGroupWhoseMembersGetInOnlyAsOthersIsAWarning) {
  FakeHost h;
  Config c = site_config();
  c.control.allowed_groups = {{"operators", std::nullopt}};
  const HostProblems p = check_host(c, h.view());
  EXPECT_EQ(p.errors, std::vector<std::string>{});
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_EQ(p.warnings[0].rfind("control.allowed_groups: 'operators' (gid 5000): the control socket's group is 0", 0),
            0u)
      << p.warnings[0];
  c.control.group = Principal{"operators", std::nullopt};
  EXPECT_EQ(check_host(c, h.view()).warnings, std::vector<std::string>{});
}

TEST(HostCheckTest, TheReportHasOneLinePerProblemAndFailsOnAnError) {
  FakeHost h;
  h.files.erase("/usr/bin/apbasil");
  const ConfigCheck r = check_config_on_host("[control]\nallowed_users = [\"ghost\"]\n", "b.conf", h.view());
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.report.rfind("b.conf: 1 error\nb.conf: apbasil.path: /usr/bin/apbasil does not exist\n", 0), 0u)
      << r.report;
  EXPECT_NE(r.report.find("  - control.allowed_users: no such user 'ghost'"), std::string::npos) << r.report;
  h.files["/usr/bin/apbasil"] = file(0755);
  EXPECT_TRUE(check_config_on_host("", "b.conf", h.view()).ok);
}

}  // namespace
}  // namespace basild
