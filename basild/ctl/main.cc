// basilctl: the command-line tool of basild.
//   basilctl decode [--strict] FILE    decode any BASIL document, print JSON
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "ctl/decode_summary.h"

namespace {

constexpr const char* kUsage =
    "usage: basilctl decode [--strict] FILE\n"
    "  decode   decode a BASIL request or response (FILE may be -) and print a JSON summary\n";

int cmd_decode(const std::vector<std::string>& args) {
  basil::DecodeOptions options;
  std::string file;
  for (const auto& a : args) {
    if (a == "--strict") {
      options.strict = true;
    } else if (file.empty() && (a == "-" || a.rfind("-", 0) != 0)) {
      file = a;
    } else {
      std::cerr << kUsage;
      return 2;
    }
  }
  if (file.empty()) {
    std::cerr << kUsage;
    return 2;
  }
  std::FILE* in = file == "-" ? stdin : std::fopen(file.c_str(), "rb");
  if (in == nullptr) {
    std::cerr << file << ": " << std::strerror(errno) << "\n";
    return 1;
  }
  // Stream the document through the decoder in 64 KiB chunks.
  basil::Decoder decoder(options);
  std::vector<char> buf(64 * 1024);
  basil::Status fed;
  while (fed.is_ok()) {
    std::size_t n = std::fread(buf.data(), 1, buf.size(), in);
    if (n == 0) break;
    fed = decoder.feed(std::string_view(buf.data(), n));
  }
  bool read_error = std::ferror(in) != 0;
  if (in != stdin) std::fclose(in);
  if (read_error) {
    std::cerr << file << ": read error\n";
    return 1;
  }
  auto result = decoder.finish();
  if (!result) {
    const auto& s = result.status();
    std::cerr << file << ':' << s.line() << ':' << s.column() << ": " << s.message();
    if (!s.path().empty()) std::cerr << " (at " << s.path() << ')';
    std::cerr << '\n';
    return 1;
  }
  std::cout << basilctl::summarize(*result).dump() << '\n';
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "-h" || args[0] == "--help") {
    std::cout << kUsage;
    return args.empty() ? 2 : 0;
  }
  std::string cmd = args[0];
  args.erase(args.begin());
  if (cmd == "decode") return cmd_decode(args);
  std::cerr << "basilctl: unknown command '" << cmd << "'\n" << kUsage;
  return 2;
}
