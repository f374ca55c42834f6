// How a job's tasks learn its reservation id: the AdminComment the prolog
// writes and reads back, and the variables a task inherits.
#include "slurm/reservation_env.h"
#include "tests/slurm/slurm_support.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace basild::slurm {
namespace {

TEST(ReservationEnvTest, TheCommentThePrologWritesReadsBackAsItsId) {
  EXPECT_EQ(reservation_comment(4711), "basil: reservation 4711");
  EXPECT_EQ(reservation_of_comment(reservation_comment(4711)), 4711u);
  EXPECT_EQ(reservation_of_comment(reservation_comment(9999999999999999999u)), 9999999999999999999u);
}

TEST(ReservationEnvTest, BasildsNoteAfterTheIdKeepsTheReservationReadable) {
  EXPECT_EQ(reservation_of_comment("basil: reservation 42; ALPS cannot suspend it (exclusive); basild resumed the job"),
            42u);
  for (const char* comment : {"basil: reservation 42;", "basil: reservation 42; ", "basil: reservation 42 ; x",
                              "basil: reservation x; 42", "basil: reservation ; note"})
    EXPECT_EQ(reservation_of_comment(comment), std::nullopt) << '"' << comment << '"';
}

TEST(ReservationEnvTest, AnyOtherAdminCommentNamesNoReservation) {
  for (const char* comment : {"", "basil: reservation", "basil: reservation ", "basil: reservation 0",
                              "basil: reservation 12 ", "basil: reservation 12x", "basil: reservation -3",
                              "basil: reservation 18446744073709551616", "basil: reservation 00000000000000000001",
                              "note; basil: reservation 12", "basil: ALPS refused the RESERVE: no nodes",
                              "Basil: reservation 12"})
    EXPECT_EQ(reservation_of_comment(comment), std::nullopt) << '"' << comment << '"';
}

TEST(ReservationEnvTest, ATaskInheritsTheIdOnlyWhenItNamesItsOwnJob) {
  EXPECT_EQ(inherited_reservation(from({{"BASIL_RESERVATION_ID", "12"}, {"BASIL_RESERVATION_JOB", "345"}}), "345"),
            12u);
  // Another job's (an sbatch from inside a job), or half of the pair.
  EXPECT_EQ(inherited_reservation(from({{"BASIL_RESERVATION_ID", "12"}, {"BASIL_RESERVATION_JOB", "344"}}), "345"),
            std::nullopt);
  EXPECT_EQ(inherited_reservation(from({{"BASIL_RESERVATION_ID", "12"}}), "345"), std::nullopt);
  EXPECT_EQ(inherited_reservation(from({{"BASIL_RESERVATION_JOB", "345"}}), "345"), std::nullopt);
  EXPECT_EQ(inherited_reservation(from({}), "345"), std::nullopt);
}

TEST(ReservationEnvTest, AnInheritedIdThatIsNoNumberAboveZeroIsPassedOver) {
  for (const char* id : {"", "0", "x", "12 ", " 12", "-1", "1e3", "18446744073709551616"})
    EXPECT_EQ(inherited_reservation(from({{"BASIL_RESERVATION_ID", id}, {"BASIL_RESERVATION_JOB", "345"}}), "345"),
              std::nullopt)
        << '"' << id << '"';
}

}  // namespace
}  // namespace basild::slurm
