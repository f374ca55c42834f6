// NID list parsing: whatever parses formats to a list that parses to itself.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "basil_proto/nidlist.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto list = basil::NidList::parse(text);
  if (list) {
    auto again = basil::NidList::parse(list->format());
    if (!again || !(*again == *list)) __builtin_trap();
  }
  return 0;
}
