// Boost.Beast for the control socket's server and client, on top of the Asio
// shim (basild/asio/asio.h), with the same -Wnull-dereference silencing for
// Boost's own lines. Apart from asio.h so that the transports and the daemon,
// which speak no HTTP, do not compile Beast.
#pragma once

#include "basild/asio/asio.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#pragma GCC diagnostic pop
