/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_HTTP_LISTEN_H
#define AUTOPROF_HTTP_LISTEN_H

#include <stdbool.h>

/*
 * The HTTP server's listening socket, bound here rather than by libmicrohttpd, which reports no
 * errno for a failed bind.
 * addr: "[v6]:port", "v4:port", "name:port" or ":port" (every address, dual stack where the host
 * has IPv6). Returns a listening, non-blocking socket the caller owns, or a negative errno
 * (-EINVAL for a malformed address, -EADDRINUSE, ...).
 */
int http_listen__open(const char *addr);
/* Whether the socket is bound to a loopback address (127.0.0.0/8, ::1, ::ffff:127.x.x.x). */
bool http_listen__loopback(int fd);

#endif
