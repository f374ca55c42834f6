#include "basild/daemon/job_listing.h"

#include <memory>
#include <optional>

namespace basild {

namespace asio = boost::asio;

Awaitable<std::vector<Listing>> list_jobs(asio::io_context& io, std::vector<JobSourcePort*> sources) {
  struct Gather {
    explicit Gather(asio::io_context& io) : done(io) {}
    asio::steady_timer done;
    std::size_t left = 0;
    std::vector<std::optional<Listing>> results;
  };
  auto g = std::make_shared<Gather>(io);
  g->left = sources.size();
  g->results.resize(sources.size());
  g->done.expires_at(asio::steady_timer::time_point::max());
  for (std::size_t i = 0; i < sources.size(); ++i) {
    sources[i]->fetch([g, i](Listing r) {
      g->results[i].emplace(std::move(r));
      if (--g->left == 0) g->done.cancel();
    });
  }
  if (g->left > 0) {
    boost::system::error_code ec;
    co_await g->done.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  std::vector<Listing> out;
  out.reserve(sources.size());
  for (auto& r : g->results) out.push_back(std::move(*r));
  co_return out;
}

}  // namespace basild
