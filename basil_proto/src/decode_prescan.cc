#include "basil_proto/src/decode_prescan.h"

#include <algorithm>
#include <array>
#include <cstring>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace basil::decode_detail {

namespace {

constexpr std::size_t kNameKept = 64;
constexpr std::string_view kCDataOpen = "[CDATA[";

bool is_space(std::uint32_t c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// Set bits, a loop per bit: '=' are few (and popcnt is not in baseline
// x86-64).
std::size_t bits(unsigned m) {
  std::size_t n = 0;
  for (; m != 0; m &= m - 1) ++n;
  return n;
}

// The first '<' in [p, end) (or `end`), and the '=' before it in `equals`:
// sixteen bytes at a time where SSE2 is there (every x86-64), else a byte
// at a time.
const char* next_open(const char* p, const char* end, std::size_t& equals) {
#ifdef __SSE2__
  const __m128i lt = _mm_set1_epi8('<');
  const __m128i eq = _mm_set1_epi8('=');
  while (end - p >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const auto opens = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, lt)));
    auto equal_signs = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, eq)));
    if (opens != 0) {
      const auto at = static_cast<unsigned>(__builtin_ctz(opens));
      equal_signs &= (1u << at) - 1;
      equals += bits(equal_signs);
      return p + at;
    }
    equals += bits(equal_signs);
    p += 16;
  }
#endif
  for (; p < end && *p != '<'; ++p) equals += *p == '=' ? 1 : 0;
  return p;
}

// The bytes that end a run of a start tag's name or attributes.
constexpr std::array<bool, 256> kTagStops = [] {
  std::array<bool, 256> t{};
  for (char c : std::string_view(" \t\r\n/>=\"'")) t[static_cast<unsigned char>(c)] = true;
  return t;
}();

}  // namespace

// The width of the document's code units from its first four bytes (fewer
// when it is shorter), as libxml2 guesses an encoding: a byte-order mark,
// or NULs around the first '<'.
bool AttributeScan::detect(std::string_view bytes, std::size_t& used) {
  const std::size_t take = std::min(bytes.size(), 4 - head_.size());
  head_.append(bytes.substr(0, take));
  used = take;
  if (head_.size() < 4 && take == bytes.size()) return false;  // wait for more
  auto b = [&](std::size_t i) { return i < head_.size() ? static_cast<unsigned char>(head_[i]) : 0xAAu; };
  if (b(0) == 0 && b(1) == 0) {
    width_ = 4, big_endian_ = true;
  } else if (b(2) == 0 && b(3) == 0 && (b(0) == '<' || b(0) == 0xFF)) {
    width_ = 4, big_endian_ = false;
  } else if ((b(0) == 0xFE && b(1) == 0xFF) || b(0) == 0) {
    width_ = 2, big_endian_ = true;
  } else if ((b(0) == 0xFF && b(1) == 0xFE) || b(1) == 0) {
    width_ = 2, big_endian_ = false;
  } else {
    width_ = 1;
  }
  return true;
}

std::optional<AttributeScan::Excess> AttributeScan::feed(std::string_view bytes) {
  if (!over_ && width_ == 0) {
    std::size_t used = 0;
    if (!detect(bytes, used)) return std::nullopt;
    std::string head = std::move(head_);
    head_.clear();
    bytes.remove_prefix(used);
    scan(head);
  }
  if (!over_) scan(bytes);
  if (over_) return Excess{name_, at_};
  return std::nullopt;
}

// A piece, once the width is known.
void AttributeScan::scan(std::string_view bytes) {
  const std::size_t base = fed_;
  fed_ += bytes.size();
  if (width_ == 1) {
    const std::size_t stopped = scan_bytes(bytes);
    if (over_) at_ = base + stopped;
    return;
  }
  partial_.append(bytes);
  std::size_t i = 0;
  for (; i + width_ <= partial_.size() && !over_; i += width_) {
    std::uint32_t c = 0;
    for (unsigned k = 0; k < width_; ++k) {
      const auto byte = static_cast<unsigned char>(partial_[i + (big_endian_ ? k : width_ - 1 - k)]);
      c = (c << 8) | byte;
    }
    unit(c);
  }
  if (over_) at_ = fed_ - (partial_.size() - i);
  partial_.erase(0, i);
}

// A piece of a document of single bytes. Between two '<' lies at most one
// start tag (a '<' inside a value is an error libxml2 stops at), so a run
// from a '<' to the next one with no more '=' than max_attributes is
// passed in one loop. What is left goes through the exact
// scan: a run with more '=', a comment, CDATA or processing instruction,
// and the run a piece ends in. Returns where it stopped (the end, or just
// past the '=' over the limit).
std::size_t AttributeScan::scan_bytes(std::string_view bytes) {
  const char* p = bytes.data();
  const char* end = p + bytes.size();
  while (p < end && !over_) {
    if (state_ != State::kText) {
      p = exact_bytes(p, end);
      continue;
    }
    const auto* open = static_cast<const char*>(std::memchr(p, '<', static_cast<std::size_t>(end - p)));
    if (open == nullptr) break;
    p = open + 1;
    state_ = State::kOpen;  // the exact scan's state, should the run need it
    if (p == end || *p == '!' || *p == '?') continue;
    std::size_t equals = 0;
    const char* next = next_open(p, end, equals);
    if (next == end || equals > max_) continue;
    state_ = State::kText;
    p = next;
  }
  return static_cast<std::size_t>(p - bytes.data());
}

// The exact scan of single bytes from `p` until it is back in text (or at
// `end`): text, quoted values and the runs of a start tag are skipped a run
// at a time (memchr, a table), the other bytes go through unit().
const char* AttributeScan::exact_bytes(const char* p, const char* end) {
  while (p < end && !over_ && state_ != State::kText) {
    switch (state_) {
      case State::kQuoted: {
        const void* hit = std::memchr(p, static_cast<char>(quote_), static_cast<std::size_t>(end - p));
        if (hit == nullptr) return end;
        p = static_cast<const char*>(hit) + 1;
        state_ = State::kTag;
        continue;
      }
      case State::kName:
      case State::kTag: {
        const char* run = p;
        while (p < end && !kTagStops[static_cast<unsigned char>(*p)]) ++p;
        if (state_ == State::kName)
          name_.append(run, std::min(static_cast<std::size_t>(p - run), kNameKept - std::min(kNameKept, name_.size())));
        if (p == end) return end;
        break;
      }
      default:
        break;
    }
    const auto c = static_cast<unsigned char>(*p++);
    if (state_ == State::kName) {
      unit_of_name(c);
    } else if (state_ == State::kTag) {
      unit_of_tag(c);
    } else {
      unit(c);
    }
  }
  return p;
}

// One character (code unit) of the document.
void AttributeScan::unit(std::uint32_t c) {
  switch (state_) {
    case State::kText:
      if (c == '<') state_ = State::kOpen;
      return;
    case State::kOpen:
      if (c == '/') {
        state_ = State::kSkipTag;
      } else if (c == '?') {
        state_ = State::kPi, run_ = 0;
      } else if (c == '!') {
        state_ = State::kBang, bang_.clear();
      } else {
        state_ = State::kName, count_ = 0, name_.clear();
        return unit_of_name(c);
      }
      return;
    case State::kName:
      return unit_of_name(c);
    case State::kTag:
      return unit_of_tag(c);
    case State::kQuoted:
      if (c == quote_) state_ = State::kTag;
      return;
    case State::kComment:
    case State::kCData:
      if (c == '>' && run_ >= 2) {
        state_ = State::kText;
      } else {
        run_ = c == (state_ == State::kComment ? '-' : ']') ? run_ + 1 : 0;
      }
      return;
    case State::kPi:
      if (c == '>' && run_ > 0) state_ = State::kText;
      run_ = c == '?' ? 1 : 0;
      return;
    case State::kSkipTag:
      if (c == '>') state_ = State::kText;
      return;
    case State::kBang:
      return unit_of_bang(c);
  }
}

void AttributeScan::unit_of_name(std::uint32_t c) {
  if (is_space(c) || c == '/' || c == '>' || c == '=' || c == '"' || c == '\'') {
    state_ = State::kTag;
    return unit_of_tag(c);
  }
  if (name_.size() < kNameKept) name_.push_back(c < 0x80 ? static_cast<char>(c) : '?');
}

void AttributeScan::unit_of_tag(std::uint32_t c) {
  if (c == '"' || c == '\'') {
    quote_ = c;
    state_ = State::kQuoted;
  } else if (c == '=') {
    if (++count_ > max_) over_ = true;
  } else if (c == '>') {
    state_ = State::kText;
  }
}

// After "<!": "--" opens a comment, "[CDATA[" a CDATA section; anything
// else is a declaration (a DOCTYPE, which the decoder refuses) skipped to
// its '>'.
void AttributeScan::unit_of_bang(std::uint32_t c) {
  bang_.push_back(c < 0x80 ? static_cast<char>(c) : '?');
  if (bang_ == "--") {
    state_ = State::kComment, run_ = 0;
  } else if (bang_ == kCDataOpen) {
    state_ = State::kCData, run_ = 0;
  } else if (bang_ != std::string_view("--").substr(0, bang_.size()) &&
             bang_ != kCDataOpen.substr(0, std::min(bang_.size(), kCDataOpen.size()))) {
    state_ = c == '>' ? State::kText : State::kSkipTag;
  }
}

}  // namespace basil::decode_detail
