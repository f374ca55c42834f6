// The verdict on what an apbasil run wrote, shared by every transport (local
// process, ssh exec, ssh gateway): an answer that is not a complete-looking
// XML document is an error, and so is a non-zero exit without one. The
// decoder has the last word on the XML itself. Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "basil_proto/status.h"

namespace basild {

// Looks like one complete XML document: "<" first and ">" last, whitespace aside.
bool looks_like_xml(std::string_view s);

// `who` names the program in messages ("apbasil", "remote apbasil");
// `exit_code` is nullopt when unknown, `exit_text` describes it ("exit
// status 2"). Ok, or kTransport (transient) saying what is wrong.
basil::Status judge_apbasil_output(std::string_view who, std::string_view stdout_text,
                                   std::optional<int> exit_code, std::string_view exit_text);

// Whether `out` is one whole BASIL response: a document that decodes, its
// root element closed and nothing but blanks after it. An answer apbasil
// wrote in pieces is not whole until its last piece, though an earlier one
// may end in '>'. Such an answer may be passed on before apbasil has
// exited (the gateway's early D frame): its exit status changes nothing,
// as judge_apbasil_output takes a whole answer whatever the status.
bool is_whole_answer(std::string_view out);

// How much of a run's stderr goes into its diagnostics (and so the log).
inline constexpr std::size_t kStderrExcerptBytes = 4096;

// A run's stderr as its diagnostics show it: one line of at most `cap`
// bytes, with every control character escaped (\n, \r, \t, \xHH; a
// backslash as \\) and the trailing newlines dropped, then
// " ... (N more bytes)" when less than `total` (what the run wrote; `kept`
// is its start) is shown. Never cuts a UTF-8 sequence.
std::string stderr_excerpt(std::string_view kept, std::uint64_t total, std::size_t cap = kStderrExcerptBytes);

}  // namespace basild
