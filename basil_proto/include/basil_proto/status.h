// One error vocabulary from codec to daemon: a code, a message and, for
// decoding errors, where in the document it happened.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace basil {

enum class Code : std::uint8_t {
  kOk = 0,
  // Decoding.
  kMalformed,           // not well-formed XML, truncated, bad encoding
  kStructure,           // wrong parent, duplicate unique element, missing attribute
  kInvalidValue,        // an attribute or text that does not parse (number, enum)
  kUnknownName,         // unknown element or attribute (strict mode only)
  kUnsupportedProtocol, // protocol string outside what the codec speaks
  kRefused,             // DOCTYPE, entity declarations: hostile by construction
  kLimitExceeded,       // document size, depth, attribute or text length
  // Encoding.
  kNotInDialect,        // the model asks for something the dialect cannot say
  kInvalidText,         // text that is not valid UTF-8 or holds forbidden characters
  // ALPS answered FAILURE.
  kAlpsPermanent,
  kAlpsTransient,
  kReservationGone,     // "No entry for resId": RELEASE of a reservation that is gone
  kReservationUnknown,  // "cannot find resId": CONFIRM of an unknown reservation
  // Transport and daemon (used by basild).
  kTransport,           // spawn failure, broken pipe, lost connection, bad output
  kTimeout,
  kBusy,
  kInternal,
};

// Short stable name of a code ("malformed", "reservation_gone", ...).
std::string_view code_name(Code code);

// The transient condition: true when retrying the same call later may succeed.
bool is_transient(Code code);

class Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return {}; }

  bool is_ok() const { return code_ == Code::kOk; }
  explicit operator bool() const { return is_ok(); }
  Code code() const { return code_; }
  bool transient() const { return is_transient(code_); }
  const std::string& message() const { return message_; }

  // Location of a decoding error: 1-based line and column (0 when unknown) and
  // the element path ("/BasilResponse/ResponseData/Inventory").
  int line() const { return line_; }
  int column() const { return column_; }
  const std::string& path() const { return path_; }
  Status& at(int line, int column, std::string path) {
    line_ = line;
    column_ = column;
    path_ = std::move(path);
    return *this;
  }

  // "LINE:COL: message (at PATH)" when located, else the message.
  std::string to_string() const;

 private:
  Code code_ = Code::kOk;
  std::string message_;
  int line_ = 0;
  int column_ = 0;
  std::string path_;
};

// A value or the Status that explains why there is none.
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}            // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {}     // NOLINT: implicit by design

  bool is_ok() const { return v_.index() == 0; }
  explicit operator bool() const { return is_ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Status& status() const {
    static const Status kOk;
    return is_ok() ? kOk : std::get<1>(v_);
  }

 private:
  std::variant<T, Status> v_;
};

}  // namespace basil
