// libslurm as basil-slurm's children load it (slurm/libslurm.h): by the
// SONAME of the build's libslurm, every call found, and a clear reason
// when the library or a call is missing.
#include "slurm/libslurm.h"

#include <gtest/gtest.h>

#include <string>

namespace basild::slurm {
namespace {

TEST(LibslurmTest, TheBuildsSonameLoadsWithEveryCallTheChildrenMake) {
  std::string error;
  const Libslurm* api = load_libslurm(error);
  ASSERT_NE(api, nullptr) << error;
  EXPECT_EQ(load_libslurm(error), api);  // once per process
  EXPECT_NE(api->init, nullptr);
  EXPECT_NE(api->load_job, nullptr);
  EXPECT_NE(api->sprint_job_info, nullptr);
  EXPECT_NE(api->init_job_desc_msg, nullptr);
  EXPECT_NE(api->update_job2, nullptr);
  EXPECT_NE(api->notify_job, nullptr);
  EXPECT_NE(api->complete_job, nullptr);
  // The loaded library answers as libslurm does: its own text for its
  // own error number, which needs no configuration.
  ASSERT_NE(api->strerror, nullptr);
  EXPECT_STREQ(api->strerror(ESLURM_INVALID_JOB_ID), "Invalid job id specified");
  EXPECT_NE(api->get_errno, nullptr);
}

TEST(LibslurmTest, ALibraryThatCannotBeLoadedIsNamedWithTheLoadersReason) {
  std::string error;
  EXPECT_EQ(open_libslurm("libbasil-no-such-library.so.0", error), std::nullopt);
  EXPECT_NE(error.find("cannot load libbasil-no-such-library.so.0: "), std::string::npos) << error;
  EXPECT_NE(error.find("No such file"), std::string::npos) << error;
}

TEST(LibslurmTest, ALibraryWithoutSlurmsCallsIsRefusedNamingTheFirstMissing) {
  std::string error;
  EXPECT_EQ(open_libslurm("libm.so.6", error), std::nullopt);
  EXPECT_EQ(error, "libm.so.6 has no slurm_init");
}

}  // namespace
}  // namespace basild::slurm
