// The XML log: every BASIL request and response with its timestamp, kind,
// duration, transport and call id, in the record format of
// core/xml_log_format.h (which `basilctl replay` parses back).
//
// Where it goes (as Slurm's XML_LOG / XML_LOG_LOC):
//   location ""      -> <log_directory>/basil_xml.log
//   location "SLURM" -> the daemon's own log, through the sink callback
//   anything else    -> that file
// Files are size-capped: when a record would take the file past max_bytes it
// is rotated (FILE -> FILE.1 -> ... -> FILE.<keep>, the oldest dropped).
// Writes are synchronous appends (O_APPEND | O_CLOEXEC), serialised by a mutex.
//
// The file is opened (at open, rotation and reopen) without following a
// symbolic link (O_NOFOLLOW), and refused unless it is a regular file with
// one link owned by the process's effective uid: a log directory others can
// write to cannot send the records to another file. A file it creates is
// mode 0640 whatever the umask. A refused or failed reopen leaves the log
// closed (records counted as write errors) until the next reopen succeeds,
// and is told to the error sink.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "basil_proto/status.h"
#include "basild/calls/client.h"
#include "basild/core/xml_log_format.h"

namespace basild {

struct XmlLogOptions {
  bool enabled = false;
  std::string location;               // "", "SLURM" or a path
  std::string log_directory = ".";
  std::uint64_t max_bytes = 64ull << 20;  // per file
  unsigned keep = 5;                      // rotated files kept
};

// `base` with the environment applied: XML_LOG set (any value) enables the
// log, XML_LOG_LOC (when set) gives the location.
XmlLogOptions xml_log_options_from_env(XmlLogOptions base);

class XmlLog {
 public:
  // Receives whole records (several lines each) in SLURM mode.
  using Sink = std::function<void(std::string_view record)>;
  // Told why the file could not be opened again at rotation (outside the
  // log's lock, from the writing thread).
  using ErrorSink = std::function<void(const basil::Status&)>;

  // nullptr-free: a disabled log is a valid object that writes nothing. A
  // file that cannot be opened, or is refused, is an error naming the path.
  static basil::Result<std::unique_ptr<XmlLog>> open(const XmlLogOptions& options, Sink sink = {},
                                                     ErrorSink on_error = {});
  ~XmlLog();
  XmlLog(const XmlLog&) = delete;
  XmlLog& operator=(const XmlLog&) = delete;

  bool enabled() const { return options_.enabled; }
  const std::string& path() const { return path_; }  // "" unless writing a file

  void write(const XmlLogRecord& record);
  // Closes the file and opens its path again (after an outside rotation, on
  // SIGHUP); ok and nothing done when no file is written.
  basil::Status reopen();
  // A CallObserver for basild::Client that writes one record per event.
  CallObserver observer();
  // Write errors since open (the log never stops the daemon).
  std::uint64_t write_errors() const { return write_errors_; }

 private:
  XmlLog(XmlLogOptions options, Sink sink, ErrorSink on_error);
  basil::Status open_file();
  basil::Status rotate();

  XmlLogOptions options_;
  Sink sink_;
  ErrorSink on_error_;
  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
  std::uint64_t write_errors_ = 0;
  std::mutex mu_;
};

// ISO 8601 UTC with microseconds, as the records carry it.
std::string format_log_time(std::chrono::system_clock::time_point t);

}  // namespace basild
