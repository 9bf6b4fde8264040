// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "memory: " fmt

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/x86insn.h"
#include "symbolize/elf.h"
#include "lib/procmaps.h"
#include "runtime/golabels.h"
#include "memory/memsites.h"

/* Bytes of a function's start decoded to place its probe. */
#define CODE_BYTES 32

/* The allocator family: the symbol, what it is, and whether its return is probed. */
static const struct {
	const char *name;
	enum memory_fn fn;
	bool ret;
	bool required;
} alloc_fns[] = {
	{ "malloc", MEMORY_FN_MALLOC, true, true },
	{ "free", MEMORY_FN_FREE, false, true },
	{ "calloc", MEMORY_FN_CALLOC, true, false },
	{ "realloc", MEMORY_FN_REALLOC, true, false },
	{ "reallocarray", MEMORY_FN_REALLOCARRAY, true, false },
	{ "posix_memalign", MEMORY_FN_POSIX_MEMALIGN, true, false },
	{ "aligned_alloc", MEMORY_FN_ALIGNED_ALLOC, true, false },
	{ "memalign", MEMORY_FN_ALIGNED_ALLOC, true, false },
	{ "valloc", MEMORY_FN_VALLOC, true, false },
	{ "pvalloc", MEMORY_FN_VALLOC, true, false },
	/* Big anonymous mappings the program makes itself (BPF filters); those malloc makes are
	 * inside a probed call and left to it. */
	{ "mmap", MEMORY_FN_MMAP, true, false },
	{ "munmap", MEMORY_FN_MUNMAP, false, false },
};
#define NR_ALLOC_FNS (sizeof(alloc_fns) / sizeof(alloc_fns[0]))

/*
 * The preload shim (preload/autoprof_preload.c): its record marks the library (and says where
 * its ring is), its flush marker takes the one probe. A process that maps it is read through
 * its ring and probed nowhere else.
 */
static const struct {
	const char *name;
	enum memory_fn fn; /* 0: the record */
} preload_syms[] = {
	{ "autoprof_preload_v1", 0 },
	{ "autoprof_preload_flush", MEMORY_FN_PRELOAD_FLUSH },
};
#define NR_PRELOAD_SYMS (sizeof(preload_syms) / sizeof(preload_syms[0]))
_Static_assert(NR_ALLOC_FNS <= MEMSITES_MAX, "memsites.sites too small");

/*
 * HotSpot: what it tells AllocTracer (for JFR) of allocations in new TLABs and outside them,
 * local functions of libjvm.so's .symtab, matched with their arguments as the probe reads them:
 * (Klass*, HeapWord*, size_t tlab_size, size_t alloc_size, Thread*) and (Klass*, HeapWord*,
 * size_t alloc_size, Thread*), JDK 11 to 25. gHotSpotVMStructs, exported, says it is a libjvm.
 */
static const struct {
	const char *prefix, *args; /* the mangled name's start, then what follows the HeapWord */
	enum memory_fn fn;
} java_fns[] = {
	{ "_ZN11AllocTracer27send_allocation_in_new_tlabEP5Klass", "mmP", MEMORY_FN_JAVA_TLAB },
	{ "_ZN11AllocTracer28send_allocation_outside_tlabEP5Klass", "mP", MEMORY_FN_JAVA_OUTSIDE },
};
#define NR_JAVA_FNS (sizeof(java_fns) / sizeof(java_fns[0]))
#define JAVA_MARK "gHotSpotVMStructs"

/* Go: the runtime's sampled path (runtime.mProf_Malloc), the sweeper's free of a profiled
 * object's record (runtime.freeSpecial), and the rate it samples at. */
enum { GO_MALLOC, GO_FREE, GO_RATE, GO_ABI0, NR_GO_SYMS };
static const char *const go_syms[NR_GO_SYMS] = {
	[GO_MALLOC] = "runtime.mProf_Malloc",
	[GO_FREE] = "runtime.freeSpecial",
	[GO_RATE] = "runtime.MemProfileRate",
	/* Assembly functions carry ".abi0" since Go 1.17, the register ABI's release: without it
	 * the arguments are on the stack, which the probes do not read. */
	[GO_ABI0] = "runtime.goexit.abi0",
};
/* runtime.mProf_Malloc(mp *m, p, size) from this release on; (p, size) before. */
#define GO_MP_FIRST_MINOR 23


struct syms_query {
	const char *const *names;
	size_t n;
	uint64_t *vaddr;
};

static int syms_query__match(const struct elf_symbol *s, void *ctx)
{
	struct syms_query *q = ctx;
	int type = GELF_ST_TYPE(s->sym.st_info);

	if ((type != STT_FUNC && type != STT_OBJECT) || s->sym.st_shndx == SHN_UNDEF ||
	    !s->sym.st_value || GELF_ST_BIND(s->sym.st_info) == STB_LOCAL)
		return 0;
	for (size_t k = 0; k < q->n; k++)
		if (!q->vaddr[k] && !strcmp(s->name, q->names[k]))
			q->vaddr[k] = s->sym.st_value;
	return 0;
}

/* The addresses of names[0, n) in elf's .dynsym and .symtab (functions and objects defined
 * here, not local); 0 for those it lacks. */
static void lookup_syms(Elf *elf, const char *const *names, size_t n, uint64_t *vaddr)
{
	struct syms_query q = {names, n, vaddr};

	memset(vaddr, 0, n * sizeof(*vaddr));
	elf__for_each_symbol(elf, ELF_SYMTAB | ELF_DYNSYM, syms_query__match, &q);
}

/* The probe offset of the function at vaddr: on its first emulated instruction (counted). */
static int probe_offset(struct memsites *ms, Elf *elf, int fd, uint64_t vaddr, uint64_t *off)
{
	uint8_t code[CODE_BYTES];
	enum x86insn_probe kind;
	ssize_t len;

	if (!vaddr || elf__vaddr_to_offset(elf, vaddr, off))
		return -ENOENT;
	len = pread(fd, code, sizeof(code), (off_t)*off);
	*off += x86insn__probe_offset(code, len > 0 ? (size_t)len : 0, &kind);
	if (kind == X86INSN_EMULATED)
		ms->emulated++;
	else
		ms->entry++;
	return 0;
}

/* The preload shim's marker, when fd is the shim mapped at e (and its record's address).
 * Returns the number of sites, or 0. */
static int find_preload_sites(struct memsites *ms, Elf *elf, int fd, const struct map_entry *e)
{
	uint64_t base;
	const char *names[NR_PRELOAD_SYMS];
	uint64_t vaddr[NR_PRELOAD_SYMS];
	int nr = 0;

	for (size_t k = 0; k < NR_PRELOAD_SYMS; k++)
		names[k] = preload_syms[k].name;
	lookup_syms(elf, names, NR_PRELOAD_SYMS, vaddr);
	for (size_t k = 0; k < NR_PRELOAD_SYMS; k++)
		if (!vaddr[k])
			return 0;
	if (elf__load_base(elf, e->start, e->pgoff, &base))
		return 0;
	ms->preload_rec = base + vaddr[0];
	for (size_t k = 0; k < NR_PRELOAD_SYMS; k++) {
		uint64_t off;

		if (!preload_syms[k].fn)
			continue;
		if (probe_offset(ms, elf, fd, vaddr[k], &off))
			return 0;
		ms->sites[nr++] = (struct memsite){ off, preload_syms[k].fn, false };
	}
	return nr;
}

/* Whether a Go executable's runtime.mProf_Malloc takes mp first (by its .go.buildinfo). */
static bool go_mp_first(Elf *elf)
{
	char version[32];
	Elf_Data *data;
	GElf_Shdr sh;
	Elf_Scn *scn;
	int minor;

	scn = elf__section(elf, ".go.buildinfo", &sh);
	if (!scn)
		return false;
	data = elf_getdata(scn, NULL);
	/* d_buf is NULL for a NOBITS section, whose d_size is still the section's. */
	if (!data || !data->d_buf ||
	    golabels__buildinfo_version(data->d_buf, data->d_size, version, sizeof(version)))
		return false;
	return sscanf(version, "go1.%d", &minor) == 1 && minor >= GO_MP_FIRST_MINOR;
}

static int range__cmp(const void *a, const void *b)
{
	const struct memsite_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Appends [lo, hi) to the *n ranges at *r (room for *cap). 0, or -ENOMEM with them as they were
 * (the ranges found so far still serve). */
static int range__push(struct memsite_range **r, size_t *n, size_t *cap, uint64_t lo, uint64_t hi)
{
	if (*n == *cap) {
		size_t room = *cap ? *cap * 2 : 64;
		struct memsite_range *more = realloc(*r, room * sizeof(*more));

		if (!more)
			return -ENOMEM;
		*r = more;
		*cap = room;
	}
	(*r)[(*n)++] = (struct memsite_range){lo, hi};
	return 0;
}

struct memsite_ranges {
	struct memsite_range *r;
	size_t n, cap;
};

static int runtime_range__add(const struct elf_symbol *s, void *ctx)
{
	struct memsite_ranges *rv = ctx;

	if (GELF_ST_TYPE(s->sym.st_info) != STT_FUNC || !s->sym.st_size ||
	    strncmp(s->name, "runtime.", 8))
		return 0;
	return range__push(&rv->r, &rv->n, &rv->cap, s->sym.st_value,
			   s->sym.st_value + s->sym.st_size);
}

/* The runtime package's functions in .symtab, sorted, touching ones merged. */
static void go_runtime_ranges(Elf *elf, struct memsites *ms)
{
	struct memsite_ranges rv = {};
	struct memsite_range *r;
	size_t n;

	elf__for_each_symbol(elf, ELF_SYMTAB, runtime_range__add, &rv);
	r = rv.r;
	n = rv.n;
	memsite_ranges__sort(r, n);
	ms->nr_go_rt = 0;
	for (size_t i = 0; i < n; i++) {
		/* Functions are 32-byte aligned at most: a gap of padding still touches. */
		if (ms->nr_go_rt && r[i].lo <= r[ms->nr_go_rt - 1].hi + 32) {
			if (r[i].hi > r[ms->nr_go_rt - 1].hi)
				r[ms->nr_go_rt - 1].hi = r[i].hi;
		} else {
			r[ms->nr_go_rt++] = r[i];
		}
	}
	ms->go_rt = r;
}

/* Go's sampled path in a Go executable: mProf_Malloc and (for frees) freeSpecial. 0: not Go. */
static int find_go_sites(struct memsites *ms, Elf *elf, int fd)
{
	uint64_t vaddr[NR_GO_SYMS], off;
	size_t nph;
	int nr = 0;

	lookup_syms(elf, go_syms, NR_GO_SYMS, vaddr);
	if (!vaddr[GO_MALLOC] || !vaddr[GO_ABI0] ||
	    probe_offset(ms, elf, fd, vaddr[GO_MALLOC], &off))
		return 0;
	ms->sites[nr++] = (struct memsite){
		off, MEMORY_FN_GO_MALLOC | (go_mp_first(elf) ? MEMORY_COOKIE_GO_MP : 0), false
	};
	/* Without it sampled objects never leave the heap profile: still allocs. */
	if (vaddr[GO_FREE] && !probe_offset(ms, elf, fd, vaddr[GO_FREE], &off))
		ms->sites[nr++] = (struct memsite){ off, MEMORY_FN_GO_FREE, false };
	ms->go_rate_vaddr = vaddr[GO_RATE];
	ms->go_text_delta = 0;
	if (!elf_getphdrnum(elf, &nph)) {
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
				ms->go_text_delta = (int64_t)ph.p_offset - (int64_t)ph.p_vaddr;
				break;
			}
		}
	}
	go_runtime_ranges(elf, ms);
	return nr;
}

struct java_query {
	uint64_t vaddr[NR_JAVA_FNS];
};

static int java_sym__match(const struct elf_symbol *s, void *ctx)
{
	struct java_query *q = ctx;

	if (GELF_ST_TYPE(s->sym.st_info) != STT_FUNC || !s->sym.st_value)
		return 0;
	for (size_t k = 0; k < NR_JAVA_FNS; k++) {
		size_t len = strlen(java_fns[k].prefix);
		const char *rest;

		if (q->vaddr[k] || strncmp(s->name, java_fns[k].prefix, len))
			continue;
		/* The HeapWord (P8HeapWord, PP12HeapWordImpl), then the sizes and the thread. */
		rest = strstr(s->name + len, "HeapWord");
		if (!rest)
			continue;
		rest += strlen("HeapWord");
		if (!strncmp(rest, "Impl", 4))
			rest += 4;
		if (!strncmp(rest, java_fns[k].args, strlen(java_fns[k].args)))
			q->vaddr[k] = s->sym.st_value;
	}
	return 0;
}

/* HotSpot's AllocTracer in a libjvm.so. 0: not a libjvm, or one without them (jvm_unprobed). */
static int find_java_sites(struct memsites *ms, Elf *elf, int fd)
{
	struct java_query q = { 0 };
	const char *mark = JAVA_MARK;
	uint64_t vaddr, off;
	int nr = 0;

	lookup_syms(elf, &mark, 1, &vaddr);
	if (!vaddr)
		return 0;
	elf__for_each_symbol(elf, ELF_SYMTAB, java_sym__match, &q);
	for (size_t k = 0; k < NR_JAVA_FNS; k++) {
		if (!q.vaddr[k] || probe_offset(ms, elf, fd, q.vaddr[k], &off)) {
			ms->jvm_unprobed = true;
			return 0;
		}
		ms->sites[nr++] = (struct memsite){ off, java_fns[k].fn, false };
	}
	return nr;
}

int memsites__find(int fd, const struct map_entry *e, struct memsites *ms)
{
	const char *names[NR_ALLOC_FNS];
	uint64_t vaddr[NR_ALLOC_FNS];
	int nr = 0;
	Elf *elf;

	memset(ms, 0, sizeof(*ms));
	ms->mode = MEMSITES_ATTACH;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return 0;
	nr = find_preload_sites(ms, elf, fd, e);
	if (nr) {
		ms->mode = MEMSITES_PRELOAD;
		goto out;
	}
	nr = find_go_sites(ms, elf, fd);
	if (nr) {
		ms->mode = MEMSITES_GO;
		goto out;
	}
	nr = find_java_sites(ms, elf, fd);
	if (nr || ms->jvm_unprobed) {
		ms->mode = MEMSITES_JAVA;
		goto out;
	}
	for (size_t k = 0; k < NR_ALLOC_FNS; k++)
		names[k] = alloc_fns[k].name;
	lookup_syms(elf, names, NR_ALLOC_FNS, vaddr);
	for (size_t k = 0; k < NR_ALLOC_FNS; k++) {
		uint64_t off;
		bool dup = false;

		if (!vaddr[k] || elf__vaddr_to_offset(elf, vaddr[k], &off)) {
			if (alloc_fns[k].required) {
				nr = 0;
				break;
			}
			continue;
		}
		/* memalign and aligned_alloc are one function in glibc: probe it once. */
		for (size_t j = 0; j < k; j++)
			dup |= vaddr[j] == vaddr[k];
		if (dup)
			continue;
		if (probe_offset(ms, elf, fd, vaddr[k], &off))
			continue;
		ms->sites[nr++] = (struct memsite){ off, alloc_fns[k].fn, alloc_fns[k].ret };
	}
out:
	ms->nr = nr;
	elf_end(elf);
	return nr;
}

/*
 * Functions that only pass an allocation on to malloc: C++ operator new in its forms, Rust's
 * global allocator shims. A sample's leading frames in them are dropped (memory.c), so that it
 * belongs to the code that asked for the memory, as a Go sample's runtime frames are. Rust's
 * are named so by old compilers; newer ones mangle them as items of a crate "__rustc"
 * (v0: "_RNvCs<hash>_7___rustc12___rust_alloc"), whose name ends in length, "_", name.
 */
static const char *const wrapper_syms[] = {
	"_Znwm",
	"_Znam",
	"_ZnwmRKSt9nothrow_t",
	"_ZnamRKSt9nothrow_t",
	"_ZnwmSt11align_val_t",
	"_ZnamSt11align_val_t",
	"_ZnwmSt11align_val_tRKSt9nothrow_t",
	"_ZnamSt11align_val_tRKSt9nothrow_t",
	"__rust_alloc",
	"__rust_alloc_zeroed",
	"__rust_realloc",
	"__rdl_alloc",
	"__rdl_alloc_zeroed",
	"__rdl_realloc",
	"__rg_alloc",
	"__rg_alloc_zeroed",
	"__rg_realloc",
};
#define NR_WRAPPER_SYMS (sizeof(wrapper_syms) / sizeof(wrapper_syms[0]))

/* Whether a Rust v0 mangled name ends in the identifier name: its length, "_", name. */
static bool v0_item_is(const char *sym, const char *name)
{
	size_t ls = strlen(sym), ln = strlen(name);
	char len[24];
	int nl;

	if (strncmp(sym, "_R", 2))
		return false;
	nl = snprintf(len, sizeof(len), "%zu_", ln);
	return ls > ln + (size_t)nl && !strcmp(sym + ls - ln, name) &&
	       !strncmp(sym + ls - ln - (size_t)nl, len, (size_t)nl);
}

struct wrapper_query {
	uint64_t base;
	struct memsite_range **r;
	size_t *n, *cap;
	int found;
};

static int wrapper__match(const struct elf_symbol *s, void *ctx)
{
	struct wrapper_query *q = ctx;
	bool known = false;

	if (GELF_ST_TYPE(s->sym.st_info) != STT_FUNC || s->sym.st_shndx == SHN_UNDEF ||
	    !s->sym.st_value || !s->sym.st_size || s->name[0] != '_')
		return 0;
	for (size_t k = 0; k < NR_WRAPPER_SYMS && !known; k++)
		known = !strcmp(s->name, wrapper_syms[k]) || v0_item_is(s->name, wrapper_syms[k]);
	if (!known)
		return 0;
	/* The same function from .dynsym and .symtab: once. */
	for (size_t i = *q->n - q->found; i < *q->n; i++)
		if ((*q->r)[i].lo == q->base + s->sym.st_value)
			return 0;
	if (range__push(q->r, q->n, q->cap, q->base + s->sym.st_value,
			q->base + s->sym.st_value + s->sym.st_size))
		return -ENOMEM;
	q->found++;
	return 0;
}

int memsites__wrappers(int fd, const struct map_entry *e, struct memsite_range **r, size_t *n,
		       size_t *cap)
{
	struct wrapper_query q = {.r = r, .n = n, .cap = cap};
	Elf *elf;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return 0;
	if (!elf__load_base(elf, e->start, e->pgoff, &q.base))
		elf__for_each_symbol(elf, ELF_SYMTAB | ELF_DYNSYM, wrapper__match, &q);
	elf_end(elf);
	return q.found;
}

void memsite_ranges__sort(struct memsite_range *r, size_t n)
{
	if (n)
		qsort(r, n, sizeof(*r), range__cmp);
}

void memsites__release(struct memsites *ms)
{
	free(ms->go_rt);
	ms->go_rt = NULL;
	ms->nr_go_rt = 0;
}
