/* DEPS: src/runtime/jvmattach.c src/lib/log.c src/lib/ufile.c */
// SPDX-License-Identifier: GPL-2.0-only
/*
 * The attach protocol against a stand-in JVM: this process listens on /tmp/.java_pidPID as
 * HotSpot does and checks the request byte for byte; the SIGQUIT guard (a process that does not
 * handle SIGQUIT gets none, or this test would die of it); a hostile JVM of another user (a
 * symlink where the trigger goes, a socket that never answers, a socket of another owner) and
 * an honest one, which must see the trigger made by its own uid; and, when java is installed, a
 * real JVM asked for its flag and perf map.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "src/runtime/jvmattach.h"
#include "testlib.h"

struct fake_jvm {
	int listen_fd;
	const char *reply;
	char request[256];
	size_t request_len;
};

static void *fake_jvm__serve(void *arg)
{
	struct fake_jvm *fj = arg;
	int fd = accept(fj->listen_fd, NULL, NULL);
	int nuls = 0;

	if (fd < 0)
		return NULL;
	/* HotSpot reads exactly five strings: version, operation, three arguments. */
	while (nuls < 5 && fj->request_len < sizeof(fj->request)) {
		ssize_t n = read(fd, fj->request + fj->request_len, 1);

		if (n <= 0)
			break;
		nuls += fj->request[fj->request_len++] == '\0';
	}
	if (write(fd, fj->reply, strlen(fj->reply)) < 0)
		fj->request_len = 0;
	close(fd);
	return NULL;
}

static int fake_jvm__listen(struct fake_jvm *fj, char *path, size_t size)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};

	snprintf(path, size, "/tmp/.java_pid%d", getpid());
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	unlink(path);
	fj->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fj->listen_fd < 0 || bind(fj->listen_fd, (struct sockaddr *)&addr, sizeof(addr)) ||
	    listen(fj->listen_fd, 1))
		return -errno;
	return 0;
}

static void run_fake(const char *reply, const char *op, const char *arg, int *ret, char *out,
		     size_t out_size, struct fake_jvm *fj)
{
	char path[108];
	pthread_t t;

	*fj = (struct fake_jvm){.listen_fd = -1, .reply = reply};
	*ret = fake_jvm__listen(fj, path, sizeof(path));
	if (*ret)
		return;
	pthread_create(&t, NULL, fake_jvm__serve, fj);
	*ret = jvmattach__run(getpid(), op, arg, out, out_size, 5000, NULL);
	pthread_join(t, NULL);
	close(fj->listen_fd);
	unlink(path);
}

TEST(request_and_reply)
{
	static const char want[] = "1\0jcmd\0Compiler.perfmap\0\0";
	struct fake_jvm fj;
	char out[64];
	int ret;

	run_fake("0\nCommand executed successfully\n", "jcmd", "Compiler.perfmap", &ret, out,
		 sizeof(out), &fj);
	CHECK_EQ(ret, 0);
	CHECK_EQ(fj.request_len, sizeof(want));
	CHECK(!memcmp(fj.request, want, sizeof(want)));
	CHECK_STR(out, "Command executed successfully\n");
}

TEST(failure_status_is_eproto)
{
	struct fake_jvm fj;
	char out[64];
	int ret;

	run_fake("-1\njava.lang.IllegalArgumentException: Unknown diagnostic command\n", "jcmd",
		 "No.such", &ret, out, sizeof(out), &fj);
	CHECK_EQ(ret, -EPROTO);
	if (strncmp(out, "java.lang.IllegalArgumentException", 34))
		FAILF("out: %s", out);
}

TEST(garbage_reply_is_ebadmsg)
{
	struct fake_jvm fj;
	int ret;

	run_fake("hello", "printflag", "PreserveFramePointer", &ret, NULL, 0, &fj);
	CHECK_EQ(ret, -EBADMSG);
}

/* No listener and no SIGQUIT handler: nothing is sent (the default action would kill us). */
TEST(no_sigquit_handler_no_signal)
{
	char path[64];
	pid_t child;
	int status = 0, ret;

	child = fork();
	CHECK(child >= 0);
	if (!child) {
		signal(SIGQUIT, SIG_DFL);
		pause();
		_exit(0);
	}
	usleep(100000);
	ret = jvmattach__run(child, "jcmd", "Compiler.perfmap", NULL, 0, 1000, NULL);
	snprintf(path, sizeof(path), "/tmp/.attach_pid%d", child);
	kill(child, SIGTERM);
	waitpid(child, &status, 0);
	CHECK_EQ(ret, -EAGAIN);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
	CHECK(access(path, F_OK) && errno == ENOENT);
}

TEST(gone_process_is_esrch)
{
	pid_t child = fork();
	enum jvmattach_why why;
	int ret;

	CHECK(child >= 0);
	if (!child)
		_exit(0);
	waitpid(child, NULL, 0);
	ret = jvmattach__run(child, "jcmd", "Compiler.perfmap", NULL, 0, 1000, &why);
	CHECK_EQ(ret, -ESRCH);
	CHECK_EQ(why, JVMATTACH_GONE);
}

/* --- a JVM of another user: forked, as NOBODY, in a directory of its own ----------------- */

#define NOBODY 65534
/* Past this the watchdog kills the fake JVM: an attach without a timeout then ends (its peer
 * closed), late, and fails the test instead of hanging it. */
#define WATCHDOG_S 16

enum fake_mode {
	FAKE_ANSWER,	    /* HotSpot: at SIGQUIT with the trigger there, listen; answer */
	FAKE_SILENT,	    /* listens, accepts, never answers */
	FAKE_SYMLINK,	    /* its .attach_pidPID is a symlink to where root may write */
	FAKE_ROOT_SOCKET,   /* its /tmp/.java_pidPID is a socket root made (not its own) */
	FAKE_CONTAINER,	    /* FAKE_ANSWER in a mount namespace of its own, /tmp a tmpfs */
	FAKE_TRIGGER_THERE, /* its .attach_pidPID is there already (another attacher's) */
};

struct fake {
	pid_t pid, watchdog;
	int report; /* what it saw: the trigger's owner at SIGQUIT (-1: none), as an int */
	char dir[64];
	char sock[64];
	int root_sock; /* FAKE_ROOT_SOCKET: our listener */
};

static void fake__serve(enum fake_mode mode, int report)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	char name[64], tmp_name[64], req[256];
	struct timespec wait = {.tv_sec = WATCHDOG_S};
	struct stat st;
	sigset_t quit;
	int owner = -1, lfd, fd, nuls = 0;
	size_t got = 0;

	sigemptyset(&quit);
	sigaddset(&quit, SIGQUIT);
	if (sigtimedwait(&quit, NULL, &wait) != SIGQUIT)
		_exit(1);
	/* HotSpot looks in its cwd, then in its /tmp. */
	snprintf(name, sizeof(name), ".attach_pid%d", getpid());
	snprintf(tmp_name, sizeof(tmp_name), "/tmp/.attach_pid%d", getpid());
	if (!lstat(name, &st) || !lstat(tmp_name, &st))
		owner = (int)st.st_uid;
	if (write(report, &owner, sizeof(owner)) != sizeof(owner) || owner < 0)
		_exit(1);
	snprintf(addr.sun_path, sizeof(addr.sun_path), "/tmp/.java_pid%d", getpid());
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) || listen(lfd, 1))
		_exit(1);
	fd = accept(lfd, NULL, NULL);
	if (mode == FAKE_SILENT)
		pause();
	while (fd >= 0 && nuls < 5 && got < sizeof(req) && read(fd, req + got, 1) == 1)
		nuls += req[got++] == '\0';
	if (fd < 0 || write(fd, "0\nfake ok\n", 10) != 10)
		_exit(1);
	close(fd);
	unlink(addr.sun_path);
	pause();
}

static void fake__on_quit(int sig)
{
	(void)sig;
}

static void fake__main(enum fake_mode mode, const char *dir, const char *target, int ready,
		       int report)
{
	struct sigaction sa = {.sa_handler = SIG_DFL};
	char name[64];
	sigset_t quit;

	/* A handler (SigCgt says so, as HotSpot's) that never runs: SIGQUIT stays blocked and is
	 * taken by sigtimedwait. */
	sigemptyset(&quit);
	sigaddset(&quit, SIGQUIT);
	sigprocmask(SIG_BLOCK, &quit, NULL);
	sa.sa_handler = fake__on_quit;
	sigaction(SIGQUIT, &sa, NULL);
	/* In a container its /tmp is not the host's: the trigger (its cwd is not writable) and
	 * the socket are where only its mount namespace sees them. */
	if (chdir(dir) ||
	    (mode == FAKE_CONTAINER &&
	     (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	      mount("tmpfs", "/tmp", "tmpfs", 0, "mode=1777"))) ||
	    setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		_exit(1);
	snprintf(name, sizeof(name), ".attach_pid%d", getpid());
	if (mode == FAKE_SYMLINK && symlink(target, name))
		_exit(1);
	if (mode == FAKE_TRIGGER_THERE && close(open(name, O_CREAT | O_WRONLY, 0600)))
		_exit(1);
	if (write(ready, "r", 1) != 1)
		_exit(1);
	close(ready);
	fake__serve(mode, report);
	_exit(0);
}

/* Starts it; 0 once it is ready (its symlink made), else -1. */
static int fake__start(struct fake *f, enum fake_mode mode, const char *target)
{
	int ready[2], report[2];
	char c;

	*f = (struct fake){.pid = -1, .watchdog = -1, .report = -1, .root_sock = -1};
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_jvmattach.XXXXXX");
	if (!mkdtemp(f->dir) || chown(f->dir, NOBODY, NOBODY) ||
	    chmod(f->dir, mode == FAKE_CONTAINER ? 0555 : 0755) || pipe2(ready, O_CLOEXEC) ||
	    pipe2(report, O_CLOEXEC))
		return -1;
	f->pid = fork();
	if (f->pid < 0)
		return -1;
	if (!f->pid)
		fake__main(mode, f->dir, target, ready[1], report[1]);
	close(ready[1]);
	close(report[1]);
	f->report = report[0];
	snprintf(f->sock, sizeof(f->sock), "/tmp/.java_pid%d", f->pid);
	f->watchdog = fork();
	if (!f->watchdog) {
		sleep(WATCHDOG_S);
		kill(f->pid, SIGKILL);
		_exit(0);
	}
	c = 0;
	if (read(ready[0], &c, 1) != 1)
		c = 0;
	close(ready[0]);
	if (mode == FAKE_ROOT_SOCKET) {
		struct sockaddr_un addr = {.sun_family = AF_UNIX};

		snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", f->sock);
		f->root_sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (f->root_sock < 0 ||
		    bind(f->root_sock, (struct sockaddr *)&addr, sizeof(addr)) ||
		    chmod(f->sock, 0666) || listen(f->root_sock, 1))
			return -1;
	}
	return c == 'r' ? 0 : -1;
}

/* The trigger's owner the fake JVM saw at SIGQUIT: -1 none, -2 no SIGQUIT came. */
static int fake__stop(struct fake *f)
{
	struct pollfd p = {.fd = f->report, .events = POLLIN};
	int owner = -2;

	if (f->report >= 0 && poll(&p, 1, 0) == 1 && read(f->report, &owner, sizeof(owner)) != 4)
		owner = -2;
	if (f->pid > 0) {
		kill(f->pid, SIGKILL);
		waitpid(f->pid, NULL, 0);
	}
	if (f->watchdog > 0) {
		kill(f->watchdog, SIGKILL);
		waitpid(f->watchdog, NULL, 0);
	}
	if (f->report >= 0)
		close(f->report);
	if (f->root_sock >= 0)
		close(f->root_sock);
	unlink(f->sock);
	if (f->pid > 0) {
		char path[128];

		snprintf(path, sizeof(path), "%s/.attach_pid%d", f->dir, f->pid);
		unlink(path);
		snprintf(path, sizeof(path), "/tmp/.attach_pid%d", f->pid);
		unlink(path);
	}
	rmdir(f->dir);
	return owner;
}

static double elapsed_s(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/*
 * Starts a fake JVM in mode, attaches to it within timeout_ms and stops it: the attach's result
 * (1 when the fake could not start), *owner the owner of the trigger the fake saw.
 */
static int attach_fake(enum fake_mode mode, const char *target, char *out, size_t out_size,
		       int timeout_ms, enum jvmattach_why *why, int *owner)
{
	struct fake f;
	int ret = fake__start(&f, mode, target);

	if (!ret)
		ret = jvmattach__run(f.pid, "jcmd", "Compiler.perfmap", out, out_size, timeout_ms,
				     why);
	else
		ret = 1;
	*owner = fake__stop(&f);
	return ret;
}

/*
 * .attach_pidPID in the JVM's cwd is its user's symlink to a file root may create: the attach
 * must neither create it (as root, or at all) nor go on.
 */
TEST(symlink_trigger_refused)
{
	char rootdir[] = "/tmp/test_jvmattach_root.XXXXXX", target[96];
	enum jvmattach_why why = JVMATTACH_OK;
	int ret, owner, created;

	if (getuid())
		SKIP("needs root");
	CHECK(mkdtemp(rootdir));
	chmod(rootdir, 0755);
	snprintf(target, sizeof(target), "%s/owned-by-root-target", rootdir);
	ret = attach_fake(FAKE_SYMLINK, target, NULL, 0, 5000, &why, &owner);
	created = !access(target, F_OK);
	unlink(target);
	rmdir(rootdir);
	if (created)
		FAILF("%s was created through the symlink", target);
	CHECK_EQ(ret, -ELOOP);
	CHECK_STR(jvmattach__why_name(why), "symlink");
	CHECK_EQ(owner, -2); /* and no SIGQUIT for it */
}

/* Another attacher's trigger is there: left alone, no signal sent, its listener waited for. */
TEST(trigger_there_is_busy)
{
	enum jvmattach_why why = JVMATTACH_OK;
	char path[128];
	int ret, owner, left;
	struct fake f;

	if (getuid())
		SKIP("needs root");
	ret = fake__start(&f, FAKE_TRIGGER_THERE, NULL);
	if (!ret)
		ret = jvmattach__run(f.pid, "jcmd", "Compiler.perfmap", NULL, 0, 1000, &why);
	else
		ret = 1;
	snprintf(path, sizeof(path), "%s/.attach_pid%d", f.dir, f.pid);
	left = !access(path, F_OK);
	owner = fake__stop(&f);
	CHECK_EQ(ret, -ECONNREFUSED);
	CHECK_STR(jvmattach__why_name(why), "busy");
	CHECK(left);
	CHECK_EQ(owner, -2);
}

/* A JVM that accepts and never answers: the attach ends within its timeout, as an error. */
TEST(silent_jvm_times_out)
{
	enum jvmattach_why why = JVMATTACH_OK;
	struct timespec t0;
	double took = 0;
	struct fake f;
	int ret;

	if (getuid())
		SKIP("needs root");
	ret = fake__start(&f, FAKE_SILENT, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!ret) {
		ret = jvmattach__run(f.pid, "jcmd", "Compiler.perfmap", NULL, 0, 10000, &why);
		took = elapsed_s(&t0);
	} else {
		ret = 1;
	}
	fake__stop(&f);
	if (took >= 12)
		FAILF("the attach took %.1f s", took);
	CHECK_EQ(ret, -ETIMEDOUT);
	CHECK_STR(jvmattach__why_name(why), "timeout");
}

/* An honest JVM of another user: the trigger it finds is its user's, and it is answered. */
TEST(attach_as_target_uid)
{
	enum jvmattach_why why = JVMATTACH_ERROR;
	char out[64] = "";
	int ret, owner;

	if (getuid())
		SKIP("needs root");
	ret = attach_fake(FAKE_ANSWER, NULL, out, sizeof(out), 10000, &why, &owner);
	CHECK_EQ(ret, 0);
	CHECK_STR(jvmattach__why_name(why), "ok");
	CHECK_STR(out, "fake ok\n");
	CHECK_EQ(owner, NOBODY);
}

/* A JVM in a mount namespace of its own, its /tmp private: reached there, as its user. */
TEST(container_jvm)
{
	enum jvmattach_why why = JVMATTACH_ERROR;
	char out[64] = "";
	int ret, owner;

	if (getuid())
		SKIP("needs root");
	ret = attach_fake(FAKE_CONTAINER, NULL, out, sizeof(out), 10000, &why, &owner);
	CHECK_EQ(ret, 0);
	CHECK_STR(jvmattach__why_name(why), "ok");
	CHECK_STR(out, "fake ok\n");
	CHECK_EQ(owner, NOBODY);
}

/* Its socket path holds a socket root made: not the JVM's, not connected to. */
TEST(foreign_socket_refused)
{
	enum jvmattach_why why = JVMATTACH_OK;
	int ret, owner;

	if (getuid())
		SKIP("needs root");
	ret = attach_fake(FAKE_ROOT_SOCKET, NULL, NULL, 0, 5000, &why, &owner);
	CHECK_EQ(ret, -EPERM);
	CHECK_STR(jvmattach__why_name(why), "owner");
	CHECK_EQ(owner, -2);
}

static const char spin_src[] = "public class Spin { public static void main(String[] a) "
			       "throws Exception { System.out.println(ProcessHandle.current()"
			       ".pid()); long x = 0; while (true) { x += System.nanoTime() % 7; "
			       "if (x == 42) System.out.print(\"\"); } } }";

/*
 * Starts a JVM spinning in Spin.java with flag, in a new directory dir (a mkdtemp template; its
 * cwd, where an attach file goes), its stdout on *p. Returns its pid, the first line that is a
 * number, or 0. Earlier lines are skipped: an agent on the host (autoprof's own JVM support
 * among them) may SIGQUIT a starting JVM, whose thread dump then comes before the pid, and a
 * test that took its first line for the pid would kill another process and wait forever.
 * *dumped (may be NULL) is set when a thread dump was among them.
 */
static int spin_jvm(const char *flag, char *dir, FILE **p, int *dumped)
{
	char path[256], cmd[512], line[512];
	FILE *f;

	*p = NULL;
	if (!mkdtemp(dir))
		return 0;
	snprintf(path, sizeof(path), "%s/Spin.java", dir);
	f = fopen(path, "w");
	if (!f)
		return 0;
	fputs(spin_src, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cd %s && exec java %s Spin.java", dir, flag);
	*p = popen(cmd, "r");
	while (*p && fgets(line, sizeof(line), *p)) {
		if (line[0] >= '1' && line[0] <= '9' && line[strspn(line, "0123456789")] == '\n')
			return atoi(line);
		if (dumped && !strncmp(line, "Full thread dump", 16))
			*dumped = 1;
	}
	return 0;
}

static void spin_cleanup(const char *dir)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/Spin.java", dir);
	unlink(path);
	rmdir(dir);
}

/* A real HotSpot: started by the attach file and SIGQUIT, then asked twice on its socket. */
TEST(real_jvm)
{
	char dir[] = "/tmp/test_jvmattach.XXXXXX", path[256], out[256];
	int pid, ret_flag, ret_map, map_there, trigger_left;
	struct stat st;
	FILE *p;

	if (system("java -version >/dev/null 2>&1"))
		SKIP("no java");
	pid = spin_jvm("-XX:+PreserveFramePointer", dir, &p, NULL);
	if (pid <= 0) {
		if (p)
			pclose(p);
		spin_cleanup(dir);
		FAILF("the JVM did not start");
		return;
	}
	ret_flag =
	    jvmattach__run(pid, "printflag", "PreserveFramePointer", out, sizeof(out), 10000, NULL);
	ret_map = jvmattach__run(pid, "jcmd", "Compiler.perfmap", NULL, 0, 10000, NULL);
	snprintf(path, sizeof(path), "/proc/%d/root/tmp/perf-%d.map", pid, jvmattach__nspid(pid));
	map_there = !stat(path, &st) && st.st_size > 0;
	unlink(path);
	snprintf(path, sizeof(path), "%s/.attach_pid%d", dir, jvmattach__nspid(pid));
	trigger_left = !access(path, F_OK);
	kill(pid, SIGKILL);
	pclose(p);
	/* Killed, the JVM could not remove its socket. */
	snprintf(path, sizeof(path), "/tmp/.java_pid%d", pid);
	unlink(path);
	spin_cleanup(dir);
	CHECK_EQ(ret_flag, 0);
	CHECK_STR(out, "-XX:+PreserveFramePointer\n");
	CHECK_EQ(ret_map, 0);
	CHECK(map_there);
	CHECK(!trigger_left);
}

/* -XX:+DisableAttachMechanism: the signal brings a thread dump, no listener; said as such.
 * Another attacher on the host (a profiler) may have signalled it first, even before it
 * printed its pid: its trigger is then there, ours is not made nor signalled for, and the
 * dump is its. */
TEST(jvm_without_attach)
{
	char dir[] = "/tmp/test_jvmattach.XXXXXX", line[512];
	int pid, ret = 0, dumped = 0;
	FILE *p;

	if (system("java -version >/dev/null 2>&1"))
		SKIP("no java");
	pid = spin_jvm("-XX:+DisableAttachMechanism", dir, &p, &dumped);
	if (pid > 0) {
		ret = jvmattach__run(pid, "jcmd", "Compiler.perfmap", NULL, 0, 2000, NULL);
		kill(pid, SIGKILL);
	}
	while (pid > 0 && fgets(line, sizeof(line), p))
		dumped |= !strncmp(line, "Full thread dump", 16);
	if (p)
		pclose(p);
	spin_cleanup(dir);
	CHECK(pid > 0);
	CHECK_EQ(ret, -ECONNREFUSED);
	CHECK(dumped);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	RUN(request_and_reply);
	RUN(failure_status_is_eproto);
	RUN(garbage_reply_is_ebadmsg);
	RUN(no_sigquit_handler_no_signal);
	RUN(gone_process_is_esrch);
	RUN(symlink_trigger_refused);
	RUN(trigger_there_is_busy);
	RUN(silent_jvm_times_out);
	RUN(attach_as_target_uid);
	RUN(foreign_socket_refused);
	RUN(container_jvm);
	RUN(real_jvm);
	RUN(jvm_without_attach);
	return test_summary();
}
