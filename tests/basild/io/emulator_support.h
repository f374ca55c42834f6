// Helpers for tests that run the real basil-emulator binary as apbasil.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <optional>
#include <string>

#include "basild/calls/client.h"
#include "tests/support/files.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace basild::testing {

inline std::string emulator_path() { return std::string(BASIL_BINARY_DIR) + "/emulator/basil-emulator"; }

// A fresh directory, removed when the test's process exits.
inline std::string make_temp_dir(const std::string& tag) {
  std::string dir = basil_test::scratch_dir("basild-" + tag);
  EXPECT_FALSE(dir.empty()) << "cannot make a directory for " << tag;
  return dir;
}

// Runs a shell command line, stderr with stdout (test set-up only; the code
// under test never uses a shell).
inline basil_test::Ran run_command(const std::string& cmd) {
  return basil_test::run_shell(cmd, {}, {.err = basil_test::Redirect::to_stdout()});
}

// `basil-emulator --state DIR ARGS`, expected to succeed; returns its output.
inline std::string emulator_admin(const std::string& state, const std::string& args) {
  auto r = run_command(emulator_path() + " --state " + state + " " + args);
  EXPECT_EQ(r.exit_code, 0) << args << ": " << r.out;
  return r.out;
}

// An emulated system in a temp dir.
inline std::string init_emulator(const std::string& tag, const std::string& preset = "tds-8",
                                 const std::string& cle = "") {
  const auto dir = make_temp_dir(tag);
  auto r = run_command(emulator_path() + " init --preset " + preset + " --state " + dir +
                       (cle.empty() ? "" : " --cle " + cle));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  return dir;
}

// A reservation with one application running in it, in the emulated system
// at `state`; returns the application's apid.
inline std::uint64_t start_application(const std::string& state) {
  const auto resid = emulator_admin(state, "reserve --user bob --width 1 --batch-id 77 --pagg 77");
  return std::stoull(emulator_admin(state, "app start --resid " + resid));
}

// True while `show` lists the application.
inline bool application_running(const std::string& state, std::uint64_t apid) {
  return emulator_admin(state, "show").find("application " + std::to_string(apid) + " ") != std::string::npos;
}

// An executable shell script in a temp dir.
inline std::string write_script(const std::string& tag, const std::string& body) {
  const auto dir = make_temp_dir(tag);
  const auto path = dir + "/script.sh";
  basil_test::write_file(path, "#!/bin/sh\n" + body + "\n");
  ::chmod(path.c_str(), 0755);
  return path;
}

// Runs an awaitable on `io` to completion.
template <typename T>
basil::Result<T> run_sync(boost::asio::io_context& io, Awaitable<basil::Result<T>> op) {
  std::optional<basil::Result<T>> out;
  co_spawn_result(io.get_executor(), std::move(op), [&](basil::Result<T> r) { out.emplace(std::move(r)); });
  io.restart();
  io.run();
  if (!out) return basil::Status(basil::Code::kInternal, "did not complete");
  return std::move(*out);
}

}  // namespace basild::testing
