// apkill_proxy: the apkill of an external login node. A scheduler there
// (Slurm, cray.conf `apkill=`) runs it as it would run apkill on the main
// system, `apkill -9 230893`; it asks the local basild (POST /v1/apkill,
// the same control socket and allow-list as apbasil_proxy) to signal the
// application where ALPS is. Exit 0 when every application was signalled,
// 1 otherwise with the reason on standard error, 2 for a bad command line.
// See apbasil_proxy(8).
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apbasil_proxy/apkill_args.h"
#include "basild/control_client/client.h"
#include "basild/control_client/published.h"

namespace {

int fail(const std::string& why, int code = 1) {
  std::cerr << "apkill_proxy: " << why << "\n";
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  auto order = apbasil_proxy::parse_apkill_args(std::vector<std::string>(argv + 1, argv + argc));
  if (!order) return fail(order.status().message(), 2);
  // basild's socket as apbasil_proxy finds it: --socket, $APBASIL_PROXY_SOCKET, basild's default.
  std::string socket(basild::control::kDefaultSocket);
  if (const char* e = std::getenv("APBASIL_PROXY_SOCKET"); e != nullptr && *e != '\0') socket = e;
  if (order->socket) socket = *order->socket;
  basild::control::Published settings;
  if (auto p = basild::control::read_published(socket)) settings = *p;

  basild::control::Client client(socket);
  int failed = 0;
  for (const auto apid : order->apids) {
    const nlohmann::json body = {{"apid", apid}, {"signal", order->signal}};
    const auto r = client.request("POST", "/v1/apkill", body.dump(), "application/json", settings.wait);
    if (!r.ok()) {
      ++failed;
      fail("basild is not reachable: " + r.message);
      continue;
    }
    if (r.status != 200) {
      ++failed;
      const auto j = nlohmann::json::parse(r.body, nullptr, false);
      fail("application " + std::to_string(apid) + ": " + (j.is_object() ? j.value("error", r.body) : r.body));
    }
  }
  return failed == 0 ? 0 : 1;
}
