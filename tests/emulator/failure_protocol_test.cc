// Every FAILURE the emulator writes answers in its request's protocol, as a
// strict client (Slurm's select/alps) demands: "Version mismatch: expected
// 1.3, but got ..." ends its controller. Protocol "" only for a request whose
// root start tag could not be read.
#include <gtest/gtest.h>

#include <string>

#include "basil_proto/codec.h"
#include "tests/emulator/emulator_fixture.h"
#include "tests/support/request_kinds.h"

namespace {

using namespace emulator_testing;

// The request cut right after its root start tag, followed by a stray '<':
// never well-formed, but its envelope is readable.
std::string broken_after_root(const std::string& xml) {
  const auto root = xml.find("<BasilRequest");
  auto end = xml.find('>', root);
  std::string head = xml.substr(0, end);
  if (!head.empty() && head.back() == '/') head.pop_back();
  return head + "><";
}

class EmulatorFailureProtocolTest : public EmulatorTest {
 protected:
  // What a strict client checks first: the answer decodes, is a FAILURE with
  // class and source, and carries `protocol`.
  basil::Response expect_failure_in(const std::string& answer, const std::string& protocol, const std::string& what) {
    auto d = basil::decode_response(answer);
    EXPECT_TRUE(d) << what << ": " << d.status().to_string() << "\n" << answer;
    if (!d) return {};
    EXPECT_FALSE(d->ok()) << what;
    EXPECT_EQ(d->protocol, protocol) << what << "\n" << answer;
    EXPECT_TRUE(d->error_class.has_value()) << what;
    EXPECT_TRUE(d->error_source.has_value()) << what;
    return *d;
  }
};

TEST_F(EmulatorFailureProtocolTest, ARequestThatDoesNotDecodeIsAnsweredInItsProtocol) {
  init("tds-8");
  for (const auto& k : basil::testing::every_request_kind()) {
    Ran r = emu("", broken_after_root(k.xml));
    EXPECT_EQ(r.rc, 0);
    const auto d = expect_failure_in(r.out, k.protocol, k.name);
    EXPECT_EQ(d.error_source, basil::ErrorSource::kParser) << k.name;
    EXPECT_EQ(d.method, k.method) << k.name;
  }
}

TEST_F(EmulatorFailureProtocolTest, TheVersionMismatchCarriesTheRequestsProtocol) {
  init("tds-8", "--cle 2.2");  // engine 1.2.0: protocols 1.0 and 1.1 only
  for (const auto& k : basil::testing::every_request_kind()) {
    if (k.protocol == "1.0" || k.protocol == "1.1") continue;
    Ran r = emu("", k.xml);
    const auto d = expect_failure_in(r.out, k.protocol, k.name);
    ASSERT_FALSE(d.messages.empty());
    EXPECT_EQ(d.messages[0].text, "BASIL version mismatch: us=1.1,1.0, them=" + k.protocol);
  }
  // A protocol the codec itself does not speak: refused by the decoder, still echoed.
  for (const std::string p : {"1.7", "2.0", "banana"}) {
    Ran r = emu("", "<BasilRequest protocol=\"" + p + "\" method=\"QUERY\" type=\"ENGINE\"/>");
    const auto d = expect_failure_in(r.out, p, p);
    ASSERT_FALSE(d.messages.empty());
    EXPECT_EQ(d.messages[0].text, "BASIL version mismatch: us=1.1,1.0, them=" + p);
  }
}

TEST_F(EmulatorFailureProtocolTest, FailuresOfTheEmulatorItselfAnswerInTheRequestsProtocol) {
  const auto kinds = basil::testing::every_request_kind();
  // No state directory at all, then a directory holding no emulated system.
  for (const auto& k : kinds) {
    Ran none = sh("env -u BASIL_EMULATOR_STATE " + kBinary, k.xml);
    EXPECT_EQ(none.rc, 0);
    expect_failure_in(none.out, k.protocol, "no state: " + k.name);
    Ran empty = emu("--state '" + dir_ + "'", k.xml);
    const auto d = expect_failure_in(empty.out, k.protocol, "empty state: " + k.name);
    EXPECT_EQ(d.error_source, basil::ErrorSource::kSystem);
  }
}

TEST_F(EmulatorFailureProtocolTest, OnlyARequestWhoseRootWasNotReadGetsAnEmptyProtocol) {
  init("tds-8");
  for (const std::string bad : {"", "not xml", "<BasilRequest protocol=\"1.3\"", "<Other protocol=\"1.3\"/>"}) {
    Ran r = emu("", bad);
    expect_failure_in(r.out, "", "'" + bad + "'");
  }
}

}  // namespace

namespace {

using namespace emulator_testing;

// The tolerant decoder keeps a value it does not know as UNKNOWN; the
// emulator, like ALPS, cannot act on it and names it.
TEST_F(EmulatorTest, ARequestHoldingAnUnknownValueIsRefusedNamingTheAttribute) {
  init("tds-8");
  const std::string reserve =
      "<BasilRequest protocol=\"1.3\" method=\"RESERVE\"><ReserveParamArray user_name=\"a\" batch_id=\"1\">"
      "<ReserveParam architecture=\"XT\" width=\"1\"><MemoryParamArray><MemoryParam type=\"FOO\" size_mb=\"10\"/>"
      "</MemoryParamArray></ReserveParam></ReserveParamArray></BasilRequest>";
  Ran r = emu("", reserve);
  const auto d = basil::decode_response(r.out);
  ASSERT_TRUE(d) << r.out;
  EXPECT_FALSE(d->ok());
  EXPECT_EQ(d->protocol, "1.3");
  EXPECT_EQ(d->method, basil::Method::kReserve);
  EXPECT_EQ(d->error_class, basil::ErrorClass::kPermanent);
  EXPECT_EQ(d->error_source, basil::ErrorSource::kSyntax);
  EXPECT_NE(text(*d).find("MemoryParam@type"), std::string::npos) << text(*d);
  EXPECT_EQ(emu("show").out.find("reservation 1"), std::string::npos) << "nothing was reserved";
}

}  // namespace

namespace {

using namespace emulator_testing;

// A request part the dialect cannot honour is refused, naming it, never
// dropped: accelerators before 1.2 (basild's encoder refuses to write them,
// EncoderTest.RefusesAccelParamBeforeOnePointTwo), nppcu before 1.3.
TEST_F(EmulatorTest, ARequestPartTheDialectCannotHonourIsRefusedNotDropped) {
  init("xk7-gpu");  // CLE 4.1, GPUs: protocol 1.1 is answered in 1.1+
  const auto reserve = [](const std::string& protocol, const std::string& param_attrs, const std::string& children) {
    return "<BasilRequest protocol=\"" + protocol + "\" method=\"RESERVE\"><ReserveParamArray user_name=\"a\">"
           "<ReserveParam architecture=\"XT\" width=\"1\"" + param_attrs + ">" + children +
           "</ReserveParam></ReserveParamArray></BasilRequest>";
  };
  const std::string gpu = "<AccelParamArray><AccelParam type=\"GPU\"/></AccelParamArray>";
  for (const auto& [xml, part] : std::vector<std::pair<std::string, std::string>>{
           {reserve("1.0", "", gpu), "AccelParam"},
           {reserve("1.1", "", gpu), "AccelParam"},
           {reserve("1.2", " nppcu=\"1\"", ""), "nppcu"}}) {
    Ran r = emu("", xml);
    const auto d = basil::decode_response(r.out);
    ASSERT_TRUE(d) << r.out;
    EXPECT_FALSE(d->ok()) << xml;
    EXPECT_EQ(d->error_class, basil::ErrorClass::kPermanent) << xml;
    EXPECT_NE(text(*d).find(part), std::string::npos) << text(*d);
  }
  Ran inv = emu("show");
  EXPECT_EQ(inv.out.find("reservation 1"), std::string::npos) << "nothing was reserved:\n" << inv.out;
  // The same accelerator request at 1.2 is carried out.
  Ran ok = emu("", reserve("1.2", "", gpu));
  const auto d = basil::decode_response(ok.out);
  ASSERT_TRUE(d) << ok.out;
  EXPECT_TRUE(d->ok()) << ok.out;
}

}  // namespace

namespace {

using namespace emulator_testing;

// A method or part the answer's dialect has no word for is refused before
// anything changes, as RESERVE's parts are: PERMANENT, SYNTAX, "ALPS error:
// request part not in BASIL <dialect>: <part> (<dialects that have it>)".
// Before, SWITCH at protocol 1.0 or 1.1 suspended the reservation and then
// answered PERMANENT/INTERNAL "emulator could not encode its answer", and
// QUERY STATUS and SUMMARY below their dialects answered INTERNAL too.
class DialectRefusalTest : public EmulatorFailureProtocolTest {
 protected:
  void expect_refused(const std::string& request, const std::string& protocol, basil::Method method,
                      const std::string& dialect, const std::string& part) {
    Ran r = emu("", request);
    EXPECT_EQ(r.rc, 0);
    const auto d = expect_failure_in(r.out, protocol, part + " at " + protocol);
    EXPECT_EQ(d.method, method) << r.out;
    EXPECT_EQ(d.error_class, basil::ErrorClass::kPermanent) << r.out;
    EXPECT_EQ(d.error_source, basil::ErrorSource::kSyntax) << r.out;
    EXPECT_EQ(text(d), "ALPS error: request part not in BASIL " + dialect + ": " + part) << r.out;
    EXPECT_EQ(reservations(), before_) << "refused, yet " << part << " at " << protocol << " changed a reservation";
  }
  // The reservation lines of `show`.
  std::string reservations() {
    const std::string all = emu("show").out;
    std::string out;
    for (std::size_t at = all.find("\nreservation "); at != std::string::npos; at = all.find("\nreservation ", at + 1))
      out += all.substr(at + 1, all.find('\n', at + 1) - at);
    return out;
  }

  std::string before_;
};

TEST_F(DialectRefusalTest, SwitchStatusAndSummaryOutsideTheirDialectsAreRefusedAndChangeNothing) {
  for (const std::string& cle : basil::cle_release_names()) {
    SCOPED_TRACE("CLE " + cle);
    TearDown();
    SetUp();
    init("tds-8", "--cle " + cle);
    ASSERT_EQ(emu("reserve --user bob --width 2 --batch-id 7 --pagg 5").rc, 0);
    ASSERT_EQ(emu("app start --resid 1").rc, 0);
    before_ = reservations();
    ASSERT_NE(before_.find("reservation 1 "), std::string::npos);
    const basil::CleRelease release = *basil::cle_release(cle);
    for (const std::string p : {"1.0", "1.1", "1.2"}) {
      const auto d = basil::dialect_for(release.engine_version, p);
      if (!d) continue;  // a version mismatch, answered as such
      const std::string id(basil::dialect_id(*d));
      if (p != "1.2") {
        for (const char* action : {"OUT", "IN"})
          expect_refused("<BasilRequest protocol=\"" + p +
                             "\" method=\"SWITCH\"><ReservationArray>"
                             "<Reservation reservation_id=\"1\" action=\"" +
                             std::string(action) + "\"/></ReservationArray></BasilRequest>",
                         p, basil::Method::kSwitch, id, "SWITCH (1.2 onwards)");
        expect_refused("<BasilRequest protocol=\"" + p +
                           "\" method=\"QUERY\" type=\"STATUS\"><ReservationArray>"
                           "<Reservation reservation_id=\"1\"/></ReservationArray></BasilRequest>",
                       p, basil::Method::kQuery, id, "QUERY STATUS (1.2 onwards)");
      }
      expect_refused("<BasilRequest protocol=\"" + p + "\" method=\"QUERY\" type=\"SUMMARY\"/>", p,
                     basil::Method::kQuery, id, "QUERY SUMMARY (1.3 onwards)");
    }
    if (basil::dialect_for(release.engine_version, "1.2")) {
      basil::StatusQuery q;
      q.reservation_ids = {1};
      const auto status = ask(basil::Dialect::k1_2, q);
      ASSERT_TRUE(status.ok()) << text(status);
      EXPECT_EQ(std::get<basil::StatusInfo>(status.body).reservations.at(0).status, basil::ItemStatus::kRun);
    }
  }
}

}  // namespace
