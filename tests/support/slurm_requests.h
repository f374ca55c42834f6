// The BASIL requests a Slurm 17.11 select/alps controller and its job steps
// send, written as that Slurm writes them: QUERY ENGINE at protocol 1.0
// (slurmctld at start, slurmstepd before CONFIRM and again at the end); a
// full QUERY INVENTORY before every scheduling pass and one RESERVE per job
// at the negotiated protocol; CONFIRM at 1.0 with job_name and admin_cookie
// (never pagg_id); RELEASE at the negotiated protocol, repeated while it
// fails. Every call runs apbasil with no arguments and discards its stderr.
#pragma once

#include <cstdint>
#include <string>

namespace basil::testing::slurm {

inline std::string engine() {
  return "<?xml version=\"1.0\"?>\n<BasilRequest protocol=\"1.0\" method=\"QUERY\" type=\"ENGINE\"/>\n";
}

inline std::string inventory(const std::string& protocol = "1.3") {
  return "<?xml version=\"1.0\"?>\n<BasilRequest protocol=\"" + protocol + "\" method=\"QUERY\" type=\"INVENTORY\"/>\n";
}

// One ReserveParam as Slurm writes it for 1.3: architecture width depth nppn nppcu.
inline std::string reserve(const std::string& job_id, const std::string& user, std::uint64_t width,
                           std::uint32_t nppn = 0, const std::string& protocol = "1.3") {
  std::string p = "  <ReserveParam architecture=\"XT\" width=\"" + std::to_string(width) + "\" depth=\"1\" nppn=\"" +
                  std::to_string(nppn) + "\"" + (protocol == "1.3" ? " nppcu=\"0\"" : "") + "/>\n";
  return "<?xml version=\"1.0\"?>\n<BasilRequest protocol=\"" + protocol + "\" method=\"RESERVE\">\n" +
         " <ReserveParamArray user_name=\"" + user + "\" batch_id=\"" + job_id + "\">\n" + p +
         " </ReserveParamArray>\n</BasilRequest>\n";
}

inline std::string confirm(std::uint64_t reservation_id, const std::string& job_id, std::uint64_t pagg) {
  return "<?xml version=\"1.0\"?>\n<BasilRequest protocol=\"1.0\" method=\"CONFIRM\" job_name=\"" + job_id +
         "\" reservation_id=\"" + std::to_string(reservation_id) + "\" admin_cookie=\"" + std::to_string(pagg) +
         "\"/>\n";
}

inline std::string release(std::uint64_t reservation_id, const std::string& protocol = "1.3") {
  return "<?xml version=\"1.0\"?>\n<BasilRequest protocol=\"" + protocol + "\" method=\"RELEASE\" reservation_id=\"" +
         std::to_string(reservation_id) + "\"/>\n";
}

}  // namespace basil::testing::slurm
