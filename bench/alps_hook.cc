// slurm_jobs' "alps-only" hooks: the least a Slurm prolog and epilog can
// do to run a one-node job in an ALPS reservation, with no basild. As
// PrologSlurmctld it RESERVEs the job's node (width 1) and CONFIRMs the
// reservation with the job id, each a run of apbasil; as EpilogSlurmctld
// it RELEASEs it. It sets the floor of any integration through Slurm's
// hooks on the machine that runs it: Slurm's hook processes and ALPS's own
// calls, nothing else (no geometry, no record, no claims). Its one
// retry: a RESERVE refused while the node's job before is still being
// released (its epilog runs after Slurm has freed the node) is sent again
// every 20 ms for up to 5 s, as a job would otherwise fail its start.
//
// Slurm passes no argument: the apbasil command is read from PROGRAM.args
// beside the program (one argument per line), and the reservation id goes
// from the prolog to the epilog in PROGRAM.res.JOBID; failures are also
// appended to PROGRAM.errors. One-node jobs on nodes named nid%05d only.
// Bench code: it measures, it protects nothing.
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "basil_proto/codec.h"
#include "process/run.h"

namespace {

using namespace std::chrono_literals;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

// The program's own path (Slurm runs it by its full path).
std::string self() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

// Why it failed, on standard error and in PROGRAM.errors (Slurm drops the
// hooks' standard error).
int fail(const std::string& why) {
  const std::string line = "alps_hook: job " + env("SLURM_JOB_ID") + ": " + why + "\n";
  std::fputs(line.c_str(), stderr);
  std::ofstream(self() + ".errors", std::ios::app) << line;
  return 1;
}

std::vector<std::string> lines_of(const std::string& file) {
  std::ifstream in(file);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

// One apbasil run: the answer, decoded, when it says SUCCESS.
basil::Result<basil::Response> call(const std::vector<std::string>& apbasil, basil::RequestBody body) {
  auto request = basil::encode_request(basil::make_request(basil::Dialect::k1_3, std::move(body)));
  if (!request) return request.status();
  auto run = basil::process::run({apbasil, {}, /*search_path=*/true}, {.input = *request, .timeout = 30s});
  if (!run) return run.status();
  auto response = basil::decode_response(run->out);
  if (!response) return response.status();
  if (!response->ok()) return basil::Status(basil::Code::kTransport, "ALPS refused: " + run->out);
  return response;
}

std::uint64_t number(const std::string& s) {
  std::uint64_t n = 0;
  std::from_chars(s.data(), s.data() + s.size(), n);
  return n;
}

int prolog(const std::vector<std::string>& apbasil, const std::string& job, const std::string& res_file) {
  const std::string node = env("SLURM_JOB_NODELIST");
  if (node.size() != 8 || node.rfind("nid", 0) != 0) return fail("not a one-node job on nid%05d: " + node);
  basil::ReserveRequest reserve;
  reserve.user_name = env("SLURM_JOB_USER");
  reserve.batch_id = job;
  basil::ReserveParam p;
  p.width = 1;
  p.nppn = 1;
  p.nodes.push_back(basil::NidList::from_nids({static_cast<std::uint32_t>(number(node.substr(3)))}));
  reserve.params.push_back(p);
  auto reserved = call(apbasil, reserve);
  for (int retry = 0; !reserved && retry < 250; ++retry) {
    std::this_thread::sleep_for(20ms);
    reserved = call(apbasil, reserve);
  }
  if (!reserved) return fail("RESERVE: " + reserved.status().to_string());
  const auto* r = std::get_if<basil::Reserved>(&reserved->body);
  if (r == nullptr) return fail("RESERVE: no reservation in the answer");
  // Saved before the CONFIRM: Slurm runs the epilog after a failed prolog
  // too, and it releases what this run reserved.
  std::ofstream(res_file) << r->reservation_id << "\n";
  basil::ConfirmRequest confirm;
  confirm.reservation_id = r->reservation_id;
  confirm.pagg_id = number(job);
  if (auto c = call(apbasil, confirm); !c) return fail("CONFIRM: " + c.status().to_string());
  return 0;
}

int epilog(const std::vector<std::string>& apbasil, const std::string& res_file) {
  const auto saved = lines_of(res_file);
  if (saved.empty()) return 0;  // the prolog reserved nothing
  basil::ReleaseRequest release;
  release.reservation_id = number(saved.front());
  if (auto r = call(apbasil, release); !r) return fail("RELEASE: " + r.status().to_string());
  ::unlink(res_file.c_str());
  return 0;
}

}  // namespace

int main() {
  const std::string program = self(), job = env("SLURM_JOB_ID"), context = env("SLURM_SCRIPT_CONTEXT");
  const auto apbasil = lines_of(program + ".args");
  if (apbasil.empty()) return fail("no apbasil command in " + program + ".args");
  if (job.empty()) return fail("SLURM_JOB_ID is not set");
  const std::string res_file = program + ".res." + job;
  if (context == "prolog_slurmctld") return prolog(apbasil, job, res_file);
  if (context == "epilog_slurmctld") return epilog(apbasil, res_file);
  return fail("not run as PrologSlurmctld or EpilogSlurmctld: " + context);
}
