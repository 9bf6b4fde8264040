/* DEPS: src/symbolize/symbolizer.c src/symbolize/objsym.c src/symbolize/dwarf.c src/symbolize/dwarf_cu.c src/lib/array.c src/symbolize/gosym.c src/symbolize/perfmap.c src/symbolize/debuginfo.c src/symbolize/demangle.c src/symbolize/dso.c src/proc/proctab.c src/proc/container.c src/proc/procctx.c gen/opentelemetry/proto/processcontext/v1development/process_context.pb-c.c gen/opentelemetry/proto/resource/v1/resource.pb-c.c gen/opentelemetry/proto/common/v1/common.pb-c.c src/symbolize/elf.c src/symbolize/kallsyms.c src/lib/buf.c src/lib/procmaps.c src/lib/strtab.c src/lib/log.c src/lib/procmem.c src/lib/ufile.c src/lib/procfs.c */
// SPDX-License-Identifier: GPL-2.0-only
/*
 * The symbolizer with the process table, on real processes: this test itself (its own function,
 * a libc function), and children running $BUILD/fixtures/waiter (tests/fixtures/waiter.c), alive,
 * exited, started from a deleted file, or two at once. Kernel frames use /proc/kallsyms.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/strtab.h"
#include "lib/timeconst.h"
#include "symbolize/dso.h"
#include "src/lib/procmaps.h"
#include "symbolize/objsym.h"
#include "src/proc/proctab.h"
#include "symbolize/symbolizer.h"
#include "gopclntab_elf.h"
#include "testlib.h"

/* Whether a JVM hook cut a stack: no hook is set here, so never. */
static bool cut;

/* The test's own frames: a function of this binary, under its own name. */
static volatile int target_sink;

__attribute__((noinline, used)) static int symtest_target_function(int x)
{
	target_sink += x;
	return target_sink * 3;
}

static const char *fixture(const char *name)
{
	static char path[PATH_MAX];
	char rel[PATH_MAX];
	const char *build = getenv("BUILD");

	snprintf(rel, sizeof(rel), "%s/fixtures/%s", build && *build ? build : "build", name);
	/* Absolute, as /proc/PID/maps shows it. */
	if (!realpath(rel, path))
		snprintf(path, sizeof(path), "%s", rel);
	return path;
}

/* Start and size of name as nm sees it. Returns 0 or -ENOENT. */
/* Children still running, killed at exit whatever the tests did. */
static pid_t children[8];

static void child__kill(pid_t pid)
{
	for (size_t i = 0; i < sizeof(children) / sizeof(children[0]); i++) {
		if (children[i] == pid) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			children[i] = 0;
		}
	}
}

static void children__kill(void)
{
	for (size_t i = 0; i < sizeof(children) / sizeof(children[0]); i++)
		if (children[i])
			child__kill(children[i]);
}

/* Runs path (a waiter) and waits for its "ready". Returns the pid, or -1. */
static pid_t child__start(const char *path)
{
	struct pollfd pfd;
	char buf[16];
	int fds[2];
	size_t slot;
	pid_t pid;
	ssize_t n;

	for (slot = 0; slot < sizeof(children) / sizeof(children[0]); slot++)
		if (!children[slot])
			break;
	if (slot == sizeof(children) / sizeof(children[0]) || pipe(fds))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	children[slot] = pid;
	close(fds[1]);
	pfd = (struct pollfd){ .fd = fds[0], .events = POLLIN };
	n = poll(&pfd, 1, 10000) == 1 ? read(fds[0], buf, sizeof(buf)) : -1;
	close(fds[0]);
	if (n != 6 || memcmp(buf, "ready\n", 6)) {
		child__kill(pid);
		return -1;
	}
	return pid;
}

struct base_ctx {
	const char *path;
	uint64_t base;
	bool deleted;
};

static int base_cb(const struct map_entry *e, void *arg)
{
	struct base_ctx *ctx = arg;

	if (e->pgoff || strcmp(e->path, ctx->path))
		return 0;
	ctx->base = e->start;
	ctx->deleted = e->deleted;
	return 1;
}

/* Where pid mapped the start of the file at path (its load bias, for a PIE); 0 if nowhere. */
static uint64_t load_base(pid_t pid, const char *path, bool *deleted)
{
	struct base_ctx ctx = { path, 0, false };

	if (maps__for_each(pid, false, base_cb, &ctx) != 1)
		return 0;
	if (deleted)
		*deleted = ctx.deleted;
	return ctx.base;
}

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in, out, err = 0;
	ssize_t n;

	in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (out < 0) {
		err = -errno;
		close(in);
		return err;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			err = -EIO;
	if (n < 0)
		err = -errno;
	close(in);
	if (close(out) && !err)
		err = -errno;
	return err;
}

/* A private directory holding a copy of the waiter, named "waiter". */
static char tmpdir[64];
static char tmp_waiter[128];

static int tmp_waiter__make(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/autoprof-symtest-XXXXXX");
	if (!mkdtemp(tmpdir))
		return -errno;
	snprintf(tmp_waiter, sizeof(tmp_waiter), "%s/waiter", tmpdir);
	return copy_file(fixture("waiter"), tmp_waiter);
}

static void tmp_waiter__remove(void)
{
	if (!tmpdir[0])
		return;
	unlink(tmp_waiter);
	rmdir(tmpdir);
	tmpdir[0] = '\0';
}

/* A symbolizer, a process table and a string table; NULL members when out of memory. */
struct env {
	struct symbolizer *sym;
	struct proctab *pt;
	struct strtab *st;
};

static int env__init(struct env *e)
{
	struct symbolizer_opts opts = { .cache_bytes = 256 << 20 };

	e->sym = symbolizer__new(&opts);
	e->pt = e->sym ? proctab__new(e->sym) : NULL;
	e->st = strtab__new();
	return e->sym && e->pt && e->st ? 0 : -ENOMEM;
}

static void env__fini(struct env *e)
{
	proctab__free(e->pt);
	symbolizer__free(e->sym);
	strtab__free(e->st);
}

/* The name a frame resolves to (its outermost function), and whether a symbol was found. */
static const char *frame_name(struct env *e, const struct frame *f, int *resolved)
{
	struct sym_frame out;

	memset(&out, 0, sizeof(out));
	if (symbolizer__frame(e->sym, f, e->st, &out) || !out.nr_lines)
		return NULL;
	if (resolved)
		*resolved = out.resolved;
	return strtab__str(e->st, out.lines[out.nr_lines - 1].function);
}

/* One user frame of pid (learned now if new) at addr. */
static struct frame user_frame(struct env *e, pid_t pid, uint64_t addr)
{
	struct frame f = { NULL, 0 };
	struct proc *p = proctab__get(e->pt, (uint32_t)pid, 0, now_ns());

	if (p)
		proctab__user_frames(e->pt, p, &addr, 1, &f, now_ns(), &cut);
	return f;
}

/* The waiter's function name, mapped at base, as an address in its process. */
static uint64_t waiter_addr(const char *name, uint64_t base, uint64_t delta)
{
	uint64_t vaddr, size;

	if (test_nm_symbol(fixture("waiter"), name, 0, &vaddr, &size))
		return 0;
	return base + vaddr + delta;
}

/* The file holding addr as the kernel names it (no symlinks), to free; NULL on error. */
static char *file_of(const void *addr, const char **sname)
{
	Dl_info info;

	if (!dladdr(addr, &info) || !info.dli_fname || !info.dli_sname)
		return NULL;
	*sname = info.dli_sname;
	return realpath(info.dli_fname, NULL);
}

TEST(own_process_names_own_function_and_libc)
{
	const char *libc_name = NULL;
	char *exe, *libc;
	struct symbolizer_stats s0, s1, s2;
	struct proctab_stats ps;
	uint64_t addrs[2];
	struct frame f[2];
	struct env e;
	struct proc *p;
	void *libc_fn;
	int resolved = -1;

	CHECK_EQ(env__init(&e), 0);
	exe = realpath("/proc/self/exe", NULL);
	CHECK(exe);
	libc_fn = dlsym(RTLD_DEFAULT, "getpid");
	CHECK(libc_fn);
	libc = file_of(libc_fn, &libc_name);
	CHECK(libc);

	symbolizer__stats(e.sym, &s0);
	p = proctab__get(e.pt, (uint32_t)getpid(), 0, now_ns());
	CHECK(p);
	CHECK_STR(proc__exe(p), strrchr(exe, '/') + 1);
	proctab__stats(e.pt, &ps);
	CHECK_EQ(ps.processes, 1);
	CHECK_EQ(ps.maps_reads, 1);
	addrs[0] = (uint64_t)(uintptr_t)&symtest_target_function;
	addrs[1] = (uint64_t)(uintptr_t)libc_fn;
	proctab__user_frames(e.pt, p, addrs, 2, f, now_ns(), &cut);
	/* Every address was mapped: no second read of the maps. */
	proctab__stats(e.pt, &ps);
	CHECK_EQ(ps.maps_reads, 1);
	CHECK_EQ(ps.frames_unmapped, 0);

	CHECK(f[0].dso && f[1].dso);
	CHECK_EQ(dso__kind(f[0].dso), DSO_ELF);
	CHECK_STR(dso__path(f[0].dso), exe);
	CHECK_EQ(dso__kind(f[1].dso), DSO_ELF);
	CHECK_STR(dso__path(f[1].dso), libc);
	CHECK(f[0].dso != f[1].dso);
	CHECK(dso__id(f[0].dso) != dso__id(f[1].dso));
	/* File offsets, not process addresses. */
	CHECK(f[0].addr < addrs[0]);
	CHECK(f[1].addr < addrs[1]);

	CHECK_STR(frame_name(&e, &f[0], &resolved), "symtest_target_function");
	CHECK_EQ(resolved, 1);
	resolved = -1;
	CHECK_STR(frame_name(&e, &f[1], &resolved), libc_name);
	CHECK_EQ(resolved, 1);
	symbolizer__stats(e.sym, &s1);
	CHECK_EQ(s1.lookups_hit, s0.lookups_hit + 2);
	CHECK_EQ(s1.loads, s0.loads + 2);
	CHECK_EQ(s1.load_errors, 0);
	CHECK(s1.bytes > s0.bytes);
	CHECK(s1.dsos >= 2);

	/* The tables stay loaded: a second lookup loads nothing. */
	CHECK_STR(frame_name(&e, &f[0], NULL), "symtest_target_function");
	symbolizer__stats(e.sym, &s2);
	CHECK_EQ(s2.lookups_hit, s1.lookups_hit + 1);
	CHECK_EQ(s2.loads, s1.loads);
	CHECK_EQ(s2.open_errors, 0);
	free(exe);
	free(libc);
	env__fini(&e);
}

TEST(exited_child_still_symbolizes)
{
	struct symbolizer_stats s;
	struct env e;
	struct proc *p;
	struct frame f;
	uint64_t base, addr;
	pid_t pid;
	int resolved = -1;

	CHECK_EQ(env__init(&e), 0);
	CHECK_EQ(tmp_waiter__make(), 0);
	pid = child__start(tmp_waiter);
	CHECK(pid > 0);
	base = load_base(pid, tmp_waiter, NULL);
	CHECK(base);
	addr = waiter_addr("waiter_sleep", base, 1);
	CHECK(addr > base);

	proctab__exec(e.pt, (uint32_t)pid, NULL, false, now_ns());
	p = proctab__get(e.pt, (uint32_t)pid, 0, now_ns());
	CHECK(p);
	CHECK_STR(proc__exe(p), "waiter");
	proctab__user_frames(e.pt, p, &addr, 1, &f, now_ns(), &cut);
	CHECK(f.dso);
	CHECK_EQ(dso__kind(f.dso), DSO_ELF);
	CHECK_STR(dso__path(f.dso), tmp_waiter);

	/* Gone, reaped and its file deleted: only the dso's open descriptor is left. */
	child__kill(pid);
	CHECK_EQ(kill(pid, 0), -1);
	CHECK_EQ(unlink(tmp_waiter), 0);
	CHECK_STR(frame_name(&e, &f, &resolved), "waiter_sleep");
	CHECK_EQ(resolved, 1);
	symbolizer__stats(e.sym, &s);
	CHECK_EQ(s.lookups_hit, 1);
	CHECK_EQ(s.loads, 1);
	CHECK_EQ(s.load_errors, 0);
	CHECK_EQ(s.open_errors, 0);
	tmp_waiter__remove();
	env__fini(&e);
}

/*
 * A process known from before its exec whose samples of the new image come in before the
 * exec's event (it waits in another ring behind them): the maps read again for the pcs they
 * lack are the new image's, and so must the name be.
 */
TEST(exec_seen_before_its_event_takes_the_new_name)
{
	size_t slot = sizeof(children) / sizeof(children[0]);
	int gate[2], out[2];
	struct env e;
	struct proc *p;
	struct frame f;
	uint64_t base, addr;
	char buf[8];
	pid_t pid;

	CHECK_EQ(env__init(&e), 0);
	CHECK_EQ(tmp_waiter__make(), 0);
	CHECK_EQ(pipe(gate), 0);
	CHECK_EQ(pipe(out), 0);
	for (size_t i = sizeof(children) / sizeof(children[0]); i-- > 0;)
		if (!children[i])
			slot = i;
	CHECK(slot < sizeof(children) / sizeof(children[0]));
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		char c;

		dup2(out[1], 1);
		close(out[0]);
		close(gate[1]);
		if (read(gate[0], &c, 1) == 1)
			execl(tmp_waiter, tmp_waiter, (char *)NULL);
		_exit(127);
	}
	children[slot] = pid;
	close(out[1]);
	close(gate[0]);
	/* Learned as what it is before the exec: this program. */
	p = proctab__get(e.pt, (uint32_t)pid, 0, now_ns());
	CHECK(p);
	CHECK(strcmp(proc__exe(p), "waiter"));
	CHECK_EQ(write(gate[1], "x", 1), 1);
	CHECK_EQ(read(out[0], buf, 6), 6); /* the waiter's "ready": the exec is done */
	base = load_base(pid, tmp_waiter, NULL);
	CHECK(base);
	addr = waiter_addr("waiter_sleep", base, 1);
	/* No proctab__exec: its event has not been read yet. */
	proctab__user_frames(e.pt, p, &addr, 1, &f, now_ns(), &cut);
	CHECK_STR(proc__exe(p), "waiter");
	CHECK(f.dso);
	CHECK_STR(dso__path(f.dso), tmp_waiter);
	/* Then the event: the process starts over, and is named again. */
	p = proctab__exec(e.pt, (uint32_t)pid, NULL, false, now_ns());
	CHECK(p);
	CHECK_STR(proc__exe(p), "waiter");
	CHECK_STR(proc__exe_path(p), tmp_waiter);
	child__kill(pid);
	close(gate[1]);
	close(out[0]);
	tmp_waiter__remove();
	env__fini(&e);
}

TEST(deleted_binary_symbolizes_through_map_files)
{
	struct symbolizer_stats s;
	struct env e;
	struct proc *p;
	struct frame f;
	uint64_t base, addr;
	bool deleted = false;
	pid_t pid;
	int resolved = -1;

	if (geteuid())
		SKIP("/proc/PID/map_files needs CAP_SYS_ADMIN");
	CHECK_EQ(env__init(&e), 0);
	CHECK_EQ(tmp_waiter__make(), 0);
	pid = child__start(tmp_waiter);
	CHECK(pid > 0);
	CHECK_EQ(unlink(tmp_waiter), 0);
	base = load_base(pid, tmp_waiter, &deleted);
	CHECK(base);
	CHECK(deleted);
	addr = waiter_addr("waiter_aligned", base, 4);
	CHECK(addr > base);

	proctab__exec(e.pt, (uint32_t)pid, NULL, false, now_ns());
	p = proctab__get(e.pt, (uint32_t)pid, 0, now_ns());
	CHECK(p);
	/* Without " (deleted)". */
	CHECK_STR(proc__exe(p), "waiter");
	proctab__user_frames(e.pt, p, &addr, 1, &f, now_ns(), &cut);
	CHECK(f.dso);
	CHECK_EQ(dso__kind(f.dso), DSO_ELF);
	CHECK_STR(dso__path(f.dso), tmp_waiter);
	CHECK_STR(frame_name(&e, &f, &resolved), "waiter_aligned");
	CHECK_EQ(resolved, 1);
	symbolizer__stats(e.sym, &s);
	CHECK_EQ(s.open_errors, 0);
	CHECK_EQ(s.load_errors, 0);
	child__kill(pid);
	tmp_waiter__remove();
	env__fini(&e);
}

TEST(two_processes_of_one_binary_share_a_dso)
{
	struct symbolizer_stats s1, s2;
	const char *path = fixture("waiter");
	struct frame f1, f2;
	uint64_t b1, b2;
	struct env e;
	pid_t p1, p2;

	CHECK_EQ(env__init(&e), 0);
	p1 = child__start(path);
	CHECK(p1 > 0);
	p2 = child__start(path);
	CHECK(p2 > 0);
	b1 = load_base(p1, path, NULL);
	b2 = load_base(p2, path, NULL);
	CHECK(b1 && b2);

	proctab__exec(e.pt, (uint32_t)p1, NULL, false, now_ns());
	symbolizer__stats(e.sym, &s1);
	CHECK(s1.dsos >= 1);
	proctab__exec(e.pt, (uint32_t)p2, NULL, false, now_ns());
	symbolizer__stats(e.sym, &s2);
	/* The executable, the libc and the loader: all known already. */
	CHECK_EQ(s2.dsos, s1.dsos);

	f1 = user_frame(&e, p1, waiter_addr("waiter_sleep", b1, 0));
	f2 = user_frame(&e, p2, waiter_addr("waiter_sleep", b2, 0));
	CHECK(f1.dso && f2.dso);
	CHECK_STR(dso__path(f1.dso), path);
	CHECK(f1.dso == f2.dso);
	CHECK_EQ(dso__id(f1.dso), dso__id(f2.dso));
	CHECK_EQ(f1.addr, f2.addr);
	CHECK(dso__build_id(f1.dso)[0]);
	CHECK_STR(frame_name(&e, &f2, NULL), "waiter_sleep");
	child__kill(p1);
	child__kill(p2);
	env__fini(&e);
}

/*
 * A copy of a binary (a container's: another inode, the same build ID) shares the original's
 * dso, and is opened once: later execs of the copy find it by its own inode, as the original's
 * find theirs. Rewritten in place, the copy is opened again.
 */
/* A process's executable file mappings as its exit would report them (PROC_EV_MAPS). */
struct exit_maps {
	struct proc_exit_map m[16];
	uint32_t n;
};

static int add_exit_map(const struct map_entry *me, void *arg)
{
	struct exit_maps *x = arg;

	if (me->inode && me->path[0] == '/' && x->n < 16)
		x->m[x->n++] = (struct proc_exit_map){ me->start, me->end, me->pgoff, me->inode,
						       (uint32_t)kernel_dev(me->dev_major,
									    me->dev_minor) };
	return 0;
}

static bool claim_all(void *ctx, uint32_t pid)
{
	(void)ctx;
	(void)pid;
	return true;
}

/* path's identity as BPF reports it at exec (struct proc_exe_id), with its comm; ino 0 when
 * path cannot be looked at. */
static struct proc_exe_id exe_id_of(const char *path, const char *comm)
{
	struct proc_exe_id exe = { 0 };
	struct stat sb;

	if (!stat(path, &sb)) {
		exe.ino = sb.st_ino;
		exe.dev = (uint32_t)kernel_dev(major(sb.st_dev), minor(sb.st_dev));
	}
	snprintf(exe.comm, sizeof(exe.comm), "%s", comm);
	return exe;
}

/*
 * A quiet executable: once a learned process of it exits with nothing claimed, its next
 * process is taken without a read at exec, named by its comm, and, gone before any sample
 * learned it, named by the mappings its exit reported. A claim takes the verdict back.
 */
TEST(quiet_exec_named_by_its_exit_maps)
{
	const char *path = fixture("waiter");
	struct proc_exe_id exe = exe_id_of(path, "waiter"), said;
	struct proctab_stats st;
	struct exit_maps x1 = { 0 }, x2 = { 0 };
	struct env e;
	struct frame f;
	struct proc *p;
	uint64_t b2;
	pid_t p1, p2;
	uint32_t n;

	CHECK_EQ(env__init(&e), 0);
	CHECK(exe.ino);
	p1 = child__start(path);
	p2 = child__start(path);
	CHECK(p1 > 0 && p2 > 0);
	b2 = load_base(p2, path, NULL);
	CHECK(b2);
	CHECK_EQ(maps__for_each(p1, true, add_exit_map, &x1), 0);
	CHECK_EQ(maps__for_each(p2, true, add_exit_map, &x2), 0);
	CHECK(x1.n >= 2 && x2.n >= 2);

	/* Learned at its exec, and all it mapped was learned: quiet. */
	proctab__exec(e.pt, (uint32_t)p1, &exe, false, now_ns());
	CHECK_EQ(proctab__exit_maps(e.pt, (uint32_t)p1, x1.m, x1.n, false, &said), 1);
	CHECK_EQ(said.ino, exe.ino);
	/* More mappings than its exit could report: not quiet. */
	CHECK_EQ(proctab__exit_maps(e.pt, (uint32_t)p1, x1.m, x1.n, true, &said), 0);

	p = proctab__exec(e.pt, (uint32_t)p2, &exe, true, now_ns());
	CHECK(p && proc__unlearned(p));
	CHECK_STR(proc__exe(p), "waiter");
	CHECK_EQ(proc__maps(p, &n) == NULL || n == 0, 1);
	child__kill(p2);
	proctab__exiting(e.pt, (uint32_t)p2);
	/* Gone before a sample learned it: its exit's mappings name its frames. */
	CHECK_EQ(proctab__exit_maps(e.pt, (uint32_t)p2, x2.m, x2.n, false, &said), -1);
	f = user_frame(&e, p2, waiter_addr("waiter_sleep", b2, 0));
	CHECK(f.dso);
	CHECK_STR(dso__path(f.dso), path);
	CHECK_STR(frame_name(&e, &f, NULL), "waiter_sleep");
	CHECK_STR(proc__exe(p), "waiter");
	proctab__stats(e.pt, &st);
	CHECK_EQ(st.quiet_execs, 1);
	CHECK_EQ(st.named_at_exit, 1);
	CHECK_EQ(st.quiet_learned, 0);

	/* An observer that needed something at p1's exec: not quiet. */
	CHECK_EQ(proctab__observe(e.pt, &(struct proc_observer){ .name = "claims",
								  .claims = claim_all }),
		 0);
	CHECK_EQ(proctab__exit_maps(e.pt, (uint32_t)p1, x1.m, x1.n, false, &said), 0);
	child__kill(p1);
	env__fini(&e);
}

/*
 * A quiet process's samples that BPF described whole (files and offsets) leave it unlearned,
 * named by its executable's dso, not its comm; one still sampled past a second is learned. One
 * that mapped a file never read makes its executable loud again.
 */
TEST(quiet_samples_described_read_nothing)
{
	const char *path = fixture("waiter");
	struct proc_exe_id exe = exe_id_of(path, "waite"), said;
	struct proctab_stats s0, s1;
	struct exit_maps x = { 0 };
	struct env e;
	struct proc *p;
	uint64_t t;
	pid_t p1;

	CHECK_EQ(env__init(&e), 0);
	CHECK(exe.ino);
	p1 = child__start(path);
	CHECK(p1 > 0);
	CHECK(load_base(p1, path, NULL));
	CHECK_EQ(maps__for_each(p1, true, add_exit_map, &x), 0);
	/* Its dso made by a process of it learned before. */
	proctab__exec(e.pt, (uint32_t)p1, &exe, false, now_ns());

	t = now_ns();
	p = proctab__exec(e.pt, (uint32_t)p1, &exe, true, t);
	CHECK(p && proc__unlearned(p));
	CHECK_STR(proc__exe(p), "waiter");
	CHECK_STR(proc__exe_path(p), path);
	proctab__stats(e.pt, &s0);
	p = proctab__get_sample(e.pt, (uint32_t)p1, 0, true, t + 1000);
	CHECK(p && proc__unlearned(p));
	proctab__stats(e.pt, &s1);
	CHECK_EQ(s1.maps_reads, s0.maps_reads);
	CHECK_EQ(s1.quiet_described, s0.quiet_described + 1);
	/* Frames that came as addresses need its maps. */
	p = proctab__get_sample(e.pt, (uint32_t)p1, 0, false, t + 2000);
	CHECK(p && !proc__unlearned(p));
	proctab__stats(e.pt, &s1);
	CHECK_EQ(s1.maps_reads, s0.maps_reads + 1);
	/* Alive past a second: learned, described or not. */
	p = proctab__exec(e.pt, (uint32_t)p1, &exe, true, t);
	p = proctab__get_sample(e.pt, (uint32_t)p1, 0, true, t + 2000000000ULL);
	CHECK(p && !proc__unlearned(p));

	/* Never learned, every file it mapped known: nothing to say. A file never read (LD_PRELOAD,
	 * a dlopen): not quiet any more. */
	proctab__exec(e.pt, (uint32_t)p1, &exe, true, t);
	CHECK_EQ(proctab__exit_maps(e.pt, (uint32_t)p1, x.m, x.n, false, &said), -1);
	proctab__exec(e.pt, (uint32_t)p1, &exe, true, t);
	CHECK(x.n < 16);
	x.m[x.n] = (struct proc_exit_map){ 0x7f0000000000ULL, 0x7f0000001000ULL, 0, 0x7fffffff,
					   exe.dev };
	CHECK_EQ(proctab__exit_maps(e.pt, (uint32_t)p1, x.m, x.n + 1, false, &said), 0);
	CHECK_EQ(said.ino, exe.ino);
	proctab__exec(e.pt, (uint32_t)p1, &exe, true, t);
	CHECK_EQ(proctab__exit_maps(e.pt, (uint32_t)p1, x.m, x.n, true, &said), 0);
	child__kill(p1);
	env__fini(&e);
}

TEST(copy_of_a_binary_opened_once)
{
	const char *path = fixture("waiter");
	struct symbolizer_stats s0, s1, s2, s3;
	struct frame f1, f2;
	uint64_t b1, b2;
	struct env e;
	pid_t p1, p2, p3, p4;

	CHECK_EQ(env__init(&e), 0);
	CHECK_EQ(tmp_waiter__make(), 0);
	p1 = child__start(path);
	CHECK(p1 > 0);
	b1 = load_base(p1, path, NULL);
	proctab__exec(e.pt, (uint32_t)p1, NULL, false, now_ns());
	symbolizer__stats(e.sym, &s0);
	CHECK(s0.opens >= 1);

	p2 = child__start(tmp_waiter);
	CHECK(p2 > 0);
	b2 = load_base(p2, tmp_waiter, NULL);
	CHECK(b1 && b2);
	proctab__exec(e.pt, (uint32_t)p2, NULL, false, now_ns());
	symbolizer__stats(e.sym, &s1);
	/* The copy alone is new: opened to read its build ID, then shared. */
	CHECK_EQ(s1.opens, s0.opens + 1);
	CHECK_EQ(s1.dsos, s0.dsos);
	f1 = user_frame(&e, p1, waiter_addr("waiter_sleep", b1, 0));
	f2 = user_frame(&e, p2, waiter_addr("waiter_sleep", b2, 0));
	CHECK(f1.dso && f1.dso == f2.dso);
	CHECK_STR(frame_name(&e, &f2, NULL), "waiter_sleep");

	/* Its next exec: nothing opened. */
	p3 = child__start(tmp_waiter);
	CHECK(p3 > 0);
	CHECK(load_base(p3, tmp_waiter, NULL));
	proctab__exec(e.pt, (uint32_t)p3, NULL, false, now_ns());
	symbolizer__stats(e.sym, &s2);
	CHECK_EQ(s2.opens, s1.opens);

	/* Its change time moves (as a rewrite in place would move it): read again. */
	child__kill(p2);
	child__kill(p3);
	CHECK_EQ(chmod(tmp_waiter, 0700), 0);
	p4 = child__start(tmp_waiter);
	CHECK(p4 > 0);
	CHECK(load_base(p4, tmp_waiter, NULL));
	proctab__exec(e.pt, (uint32_t)p4, NULL, false, now_ns());
	symbolizer__stats(e.sym, &s3);
	CHECK_EQ(s3.opens, s2.opens + 1);
	child__kill(p1);
	child__kill(p4);
	tmp_waiter__remove();
	env__fini(&e);
}

/* Start of a kernel text symbol from /proc/kallsyms; 0 if absent or hidden. */
static uint64_t kallsyms_addr(const char *name)
{
	char line[512], sym[256];
	uint64_t addr = 0, a;
	char type;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNx64 " %c %255s", &a, &type, sym) == 3 &&
		    (type == 'T' || type == 't') && !strcmp(sym, name)) {
			addr = a;
			break;
		}
	}
	fclose(f);
	return addr;
}

TEST(kernel_frame_names_schedule)
{
	uint64_t addr = kallsyms_addr("schedule");
	struct symbolizer_stats s;
	struct frame f;
	struct env e;
	int resolved = -1;

	if (!addr)
		SKIP("/proc/kallsyms hides addresses (kptr_restrict) or lacks schedule");
	CHECK_EQ(env__init(&e), 0);
	f = (struct frame){ symbolizer__kernel_dso(e.sym), addr };
	CHECK_EQ(dso__kind(f.dso), DSO_KERNEL);
	CHECK_STR(dso__path(f.dso), "[kernel.kallsyms]");
	CHECK_STR(frame_name(&e, &f, &resolved), "schedule");
	CHECK_EQ(resolved, 1);
	/* Inside the function, too. */
	f.addr = addr + 1;
	CHECK_STR(frame_name(&e, &f, NULL), "schedule");
	symbolizer__stats(e.sym, &s);
	CHECK_EQ(s.loads, 1);
	CHECK_EQ(s.lookups_hit, 2);
	/* The kernel dso is a singleton, not one of the indexed objects. */
	CHECK_EQ(s.dsos, 0);
	env__fini(&e);
}

TEST(unmapped_address_is_unknown)
{
	struct symbolizer_stats s;
	struct proctab_stats ps;
	struct frame f;
	struct env e;
	int resolved = -1;

	CHECK_EQ(env__init(&e), 0);
	/* Below vm.mmap_min_addr: never mapped. */
	f = user_frame(&e, getpid(), 0x1230);
	CHECK(f.dso == symbolizer__unknown_dso(e.sym));
	CHECK_EQ(dso__kind(f.dso), DSO_UNKNOWN);
	CHECK_STR(dso__path(f.dso), "[unknown]");
	CHECK_EQ(f.addr, 0x1230);
	proctab__stats(e.pt, &ps);
	CHECK_EQ(ps.frames_unmapped, 1);
	CHECK_STR(frame_name(&e, &f, &resolved), "0x1230");
	CHECK_EQ(resolved, 0);
	symbolizer__stats(e.sym, &s);
	CHECK_EQ(s.lookups_hit, 0);
	CHECK_EQ(s.lookups_miss, 1);
	env__fini(&e);
}

TEST(elf_offset_without_symbol_gets_basename_and_offset)
{
	const char *path = fixture("waiter");
	uint64_t base, vaddr, size, next, nsize;
	struct symbolizer_stats s;
	struct frame f, g;
	char want[64];
	struct env e;
	int resolved = -1;
	pid_t pid;

	CHECK_EQ(test_nm_symbol(path, "waiter_short", 0, &vaddr, &size), 0);
	CHECK_EQ(test_nm_symbol(path, "waiter_aligned", 0, &next, &nsize), 0);
	/* The padding after waiter_short belongs to no symbol. */
	CHECK(vaddr + size < next);
	CHECK_EQ(env__init(&e), 0);
	pid = child__start(path);
	CHECK(pid > 0);
	base = load_base(pid, path, NULL);
	CHECK(base);

	f = user_frame(&e, pid, base + vaddr + size);
	g = user_frame(&e, pid, base + vaddr + size - 1);
	CHECK(f.dso);
	CHECK(f.dso == g.dso);
	CHECK_EQ(dso__kind(f.dso), DSO_ELF);
	CHECK_EQ(f.addr, g.addr + 1);
	snprintf(want, sizeof(want), "waiter+0x%" PRIx64, f.addr);
	CHECK_STR(frame_name(&e, &f, &resolved), want);
	CHECK_EQ(resolved, 0);
	/* One byte before is the last of waiter_short. */
	resolved = -1;
	CHECK_STR(frame_name(&e, &g, &resolved), "waiter_short");
	CHECK_EQ(resolved, 1);
	symbolizer__stats(e.sym, &s);
	CHECK_EQ(s.lookups_miss, 1);
	CHECK_EQ(s.lookups_hit, 1);
	CHECK_EQ(s.lookups_failed, 0);
	child__kill(pid);
	env__fini(&e);
}

TEST(exit_drops_process_and_trim_forgets_unreferenced_dsos)
{
	const char *path = fixture("waiter");
	struct symbolizer_stats s0, s1, s2;
	struct proctab_stats ps;
	struct dso *held;
	struct frame f;
	struct env e;
	uint64_t base;
	pid_t pid;

	CHECK_EQ(env__init(&e), 0);
	pid = child__start(path);
	CHECK(pid > 0);
	base = load_base(pid, path, NULL);
	CHECK(base);
	proctab__exec(e.pt, (uint32_t)pid, NULL, false, now_ns());
	f = user_frame(&e, pid, waiter_addr("waiter_sleep", base, 0));
	CHECK(f.dso);
	CHECK_STR(dso__path(f.dso), path);
	proctab__stats(e.pt, &ps);
	CHECK_EQ(ps.processes, 1);
	symbolizer__stats(e.sym, &s0);
	/* The executable, libc, the loader. */
	CHECK(s0.dsos >= 3);

	/* Mapped by a known process: trim keeps everything. */
	symbolizer__trim(e.sym);
	symbolizer__stats(e.sym, &s1);
	CHECK_EQ(s1.dsos, s0.dsos);

	held = dso__get(f.dso);
	proctab__exit(e.pt, 424242424);
	proctab__stats(e.pt, &ps);
	CHECK_EQ(ps.processes, 1);
	proctab__exit(e.pt, (uint32_t)pid);
	proctab__stats(e.pt, &ps);
	CHECK_EQ(ps.processes, 0);
	/* Only the held executable survives. */
	symbolizer__trim(e.sym);
	symbolizer__stats(e.sym, &s1);
	CHECK_EQ(s1.dsos, 1);
	CHECK_STR(dso__path(held), path);
	f.dso = held;
	CHECK_STR(frame_name(&e, &f, NULL), "waiter_sleep");

	dso__put(held);
	symbolizer__trim(e.sym);
	symbolizer__stats(e.sym, &s2);
	CHECK_EQ(s2.dsos, 0);
	CHECK_EQ(s2.bytes, 0);

	/* Learned again from scratch: new dsos. */
	f = user_frame(&e, pid, waiter_addr("waiter_sleep", base, 0));
	CHECK(f.dso);
	proctab__stats(e.pt, &ps);
	CHECK_EQ(ps.processes, 1);
	symbolizer__stats(e.sym, &s2);
	CHECK_EQ(s2.dsos, s0.dsos);
	CHECK_STR(frame_name(&e, &f, NULL), "waiter_sleep");
	child__kill(pid);
	env__fini(&e);
}

/* The kernel's own code pages are named as a whole, not taken for a process's JIT code. */
TEST(kernel_pages_named_as_a_whole)
{
	struct map_entry m = { .start = 0x7ffffffff000, .end = 0x800000000000, .readable = true,
			       .executable = true, .path = "[uprobes]" };
	struct frame f;
	struct env e;

	CHECK_EQ(env__init(&e), 0);
	CHECK(symbolizer__kernel_page("[uprobes]"));
	CHECK(symbolizer__kernel_page("[vsyscall]"));
	CHECK(symbolizer__kernel_page("[vdso]"));
	CHECK(!symbolizer__kernel_page(""));
	CHECK(!symbolizer__kernel_page("[anon:jit]"));
	f.dso = symbolizer__dso_for_mapping(e.sym, getpid(), &m);
	CHECK(f.dso);
	CHECK_EQ(dso__kind(f.dso), DSO_SPECIAL);
	CHECK_STR(dso__path(f.dso), "[uprobes]");
	f.addr = 0xc;
	CHECK_STR(frame_name(&e, &f, NULL), "[uprobes]");
	dso__put(f.dso);
	m.path = "[vsyscall]";
	f.dso = symbolizer__dso_for_mapping(e.sym, getpid(), &m);
	CHECK_STR(frame_name(&e, &f, NULL), "[vsyscall]");
	dso__put(f.dso);
	env__fini(&e);
}

/*
 * A Go table over its budget is left out of an otherwise good load, and says so: objsym marks
 * it, which the symbolizer counts as autoprof_symbolizer_loads{result="too_large"}. The file: an
 * ELF whose .gopclntab claims 300 MiB, all there (a sparse memfd), beginning as a Go 1.20 table.
 */
TEST(go_table_over_budget_is_marked)
{
	struct objsym *os = NULL;
	int fd = claimed_table_elf(300ull << 20, (300ull << 20) + 4096);

	CHECK(fd >= 0);
	CHECK_EQ(objsym__load(fd, -1, &os), 0);
	if (os) {
		CHECK(objsym__sources(os) & OBJSYM_TOO_LARGE);
		CHECK(!(objsym__sources(os) & OBJSYM_GO));
	}
	objsym__free(os);
	close(fd);
}

int main(void)
{
	RUN(own_process_names_own_function_and_libc);
	RUN(exited_child_still_symbolizes);
	RUN(exec_seen_before_its_event_takes_the_new_name);
	tmp_waiter__remove();
	RUN(deleted_binary_symbolizes_through_map_files);
	tmp_waiter__remove();
	RUN(two_processes_of_one_binary_share_a_dso);
	RUN(quiet_exec_named_by_its_exit_maps);
	RUN(quiet_samples_described_read_nothing);
	RUN(copy_of_a_binary_opened_once);
	RUN(kernel_frame_names_schedule);
	RUN(unmapped_address_is_unknown);
	RUN(elf_offset_without_symbol_gets_basename_and_offset);
	RUN(exit_drops_process_and_trim_forgets_unreferenced_dsos);
	RUN(kernel_pages_named_as_a_whole);
	RUN(go_table_over_budget_is_marked);
	children__kill();
	return test_summary();
}
