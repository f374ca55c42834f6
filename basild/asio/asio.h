// The Boost.Asio headers basild uses, in one place: the only way any part of
// basild includes Asio (basild/asio/beast.h adds Boost.Beast on top). Include
// this before any other Asio header: GCC 12 reports -Wnull-dereference inside
// Asio's inlined scheduler code (boost 1.74, scheduler.ipp, thread_info in
// compensating_work_started), which the project's warnings would turn into
// errors; the warning is silenced for Asio's own lines only.
#pragma once

#include <utility>  // Boost 1.74 awaitable.hpp uses std::exchange without it

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#pragma GCC diagnostic pop
