// SPDX-License-Identifier: GPL-2.0-only
/* Attach mode: finding the object of a target process that defines its allocator, probing it. */
#define pr_fmt(fmt) "memory: " fmt

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "lib/bpfmap.h"
#include "lib/log.h"
#include "lib/procmem.h"
#include "lib/procmaps.h"
#include "proc/proctab.h"
#include "store/liveset.h"
#include "bpf/memory.skel.h"
#include "memory/memory.h"
#include "memory/memory_priv.h"

#define MAX_CANDIDATES 64

/* ---- finding and probing the allocator ------------------------------------------------------ */
struct candidate {
	struct map_entry e; /* its first mapping */
	uint64_t lo, hi;    /* the span of all its mappings */
	char path[PATH_MAX];
	bool is_exe;
	bool is_libc; /* the C library: last in line (see candidate__cmp) */
	bool is_jvm;  /* HotSpot's libjvm.so: first (see candidate__cmp) */
	bool is_jli;  /* the Java launcher's library, which loads libjvm.so */
};

struct candidates {
	struct candidate *c;
	int nr;
	const char *exe_path;
};

static int add_candidate(const struct map_entry *e, void *arg)
{
	struct candidates *cs = arg;
	struct candidate *c;
	const char *base;

	if (!e->path[0] || e->path[0] != '/' || cs->nr == MAX_CANDIDATES)
		return 0;
	for (int i = 0; i < cs->nr; i++) {
		c = &cs->c[i];
		if (c->e.inode == e->inode && c->e.dev_major == e->dev_major &&
		    c->e.dev_minor == e->dev_minor) {
			c->lo = e->start < c->lo ? e->start : c->lo;
			c->hi = e->end > c->hi ? e->end : c->hi;
			return 0;
		}
	}
	c = &cs->c[cs->nr++];
	c->e = *e;
	c->lo = e->start;
	c->hi = e->end;
	snprintf(c->path, sizeof(c->path), "%s", e->path);
	c->e.path = c->path;
	c->is_exe = !strcmp(c->path, cs->exe_path);
	base = strrchr(c->path, '/') + 1;
	c->is_libc = !strncmp(base, "libc.so", 7) || !strncmp(base, "libc-", 5) ||
		     !strncmp(base, "ld-musl-", 8);
	c->is_jvm = !strcmp(base, "libjvm.so");
	c->is_jli = !strcmp(base, "libjli.so");
	return 0;
}

/*
 * The order in which symbol lookup would find malloc: the executable first, then libraries in
 * load order, guessed from addresses (ld.so maps each one below the last, so the highest was
 * loaded first: LD_PRELOAD before the others), with the C library last. Addresses alone put
 * libc first now and then (mmap fills a hole above an earlier library that is big enough: 4
 * runs in 60 of a program linked with -ljemalloc), and libc is last in practice: it comes
 * after every library the program names (-lc is the linker's last), and one defining malloc
 * besides it is there to replace it. A JVM's libjvm.so comes first: a Java program's
 * allocations are the JVM's to tell, whatever allocator its native code uses.
 */
static int candidate__cmp(const void *a, const void *b)
{
	const struct candidate *x = a, *y = b;

	if (x->is_jvm != y->is_jvm)
		return x->is_jvm ? -1 : 1;
	if (x->is_exe != y->is_exe)
		return x->is_exe ? -1 : 1;
	if (x->is_libc != y->is_libc)
		return x->is_libc ? 1 : -1;
	return x->e.start < y->e.start ? 1 : x->e.start > y->e.start ? -1 : 0;
}

/* The entries (ret false) or the returns of sites, to prog. */
static struct bpf_link *attach_sites(struct bpf_program *prog, const struct mproc *p,
				     const char *path, const struct memsite *sites, int nr,
				     bool ret)
{
	unsigned long offs[MEMSITES_MAX];
	__u64 cookies[MEMSITES_MAX];
	LIBBPF_OPTS(bpf_uprobe_multi_opts, opts, .offsets = offs, .cookies = cookies,
		    .retprobe = ret);
	size_t n = 0;

	for (int i = 0; i < nr; i++) {
		if (ret && !sites[i].ret)
			continue;
		offs[n] = sites[i].offset;
		cookies[n++] = sites[i].fn;
	}
	opts.cnt = n;
	return bpf_program__attach_uprobe_multi(prog, (pid_t)p->pid, path, NULL, &opts);
}

/* A Go process: its runtime's ranges and rate at run-time addresses (text: the mapping of the
 * executable's code). Takes ms->go_rt. */
static void mproc__set_go(struct mproc *p, struct memsites *ms, const struct map_entry *text)
{
	uint64_t bias = text->start - text->pgoff + (uint64_t)ms->go_text_delta;

	for (size_t i = 0; i < ms->nr_go_rt; i++) {
		ms->go_rt[i].lo += bias;
		ms->go_rt[i].hi += bias;
	}
	p->rt = ms->go_rt;
	p->nr_rt = ms->nr_go_rt;
	ms->go_rt = NULL;
	ms->nr_go_rt = 0;
	p->go_rate_addr = ms->go_rate_vaddr ? ms->go_rate_vaddr + bias : 0;
	p->mem_fd = p->go_rate_addr ? procmem__open(p->pid) : -1;
}

/* A JVM: libjvm.so's text (its candidate's span) leads stacks; the offsets that name classes,
 * from the JVM's memory. 0 or a negative errno (the classes cannot be named). */
static int mproc__set_java(struct mproc *p, const struct candidate *c)
{
	int fd, err;

	p->rt = calloc(1, sizeof(*p->rt));
	p->classes = calloc(JAVA_CLASSES, sizeof(*p->classes));
	if (!p->rt || !p->classes)
		return -ENOMEM;
	p->rt[0] = (struct memsite_range){ c->lo, c->hi };
	p->nr_rt = 1;
	p->mem_fd = procmem__open(p->pid);
	if (p->mem_fd < 0)
		return p->mem_fd;
	fd = maps__open_file((int)p->pid, &c->e);
	if (fd < 0)
		return fd;
	err = hotspot__offsets(p->mem_fd, fd, &c->e, &p->hs);
	close(fd);
	return err;
}

/* The wrappers of malloc (memsites__wrappers) in every file p maps. */
static void mproc__find_wrappers(struct mproc *p, const struct candidate *cands, int nr)
{
	size_t cap = 0;

	for (int i = 0; i < nr; i++) {
		int fd = maps__open_file((int)p->pid, &cands[i].e);

		if (fd < 0)
			continue;
		memsites__wrappers(fd, &cands[i].e, &p->wrap, &p->nr_wrap, &cap);
		close(fd);
	}
	memsite_ranges__sort(p->wrap, p->nr_wrap);
}

/* Attaches p's allocator. 0, -EAGAIN (not mapped yet) or another negative errno. */
int mproc__attach(struct memory *m, struct mproc *p, uint64_t now)
{
	struct candidate *cands = calloc(MAX_CANDIDATES, sizeof(*cands));
	struct candidates cs = { cands, 0, NULL };
	struct memsites ms = { 0 };
	char exe[PATH_MAX], link[64];
	int err = -EAGAIN, nr = 0;
	enum memsites_mode mode;
	ssize_t len;

	if (!cands)
		return -ENOMEM;
	snprintf(link, sizeof(link), "/proc/%u/exe", p->pid);
	len = readlink(link, exe, sizeof(exe) - 1);
	exe[len > 0 ? len : 0] = '\0';
	cs.exe_path = exe;
	err = maps__for_each((int)p->pid, true, add_candidate, &cs);
	if (err)
		goto out;
	qsort(cands, cs.nr, sizeof(*cands), candidate__cmp);
	err = -EAGAIN;
	/* A Java launcher before it loaded the JVM (a target from its exec on): its allocations
	 * will be the JVM's to tell, not its malloc's. */
	for (int i = 0; i < cs.nr; i++)
		if (cands[i].is_jli && !cands[0].is_jvm)
			goto out;
	for (int i = 0; i < cs.nr; i++) {
		char path[PATH_MAX + 64];
		int fd = maps__open_file((int)p->pid, &cands[i].e);

		if (fd < 0)
			continue;
		memsites__release(&ms);
		nr = memsites__find(fd, &cands[i].e, &ms);
		close(fd);
		m->probes_emulated += ms.emulated;
		m->probes_entry += ms.entry;
		/* Its allocations are the JVM's to tell, and it cannot: not its malloc instead. */
		if (ms.jvm_unprobed) {
			m->jvm_unprobed++;
			pr_warn("pid %u: %s has no AllocTracer in its symbol table (stripped?): its "
				"Java allocations cannot be probed\n",
				p->pid, cands[i].path);
			err = -ENOTSUP;
			goto out;
		}
		if (!nr)
			continue;
		mode = ms.mode;
		/* The very file mapped, whatever mount namespace or deletion. */
		snprintf(path, sizeof(path), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, p->pid,
			 cands[i].e.start, cands[i].e.end);
		if (mode == MEMSITES_PRELOAD) {
			/* The ring, and the flush marker only: no probe on the allocator. */
			p->pring = preload_ring__open(p->pid, ms.preload_rec, &err);
			/* Mapped, but its constructor has not made the ring yet: again later. */
			if (!p->pring && err == -EAGAIN)
				goto out;
			if (!p->pring) {
				pr_warn("pid %u: cannot read the preload shim's ring (%s): %s\n",
					p->pid, cands[i].path,
					err == -EPROTO ? "not this autoprof's version" :
							 strerror(-err));
				goto out;
			}
			p->entry = attach_sites(m->skel->progs.memory_marker, p, path, ms.sites,
						nr, false);
		} else if (mode == MEMSITES_JAVA) {
			err = mproc__set_java(p, &cands[i]);
			if (err) {
				pr_warn("pid %u: cannot read HotSpot's tables in %s: %s\n", p->pid,
					cands[i].path, strerror(-err));
				goto out;
			}
			p->entry = attach_sites(m->skel->progs.memory_java, p, path, ms.sites,
						nr, false);
		} else if (mode == MEMSITES_GO) {
			/* Entries only: Go moves stacks, which a uretprobe does not survive. */
			p->entry = attach_sites(m->skel->progs.memory_go, p, path, ms.sites, nr,
						false);
		} else {
			p->entry = attach_sites(m->skel->progs.memory_entry, p, path, ms.sites,
						nr, false);
			p->ret = p->entry ? attach_sites(m->skel->progs.memory_return, p, path,
							 ms.sites, nr, true) :
					    NULL;
		}
		if (!p->entry || (mode == MEMSITES_ATTACH && !p->ret)) {
			err = -errno;
			bpf_link__destroy(p->entry);
			p->entry = NULL;
			mproc__close_preload(m, p);
			pr_warn("pid %u: cannot attach to %s: %s\n", p->pid, cands[i].path,
				strerror(-err));
			goto out;
		}
		snprintf(p->object, sizeof(p->object), "%s", cands[i].path);
		p->attached = true;
		p->mode = mode;
		if (mode == MEMSITES_GO)
			mproc__set_go(p, &ms, &cands[i].e);
		else if (mode != MEMSITES_JAVA)
			mproc__find_wrappers(p, cands, cs.nr);
		err = 0;
		/* Its mappings now include the allocator's object: the unwinder must know them,
		 * and a CPython process's samples carry Python frames from the first one on (the
		 * refresh tells every observer of processes, the unwinder's and Python's). */
		proctab__refresh(m->ctx->proctab, p->pid, now);
		if (mode == MEMSITES_PRELOAD)
			pr_info("pid %u (%s): preload shim %s, its ring read\n", p->pid, p->exe,
				cands[i].path);
		else if (mode == MEMSITES_JAVA)
			pr_info("pid %u (%s): HotSpot's allocation reports probed in %s\n", p->pid,
				p->exe, cands[i].path);
		else if (mode == MEMSITES_GO)
			pr_info("pid %u (%s): Go runtime's sampled path probed (%s)\n", p->pid,
				p->exe, nr > 1 ? "allocations and frees" : "allocations only");
		else
			pr_info("pid %u (%s): %d allocator functions probed in %s\n", p->pid,
				p->exe, nr, cands[i].path);
		break;
	}
out:
	memsites__release(&ms);
	free(cands);
	return err;
}

/* Keeps what a ring counted once it is closed. */
void mproc__close_preload(struct memory *m, struct mproc *p)
{
	if (!p->pring)
		return;
	preload_ring__add_stats(p->pring, &m->preload_gone);
	preload_ring__close(p->pring);
	p->pring = NULL;
}

/* Drops every live allocation of pid, here and in BPF (which may hold entries user space never
 * heard of: a lost event). */
static void drop_live(struct memory *m, uint32_t pid)
{
	liveset__drop_pid(m->live, pid);
	bpfmap__delete_pid(bpf_map__fd(m->skel->maps.memory_live), sizeof(struct memory_key), pid);
}

void mproc__detach(struct memory *m, struct mproc *p)
{
	mproc__close_preload(m, p);
	bpf_link__destroy(p->ret);
	bpf_link__destroy(p->entry);
	p->ret = p->entry = NULL;
	if (p->attached)
		drop_live(m, p->pid);
	p->attached = false;
	p->mode = MEMSITES_ATTACH;
	free(p->rt);
	p->rt = NULL;
	p->nr_rt = 0;
	free(p->classes);
	p->classes = NULL;
	free(p->wrap);
	p->wrap = NULL;
	p->nr_wrap = 0;
	if (p->mem_fd >= 0)
		close(p->mem_fd);
	p->mem_fd = -1;
}

