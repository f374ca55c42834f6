// Boost.Asio and Boost.Beast for the control socket, included once here.
// GCC 12 reports -Wnull-dereference inside Asio's scheduler once inlined
// (thread_info in compensating_work_started); the warning is about Boost's
// code, not ours, so it is silenced for these headers only.
#pragma once

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#pragma GCC diagnostic pop
