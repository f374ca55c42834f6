// Every job-table source asked at once, for the reconcile runner's cycle
// and the switch runner's poll alike.
#pragma once

#include <vector>

#include "basil_proto/status.h"
#include "basild/asio/asio.h"
#include "basild/core/job_table.h"

namespace basild {

using Listing = basil::Result<std::vector<ListedJob>>;

// Each source's listing (or why it has none), in the sources' order, once
// every source has answered.
Awaitable<std::vector<Listing>> list_jobs(boost::asio::io_context& io, std::vector<JobSourcePort*> sources);

}  // namespace basild
