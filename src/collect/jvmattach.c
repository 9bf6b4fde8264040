// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "jvmattach: " fmt

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../lib/log.h"
#include "jvmattach.h"

/* The request format HotSpot's attach listener reads: "1" NUL, the operation, three args. */
#define ATTACH_PROTOCOL "1"
#define ATTACH_ARGS	3
/* How often to look for the socket once the listener was asked to start. */
#define POLL_STEP_MS 20

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* A line of /proc/PID/status ("NSpid:", "SigCgt:"), the value after the tab; 0 or -errno. */
static int status_field(int pid, const char *key, char *val, size_t size)
{
	char path[64], line[512];
	size_t klen = strlen(key);
	int err = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen))
			continue;
		snprintf(val, size, "%s", line + klen + strspn(line + klen, " \t"));
		val[strcspn(val, "\n")] = '\0';
		err = 0;
		break;
	}
	fclose(f);
	return err;
}

int jvmattach__nspid(int pid)
{
	char val[256], *last;

	if (status_field(pid, "NSpid:", val, sizeof(val)))
		return pid;
	last = strrchr(val, '\t');
	return atoi(last ? last + 1 : val) ?: pid;
}

/* Whether the process has a handler for SIGQUIT: HotSpot installs one early in its start; with
 * -Xrs, or before that point, the default action (core dump) would end it. */
static int handles_sigquit(int pid)
{
	char val[64];
	unsigned long long mask;
	int err;

	err = status_field(pid, "SigCgt:", val, sizeof(val));
	if (err)
		return err;
	mask = strtoull(val, NULL, 16);
	return !!(mask & (1ULL << (SIGQUIT - 1)));
}

static int connect_to(const char *path)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	int fd, err;

	if (strlen(path) >= sizeof(addr.sun_path))
		return -ENAMETOOLONG;
	strcpy(addr.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/*
 * The listener starts when the JVM's signal handler finds the attach file at SIGQUIT: in its
 * working directory, else in its /tmp (it looks in both; the cwd may not be writable). The file
 * is removed once the socket is there, or when we give up.
 */
static int start_listener(int pid, int nspid, const char *sock, long long deadline)
{
	char trigger[2][96];
	int fd = -1, err, which;

	err = handles_sigquit(pid);
	if (err <= 0)
		return err ? err : -EAGAIN;
	snprintf(trigger[0], sizeof(trigger[0]), "/proc/%d/cwd/.attach_pid%d", pid, nspid);
	snprintf(trigger[1], sizeof(trigger[1]), "/proc/%d/root/tmp/.attach_pid%d", pid, nspid);
	for (which = 0; which < 2 && fd < 0; which++)
		fd = open(trigger[which], O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	close(fd);
	which--;
	if (kill(pid, SIGQUIT)) {
		err = -errno;
		goto out_unlink;
	}
	/* No socket in time after the signal: -XX:+DisableAttachMechanism, or a JVM too busy. */
	err = -ECONNREFUSED;
	while (now_ms() < deadline) {
		fd = connect_to(sock);
		if (fd >= 0) {
			err = fd;
			break;
		}
		if (kill(pid, 0) && errno == ESRCH) {
			err = -ESRCH;
			break;
		}
		poll(NULL, 0, POLL_STEP_MS);
	}
out_unlink:
	unlink(trigger[which]);
	return err;
}

static int send_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static int set_timeout(int fd, long long ms)
{
	struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};

	if (ms <= 0)
		return -ETIMEDOUT;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)))
		return -errno;
	return 0;
}

int jvmattach__parse_reply(const char *reply, char *out, size_t out_size)
{
	const char *nl = strchr(reply, '\n');
	char *end;
	int status;

	status = (int)strtol(reply, &end, 10);
	if (!nl || end == reply || end != nl)
		return -EBADMSG;
	if (out && out_size)
		snprintf(out, out_size, "%s", nl + 1);
	return status ? -EPROTO : 0;
}

int jvmattach__run(int pid, const char *op, const char *arg, char *out, size_t out_size,
		   int timeout_ms)
{
	long long deadline = now_ms() + timeout_ms;
	char sock[96], req[1024], reply[4096];
	size_t req_len = 0, got = 0;
	int nspid, fd, err;

	if (out && out_size)
		out[0] = '\0';
	if (kill(pid, 0) && errno == ESRCH)
		return -ESRCH;
	nspid = jvmattach__nspid(pid);
	snprintf(sock, sizeof(sock), "/proc/%d/root/tmp/.java_pid%d", pid, nspid);
	fd = connect_to(sock);
	/* No socket, or one left by an earlier JVM with this pid. */
	if (fd == -ENOENT || fd == -ECONNREFUSED)
		fd = start_listener(pid, nspid, sock, deadline);
	if (fd < 0)
		return fd;

	{
		const char *parts[2 + ATTACH_ARGS] = {ATTACH_PROTOCOL, op, arg ? arg : "", "", ""};

		for (int i = 0; i < 2 + ATTACH_ARGS; i++) {
			size_t len = strlen(parts[i]) + 1;

			if (req_len + len > sizeof(req)) {
				err = -E2BIG;
				goto out_close;
			}
			memcpy(req + req_len, parts[i], len);
			req_len += len;
		}
	}
	err = set_timeout(fd, deadline - now_ms());
	if (!err)
		err = send_all(fd, req, req_len);
	if (err)
		goto out_close;
	/* The JVM answers "STATUS\n" and the operation's output, then closes. */
	while (got < sizeof(reply) - 1) {
		ssize_t n = recv(fd, reply + got, sizeof(reply) - 1 - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = errno == EAGAIN ? -ETIMEDOUT : -errno;
			goto out_close;
		}
		if (!n)
			break;
		got += (size_t)n;
	}
	reply[got] = '\0';
	err = jvmattach__parse_reply(reply, out, out_size);
out_close:
	close(fd);
	return err;
}
