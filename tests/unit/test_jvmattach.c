/* DEPS: src/collect/jvmattach.c src/lib/log.c src/lib/ufile.c */
// SPDX-License-Identifier: GPL-2.0-only
/*
 * The attach protocol against a stand-in JVM: this process listens on /tmp/.java_pidPID as
 * HotSpot does and checks the request byte for byte; the SIGQUIT guard (a process that does not
 * handle SIGQUIT gets none, or this test would die of it); and, when java is installed, a real
 * JVM asked for its flag and perf map.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collect/jvmattach.h"
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
	*ret = jvmattach__run(getpid(), op, arg, out, out_size, 5000);
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
	ret = jvmattach__run(child, "jcmd", "Compiler.perfmap", NULL, 0, 1000);
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
	int ret;

	CHECK(child >= 0);
	if (!child)
		_exit(0);
	waitpid(child, NULL, 0);
	ret = jvmattach__run(child, "jcmd", "Compiler.perfmap", NULL, 0, 1000);
	CHECK_EQ(ret, -ESRCH);
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
 */
static int spin_jvm(const char *flag, char *dir, FILE **p)
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
	pid = spin_jvm("-XX:+PreserveFramePointer", dir, &p);
	if (pid <= 0) {
		if (p)
			pclose(p);
		spin_cleanup(dir);
		FAILF("the JVM did not start");
		return;
	}
	ret_flag =
	    jvmattach__run(pid, "printflag", "PreserveFramePointer", out, sizeof(out), 10000);
	ret_map = jvmattach__run(pid, "jcmd", "Compiler.perfmap", NULL, 0, 10000);
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

/* -XX:+DisableAttachMechanism: the signal brings a thread dump, no listener; said as such. */
TEST(jvm_without_attach)
{
	char dir[] = "/tmp/test_jvmattach.XXXXXX", line[512];
	int pid, ret = 0, dumped = 0;
	FILE *p;

	if (system("java -version >/dev/null 2>&1"))
		SKIP("no java");
	pid = spin_jvm("-XX:+DisableAttachMechanism", dir, &p);
	if (pid > 0) {
		ret = jvmattach__run(pid, "jcmd", "Compiler.perfmap", NULL, 0, 2000);
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
	RUN(real_jvm);
	RUN(jvm_without_attach);
	return test_summary();
}
