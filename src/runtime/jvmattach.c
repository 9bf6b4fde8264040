// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "jvmattach: " fmt

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/timeconst.h"
#include "runtime/jvmattach.h"

/* The request format HotSpot's attach listener reads: "1" NUL, the operation, three args. */
#define ATTACH_PROTOCOL "1"
#define ATTACH_ARGS	3
/* How often to look for the socket once the listener was asked to start. */
#define POLL_STEP_MS 20
/* One connect(): a listener whose backlog is full is not waited on longer than this. */
#define CONNECT_TIMEOUT_MS 2000
/* The most of a reply kept (Compiler.perfmap and printflag answer in a line or two). */
#define REPLY_MAX 4096
/* The child's own deadline comes this much before the caller's, at which it is killed: it
 * says "timeout" itself when it can (a tenth of the timeout when that is shorter). */
#define CHILD_MARGIN_MS 300

static const char *const why_names[] = {
#define JVMATTACH_NAME(e, s) [JVMATTACH_##e] = s,
    JVMATTACH_WHYS(JVMATTACH_NAME)
#undef JVMATTACH_NAME
};

const char *jvmattach__why_name(enum jvmattach_why why)
{
	return (unsigned)why < JVMATTACH_NR ? why_names[why] : "error";
}

/* What /proc/PID/status says of the target, read once (through a pidfd-checked dir fd). */
struct target {
	int pid, nspid;
	uid_t uid; /* effective: what HotSpot compares the trigger's and the peer's owner with */
	gid_t gid;
	bool sigquit; /* it handles SIGQUIT */
};

/* Everything the child needs, made before fork: the child calls no allocator and no stdio
 * (another thread of the daemon may have held their locks at fork). */
struct job {
	struct target t;
	int pidfd, mntfd, rootfd, cwdfd, outfd;
	/* The target is in our mount namespace, with our root: no setns (nor CAP_SYS_ADMIN), no
	 * chroot (nor CAP_SYS_CHROOT), which is the case of every JVM on the host. */
	bool same_ns, same_root;
	long long deadline; /* the child's */
	char req[1024];
	size_t req_len;
	char trigger[2][48]; /* in its cwd, in its /tmp */
	char sock[48];
};

/* The child's answer on the pipe, then len bytes of the JVM's reply. */
struct report {
	int32_t err;
	int32_t why;
	uint32_t len;
};

static long long now_ms(void)
{
	return (long long)(now_ns() / NSEC_PER_MSEC);
}

static int left_ms(long long deadline, int cap)
{
	long long left = deadline - now_ms();

	if (left < 0)
		return 0;
	return cap && left > cap ? cap : (int)left;
}

static int pidfd_open(int pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static int pidfd_signal(int pidfd, int sig)
{
	return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

/* Whether the process of pidfd has exited (a pidfd polls readable then). Needs no privilege,
 * unlike a signal 0 to another user's process. */
static bool exited(int pidfd)
{
	struct pollfd p = {.fd = pidfd, .events = POLLIN};

	return poll(&p, 1, 0) == 1;
}

/* A line of status ("NSpid:", "Uid:"), the value after the key's blanks; 0 or -errno. */
static int status_field(int dirfd, const char *key, char *val, size_t size)
{
	char line[512];
	size_t klen = strlen(key);
	int fd, err = -ENOENT;
	FILE *f;

	fd = openat(dirfd, "status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	f = fdopen(fd, "re");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
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

static int nspid_at(int dirfd, int pid)
{
	char val[256], *last;

	if (status_field(dirfd, "NSpid:", val, sizeof(val)))
		return pid;
	last = strrchr(val, '\t');
	return atoi(last ? last + 1 : val) ?: pid;
}

int jvmattach__nspid(int pid)
{
	char path[32];
	int dirfd, nspid;

	snprintf(path, sizeof(path), "/proc/%d", pid);
	dirfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return pid;
	nspid = nspid_at(dirfd, pid);
	close(dirfd);
	return nspid;
}

/* "Uid:\tREAL\tEFFECTIVE\t...": the effective id. */
static int effective_id(int dirfd, const char *key, unsigned int *id)
{
	char val[128], *p, *end;
	unsigned long v;
	int err;

	err = status_field(dirfd, key, val, sizeof(val));
	if (err)
		return err;
	p = val + strcspn(val, " \t");
	p += strspn(p, " \t");
	errno = 0;
	v = strtoul(p, &end, 10);
	if (end == p || errno || v > UINT32_MAX - 1)
		return -EBADMSG;
	*id = (unsigned int)v;
	return 0;
}

/*
 * The target through /proc/PID, opened after pidfd and checked alive after: the directory is
 * then the pidfd's process, not one that took its pid since. HotSpot installs its SIGQUIT
 * handler early in its start; with -Xrs, or before that point, the default action (core dump)
 * would end it.
 */
static int target_read(int pid, int pidfd, int *dirfd, struct target *t)
{
	char path[32], val[64];
	int err;

	snprintf(path, sizeof(path), "/proc/%d", pid);
	*dirfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (*dirfd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	*t = (struct target){.pid = pid, .nspid = nspid_at(*dirfd, pid)};
	err = effective_id(*dirfd, "Uid:", &t->uid);
	if (!err)
		err = effective_id(*dirfd, "Gid:", &t->gid);
	if (!err)
		err = status_field(*dirfd, "SigCgt:", val, sizeof(val));
	if (!err)
		t->sigquit = strtoull(val, NULL, 16) & (1ULL << (SIGQUIT - 1));
	if (!err && exited(pidfd))
		err = -ESRCH;
	return err;
}

/* Its mount namespace, root and cwd as fds (CAP_SYS_PTRACE for another user's process). */
static int job_open(struct job *j, int dirfd, enum jvmattach_why *why)
{
	struct statx ours, theirs;

	*why = JVMATTACH_NS;
	j->mntfd = openat(dirfd, "ns/mnt", O_RDONLY | O_CLOEXEC);
	if (j->mntfd < 0)
		goto fail;
	j->rootfd = openat(dirfd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (j->rootfd < 0)
		goto fail;
	j->cwdfd = openat(dirfd, "cwd", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (j->cwdfd < 0)
		goto fail;
	j->same_ns = !statx(AT_FDCWD, "/proc/self/ns/mnt", 0, STATX_INO, &ours) &&
		     !statx(j->mntfd, "", AT_EMPTY_PATH, STATX_INO, &theirs) &&
		     ours.stx_ino == theirs.stx_ino;
	/* The same directory on the same mount: a chroot would change nothing. */
	j->same_root = j->same_ns && !statx(AT_FDCWD, "/", 0, STATX_INO | STATX_MNT_ID, &ours) &&
		       !statx(j->rootfd, "", AT_EMPTY_PATH, STATX_INO | STATX_MNT_ID, &theirs) &&
		       (ours.stx_mask & theirs.stx_mask & STATX_MNT_ID) &&
		       ours.stx_mnt_id == theirs.stx_mnt_id && ours.stx_ino == theirs.stx_ino &&
		       ours.stx_dev_major == theirs.stx_dev_major &&
		       ours.stx_dev_minor == theirs.stx_dev_minor;
	return 0;
fail:
	if (errno == ENOENT)
		*why = JVMATTACH_GONE;
	return errno == ENOENT ? -ESRCH : -errno;
}

static void job_close(struct job *j)
{
	int *fds[] = {&j->pidfd, &j->mntfd, &j->rootfd, &j->cwdfd};

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

/* --- the child: runs as the target, in its namespace ----------------------------------- */

/* Every fd but keep[] (ascending) closed: the child, as the target's uid, holds nothing of the
 * daemon's (BPF maps, other processes' memory, the HTTP socket). */
static void close_others(const int *keep, int n)
{
	int from = 0;

	for (int i = 0; i <= n; i++) {
		int to = i < n ? keep[i] - 1 : INT32_MAX;

		if (to >= from && syscall(SYS_close_range, from, to, 0) && errno == ENOSYS) {
			for (int fd = from; fd <= to && fd < 65536; fd++)
				close(fd);
		}
		if (i < n)
			from = keep[i] + 1;
	}
}

static void sort_fds(int *fds, int n)
{
	for (int i = 1; i < n; i++)
		for (int k = i; k > 0 && fds[k - 1] > fds[k]; k--) {
			int t = fds[k];

			fds[k] = fds[k - 1];
			fds[k - 1] = t;
		}
}

/*
 * Into its mount namespace (unless ours), its root and its cwd, then its effective uid and gid
 * with no supplementary groups: from here the kernel checks every file operation against the
 * target's rights, and a symlink can only lead where the target itself could write. Raw
 * syscalls: glibc's set*id wrappers signal the other threads, of which a forked child has none.
 */
static int child_enter(const struct job *j, enum jvmattach_why *why)
{
	gid_t gid = j->t.gid;
	uid_t uid = j->t.uid;

	*why = JVMATTACH_NS;
	if (!j->same_ns && setns(j->mntfd, CLONE_NEWNS))
		return -errno;
	if ((!j->same_root && (fchdir(j->rootfd) || chroot("."))) || fchdir(j->cwdfd))
		return -errno;
	/* Not dumpable: the target's user cannot ptrace the child nor take its fds. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
		return -errno;
	*why = JVMATTACH_IDS;
	if (syscall(SYS_setgroups, 0, NULL) || syscall(SYS_setresgid, gid, gid, gid) ||
	    syscall(SYS_setresuid, uid, uid, uid))
		return -errno;
	if (getegid() != gid || geteuid() != uid)
		return -EPERM;
	return 0;
}

/*
 * A socket at path that the target's uid owns (not a symlink), connected within the deadline
 * (at most CONNECT_TIMEOUT_MS), whose listener is the target process itself. -ENOENT or
 * -ECONNREFUSED: no listener (yet).
 */
static int child_connect(const struct job *j, enum jvmattach_why *why)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	socklen_t len = sizeof(int);
	struct ucred cred;
	struct pollfd p;
	struct stat st;
	int fd, err, soerr;

	if (fstatat(AT_FDCWD, j->sock, &st, AT_SYMLINK_NOFOLLOW))
		return -errno;
	if (S_ISLNK(st.st_mode)) {
		*why = JVMATTACH_SYMLINK;
		return -ELOOP;
	}
	if (!S_ISSOCK(st.st_mode) || st.st_uid != j->t.uid) {
		*why = JVMATTACH_OWNER;
		return -EPERM;
	}
	memcpy(addr.sun_path, j->sock, strlen(j->sock) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		err = -errno;
		/* A full backlog: EAGAIN at once, or EINPROGRESS and POLLOUT once there is room. */
		if (err == -EAGAIN || err == -EINPROGRESS) {
			p = (struct pollfd){.fd = fd, .events = POLLOUT};
			if (err == -EAGAIN ||
			    poll(&p, 1, left_ms(j->deadline, CONNECT_TIMEOUT_MS)) != 1)
				err = -ETIMEDOUT;
			else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len))
				err = -errno;
			else
				err = -soerr;
		}
		if (err) {
			if (err == -ETIMEDOUT)
				*why = JVMATTACH_TIMEOUT;
			goto out_close;
		}
	}
	len = sizeof(cred);
	/* HotSpot checks its peer; we check ours: the target itself, as the target's uid. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
		err = -errno;
		goto out_close;
	}
	if (cred.uid != j->t.uid || cred.pid != j->t.pid) {
		*why = JVMATTACH_OWNER;
		err = -EPERM;
		goto out_close;
	}
	return fd;
out_close:
	close(fd);
	return err;
}

/* The socket, looked for until the deadline; -ECONNREFUSED when none came. */
static int child_wait_listener(const struct job *j, enum jvmattach_why *why)
{
	while (now_ms() < j->deadline) {
		enum jvmattach_why w = JVMATTACH_ERROR;
		int fd = child_connect(j, &w);

		if (fd >= 0 || (fd != -ENOENT && fd != -ECONNREFUSED)) {
			*why = w;
			return fd;
		}
		if (exited(j->pidfd)) {
			*why = JVMATTACH_GONE;
			return -ESRCH;
		}
		poll(NULL, 0, POLL_STEP_MS);
	}
	return -ECONNREFUSED;
}

/*
 * The listener starts when the JVM's signal handler finds the trigger at SIGQUIT: in its cwd,
 * else in its /tmp (the cwd may not be writable). Created O_EXCL|O_NOFOLLOW: whatever is there
 * already is neither followed nor written. A symlink is refused. A file is another attacher's
 * (a jcmd, another profiler) whose signal starts the listener: its socket is waited for, with no
 * signal of ours, which could come after that attacher removed its file and make the JVM print
 * a thread dump instead. Ours is removed once the socket is there, or when we give up.
 */
static int child_start_listener(const struct job *j, enum jvmattach_why *why)
{
	int fd = -1, err = -ENOENT, which;
	struct stat st;

	for (which = 0; which < 2; which++) {
		fd = open(j->trigger[which], O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			  0600);
		if (fd >= 0) {
			close(fd);
			break;
		}
		err = -errno;
		if (err == -EEXIST || err == -ELOOP) {
			if (fstatat(AT_FDCWD, j->trigger[which], &st, AT_SYMLINK_NOFOLLOW))
				return -errno;
			if (S_ISLNK(st.st_mode)) {
				*why = JVMATTACH_SYMLINK;
				return -ELOOP;
			}
			*why = JVMATTACH_BUSY;
			return child_wait_listener(j, why);
		}
	}
	if (which == 2) {
		*why = JVMATTACH_ERROR;
		return err; /* neither its cwd nor its /tmp is writable by it */
	}
	/* No socket in time after the signal: -XX:+DisableAttachMechanism, or a JVM too busy. */
	*why = JVMATTACH_NO_LISTENER;
	if (pidfd_signal(j->pidfd, SIGQUIT)) {
		err = -errno;
		*why = err == -ESRCH ? JVMATTACH_GONE : JVMATTACH_ERROR;
	} else {
		err = child_wait_listener(j, why);
	}
	unlink(j->trigger[which]);
	return err;
}

/* The request out, the reply in, each wait bounded by the deadline. */
static int child_exchange(const struct job *j, int fd, char *reply, uint32_t *got,
			  enum jvmattach_why *why)
{
	struct pollfd p = {.fd = fd};
	size_t sent = 0;
	ssize_t n;

	*why = JVMATTACH_TIMEOUT;
	while (sent < j->req_len) {
		p.events = POLLOUT;
		if (poll(&p, 1, left_ms(j->deadline, 0)) != 1)
			return -ETIMEDOUT;
		n = send(fd, j->req + sent, j->req_len - sent, MSG_NOSIGNAL);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			goto fail;
		sent += (size_t)n;
	}
	/* The JVM answers "STATUS\n" and the operation's output, then closes. */
	*got = 0;
	while (*got < REPLY_MAX) {
		p.events = POLLIN;
		if (poll(&p, 1, left_ms(j->deadline, 0)) != 1)
			return -ETIMEDOUT;
		n = recv(fd, reply + *got, REPLY_MAX - *got, 0);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			goto fail;
		if (!n)
			break;
		*got += (uint32_t)n;
	}
	*why = JVMATTACH_OK;
	return 0;
fail:
	*why = JVMATTACH_ERROR;
	return n < 0 ? -errno : -EIO;
}

static void write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		p += n;
		len -= (size_t)n;
	}
}

static __attribute__((noreturn)) void child_main(const struct job *j)
{
	int keep[] = {j->pidfd, j->mntfd, j->rootfd, j->cwdfd, j->outfd};
	enum jvmattach_why why = JVMATTACH_ERROR;
	struct report r = {0};
	char reply[REPLY_MAX];
	int fd, err;

	sort_fds(keep, sizeof(keep) / sizeof(keep[0]));
	close_others(keep, sizeof(keep) / sizeof(keep[0]));
	err = child_enter(j, &why);
	if (!err) {
		why = JVMATTACH_ERROR;
		fd = child_connect(j, &why);
		/* No socket, or one left by an earlier JVM with this pid. */
		if (fd == -ENOENT || fd == -ECONNREFUSED) {
			why = JVMATTACH_NO_LISTENER;
			fd = j->t.sigquit ? child_start_listener(j, &why) : -EAGAIN;
		}
		err = fd < 0 ? fd : child_exchange(j, fd, reply, &r.len, &why);
	}
	r.err = err;
	r.why = why;
	write_all(j->outfd, &r, sizeof(r));
	write_all(j->outfd, reply, r.len);
	_exit(0);
}

/* --- the parent ------------------------------------------------------------------------- */

/* The child's report and reply, read until the deadline; -ETIMEDOUT past it. */
static int read_report(int fd, long long deadline, struct report *r, char *reply)
{
	char buf[sizeof(*r) + REPLY_MAX];
	struct pollfd p = {.fd = fd, .events = POLLIN};
	size_t got = 0;

	while (got < sizeof(buf)) {
		ssize_t n;

		if (poll(&p, 1, left_ms(deadline, 0)) != 1)
			return -ETIMEDOUT;
		n = read(fd, buf + got, sizeof(buf) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			break;
		got += (size_t)n;
	}
	if (got < sizeof(*r))
		return -EIO; /* the child died before it said: killed, or out of memory */
	memcpy(r, buf, sizeof(*r));
	if (r->len > REPLY_MAX || got != sizeof(*r) + r->len)
		return -EBADMSG;
	memcpy(reply, buf + sizeof(*r), r->len);
	return 0;
}

static int build_request(struct job *j, const char *op, const char *arg)
{
	const char *parts[2 + ATTACH_ARGS] = {ATTACH_PROTOCOL, op, arg ? arg : "", "", ""};

	j->req_len = 0;
	for (int i = 0; i < 2 + ATTACH_ARGS; i++) {
		size_t len = strlen(parts[i]) + 1;

		if (j->req_len + len > sizeof(j->req))
			return -E2BIG;
		memcpy(j->req + j->req_len, parts[i], len);
		j->req_len += len;
	}
	return 0;
}

/* Forks the child, reads its report, reaps it (killed when it overruns the deadline). */
static int run_child(struct job *j, long long deadline, struct report *r, char *reply)
{
	int pipefd[2], err, status;
	pid_t child;

	if (pipe2(pipefd, O_CLOEXEC))
		return -errno;
	j->outfd = pipefd[1];
	child = fork();
	if (child < 0) {
		err = -errno;
		close(pipefd[0]);
		close(pipefd[1]);
		return err;
	}
	if (!child)
		child_main(j);
	close(pipefd[1]);
	err = read_report(pipefd[0], deadline, r, reply);
	close(pipefd[0]);
	/* Our own unreaped child: its pid cannot have been reused. */
	if (err)
		kill(child, SIGKILL);
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	return err;
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
		   int timeout_ms, enum jvmattach_why *whyp)
{
	struct job j = {.pidfd = -1, .mntfd = -1, .rootfd = -1, .cwdfd = -1, .outfd = -1};
	enum jvmattach_why why = JVMATTACH_ERROR;
	char reply[REPLY_MAX + 1];
	long long deadline = now_ms() + timeout_ms;
	int dirfd = -1, err;
	struct report r = {0};

	j.deadline =
	    deadline - (timeout_ms / 10 < CHILD_MARGIN_MS ? timeout_ms / 10 : CHILD_MARGIN_MS);
	if (out && out_size)
		out[0] = '\0';
	err = build_request(&j, op, arg);
	if (err)
		goto out;
	j.pidfd = pidfd_open(pid);
	if (j.pidfd < 0) {
		err = -errno;
		goto out;
	}
	err = target_read(pid, j.pidfd, &dirfd, &j.t);
	if (!err)
		err = job_open(&j, dirfd, &why);
	if (dirfd >= 0)
		close(dirfd);
	if (err)
		goto out;
	snprintf(j.trigger[0], sizeof(j.trigger[0]), ".attach_pid%d", j.t.nspid);
	snprintf(j.trigger[1], sizeof(j.trigger[1]), "/tmp/.attach_pid%d", j.t.nspid);
	snprintf(j.sock, sizeof(j.sock), "/tmp/.java_pid%d", j.t.nspid);
	err = run_child(&j, deadline, &r, reply);
	if (err) {
		why = err == -ETIMEDOUT ? JVMATTACH_TIMEOUT : JVMATTACH_ERROR;
		goto out;
	}
	err = r.err;
	why = r.err && (unsigned)r.why < JVMATTACH_NR ? (enum jvmattach_why)r.why
	      : r.err				      ? JVMATTACH_ERROR
						      : JVMATTACH_OK;
	if (err)
		goto out;
	reply[r.len] = '\0';
	err = jvmattach__parse_reply(reply, out, out_size);
	if (err == -EBADMSG)
		why = JVMATTACH_BAD_REPLY;
out:
	if (err == -ESRCH)
		why = JVMATTACH_GONE;
	job_close(&j);
	if (whyp)
		*whyp = why;
	return err;
}
