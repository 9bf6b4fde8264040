/* DEPS: src/runtime/tracectx.c src/runtime/golabels.c src/lib/procmaps.c src/symbolize/elf.c src/lib/log.c src/lib/procmem.c src/lib/ufile.c */
// SPDX-License-Identifier: GPL-2.0-only
/*
 * tracectx__locate against live processes: the targets of tests/targets/tracectx/tracectx.mk
 * print the offset of otel_thread_ctx_v1 from the thread pointer as they compute it themselves,
 * which must be what the locator finds from outside. Go targets print no offset: Go keeps g at
 * fs-8 in both of the ways it links on amd64, which the locator must find.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/runtime/tracectx.h"
#include "symbolize/dso.h"
#include "src/lib/procmaps.h"
#include "src/proc/proctab.h"
#include "testlib.h"

/* The symbolizer's dsos as tracectx__locate_maps sees them: a file, its key, its path. */
struct dso {
	char path[PATH_MAX];
	int fd;
	struct dso_file_key key;
};
enum dso_kind dso__kind(const struct dso *dso)
{
	(void)dso;
	return DSO_ELF;
}
const char *dso__path(const struct dso *dso)
{
	return dso->path;
}
int dso__fd(const struct dso *dso)
{
	return dso->fd;
}
int dso__file_key(const struct dso *dso, struct dso_file_key *key)
{
	*key = dso->key;
	return 0;
}

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

/* Starts a tctargets program and reads its TPOFF (unless Go) and PID lines. */
static int target__start(struct target *t, const char *name, char *env, bool go)
{
	char *argv[] = {(char *)target_path(name), "30", NULL};
	char line[256];
	int pid = 0, have_tpoff = go, err;

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

/* want_err 0: the locator must find the offset the target printed, and want_kind. */
static void check_kind(const char *name, char *env, int want_err, uint32_t want_kind)
{
	bool go = want_kind == TRACECTX_GO_MAP;
	struct tracectx_loc loc = {0};
	struct target t = {0};
	int err;

	err = target__start(&t, name, env, go);
	if (err == -ENOENT)
		SKIP("%s not built (make %s)", target_path(name), target_path(name));
	CHECK_EQ(err, 0);
	err = tracectx__locate(t.pid, &loc);
	target__stop(&t);
	CHECK_EQ(err, want_err);
	if (want_err)
		return;
	CHECK_EQ(loc.kind, want_kind);
	CHECK_EQ(loc.tp_offset, go ? -8 : t.tpoff);
	if (go) {
		/* What every Go with map labels has (test_golabels checks them per version). */
		CHECK_EQ(loc.go_g_m, 48);
		CHECK_EQ(loc.go_m_curg, 192);
		CHECK(loc.go_g_labels >= 344 && loc.go_g_labels <= 360);
	}
}

static void check_target(const char *name, char *env, int want_err)
{
	check_kind(name, env, want_err, TRACECTX_OTEP);
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

/* Elastic APM's record pointer in elastic-jvmti-linux-x86_64.so, a TLSDESC library. */
TEST(elastic_library)
{
	check_kind("tctx_elastic", NULL, 0, TRACECTX_ELASTIC);
}

/* Go's own linker: no PT_TLS, g at fs-8; offsets from DWARF. */
TEST(go_internal_link)
{
	check_kind("tctx_go", NULL, 0, TRACECTX_GO_MAP);
}

/* The system linker: runtime.tlsg in the executable's TLS block. */
TEST(go_external_link)
{
	check_kind("tctx_go_cgo", NULL, 0, TRACECTX_GO_MAP);
}

/* No symbols, no DWARF: offsets from the version in .go.buildinfo. */
TEST(go_stripped)
{
	check_kind("tctx_go_stripped", NULL, 0, TRACECTX_GO_MAP);
}

TEST(elastic_path)
{
	CHECK(tracectx__elastic_path("/opt/elastic/elastic-jvmti-linux-x86_64.so"));
	CHECK(tracectx__elastic_path("/tmp/elastic-jvmti-linux-arm_64-v2.so"));
	CHECK(tracectx__elastic_path("/elastic-jvmti-linux-.so"));
	CHECK(!tracectx__elastic_path("elastic-jvmti-linux-x86_64.so"));
	CHECK(!tracectx__elastic_path("/lib/libelastic-jvmti-linux-x86_64.so"));
	CHECK(!tracectx__elastic_path("/lib/elastic-jvmti-linux-x86.64.so"));
	CHECK(!tracectx__elastic_path("/lib/elastic-jvmti-linux-x86_64.so.1"));
	CHECK(!tracectx__elastic_path("/lib/elastic-jvmti-linux-x86_64"));
}

TEST(no_variable)
{
	char *argv[] = {"/bin/sleep", "30", NULL};
	struct tracectx_loc loc = {0};
	struct target t = {0};
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
	err = tracectx__locate(t.pid, &loc);
	target__stop(&t);
	CHECK_EQ(err, -ENOENT);
}

TEST(no_process)
{
	struct tracectx_loc loc = {0};
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (!pid)
		_exit(0);
	waitpid(pid, NULL, 0);
	CHECK_EQ(tracectx__locate(pid, &loc), -ESRCH);
}

/* This test itself has no variable, and reading one's own maps must work too. */
TEST(self)
{
	struct tracectx_loc loc = {0};

	CHECK_EQ(tracectx__locate(getpid(), &loc), -ENOENT);
}

/* A process's executable mappings as the proctab keeps them: one dso per mapping. */
struct fake_maps {
	int pid;
	struct proc_map maps[64];
	struct dso dsos[64];
	uint32_t n;
};

static int fake_map(const struct map_entry *e, void *ctx)
{
	struct fake_maps *fm = ctx;
	struct dso *d = &fm->dsos[fm->n];
	struct stat st;

	if (e->path[0] != '/' || fm->n == 64)
		return 0;
	d->fd = maps__open_file(fm->pid, e);
	if (d->fd < 0 || fstat(d->fd, &st))
		return -EIO;
	snprintf(d->path, sizeof(d->path), "%s", e->path);
	d->key = (struct dso_file_key){ st.st_dev, st.st_ino,
					(int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec,
					st.st_size };
	fm->maps[fm->n++] = (struct proc_map){ e->start, e->end, e->pgoff, d,
						   kernel_dev(e->dev_major, e->dev_minor), e->inode };
	return 0;
}

static void fake_maps__free(struct fake_maps *fm)
{
	for (uint32_t i = 0; i < fm->n; i++)
		close(fm->dsos[i].fd);
}

/*
 * What a file tells is read once: a second process of the same executable is located from the
 * cache alone (hits, no miss), and a file whose change time moved (rewritten in place) is read
 * again.
 */
TEST(cache)
{
	struct tracectx_cache *c = tracectx_cache__new(2);
	struct tracectx_cache_stats st0, st1, st2;
	struct fake_maps fm[2] = {};
	struct target t[2] = {};
	char exe[PATH_MAX];
	struct tracectx_loc loc;
	int err;

	CHECK(c != NULL);
	if (!realpath(target_path("tctx_exe"), exe))
		SKIP("%s not built", target_path("tctx_exe"));
	for (int i = 0; i < 2; i++) {
		err = target__start(&t[i], "tctx_exe", NULL, false);
		if (err == -ENOENT)
			SKIP("%s not built", target_path("tctx_exe"));
		CHECK_EQ(err, 0);
		fm[i].pid = t[i].pid;
		CHECK_EQ(maps__for_each(t[i].pid, true, fake_map, &fm[i]), 0);
		CHECK(fm[i].n >= 2);
	}
	CHECK_EQ(tracectx__locate_maps(c, t[0].pid, exe, fm[0].maps, fm[0].n,
				       &loc), 0);
	CHECK_EQ(loc.tp_offset, t[0].tpoff);
	tracectx_cache__stats(c, &st0);
	CHECK(st0.misses >= 1);

	CHECK_EQ(tracectx__locate_maps(c, t[1].pid, exe, fm[1].maps, fm[1].n,
				       &loc), 0);
	CHECK_EQ(loc.tp_offset, t[1].tpoff);
	tracectx_cache__stats(c, &st1);
	CHECK_EQ(st1.misses, st0.misses);
	CHECK(st1.hits > st0.hits);
	CHECK(st1.entries <= 2);

	/* Rewritten in place: same inode, another change time. */
	fm[1].dsos[0].key.ctime_ns++;
	CHECK_EQ(tracectx__locate_maps(c, t[1].pid, exe, fm[1].maps, fm[1].n,
				       &loc), 0);
	tracectx_cache__stats(c, &st2);
	CHECK_EQ(st2.misses, st1.misses + 1);
	CHECK(st2.entries <= 2);

	for (int i = 0; i < 2; i++) {
		fake_maps__free(&fm[i]);
		target__stop(&t[i]);
	}
	tracectx_cache__free(c);
}

int main(void)
{
	RUN(executable);
	RUN(tlsdesc_library);
	RUN(ie_library);
	RUN(dlopen_static_tls);
	RUN(dlopen_dynamic_tls);
	RUN(elastic_library);
	RUN(go_internal_link);
	RUN(go_external_link);
	RUN(go_stripped);
	RUN(elastic_path);
	RUN(no_variable);
	RUN(no_process);
	RUN(self);
	RUN(cache);
	return test_summary();
}
