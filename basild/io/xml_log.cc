#include "basild/io/xml_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "process/write_all.h"

namespace basild {

namespace {

basil::Status refused(const std::string& path, const std::string& why) {
  return basil::Status(basil::Code::kTransport, "refusing XML log " + path + ": " + why);
}

// Opens `path` for appending, never through a symbolic link: created
// 0640 when it does not exist (the umask aside), else accepted only as a
// regular file with one link that the effective uid owns. O_NONBLOCK on the
// open only: a FIFO planted there must not block the daemon.
basil::Result<int> open_append(const std::string& path) {
  constexpr int kFlags = O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK;
  int fd = -1;
  bool created = false;
  for (int attempt = 0; attempt < 3 && fd < 0; ++attempt) {
    fd = ::open(path.c_str(), kFlags | O_CREAT | O_EXCL, 0640);
    if (fd >= 0) {
      created = true;
      break;
    }
    if (errno != EEXIST) break;
    fd = ::open(path.c_str(), kFlags);
    if (fd < 0 && errno != ENOENT) break;  // ENOENT: removed meanwhile, try again
  }
  if (fd < 0) {
    const int err = errno;
    if (err == ELOOP) return refused(path, "it is a symbolic link");
    return basil::Status(basil::Code::kTransport, "cannot open XML log " + path + ": " + std::strerror(err));
  }
  auto fail = [&](const std::string& why) {
    ::close(fd);
    return refused(path, why);
  };
  struct stat st {};
  if (::fstat(fd, &st) != 0) return fail(std::string("fstat: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return fail("it is not a regular file");
  if (st.st_uid != ::geteuid()) {
    return fail("it is owned by uid " + std::to_string(st.st_uid) + ", not by basild's uid " +
                std::to_string(::geteuid()));
  }
  if (st.st_nlink != 1) return fail("it has " + std::to_string(st.st_nlink) + " hard links");
  if (created && ::fchmod(fd, 0640) != 0) return fail(std::string("fchmod 0640: ") + std::strerror(errno));
  if (::fcntl(fd, F_SETFL, O_WRONLY | O_APPEND) != 0) return fail(std::string("fcntl: ") + std::strerror(errno));
  return fd;
}

}  // namespace

XmlLogOptions xml_log_options_from_env(XmlLogOptions base) {
  if (std::getenv("XML_LOG") != nullptr) base.enabled = true;
  if (const char* loc = std::getenv("XML_LOG_LOC"); loc != nullptr) base.location = loc;
  return base;
}

std::string format_log_time(std::chrono::system_clock::time_point t) {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
  const std::time_t secs = static_cast<std::time_t>(us / 1'000'000);
  std::tm tm{};
  ::gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long long>(us % 1'000'000));
  return buf;
}

XmlLog::XmlLog(XmlLogOptions options, Sink sink, ErrorSink on_error)
    : options_(std::move(options)), sink_(std::move(sink)), on_error_(std::move(on_error)) {}

XmlLog::~XmlLog() {
  if (fd_ >= 0) ::close(fd_);
}

basil::Result<std::unique_ptr<XmlLog>> XmlLog::open(const XmlLogOptions& options, Sink sink, ErrorSink on_error) {
  std::unique_ptr<XmlLog> log(new XmlLog(options, std::move(sink), std::move(on_error)));
  if (!options.enabled) return log;
  if (options.location == "SLURM") {
    if (!log->sink_) {
      return basil::Status(basil::Code::kInternal, "XML_LOG_LOC=SLURM but no daemon log sink");
    }
    return log;
  }
  log->path_ = options.location.empty()
                   ? (options.log_directory.empty() ? std::string(".") : options.log_directory) +
                         "/basil_xml.log"
                   : options.location;
  if (auto st = log->open_file(); !st) return st;
  return log;
}

basil::Status XmlLog::open_file() {
  auto fd = open_append(path_);
  if (!fd) return fd.status();
  fd_ = *fd;
  struct stat st {};
  size_ = ::fstat(fd_, &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
  return basil::Status::ok();
}

basil::Status XmlLog::rotate() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  size_ = 0;  // closed: no further rotation until a reopen succeeds
  if (options_.keep == 0) {
    ::unlink(path_.c_str());
  } else {
    for (unsigned i = options_.keep; i > 1; --i) {
      const auto from = path_ + "." + std::to_string(i - 1);
      const auto to = path_ + "." + std::to_string(i);
      ::rename(from.c_str(), to.c_str());  // missing ones are fine
    }
    ::rename(path_.c_str(), (path_ + ".1").c_str());
  }
  return open_file();
}

basil::Status XmlLog::reopen() {
  if (!options_.enabled || path_.empty()) return basil::Status::ok();
  std::lock_guard lock(mu_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  size_ = 0;
  return open_file();
}

void XmlLog::write(const XmlLogRecord& record) {
  if (!options_.enabled) return;
  const std::string text = format_xml_log_record(record);
  std::unique_lock lock(mu_);
  if (sink_ && path_.empty()) {
    sink_(text);
    return;
  }
  if (size_ > 0 && size_ + text.size() > options_.max_bytes) {
    if (auto st = rotate(); !st) {
      ++write_errors_;
      if (on_error_) {
        lock.unlock();
        on_error_(st);
      }
      return;
    }
  }
  if (fd_ < 0) {
    ++write_errors_;
    return;
  }
  std::size_t written = 0;
  if (!basil::process::write_all(fd_, text, &written)) ++write_errors_;
  size_ += written;
}

CallObserver XmlLog::observer() {
  return [this](const CallEvent& ev) {
    if (!enabled()) return;
    XmlLogRecord r;
    r.time = format_log_time(ev.when);
    r.call_id = ev.call_id;
    r.kind = std::string(call_kind_name(ev.kind));
    r.caller = std::string(caller_name(ev.caller));
    r.transport = std::string(ev.transport);
    r.body = std::string(ev.xml);
    if (ev.phase == CallEvent::Phase::kResponse) {
      r.direction = XmlLogRecord::Direction::kResponse;
      r.duration_ms = static_cast<double>(ev.transport_time.count()) / 1e6;
      r.status = ev.status != nullptr ? std::string(basil::code_name(ev.status->code())) : "ok";
      r.diagnostics = std::string(ev.diagnostics);
    }
    write(r);
  };
}

}  // namespace basild
