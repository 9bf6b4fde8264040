/* DEPS: src/runtime/jvm.c src/runtime/jvmattach.c src/runtime/hotspot.c src/symbolize/perfmap.c src/symbolize/elf.c src/lib/strtab.c src/lib/log.c src/lib/procfs.c src/lib/procmem.c src/lib/procmaps.c tests/unit/fake_symbolizer.c src/lib/ufile.c */
// SPDX-License-Identifier: GPL-2.0-only
/*
 * The JVM collector's bookkeeping without a JVM: a process that is none (a child without a
 * SIGQUIT handler) stands in. Its stacks are cut after the first JIT frame until the JVM says it
 * keeps frame pointers (it never does here); its first unknown JIT frame asks for a map once (and
 * the request fails without a signal sent); exit and shutdown let go of every dso. A real JVM is
 * tests/integration/test_java.py's.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/timeconst.h"
#include "src/runtime/jvm.h"
#include "fake_symbolizer.h"
#include "src/symbolize/frame.h"
#include "src/symbolize/symbolizer.h"
#include "src/unwind/unwind.h"
#include "testlib.h"
#include "src/proc/proctab.h"

/* Interpreted frames need a JVM's interpreter, and no unwinder is given here: never reached. */
int symbolizer__runtime_frame(struct symbolizer *sym, enum dso_kind kind, const char *function,
			      const char *file, uint32_t line, struct frame *out)
{
	(void)sym, (void)kind, (void)function, (void)file, (void)line, (void)out;
	return -ENOSYS;
}

struct dso *symbolizer__unknown_dso(struct symbolizer *sym)
{
	(void)sym;
	return NULL;
}

void unwinder__set_java(struct unwinder *u, uint32_t pid, uint64_t lo, uint64_t hi)
{
	(void)u, (void)pid, (void)lo, (void)hi;
}

/* jvm.c alone: no process table to observe (jvm__observe is not under test). */
int proctab__observe(struct proctab *pt, const struct proc_observer *o)
{
	(void)pt;
	(void)o;
	return 0;
}

static int preloads;

/* The symbolizer's part, counted: only maps autoprof caused are handed over, none here. */
int symbolizer__jit_preload(struct symbolizer *sym, struct dso *dso, int dirfd, const char *name)
{
	(void)sym, (void)dso, (void)dirfd, (void)name;
	preloads++;
	return 0;
}

static pid_t stand_in(void)
{
	pid_t child = fork();

	if (!child) {
		signal(SIGQUIT, SIG_DFL);
		pause();
		_exit(0);
	}
	return child;
}

TEST(cut_after_first_jit_frame_until_known)
{
	unsigned long live = fake_dso__live();
	struct dso *lib = fake_dso__new(DSO_ELF, "/usr/lib/libjvm.so", NULL);
	struct dso *jit = fake_dso__new(DSO_ANON, "[jit]", NULL);
	struct jvm_stats st = {0};
	pid_t child = stand_in();
	struct jvm *j;
	bool cut = false;
	uint32_t n;
	int err, status = 0;

	CHECK(lib && jit && child > 0);
	j = jvm__new(NULL, NULL, &err);
	CHECK(j);
	{
		struct frame f[4] = {
		    {lib, 0x100}, {jit, 0x7f0000001000}, {jit, 0x7f0000002000}, {lib, 0x200}};

		n = jvm__frames(j, (uint32_t)child, jit, f, 4, &cut, now_ns());
		CHECK_EQ(n, 2);
		CHECK(cut);
		CHECK(f[1].dso == jit && f[1].addr == 0x7f0000001000);
	}
	/* The request runs on the attach thread and fails: no handler, so no signal. */
	for (int i = 0; i < 200; i++) {
		jvm__stats(j, &st);
		if (st.requests_failed)
			break;
		usleep(10000);
	}
	CHECK_EQ(st.requests_failed, 1);
	CHECK_EQ(st.requests_ok, 0);
	CHECK_EQ(st.processes, 1);
	CHECK_EQ(st.stacks_cut, 1);
	{
		/* Within the interval: no second request. */
		struct frame f[2] = {{jit, 0x7f0000003000}, {lib, 0x300}};

		n = jvm__frames(j, (uint32_t)child, jit, f, 2, &cut, now_ns());
		CHECK_EQ(n, 1);
		CHECK(cut);
	}
	usleep(100000);
	jvm__stats(j, &st);
	CHECK_EQ(st.requests_failed, 1);
	CHECK_EQ(st.stacks_cut, 2);

	kill(child, SIGTERM);
	waitpid(child, &status, 0);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
	jvm__exit(j, (uint32_t)child);
	jvm__stats(j, &st);
	CHECK_EQ(st.processes, 0);
	jvm__free(j);
	/* Nothing was ours: nothing handed over or removed. */
	CHECK_EQ(preloads, 0);
	dso__put(lib);
	dso__put(jit);
	CHECK_EQ(fake_dso__live(), live);
}

/* A process alive at shutdown lets go of its dsos too; a second JIT dso of one pid is kept. */
TEST(free_with_live_processes)
{
	unsigned long live = fake_dso__live();
	struct dso *jit1 = fake_dso__new(DSO_ANON, "[jit]", NULL);
	struct dso *jit2 = fake_dso__new(DSO_ANON, "[jit]", NULL);
	pid_t child = stand_in();
	struct jvm *j;
	bool cut;
	int err;

	CHECK(jit1 && jit2 && child > 0);
	j = jvm__new(NULL, NULL, &err);
	CHECK(j);
	{
		struct frame f[1] = {{jit1, 0x7f0000001000}};

		jvm__frames(j, (uint32_t)child, jit1, f, 1, &cut, now_ns());
		f[0].dso = jit2;
		jvm__frames(j, (uint32_t)child, jit2, f, 1, &cut, now_ns());
	}
	dso__put(jit1);
	dso__put(jit2);
	CHECK_EQ(fake_dso__live(), live + 2);
	jvm__free(j);
	kill(child, SIGTERM);
	waitpid(child, NULL, 0);
	CHECK_EQ(fake_dso__live(), live);
}

/* Waits for the attach thread to finish one request; returns the stats then. */
static struct jvm_stats settle(struct jvm *j, uint64_t done_before)
{
	struct jvm_stats st = {0};

	for (int i = 0; i < 300; i++) {
		jvm__stats(j, &st);
		if (st.requests_ok + st.requests_failed + st.requests_skipped > done_before)
			break;
		usleep(10000);
	}
	return st;
}

/* Someone else's map (written since the process started) is left alone; one older than the
 * process (an earlier process's with the same pid) is not someone else's. */
TEST(foreign_and_stale_maps)
{
	struct dso *jit = fake_dso__new(DSO_ANON, "[jit]", NULL);
	char path[64];
	pid_t child[2] = {stand_in(), stand_in()};
	struct frame f[1] = {{jit, 0x7f0000001000}};
	struct jvm_stats st;
	struct jvm *j;
	bool cut;
	int err;

	CHECK(jit && child[0] > 0 && child[1] > 0);
	usleep(1100000); /* a map written now is newer than both, to the second */
	for (int i = 0; i < 2; i++) {
		FILE *m;

		snprintf(path, sizeof(path), "/tmp/perf-%d.map", child[i]);
		m = fopen(path, "w");
		CHECK(m);
		fputs("7f0000000000 1000 void Other.agent()\n", m);
		fclose(m);
	}
	/* The second one's map is from before it started. */
	CHECK(!utimensat(AT_FDCWD, path,
			 (struct timespec[2]){{.tv_sec = 1000000000}, {.tv_sec = 1000000000}}, 0));
	j = jvm__new(NULL, NULL, &err);
	CHECK(j);
	jvm__frames(j, (uint32_t)child[0], jit, f, 1, &cut, now_ns());
	st = settle(j, 0);
	CHECK_EQ(st.requests_skipped, 1);
	CHECK_EQ(st.requests_failed, 0);
	jvm__frames(j, (uint32_t)child[1], jit, f, 1, &cut, now_ns());
	st = settle(j, 1);
	CHECK_EQ(st.requests_skipped, 1);
	/* Taken over: asked for (and failed, this is no JVM). */
	CHECK_EQ(st.requests_failed, 1);
	jvm__free(j);
	for (int i = 0; i < 2; i++) {
		kill(child[i], SIGTERM);
		waitpid(child[i], NULL, 0);
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", child[i]);
		/* Neither was ours: both still there. */
		CHECK(!access(path, F_OK));
		unlink(path);
	}
	dso__put(jit);
}

/*
 * A process in a root of its own whose /tmp is an absolute symlink (a container's /tmp ->
 * /jvmtest-tmp): its /tmp is looked for inside that root, not on the host, where the symlink
 * would lead elsewhere (here: nowhere, so the request would fail instead of finding the map).
 */
TEST(tmp_symlink_resolves_in_its_root)
{
	struct dso *jit = fake_dso__new(DSO_ANON, "[jit]", NULL);
	char root[] = "/tmp/test_jvm_root.XXXXXX", path[128];
	struct frame f[1] = {{jit, 0x7f0000001000}};
	struct jvm_stats st = {0};
	struct jvm *j = NULL;
	pid_t child = -1;
	bool cut;
	FILE *m;
	int err;

	if (getuid())
		SKIP("needs root");
	if (!access("/jvmtest-tmp", F_OK))
		SKIP("/jvmtest-tmp exists on the host");
	CHECK(jit && mkdtemp(root));
	snprintf(path, sizeof(path), "%s/jvmtest-tmp", root);
	CHECK(!mkdir(path, 01777));
	snprintf(path, sizeof(path), "%s/tmp", root);
	CHECK(!symlink("/jvmtest-tmp", path));
	child = fork();
	if (!child) {
		signal(SIGQUIT, SIG_DFL);
		if (chroot(root) || chdir("/"))
			_exit(1);
		pause();
		_exit(0);
	}
	usleep(1100000); /* the map is newer than the process, to the second: another writer's */
	snprintf(path, sizeof(path), "%s/jvmtest-tmp/perf-%d.map", root, child);
	m = fopen(path, "w");
	if (m) {
		fputs("7f0000000000 1000 void Other.agent()\n", m);
		fclose(m);
		j = jvm__new(NULL, NULL, &err);
	}
	if (j) {
		jvm__frames(j, (uint32_t)child, jit, f, 1, &cut, now_ns());
		st = settle(j, 0);
		jvm__free(j);
	}
	kill(child, SIGTERM);
	waitpid(child, NULL, 0);
	unlink(path);
	snprintf(path, sizeof(path), "%s/jvmtest-tmp", root);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/tmp", root);
	unlink(path);
	rmdir(root);
	dso__put(jit);
	CHECK(m && j);
	CHECK_EQ(st.requests_failed, 0);
	CHECK_EQ(st.requests_skipped, 1);
}

int main(void)
{
	RUN(cut_after_first_jit_frame_until_known);
	RUN(free_with_live_processes);
	RUN(foreign_and_stale_maps);
	RUN(tmp_symlink_resolves_in_its_root);
	return test_summary();
}
