// basilctl's command line and the HTTP call of each command: pure.
#include "basild/ctl/invocation.h"

#include <gtest/gtest.h>

namespace basilctl {
namespace {

Invocation parse_ok(const std::vector<std::string>& argv, std::string_view env = "") {
  auto r = parse_invocation(argv, env);
  EXPECT_TRUE(r.invocation) << r.error;
  return r.invocation ? *r.invocation : Invocation{};
}

std::string parse_error(const std::vector<std::string>& argv) {
  auto r = parse_invocation(argv, "");
  EXPECT_FALSE(r.invocation);
  return r.error;
}

HttpCall plan_ok(const std::vector<std::string>& argv) {
  auto inv = parse_ok(argv);
  auto p = plan_call(inv);
  EXPECT_TRUE(p.call) << p.error;
  return p.call ? *p.call : HttpCall{};
}

std::string plan_error(const std::vector<std::string>& argv) {
  auto inv = parse_ok(argv);
  auto p = plan_call(inv);
  EXPECT_FALSE(p.call);
  return p.error;
}

TEST(InvocationTest, SocketFromDefaultEnvironmentAndOption) {
  EXPECT_EQ(parse_ok({"health"}).socket, "/run/basild/control.sock");
  EXPECT_EQ(parse_ok({"health"}, "/tmp/env.sock").socket, "/tmp/env.sock");
  EXPECT_EQ(parse_ok({"--socket", "/tmp/opt.sock", "health"}, "/tmp/env.sock").socket,
            "/tmp/opt.sock");
  EXPECT_EQ(parse_ok({"health", "--socket=/tmp/eq.sock"}).socket, "/tmp/eq.sock");
}

TEST(InvocationTest, GlobalOptionsAnywhere) {
  auto inv = parse_ok({"stats", "--json", "--timeout", "2.5"});
  EXPECT_EQ(inv.command, "stats");
  EXPECT_TRUE(inv.json);
  EXPECT_EQ(inv.timeout.count(), 2500);
  EXPECT_TRUE(inv.args.empty());
  EXPECT_TRUE(parse_ok({"--help"}).help);
}

TEST(InvocationTest, VersionNeedsNoCommand) {
  EXPECT_TRUE(parse_ok({"--version"}).version);
  EXPECT_TRUE(parse_ok({"health", "--version"}).version);
  EXPECT_FALSE(parse_ok({"health"}).version);
}

TEST(InvocationTest, UnknownOptionsAndCommandsAreNamed) {
  EXPECT_NE(parse_error({"--sokcet", "x", "health"}).find("'--sokcet'"), std::string::npos);
  EXPECT_NE(parse_error({"helth"}).find("'helth'"), std::string::npos);
  EXPECT_NE(parse_error({}).find("no command"), std::string::npos);
  EXPECT_NE(parse_error({"health", "--socket"}).find("needs a value"), std::string::npos);
  EXPECT_NE(parse_error({"health", "--timeout", "soon"}).find("--timeout"), std::string::npos);
  EXPECT_NE(parse_error({"health", "--timeout", "-1"}).find("--timeout"), std::string::npos);
  EXPECT_NE(plan_error({"health", "--verbose"}).find("'--verbose'"), std::string::npos);
}

TEST(InvocationTest, DecodeKeepsItsArguments) {
  auto inv = parse_ok({"decode", "--strict", "-"});
  EXPECT_EQ(inv.command, "decode");
  EXPECT_EQ(inv.args, (std::vector<std::string>{"--strict", "-"}));
  EXPECT_FALSE(is_control_command("decode"));
}

TEST(InvocationTest, GetCommandsMapToRoutes) {
  struct Case {
    const char* cmd;
    const char* target;
  };
  for (auto c : {Case{"health", "/v1/health"}, Case{"stats", "/v1/stats"},
                 Case{"metrics", "/metrics"}, Case{"inventory", "/v1/inventory"},
                 Case{"summary", "/v1/summary"}, Case{"nodestat", "/v1/nodestat"},
                 Case{"reservations", "/v1/reservations"},
                 Case{"jobs", "/v1/jobs"}, Case{"events", "/v1/events"},
                 Case{"orphans", "/v1/orphans"}}) {
    auto call = plan_ok({c.cmd});
    EXPECT_EQ(call.method, "GET") << c.cmd;
    EXPECT_EQ(call.target, c.target) << c.cmd;
    EXPECT_EQ(call.raw_output, std::string(c.cmd) == "metrics") << c.cmd;
  }
}

TEST(InvocationTest, QueryParametersAreEncoded) {
  auto call = plan_ok({"events", "--limit", "5", "--since", "2024-01-01 10:00", "user=a&b"});
  EXPECT_EQ(call.target, "/v1/events?limit=5&since=2024-01-01%2010%3A00&user=a%26b");
  EXPECT_NE(plan_error({"events", "--limit", "many"}).find("--limit"), std::string::npos);
  EXPECT_NE(plan_error({"stats", "oops"}).find("'oops'"), std::string::npos);
  EXPECT_NE(plan_error({"stats", "--limit", "3"}).find("'--limit'"), std::string::npos);
}

TEST(InvocationTest, ReserveBuildsJsonFromPairs) {
  auto call = plan_ok({"reserve", "batch_id=1234", "user=alice", "width:=32", "nodes:=[1,2]"});
  EXPECT_EQ(call.method, "POST");
  EXPECT_EQ(call.target, "/v1/reserve");
  EXPECT_EQ(call.content_type, "application/json");
  auto body = nlohmann::json::parse(call.body);
  EXPECT_EQ(body["batch_id"], "1234");
  EXPECT_EQ(body["user"], "alice");
  EXPECT_EQ(body["width"], 32);
  EXPECT_EQ(body["nodes"], nlohmann::json::array({1, 2}));
  EXPECT_NE(plan_error({"reserve", "width:=notjson"}).find("not JSON"), std::string::npos);
  EXPECT_NE(plan_error({"reserve"}).find("needs arguments"), std::string::npos);
  EXPECT_NE(plan_error({"reserve", "stray"}).find("'stray'"), std::string::npos);
  EXPECT_NE(plan_error({"reserve", "user=\xff"}).find("UTF-8"), std::string::npos);
}

TEST(InvocationTest, ConfirmAndReleaseShortcuts) {
  auto c = nlohmann::json::parse(plan_ok({"confirm", "42", "987654321"}).body);
  EXPECT_EQ(c["reservation_id"], 42);
  EXPECT_EQ(c["pagg_id"], 987654321);
  auto r = plan_ok({"release", "42"});
  EXPECT_EQ(r.target, "/v1/release");
  EXPECT_EQ(nlohmann::json::parse(r.body)["reservation_id"], 42);
  EXPECT_NE(plan_error({"release", "1", "2"}).find("'2'"), std::string::npos);
  auto whole = plan_ok({"release", "--body", R"({"reservation_id":7,"force":true})"});
  EXPECT_EQ(nlohmann::json::parse(whole.body)["force"], true);
  EXPECT_NE(plan_error({"release", "--body", "{}", "1"}).find("cannot be combined"),
            std::string::npos);
  EXPECT_NE(plan_error({"release", "--body", "[1]"}).find("not a JSON object"), std::string::npos);
}

TEST(InvocationTest, RawReadsStdinAndTakesNoArguments) {
  auto call = plan_ok({"raw"});
  EXPECT_EQ(call.method, "POST");
  EXPECT_EQ(call.target, "/v1/basil");
  EXPECT_TRUE(call.stdin_body);
  EXPECT_TRUE(call.raw_output);
  EXPECT_NE(plan_error({"raw", "file.xml"}).find("stdin"), std::string::npos);
}

}  // namespace
}  // namespace basilctl
