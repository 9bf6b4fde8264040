/* DEPS: src/collect/tracectx.c src/symbolize/maps.c src/lib/log.c */
// SPDX-License-Identifier: GPL-2.0-only
/*
 * tracectx__locate against live processes: the targets of tests/integration/tracectx.mk print
 * the offset of otel_thread_ctx_v1 from the thread pointer as they compute it themselves, which
 * must be what the locator finds from outside.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collect/tracectx.h"
#include "testlib.h"

struct target {
	pid_t pid;
	FILE *out;		/* the target's stdout */
	long long tpoff;	/* as the target printed it */
};

static const char *target_path(const char *name)
{
	static char path[PATH_MAX];
	const char *build = getenv("BUILD");

	snprintf(path, sizeof(path), "%s/tctargets/%s", build && *build ? build : "build", name);
	return path;
}

/* Starts argv with stdout on a pipe, env ("NAME=value") added when given. 0 or -errno. */
static int target__spawn(struct target *t, char *const argv[], char *env)
{
	int fds[2], err;

	t->out = NULL;
	if (pipe(fds)) {
		err = -errno;
		return err;
	}
	t->pid = fork();
	if (t->pid < 0) {
		err = -errno;
		goto close_pipe;
	}
	if (!t->pid) {
		dup2(fds[1], STDOUT_FILENO);
		close(fds[0]);
		close(fds[1]);
		if (env)
			putenv(env);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	t->out = fdopen(fds[0], "r");
	if (!t->out) {
		err = -errno;
		close(fds[0]);
		return err;
	}
	return 0;
close_pipe:
	close(fds[0]);
	close(fds[1]);
	return err;
}

static void target__stop(struct target *t)
{
	if (t->pid > 0) {
		kill(t->pid, SIGKILL);
		waitpid(t->pid, NULL, 0);
		t->pid = 0;
	}
	if (t->out) {
		fclose(t->out);
		t->out = NULL;
	}
}

/* Starts a tctargets program and reads its TPOFF and PID lines. */
static int target__start(struct target *t, const char *name, char *env)
{
	char *argv[] = {(char *)target_path(name), "30", NULL};
	char line[256];
	int pid = 0, have_tpoff = 0, err;

	if (access(argv[0], X_OK))
		return -ENOENT;
	err = target__spawn(t, argv, env);
	if (err)
		return err;
	while (!pid && fgets(line, sizeof(line), t->out)) {
		if (sscanf(line, "TPOFF %lld", &t->tpoff) == 1)
			have_tpoff = 1;
		else
			sscanf(line, "PID %d", &pid);
	}
	if (!have_tpoff || pid != t->pid) {
		target__stop(t);
		return -EPROTO;
	}
	return 0;
}

/* want_err 0: the locator must find the offset the target printed. */
static void check_target(const char *name, char *env, int want_err)
{
	struct target t = {0};
	int64_t off = 0;
	int err;

	err = target__start(&t, name, env);
	if (err == -ENOENT)
		SKIP("%s not built (make %s)", target_path(name), target_path(name));
	CHECK_EQ(err, 0);
	err = tracectx__locate(t.pid, &off);
	target__stop(&t);
	CHECK_EQ(err, want_err);
	if (!want_err)
		CHECK_EQ(off, t.tpoff);
}

/* Local-exec in the executable, whose TLS block holds more than the variable. */
TEST(executable)
{
	check_target("tctx_exe", NULL, 0);
}

/* TLSDESC in a library linked at start: the offset comes from the process's GOT. */
TEST(tlsdesc_library)
{
	check_target("tctx_lib", NULL, 0);
}

/* Initial-exec in a library: a TPOFF64 GOT entry. */
TEST(ie_library)
{
	check_target("tctx_lib_ie", NULL, 0);
}

/* dlopen'ed after start, in glibc's optional static TLS surplus: a fixed offset still. */
TEST(dlopen_static_tls)
{
	check_target("tctx_dlopen", NULL, 0);
}

/* dlopen'ed after start with no surplus: dynamic TLS, which the samplers cannot follow. */
TEST(dlopen_dynamic_tls)
{
	check_target("tctx_dlopen", "GLIBC_TUNABLES=glibc.rtld.optional_static_tls=0", -ENOTSUP);
}

TEST(no_variable)
{
	char *argv[] = {"/bin/sleep", "30", NULL};
	struct target t = {0};
	int64_t off = 0;
	int err;

	CHECK_EQ(target__spawn(&t, argv, NULL), 0);
	/* Wait for the exec: until then the child is a copy of this test. */
	for (int i = 0; i < 1000; i++) {
		char exe[PATH_MAX], link[64];
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/%d/exe", t.pid);
		n = readlink(link, exe, sizeof(exe) - 1);
		if (n > 0) {
			exe[n] = '\0';
			if (strstr(exe, "sleep"))
				break;
		}
		usleep(1000);
	}
	err = tracectx__locate(t.pid, &off);
	target__stop(&t);
	CHECK_EQ(err, -ENOENT);
}

TEST(no_process)
{
	int64_t off = 0;
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (!pid)
		_exit(0);
	waitpid(pid, NULL, 0);
	CHECK_EQ(tracectx__locate(pid, &off), -ESRCH);
}

/* This test itself has no variable, and reading one's own maps must work too. */
TEST(self)
{
	int64_t off = 0;

	CHECK_EQ(tracectx__locate(getpid(), &off), -ENOENT);
}

int main(void)
{
	RUN(executable);
	RUN(tlsdesc_library);
	RUN(ie_library);
	RUN(dlopen_static_tls);
	RUN(dlopen_dynamic_tls);
	RUN(no_variable);
	RUN(no_process);
	RUN(self);
	return test_summary();
}
