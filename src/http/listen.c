// SPDX-License-Identifier: GPL-2.0-only
/* The listening socket: see listen.h. */
#define pr_fmt(fmt) "http: " fmt

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/log.h"
#include "http/listen.h"

#define LISTEN_BACKLOG 64

/*
 * "[v6]:port", "v4:port", "name:port" or ":port" (every address). Leaves *ss zeroed for the
 * latter and fills *port.
 */
static int parse_listen(const char *listen, struct sockaddr_storage *ss, socklen_t *len,
			int *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	char host[256];
	const char *colon, *p;
	bool bracketed = false;
	size_t host_len;
	long val = 0;
	int ret;

	if (listen[0] == '[') {
		const char *close = strchr(listen, ']');

		if (!close || close[1] != ':')
			return -EINVAL;
		bracketed = true;
		colon = close + 1;
		listen++;
		host_len = (size_t)(close - listen);
	} else {
		colon = strrchr(listen, ':');
		if (!colon)
			return -EINVAL;
		host_len = (size_t)(colon - listen);
		/* An IPv6 literal must be bracketed, or its port would be ambiguous. */
		if (memchr(listen, ':', host_len))
			return -EINVAL;
	}
	if (host_len >= sizeof(host) || !colon[1] || strlen(colon + 1) > 5)
		return -EINVAL;
	for (p = colon + 1; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		val = val * 10 + (*p - '0');
	}
	if (val > 65535)
		return -EINVAL;
	*port = (int)val;
	memcpy(host, listen, host_len);
	host[host_len] = '\0';

	memset(ss, 0, sizeof(*ss));
	*len = 0;
	if (!host_len)
		return bracketed ? -EINVAL : 0;
	hints.ai_family = bracketed ? AF_INET6 : AF_UNSPEC;
	hints.ai_flags = bracketed ? AI_NUMERICHOST : 0;
	ret = getaddrinfo(host, NULL, &hints, &ai);
	if (ret) {
		pr_err("listen address %s: %s\n", host, gai_strerror(ret));
		return -EINVAL;
	}
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*len = ai->ai_addrlen;
	freeaddrinfo(ai);
	return 0;
}

static int listen_any(int port)
{
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_port = htons(port) };
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	int one = 1, zero = 0;
	int fd, ret;

	sin6.sin6_addr = in6addr_any;
	fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd >= 0) {
		/* Dual stack: IPv4 clients arrive as v4-mapped addresses. */
		if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)))
			pr_warn("cannot listen dual-stack, IPv6 only: %s\n", strerror(errno));
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (!bind(fd, (struct sockaddr *)&sin6, sizeof(sin6)))
			return fd;
		ret = -errno;
		close(fd);
		if (ret != -EADDRNOTAVAIL && ret != -EAFNOSUPPORT)
			return ret;
	} else if (errno != EAFNOSUPPORT) {
		return -errno;
	}
	/* No IPv6 on this host. */
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin))) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

/* Binds ourselves rather than through MHD, which reports no errno for a failed bind. */
int http_listen__open(const char *listen_addr)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int one = 1;
	int port, fd, ret;

	ret = parse_listen(listen_addr, &ss, &len, &port);
	if (ret)
		return ret;
	if (!len) {
		fd = listen_any(port);
		if (fd < 0)
			return fd;
	} else {
		if (ss.ss_family == AF_INET6)
			((struct sockaddr_in6 *)&ss)->sin6_port = htons(port);
		else
			((struct sockaddr_in *)&ss)->sin_port = htons(port);
		fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0)
			return -errno;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&ss, len)) {
			ret = -errno;
			goto close_fd;
		}
	}
	if (listen(fd, LISTEN_BACKLOG)) {
		ret = -errno;
		goto close_fd;
	}
	return fd;

close_fd:
	close(fd);
	return ret;
}

/* 127.0.0.0/8, ::1 or ::ffff:127.x.x.x. */
bool http_listen__loopback(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		return false;
	if (ss.ss_family == AF_INET)
		return (ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr) >> 24) == 127;
	if (ss.ss_family == AF_INET6) {
		const struct in6_addr *a = &((struct sockaddr_in6 *)&ss)->sin6_addr;

		return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return false;
}
