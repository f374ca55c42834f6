#include "tests/support/slurmctld_log.h"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <utility>

namespace basil_test {

namespace {

// "[2026-11-25T03:43:37.823] ..." -> seconds since the epoch (the log's
// clock, read as UTC: only differences are used).
std::optional<double> stamp_of(std::string_view line) {
  if (line.size() < 25 || line[0] != '[' || line[24] != ']') return std::nullopt;
  const std::string head(line.substr(1, 23));
  struct tm tm = {};
  int ms = 0;
  if (std::sscanf(head.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec, &ms) != 7)
    return std::nullopt;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<double>(::timegm(&tm)) + ms / 1000.0;
}

// The word after `key` up to a blank, or "" when `key` is not in `text`.
std::string word_after(std::string_view text, std::string_view key) {
  const auto at = text.find(key);
  if (at == std::string_view::npos) return "";
  const auto from = at + key.size();
  const auto end = text.find(' ', from);
  return std::string(text.substr(from, end == std::string_view::npos ? std::string_view::npos : end - from));
}

// One line of the log: its time and what follows the stamp.
struct Line {
  double at;
  std::string_view msg;
};

// Each stamped line of `log`, in order, to `each`.
template <typename Each>
void for_each_line(std::string_view log, Each&& each) {
  while (!log.empty()) {
    const auto nl = log.find('\n');
    const std::string_view line = log.substr(0, nl);
    log = nl == std::string_view::npos ? std::string_view() : log.substr(nl + 1);
    if (const auto t = stamp_of(line)) each(Line{*t, line.substr(std::min<std::size_t>(line.size(), 26))});
  }
}

// The job a start line starts on one node, and that node; nothing for other
// lines and for a start on several nodes.
std::optional<std::pair<std::string, std::string>> one_node_start(std::string_view msg) {
  std::string job, node;
  if (msg.starts_with("sched: Allocate ")) {
    job = word_after(msg, "JobId=");
    node = word_after(msg, "NodeList=");
  } else if (msg.starts_with("sched/backfill: _start_job: Started ")) {
    job = word_after(msg, "JobId=");
    node = word_after(msg, " on ");
  } else {
    return std::nullopt;
  }
  if (job.empty() || node.empty() || node.find_first_of("[,") != std::string::npos) return std::nullopt;
  return std::make_pair(job, node);
}

// The job whose end a line logs, or "".
std::string ended_job(std::string_view msg) {
  if (msg.find("_job_complete: ") == std::string_view::npos || !msg.ends_with(" done")) return "";
  return word_after(msg, "JobId=");
}

// The job whose PrologSlurmctld's end slurmctld has taken, or "".
std::string configured_job(std::string_view msg) {
  if (!msg.starts_with("prolog_running_decr: Configuration for JobId=") || !msg.ends_with(" is complete")) return "";
  return word_after(msg, "JobId=");
}

// For each job started on one node, the time from its start to the first
// line `job_of` names it in (once), in ms, in the order of those lines.
template <typename JobOf>
std::vector<double> ms_from_one_node_start(std::string_view log, JobOf&& job_of) {
  std::map<std::string, double> started;  // job -> when it got its one node
  std::vector<double> out;
  for_each_line(log, [&](const Line& l) {
    if (const auto start = one_node_start(l.msg)) {
      started[start->first] = l.at;
      return;
    }
    const std::string job = job_of(l.msg);
    if (job.empty()) return;
    if (const auto it = started.find(job); it != started.end()) {
      out.push_back((l.at - it->second) * 1000.0);
      started.erase(it);
    }
  });
  return out;
}

}  // namespace

std::vector<double> freed_node_waits_ms(std::string_view log) {
  std::map<std::string, double> submitted;     // job -> when
  std::map<std::string, std::string> node_of;  // job -> its one node
  std::map<std::string, double> freed;         // node -> when its last job ended
  std::vector<double> waits;
  for_each_line(log, [&](const Line& l) {
    if (l.msg.find("_slurm_rpc_submit_batch_job: ") != std::string_view::npos) {
      submitted[word_after(l.msg, "JobId=")] = l.at;
      return;
    }
    if (const std::string job = ended_job(l.msg); !job.empty()) {
      if (const auto it = node_of.find(job); it != node_of.end()) freed[it->second] = l.at;
      return;
    }
    const auto start = one_node_start(l.msg);
    if (!start) return;
    const auto& [job, node] = *start;
    node_of[job] = node;
    const auto free_at = freed.find(node);
    const auto sub = submitted.find(job);
    if (free_at != freed.end() && sub != submitted.end() && sub->second <= free_at->second)
      waits.push_back((l.at - free_at->second) * 1000.0);
    if (free_at != freed.end()) freed.erase(free_at);
  });
  return waits;
}

std::vector<double> node_hold_ms(std::string_view log) { return ms_from_one_node_start(log, ended_job); }

std::vector<double> configuring_ms(std::string_view log) { return ms_from_one_node_start(log, configured_job); }

}  // namespace basil_test
