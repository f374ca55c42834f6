// The documented set-up of an external login node, run as written: a basild
// started from conf/apbasil_proxy.conf (its site values pointed at a test
// sshd standing in for the main system, its `slurm` at an unprivileged user
// of this machine), and conf/cray.conf's apbasil= and apkill= programs run
// as slurmctld and slurmstepd run them: no arguments, stderr discarded,
// basild's socket found through $APBASIL_PROXY_SOCKET, as that user.
#include <gtest/gtest.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <sstream>

#include "tests/basild/daemon/daemon_support.h"
#include "tests/support/files.h"
#include "tests/support/sshd_fixture.h"
#include "tests/support/subprocess.h"
#include "tests/support/slurm_requests.h"

namespace basild::testing {
namespace {

namespace slurm = basil::testing::slurm;

std::string source_file(const std::string& rel) { return basil_test::read_file(std::string(BASIL_TEST_DATA) + "/../../" + rel); }

// cray.conf as Slurm reads it: key=value, keys case-insensitive, # comments.
std::map<std::string, std::string> read_cray_conf(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string key = line.substr(0, eq);
    std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return std::tolower(c); });
    out[key] = line.substr(eq + 1);
  }
  return out;
}

// conf/apbasil_proxy.conf with only its site values replaced: every other
// line (modes, limits, the allow-list's shape) is the example's own.
std::string example_for_test(const basil_test::TestSshd& sshd, const Daemon& d, const std::string& user, const std::string& group) {
  const auto so = sshd.options();
  const std::string emu = emulator_path();
  const std::map<std::string, std::string> site = {
      {"host", "\"" + so.host + "\"\nport = " + std::to_string(so.port)},
      {"user", "\"" + so.user + "\""},
      {"identity", "\"" + so.identity + "\""},
      {"known_hosts", "\"" + so.known_hosts + "\""},
      {"remote_apbasil", "\"" + emu + "\"\nremote_args = [\"--state\", \"" + d.emu() + "\"]"},
      {"remote_apkill",
       "\"" + emu + "\"\nremote_apkill_args = [\"--state\", \"" + d.emu() + "\", \"apkill\"]"},
      {"gateway_helper", "\"" + std::string(BASIL_BINARY_DIR) + "/basild/basil_gateway\""},
      {"database", "\"" + d.dir() + "/state.db\""},
      {"socket", "\"" + d.socket() + "\""},
      {"allowed_users", "[\"" + user + "\"]"},
      {"group", "\"" + group + "\""}};
  std::istringstream in(source_file("conf/apbasil_proxy.conf"));
  std::string out;
  for (std::string line; std::getline(in, line);) {
    const auto eq = line.find(" = ");
    if (!line.empty() && line[0] != '#' && eq != std::string::npos) {
      const auto it = site.find(line.substr(0, eq));
      if (it != site.end()) line = it->first + " = " + it->second;
    }
    out += line + "\n";
  }
  return out + "[log]\ndirectory = \"" + d.dir() + "\"\n";
}

TEST(CrayConfTest, TheDocumentedExternalLoginSetUpRunsAsWritten) {
  const passwd* pw = ::getpwnam("nobody");
  const group* gr = ::getgrnam("nogroup");
  ASSERT_TRUE(pw && gr && ::geteuid() == 0) << "runs slurm's programs as nobody:nogroup";
  basil_test::TestSshd sshd;
  ASSERT_TRUE(sshd.Start()) << sshd.error();
  Daemon d("cray-conf");
  ASSERT_EQ(::chmod(d.dir().c_str(), 0755), 0);
  const std::string conf = d.dir() + "/basild.conf";
  std::ofstream(conf) << example_for_test(sshd, d, "nobody", "nogroup");
  d.start();
  ASSERT_EQ(d.get("/v1/health")["conduit"].value("mode", ""), "gateway") << d.log();

  const auto cray = read_cray_conf(source_file("conf/cray.conf"));
  auto program = [](const std::string& path) {  // installed in /usr/sbin; here in the build tree
    return std::string(BASIL_BINARY_DIR) + "/apbasil_proxy/" + path.substr(path.rfind('/') + 1);
  };
  ASSERT_TRUE(cray.count("apbasil") && cray.count("apkill") && cray.count("alpsengine"));
  const std::string apbasil = program(cray.at("apbasil")), apkill = program(cray.at("apkill"));
  // The socket apbasil_proxy would find by itself in /run/basild; here in the test's folder.
  ::setenv("APBASIL_PROXY_SOCKET", d.socket().c_str(), 1);
  // As slurmctld runs them: as nobody:nogroup, stderr discarded.
  const basil_test::SpawnOptions as_slurm{.err = basil_test::Redirect::null(), .as_user = {{pw->pw_uid, gr->gr_gid}}};
  auto call = [&](const std::string& request) {
    auto r = basil_test::run({apbasil}, request, as_slurm);
    EXPECT_EQ(r.exit_code, 0);
    auto resp = basil::decode_response(r.out);
    EXPECT_TRUE(resp && resp->ok()) << r.out;
    return resp ? *resp : basil::Response{};
  };

  // slurmctld: ENGINE, then a pass: INVENTORY and RESERVE.
  const auto engine = call(slurm::engine());
  EXPECT_EQ(std::get<basil::EngineInfo>(engine.body).version, cray.at("alpsengine"))
      << "cray.conf's AlpsEngine is what the emulated XC answers";
  call(slurm::inventory());
  const auto res_id = std::get<basil::Reserved>(call(slurm::reserve("4001", "alice", 32)).body).reservation_id;
  // slurmstepd: ENGINE, CONFIRM; an aprun; scancel's apkill; ENGINE, RELEASE.
  call(slurm::engine());
  call(slurm::confirm(res_id, "4001", 777));
  const auto apid = std::stoull(emulator_admin(d.emu(), "app start --resid " + std::to_string(res_id)));
  EXPECT_EQ(basil_test::run({apkill, "-9", std::to_string(apid)}, "", as_slurm).exit_code, 0);
  EXPECT_FALSE(application_running(d.emu(), apid));
  call(slurm::engine());
  call(slurm::release(res_id));
  ::unsetenv("APBASIL_PROXY_SOCKET");
  EXPECT_TRUE(d.alps_reservations().empty());
}

}  // namespace
}  // namespace basild::testing
