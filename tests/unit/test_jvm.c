/* DEPS: src/collect/jvm.c src/collect/jvmattach.c src/symbolize/perfmap.c src/lib/strtab.c src/lib/log.c tests/unit/fake_symbolizer.c */
// SPDX-License-Identifier: GPL-2.0-only
/*
 * The JVM collector's bookkeeping without a JVM: a process that is none (a child without a
 * SIGQUIT handler) stands in. Its stacks are cut after the first JIT frame until the JVM says it
 * keeps frame pointers (it never does here); its first unknown JIT frame asks for a map once (and
 * the request fails without a signal sent); exit and shutdown let go of every dso. A real JVM is
 * tests/integration/test_java.py's.
 */
#include <signal.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collect/jvm.h"
#include "fake_symbolizer.h"
#include "store/frame.h"
#include "testlib.h"

static int preloads;

/* The symbolizer's part, counted: only maps autoprof caused are handed over, none here. */
int symbolizer__jit_preload(struct symbolizer *sym, struct dso *dso, int dirfd, const char *name)
{
	(void)sym, (void)dso, (void)dirfd, (void)name;
	preloads++;
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
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
	j = jvm__new(NULL, &err);
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
	j = jvm__new(NULL, &err);
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

int main(void)
{
	RUN(cut_after_first_jit_frame_until_known);
	RUN(free_with_live_processes);
	return test_summary();
}
