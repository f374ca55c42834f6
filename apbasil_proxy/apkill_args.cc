#include "apbasil_proxy/apkill_args.h"

#include <array>
#include <charconv>
#include <string_view>
#include <utility>

namespace apbasil_proxy {

namespace {

// The signal names apkill and kill take (Linux numbers).
constexpr std::array<std::pair<std::string_view, int>, 22> kSignals{{
    {"HUP", 1},   {"INT", 2},   {"QUIT", 3},  {"ILL", 4},   {"TRAP", 5},  {"ABRT", 6},
    {"BUS", 7},   {"FPE", 8},   {"KILL", 9},  {"USR1", 10}, {"SEGV", 11}, {"USR2", 12},
    {"PIPE", 13}, {"ALRM", 14}, {"TERM", 15}, {"CHLD", 17}, {"CONT", 18}, {"STOP", 19},
    {"TSTP", 20}, {"TTIN", 21}, {"TTOU", 22}, {"XCPU", 24},
}};

template <typename T>
std::optional<T> decimal(std::string_view s) {
  T v{};
  if (s.empty()) return std::nullopt;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<int> signal_of(std::string_view s) {
  if (auto n = decimal<int>(s)) return *n >= 1 && *n <= 64 ? n : std::nullopt;
  if (s.substr(0, 3) == "SIG") s.remove_prefix(3);
  for (const auto& [name, number] : kSignals)
    if (name == s) return number;
  return std::nullopt;
}

}  // namespace

basil::Result<ApkillOrder> parse_apkill_args(const std::vector<std::string>& args) {
  auto bad = [](std::string m) { return basil::Status(basil::Code::kInvalidValue, std::move(m)); };
  ApkillOrder o;
  bool signal_given = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--socket") {
      if (i + 1 == args.size()) return bad("--socket needs a path");
      o.socket = args[++i];
    } else if (a.size() > 1 && a[0] == '-' && o.apids.empty() && !signal_given) {
      auto s = signal_of(std::string_view(a).substr(1));
      if (!s) return bad("unknown signal '" + a + "' (a number 1 to 64 or a name such as KILL)");
      o.signal = *s;
      signal_given = true;
    } else if (auto apid = decimal<std::uint64_t>(a)) {
      o.apids.push_back(*apid);
    } else {
      return bad("'" + a + "' is not an application id");
    }
  }
  if (o.apids.empty()) return bad("usage: apkill [-SIGNAL] APID...");
  return o;
}

}  // namespace apbasil_proxy
