// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "python: " fmt

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "lib/hash.h"
#include "lib/log.h"
#include "lib/procmem.h"
#include "symbolize/dso.h"
#include "symbolize/elf.h"
#include "lib/procmaps.h"
#include "proc/proctab.h"
#include "symbolize/symbolizer.h"
#include "unwind/unwind.h"
#include "bpf/python_abi.h"
#include "bpf/unwind_abi.h"
#include "collect/collect.h"
#include "runtime/python.h"

#define PID_BUCKETS 256
/* Code objects named per process before its cache starts over. */
#define MAX_CODES 16384
/* Longest name or file name read (longer ones are cut), and line table: what a code object's
 * sizes (read from the process, so any value) may make us allocate. */
#define MAX_STR	      512
#define MAX_LINETABLE (64 * 1024)
/*
 * All processes' code caches together, in bytes (tables, names, line tables). Per process they
 * could reach MAX_CODES * (2 * 4 * MAX_STR + MAX_LINETABLE), about 1.1 GiB, with code objects
 * crafted for it; past this every cache starts over (real code objects take ~200 bytes: some
 * 300,000 fit).
 */
#define CODE_CACHE_MAX_BYTES (64ull << 20)

/* Where a version keeps what is read here, besides what BPF reads (struct python_proc). */
struct pyver {
	uint32_t version; /* major << 8 | minor */
	struct python_proc bpf;
	uint16_t co_filename;
	uint16_t co_name; /* co_qualname from 3.11, co_name before */
	uint16_t co_firstlineno;
	uint16_t co_linetable;
	uint16_t co_code_adaptive; /* the first code unit, 3.11+ (0: none) */
	uint16_t ascii_data;	   /* sizeof(PyASCIIObject): a compact ASCII string's characters */
	uint16_t compact_data;	   /* sizeof(PyCompactUnicodeObject): other compact strings' */
};

#define NO PYTHON_NO_FIELD

/*
 * x86-64 offsets, read from the DWARF of CPython's own builds (tests/unit/test_python.c checks
 * them against the DWARF of the interpreters it finds). Structure layouts do not change within a
 * minor release.
 */
static const struct pyver versions[] = {
    {.version = 0x030a,
     .bpf = {.frame_kind = PYTHON_FRAME_OBJECT,
	     .runtime_interp_head = 32,
	     .interp_tstate_head = 8,
	     .tstate_next = 8,
	     .tstate_thread_id = 176,
	     .tstate_frame = 24,
	     .cframe_current_frame = NO,
	     .frame_previous = 24,
	     .frame_code = 32,
	     .frame_instr = 96,
	     .frame_owner = NO,
	     .frame_is_entry = NO},
     .co_filename = 104,
     .co_name = 112,
     .co_firstlineno = 40,
     .co_linetable = 120,
     .co_code_adaptive = 0,
     .ascii_data = 48,
     .compact_data = 72},
    {.version = 0x030b,
     .bpf = {.frame_kind = PYTHON_FRAME_INTERP,
	     .runtime_interp_head = 40,
	     .interp_tstate_head = 16,
	     .tstate_next = 8,
	     .tstate_thread_id = 152,
	     .tstate_frame = 56,
	     .cframe_current_frame = 8,
	     .frame_previous = 48,
	     .frame_code = 32,
	     .frame_instr = 56,
	     .frame_owner = 69,
	     .frame_is_entry = 68},
     .co_filename = 112,
     .co_name = 128,
     .co_firstlineno = 72,
     .co_linetable = 136,
     .co_code_adaptive = 184,
     .ascii_data = 48,
     .compact_data = 72},
    {.version = 0x030c,
     .bpf = {.frame_kind = PYTHON_FRAME_INTERP,
	     .runtime_interp_head = 40,
	     .interp_tstate_head = 72,
	     .tstate_next = 8,
	     .tstate_thread_id = 136,
	     .tstate_frame = 56,
	     .cframe_current_frame = 0,
	     .frame_previous = 8,
	     .frame_code = 0,
	     .frame_instr = 56,
	     .frame_owner = 70,
	     .frame_is_entry = NO},
     .co_filename = 112,
     .co_name = 128,
     .co_firstlineno = 68,
     .co_linetable = 136,
     .co_code_adaptive = 192,
     .ascii_data = 40,
     .compact_data = 56},
    {.version = 0x030d,
     .bpf = {.frame_kind = PYTHON_FRAME_INTERP,
	     .runtime_interp_head = 632,
	     .interp_tstate_head = 7344,
	     .tstate_next = 8,
	     .tstate_thread_id = 152,
	     .tstate_frame = 72,
	     .cframe_current_frame = NO,
	     .frame_previous = 8,
	     .frame_code = 0,
	     .frame_instr = 56,
	     .frame_owner = 70,
	     .frame_is_entry = NO},
     .co_filename = 112,
     .co_name = 128,
     .co_firstlineno = 68,
     .co_linetable = 136,
     .co_code_adaptive = 200,
     .ascii_data = 40,
     .compact_data = 56},
};

enum pyresult {
	PY_NONE = 0, /* not CPython (as far as its mappings tell yet) */
	PY_SUPPORTED,
	PY_UNKNOWN_VERSION,
	PY_ERROR,
};

struct pycode {
	uint64_t addr; /* 0: empty slot */
	char *name;
	char *file;
	uint8_t *lt;
	uint32_t lt_len;
	uint32_t first_line;
	uint32_t bytes; /* names and line table (counted in code_cache_bytes) */
	bool bad;	/* unreadable, or not a code object: its frames stay native */
};

struct pyproc {
	uint32_t pid;
	uint32_t gen; /* maps generation last looked at */
	bool looked;
	bool named; /* its maps named a CPython file, found or not */
	enum pyresult result;
	struct pyver ver;	       /* with PY_SUPPORTED */
	uint64_t code_type;	       /* &PyCode_Type in the process */
	char *eval_path;	       /* the file holding _PyEval_EvalFrameDefault */
	uint64_t eval_start, eval_end; /* its file offsets */
	int mem_fd;
	struct pycode *codes;
	uint32_t code_mask, nr_codes;
	uint64_t code_bytes; /* its share of stats.code_cache_bytes */
	struct pyproc *next;
};

struct python {
	struct collect_ctx *ctx;
	struct pyproc *buckets[PID_BUCKETS];
	struct python_stats stats;
};

struct python *python__new(struct collect_ctx *ctx)
{
	struct python *py = calloc(1, sizeof(*py));

	if (!py)
		return NULL;
	py->ctx = ctx;
	py->stats.code_cache_max_bytes = CODE_CACHE_MAX_BYTES;
	return py;
}

static void codes__clear(struct python *py, struct pyproc *pp)
{
	for (uint32_t i = 0; pp->codes && i <= pp->code_mask; i++) {
		free(pp->codes[i].name);
		free(pp->codes[i].file);
		free(pp->codes[i].lt);
	}
	free(pp->codes);
	pp->codes = NULL;
	pp->code_mask = 0;
	pp->nr_codes = 0;
	py->stats.code_cache_bytes -= pp->code_bytes;
	pp->code_bytes = 0;
}

/* Every process's cache starts over: they hold CODE_CACHE_MAX_BYTES together. */
static void codes__clear_all(struct python *py)
{
	for (int b = 0; b < PID_BUCKETS; b++)
		for (struct pyproc *pp = py->buckets[b]; pp; pp = pp->next)
			codes__clear(py, pp);
	py->stats.code_cache_flushes++;
}

static void pyproc__free(struct python *py, struct pyproc *pp)
{
	codes__clear(py, pp);
	if (pp->mem_fd >= 0)
		close(pp->mem_fd);
	free(pp->eval_path);
	free(pp);
}

void python__free(struct python *py)
{
	if (!py)
		return;
	for (int b = 0; b < PID_BUCKETS; b++) {
		while (py->buckets[b]) {
			struct pyproc *pp = py->buckets[b];

			py->buckets[b] = pp->next;
			pyproc__free(py, pp);
		}
	}
	free(py);
}

static struct pyproc **pyproc__slot(struct python *py, uint32_t pid)
{
	struct pyproc **pp = &py->buckets[hash__u64(pid) % PID_BUCKETS];

	while (*pp && (*pp)->pid != pid)
		pp = &(*pp)->next;
	return pp;
}

static void python__forget(struct python *py, uint32_t pid)
{
	struct pyproc **slot, *pp;

	if (!py)
		return;
	slot = pyproc__slot(py, pid);
	pp = *slot;
	if (!pp)
		return;
	*slot = pp->next;
	pyproc__free(py, pp);
}

void python__sweep(struct python *py)
{
	if (!py)
		return;
	for (int b = 0; b < PID_BUCKETS; b++) {
		struct pyproc **slot = &py->buckets[b];

		while (*slot) {
			struct pyproc *pp = *slot;

			if (kill((pid_t)pp->pid, 0) == 0 || errno != ESRCH) {
				slot = &pp->next;
				continue;
			}
			*slot = pp->next;
			pyproc__free(py, pp);
		}
	}
}

/* --- finding the runtime ------------------------------------------------------------------ */

struct pysyms {
	GElf_Sym runtime, version, code_type, eval;
	bool has_runtime, has_version, has_code_type, has_eval;
};

/* The runtime's symbols in .dynsym; the last definition of each wins. */
static int pysyms__match(const struct elf_symbol *es, void *ctx)
{
	struct pysyms *s = ctx;
	const char *n = es->name;

	if (es->sym.st_shndx == SHN_UNDEF || (n[0] != '_' && n[0] != 'P'))
		return 0;
	if (!strcmp(n, "_PyRuntime")) {
		s->runtime = es->sym;
		s->has_runtime = true;
	} else if (!strcmp(n, "Py_Version")) {
		s->version = es->sym;
		s->has_version = true;
	} else if (!strcmp(n, "PyCode_Type")) {
		s->code_type = es->sym;
		s->has_code_type = true;
	} else if (!strcmp(n, "_PyEval_EvalFrameDefault")) {
		s->eval = es->sym;
		s->has_eval = true;
	}
	return 0;
}

/* The file offset of vaddr (in a PT_LOAD's file part), or -ENOENT. */
static int64_t file_offset(Elf *elf, uint64_t vaddr)
{
	uint64_t off;

	return elf__vaddr_to_offset(elf, vaddr, &off) ? -ENOENT : (int64_t)off;
}

/* "3.10" out of "python3.10", "libpython3.10.so.1.0", "libpython3.10d.so": 0 if none. */
static uint32_t version_from_name(const char *base)
{
	unsigned int major, minor;

	if (!strncmp(base, "lib", 3))
		base += 3;
	if (sscanf(base, "python%u.%u", &major, &minor) != 2 || major > 255 || minor > 255)
		return 0;
	return major << 8 | minor;
}

static const struct pyver *version_row(uint32_t version)
{
	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
		if (versions[i].version == version)
			return &versions[i];
	return NULL;
}

/* How much of a frame holds what the sampler reads: up to the end of its last field. */
static uint16_t frame_size(const struct python_proc *b)
{
	uint16_t end = b->frame_code + 8;

	if (b->frame_instr + 8 > end)
		end = b->frame_instr + (b->frame_kind == PYTHON_FRAME_OBJECT ? 4 : 8);
	if (b->frame_previous + 8 > end)
		end = b->frame_previous + 8;
	if (b->frame_owner != NO && b->frame_owner + 1 > end)
		end = b->frame_owner + 1;
	if (b->frame_is_entry != NO && b->frame_is_entry + 1 > end)
		end = b->frame_is_entry + 1;
	return end;
}

/*
 * 3.13 publishes its own offsets: _Py_DebugOffsets at the start of _PyRuntime, statically
 * initialized, so read from the file. Its layout (3.13): cookie "xdebugpy", version,
 * free_threaded, then per structure its size and the offsets of its fields, 8 bytes each.
 * Overrides v's offsets with them: 0, -ENOENT (no cookie: v as the table has it), -ENOTSUP (a
 * free-threaded build, whose objects are laid out otherwise), -EIO.
 */
#define DBG_WORDS 73
#define DBG(i)	  dbg[(i) / 8 - 1]
static int debug_offsets(int fd, Elf *elf, uint64_t runtime, struct pyver *v)
{
	uint64_t dbg[DBG_WORDS];
	char cookie[8];
	int64_t off;

	if (v->version < 0x030d)
		return -ENOENT;
	off = file_offset(elf, runtime);
	if (off < 0 || pread(fd, cookie, 8, off) != 8 ||
	    pread(fd, dbg, sizeof(dbg), off + 8) != sizeof(dbg))
		return -EIO;
	if (memcmp(cookie, "xdebugpy", 8) || (DBG(8) >> 16) != v->version)
		return -ENOENT;
	if (DBG(16))
		return -ENOTSUP;
	/* Offsets in the struct as 3.13.0 lays it out (byte offsets from the cookie). */
	if (DBG(40) > 0xffff || DBG(72) > 0xffff || DBG(184) > 0xff || DBG(192) > 0xff ||
	    DBG(232) > 0x7f || DBG(240) > 0x7f || DBG(248) > 0x7f || DBG(264) > 0x7f ||
	    DBG(280) > 0xff || DBG(296) > 0xff || DBG(304) > 0xff || DBG(312) > 0xff ||
	    DBG(344) > 0xffff || DBG(168) > 0xff || DBG(560) > 0xff)
		return -EIO;
	v->bpf.runtime_interp_head = DBG(40);
	v->bpf.interp_tstate_head = DBG(72);
	v->bpf.tstate_next = DBG(168);
	v->bpf.tstate_frame = DBG(184);
	v->bpf.tstate_thread_id = DBG(192);
	v->bpf.frame_previous = DBG(232);
	v->bpf.frame_code = DBG(240);
	v->bpf.frame_instr = DBG(248);
	v->bpf.frame_owner = DBG(264);
	v->co_filename = DBG(280);
	v->co_name = DBG(296);
	v->co_linetable = DBG(304);
	v->co_firstlineno = DBG(312);
	v->co_code_adaptive = DBG(344);
	v->ascii_data = DBG(560);
	return 0;
}

struct locate_ctx {
	struct python *py;
	struct pyproc *pp;
	int pid;
};

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static bool is_python_name(const char *base)
{
	return !strncmp(base, "python", 6) || !strncmp(base, "libpython", 9);
}

/* One executable mapping: a CPython executable or libpython defines _PyRuntime. */
static int locate__mapping(const struct map_entry *e, void *arg)
{
	struct locate_ctx *lc = arg;
	struct pyproc *pp = lc->pp;
	const char *base = basename_of(e->path);
	struct pysyms s = {};
	const struct pyver *row;
	uint64_t bias, raw = 0;
	uint32_t version = 0;
	int err = -ENOENT;
	int64_t off;
	Elf *elf;
	int fd, ret = 0;

	if (e->path[0] != '/' || !is_python_name(base))
		return 0;
	fd = maps__open_file(lc->pid, e);
	if (fd < 0) {
		pr_debug("pid %d: cannot open %s: %s\n", lc->pid, e->path, strerror(-fd));
		pp->result = PY_ERROR;
		return 0;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		goto close_fd;
	elf__for_each_symbol(elf, ELF_DYNSYM, pysyms__match, &s);
	if (!s.has_runtime)
		goto end_elf;
	/* Py_Version (3.11+) is PY_VERSION_HEX: 0x030b02f0 for 3.11.2. */
	if (s.has_version && (off = file_offset(elf, s.version.st_value)) >= 0 &&
	    pread(fd, &raw, sizeof(raw), off) == sizeof(raw))
		version = (raw >> 16) & 0xffff;
	if (!version)
		version = version_from_name(base);
	ret = 1;
	row = version_row(version);
	if (row) {
		pp->ver = *row;
		err = debug_offsets(fd, elf, s.runtime.st_value, &pp->ver);
	}
	if (!row || err == -ENOTSUP) {
		pr_debug("pid %d: %s is CPython %u.%u%s, whose frames are not known: native frames "
			 "only\n",
			 lc->pid, e->path, version >> 8, version & 0xff,
			 row ? " (free-threaded)" : "");
		pp->result = PY_UNKNOWN_VERSION;
		goto end_elf;
	}
	if (!s.has_eval || !s.has_code_type || elf__load_base(elf, e->start, e->pgoff, &bias) ||
	    (off = file_offset(elf, s.eval.st_value)) < 0) {
		pr_debug("pid %d: %s lacks the symbols of its evaluation loop\n", lc->pid, e->path);
		pp->result = PY_ERROR;
		goto end_elf;
	}
	pp->eval_path = strdup(e->path);
	if (!pp->eval_path) {
		pp->result = PY_ERROR;
		goto end_elf;
	}
	pp->eval_start = (uint64_t)off;
	pp->eval_end = (uint64_t)off + (s.eval.st_size ? s.eval.st_size : 1);
	pp->code_type = bias + s.code_type.st_value;
	{
		struct python_proc bp = pp->ver.bpf;

		bp.runtime = bias + s.runtime.st_value;
		bp.version = pp->ver.version;
		bp.frame_size = frame_size(&bp);
		/* The sampler reads a frame into 128 bytes. */
		if (bp.frame_size >= 128) {
			pp->result = PY_ERROR;
			goto end_elf;
		}
		if (bpf_map_update_elem(lc->py->ctx->python_fd, &lc->pid, &bp, BPF_ANY)) {
			pr_debug("pid %d: cannot record its runtime: %s\n", lc->pid,
				 strerror(errno));
			pp->result = PY_ERROR;
			goto end_elf;
		}
	}
	pp->result = PY_SUPPORTED;
	if (lc->py->ctx->unwinder)
		unwinder__set_proc_flag(lc->py->ctx->unwinder, lc->pid, UNWIND_PROC_PYTHON);
	pr_debug("pid %d: CPython %u.%u in %s (offsets from %s)\n", lc->pid, version >> 8,
		 version & 0xff, e->path, err ? "the table" : "its _Py_DebugOffsets");
end_elf:
	elf_end(elf);
close_fd:
	close(fd);
	return ret;
}

/* Whether an executable mapping of p is a file named like CPython's (as locate__mapping asks). */
static bool maps_name_python(const struct proc *p)
{
	const struct proc_map *maps;
	uint32_t n;

	maps = proc__maps(p, &n);
	for (uint32_t i = 0; i < n; i++) {
		const char *path = dso__path(maps[i].dso);

		if (path[0] == '/' && is_python_name(basename_of(path)))
			return true;
	}
	return false;
}

static void python__locate(struct python *py, struct proc *p, uint32_t pid)
{
	struct pyproc **slot, *pp;
	uint32_t gen = proc__maps_generation(p);
	struct locate_ctx lc;

	if (!py || py->ctx->python_fd < 0)
		return;
	slot = pyproc__slot(py, pid);
	pp = *slot;
	if (pp && (pp->result != PY_NONE || (pp->looked && pp->gen == gen)))
		return;
	if (!pp) {
		pp = calloc(1, sizeof(*pp));
		if (!pp)
			return;
		pp->pid = pid;
		pp->mem_fd = -1;
		*slot = pp;
	}
	pp->looked = true;
	pp->gen = gen;
	/* The maps the proctab just read name no CPython: no need to read them again. */
	if (!maps_name_python(p))
		return;
	pp->named = true;
	lc = (struct locate_ctx){py, pp, (int)pid};
	maps__for_each((int)pid, true, locate__mapping, &lc);
	switch (pp->result) {
	case PY_SUPPORTED:
		py->stats.supported++;
		break;
	case PY_UNKNOWN_VERSION:
		py->stats.unknown_version++;
		break;
	case PY_ERROR:
		py->stats.errors++;
		break;
	default:
		break;
	}
}

/* --- the observer of processes' lives ----------------------------------------------------- */

/* Maps read at first sight, refreshed, re-read: locate (once per version of the maps). An
 * exec's maps are left to exec_cb, which first forgets the old image. */
static void maps_cb(void *ctx, uint32_t pid, const struct proc_map *maps, uint32_t n)
{
	struct python *py = ctx;
	struct proc *p;

	(void)maps;
	if (!n)
		return;
	p = proctab__find(py->ctx->proctab, pid);
	if (p && !proc__new_image(p))
		python__locate(py, p, pid);
}

static void exec_cb(void *ctx, uint32_t pid, struct proc *p)
{
	python__forget(ctx, pid);
	if (p)
		python__locate(ctx, p, pid);
}

static void exit_cb(void *ctx, uint32_t pid)
{
	python__forget(ctx, pid);
}

/*
 * A CPython found, or a process whose maps named one: the read that looks for it races the
 * process's exit and may find nothing, and an executable made quiet by such a miss would keep
 * every later CPython of that file from being looked at until its first samples.
 */
static bool claims_cb(void *ctx, uint32_t pid)
{
	struct python *py = ctx;
	struct pyproc *pp = *pyproc__slot(py, pid);

	return pp && (pp->named || pp->result != PY_NONE);
}

int python__observe(struct python *py, struct proctab *pt)
{
	if (!py)
		return 0;
	return proctab__observe(pt, &(struct proc_observer){
					    .name = "python",
					    .maps = maps_cb,
					    .exec = exec_cb,
					    .exit = exit_cb,
					    .claims = claims_cb,
					    .ctx = py,
				    });
}

/* --- naming code objects ------------------------------------------------------------------ */

static int mem_read(struct pyproc *pp, uint64_t addr, void *buf, size_t n)
{
	if (pp->mem_fd < 0) {
		int fd = procmem__open(pp->pid);

		if (fd < 0)
			return fd;
		pp->mem_fd = fd;
	}
	return procmem__read(pp->mem_fd, addr, buf, n);
}

static uint64_t word(const uint8_t *b, uint16_t off)
{
	uint64_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

/* Appends code point c as UTF-8. */
static size_t put_utf8(char *o, uint32_t c)
{
	if (c < 0x80) {
		o[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		o[0] = (char)(0xc0 | c >> 6);
		o[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		o[0] = (char)(0xe0 | c >> 12);
		o[1] = (char)(0x80 | (c >> 6 & 0x3f));
		o[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | c >> 18);
	o[1] = (char)(0x80 | (c >> 12 & 0x3f));
	o[2] = (char)(0x80 | (c >> 6 & 0x3f));
	o[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/*
 * A str object as UTF-8 (malloc'd): compact strings only, which is what the compiler makes for
 * names and file names. PyASCIIObject: length at 16, state at 32 (kind in bits 2-4, compact bit
 * 5, ascii bit 6), the characters right after the header.
 */
static char *read_str(struct pyproc *pp, uint64_t addr)
{
	const struct pyver *v = &pp->ver;
	uint8_t hdr[40];
	uint32_t state, kind;
	uint64_t len, data;
	uint8_t *raw;
	char *out;
	size_t o = 0;

	if (!addr || mem_read(pp, addr, hdr, sizeof(hdr)))
		return NULL;
	len = word(hdr, 16);
	memcpy(&state, hdr + 32, sizeof(state));
	kind = state >> 2 & 7;
	if (!(state & 1 << 5) || (kind != 1 && kind != 2 && kind != 4))
		return NULL;
	if (len > MAX_STR)
		len = MAX_STR;
	data = addr + (state & 1 << 6 ? v->ascii_data : v->compact_data);
	raw = malloc(len * kind + 1);
	out = malloc(len * 4 + 1);
	if (!raw || !out || mem_read(pp, data, raw, len * kind)) {
		free(raw);
		free(out);
		return NULL;
	}
	for (uint64_t i = 0; i < len; i++) {
		uint32_t c;

		if (kind == 1) {
			c = raw[i];
		} else if (kind == 2) {
			uint16_t c16;

			memcpy(&c16, raw + 2 * i, 2);
			c = c16;
		} else {
			memcpy(&c, raw + 4 * i, 4);
			if (c > 0x10ffff)
				c = '?';
		}
		o += put_utf8(out + o, c);
	}
	out[o] = '\0';
	free(raw);
	return out;
}

/* A bytes object's contents (malloc'd): ob_size at 16, ob_sval at 32. */
static uint8_t *read_bytes(struct pyproc *pp, uint64_t addr, uint32_t *len)
{
	uint64_t size;
	uint8_t *b;

	if (!addr || mem_read(pp, addr + 16, &size, sizeof(size)) || size > MAX_LINETABLE)
		return NULL;
	b = malloc(size ? size : 1);
	if (!b || mem_read(pp, addr + 32, b, size)) {
		free(b);
		return NULL;
	}
	*len = (uint32_t)size;
	return b;
}

static int code__read(struct pyproc *pp, struct pycode *c)
{
	const struct pyver *v = &pp->ver;
	uint8_t hdr[256];
	size_t n = v->co_linetable + 8;
	int32_t first;

	if (n < (size_t)v->co_firstlineno + 4)
		n = v->co_firstlineno + 4;
	if (mem_read(pp, c->addr, hdr, n))
		return -EIO;
	if (word(hdr, 8) != pp->code_type)
		return -EINVAL;
	memcpy(&first, hdr + v->co_firstlineno, sizeof(first));
	c->first_line = first > 0 ? (uint32_t)first : 0;
	c->name = read_str(pp, word(hdr, v->co_name));
	c->file = read_str(pp, word(hdr, v->co_filename));
	c->lt = read_bytes(pp, word(hdr, v->co_linetable), &c->lt_len);
	if (!c->name || !c->file)
		return -EINVAL;
	return 0;
}

static struct pycode *code__get(struct python *py, struct pyproc *pp, uint64_t addr)
{
	struct pycode *c;
	uint32_t s;

	/* Start over: a process that keeps making code (exec, lambdas), or all of them. */
	if (pp->nr_codes >= MAX_CODES)
		codes__clear(py, pp);
	if (py->stats.code_cache_bytes >= CODE_CACHE_MAX_BYTES)
		codes__clear_all(py);
	if (!pp->codes || 2 * (pp->nr_codes + 1) > pp->code_mask + 1) {
		uint32_t mask = pp->codes ? 2 * pp->code_mask + 1 : 255;
		struct pycode *t = calloc((size_t)mask + 1, sizeof(*t));
		/* Slots added: all of them (mask + 1) for a new table. */
		uint64_t grown = ((uint64_t)mask - pp->code_mask + !pp->codes) * sizeof(*t);

		if (!t)
			return NULL;
		pp->code_bytes += grown;
		py->stats.code_cache_bytes += grown;
		for (uint32_t i = 0; pp->codes && i <= pp->code_mask; i++) {
			if (!pp->codes[i].addr)
				continue;
			for (s = hash__u64(pp->codes[i].addr) & mask; t[s].addr; s = (s + 1) & mask)
				;
			t[s] = pp->codes[i];
		}
		free(pp->codes);
		pp->codes = t;
		pp->code_mask = mask;
	}
	for (s = hash__u64(addr) & pp->code_mask; pp->codes[s].addr; s = (s + 1) & pp->code_mask)
		if (pp->codes[s].addr == addr)
			return pp->codes[s].bad ? NULL : &pp->codes[s];
	c = &pp->codes[s];
	c->addr = addr;
	pp->nr_codes++;
	if (code__read(pp, c)) {
		pr_debug("pid %u: no code object at %#llx\n", pp->pid, (unsigned long long)addr);
		c->bad = true;
		py->stats.code_errors++;
	}
	/* What it holds, bad or not (a bad one may hold a name read before it failed). */
	c->bytes = (c->name ? strlen(c->name) + 1 : 0) + (c->file ? strlen(c->file) + 1 : 0) +
		   (c->lt ? c->lt_len : 0);
	pp->code_bytes += c->bytes;
	py->stats.code_cache_bytes += c->bytes;
	return c->bad ? NULL : c;
}

static uint32_t code__line(const struct pyproc *pp, const struct pycode *c, uint64_t code,
			   uint64_t instr)
{
	uint64_t first;

	if (!c->lt)
		return c->first_line;
	if (pp->ver.bpf.frame_kind == PYTHON_FRAME_OBJECT) {
		int32_t lasti = (int32_t)(uint32_t)instr;

		return lasti < 0 ? c->first_line
				 : python__line_310(c->lt, c->lt_len, c->first_line, lasti);
	}
	first = code + pp->ver.co_code_adaptive;
	return instr < first ? c->first_line
			     : python__line_311(c->lt, c->lt_len, c->first_line,
						(uint32_t)((instr - first) / 2));
}

/* The frame naming the pair, or -1: left native. */
static int name_pair(struct python *py, struct pyproc *pp, uint64_t code, uint64_t instr,
		     struct frame *out)
{
	struct pycode *c = code__get(py, pp, code);

	if (!c)
		return -1;
	if (symbolizer__interp_frame(py->ctx->sym, c->name, c->file, code__line(pp, c, code, instr),
				     out))
		return -1;
	return 0;
}

int python__read_code(int mem_fd, uint32_t version, uint64_t code_type, uint64_t code,
		      uint64_t instr, char **name, char **file, uint32_t *line)
{
	const struct pyver *v = version_row(version);
	struct pyproc pp = { .mem_fd = mem_fd, .code_type = code_type };
	struct pycode c = { .addr = code };
	int err;

	*name = *file = NULL;
	if (!v)
		return -ENOTSUP;
	pp.ver = *v;
	err = code__read(&pp, &c);
	if (!err) {
		*line = code__line(&pp, &c, code, instr);
		*name = c.name;
		*file = c.file;
		c.name = c.file = NULL;
	}
	free(c.name);
	free(c.file);
	free(c.lt);
	return err;
}

static bool is_eval(const struct pyproc *pp, const struct frame *f)
{
	return f->addr >= pp->eval_start && f->addr < pp->eval_end &&
	       dso__kind(f->dso) == DSO_ELF && !strcmp(dso__path(f->dso), pp->eval_path);
}

uint32_t python__splice(struct python *py, uint32_t pid, const struct frame *user, uint32_t n,
			bool truncated, const uint64_t *pairs, uint32_t np, struct frame *out,
			uint32_t cap)
{
	struct pyproc *pp = py ? *pyproc__slot(py, pid) : NULL;
	uint32_t o = 0, p = 0, named = 0;
	bool mismatch = false;

	if (!pp || pp->result != PY_SUPPORTED)
		np = 0;
	for (uint32_t i = 0; i < n && o < cap; i++) {
		uint32_t before = o;

		if (!np || !is_eval(pp, &user[i])) {
			out[o++] = user[i];
			continue;
		}
		if (p >= np) {
			mismatch = true;
			out[o++] = user[i];
			continue;
		}
		/* The group this call of the evaluation loop ran, up to its marker. */
		for (; p < np && pairs[2 * p]; p++) {
			if (o < cap &&
			    !name_pair(py, pp, pairs[2 * p], pairs[2 * p + 1], &out[o])) {
				o++;
				named++;
			}
		}
		p++; /* the marker */
		if (o == before && o < cap)
			out[o++] = user[i];
	}
	/* The native walk stopped short of the evaluation loops that ran the rest: their Python
	 * frames are still the callers, above where the stack is marked truncated. */
	for (; truncated && p < np && o < cap; p++) {
		if (pairs[2 * p] && !name_pair(py, pp, pairs[2 * p], pairs[2 * p + 1], &out[o])) {
			o++;
			named++;
		}
	}
	if (np) {
		py->stats.samples += named > 0;
		py->stats.frames += named;
		/* More loops than groups is expected when BPF stopped at its limit (deep
		 * recursion): the outer loops stay native. */
		py->stats.mismatches +=
		    (mismatch && np < PYTHON_MAX_ENTRIES - 2) || (!truncated && p < np);
	}
	return o;
}

size_t python__fields(uint32_t version, struct python_field *out, size_t cap)
{
	const struct pyver *v = version_row(version);
	const struct python_proc *b;
	bool v310 = version == 0x030a, v313 = version == 0x030d;
	const char *frame = v310 ? "_frame" : "_PyInterpreterFrame";
	struct python_field all[] = {
	    {"pyruntimestate", "interpreters.head", 0},
	    {"_is", v310 ? "tstate_head" : "threads.head", 0},
	    {"_ts", "next", 0},
	    {"_ts", "thread_id", 0},
	    {"_ts",
	     v310   ? "frame"
	     : v313 ? "current_frame"
		    : "cframe",
	     0},
	    {frame, v310 ? "f_back" : "previous", 0},
	    {frame, v313 ? "f_executable" : "f_code", 0},
	    {frame,
	     v310   ? "f_lasti"
	     : v313 ? "instr_ptr"
		    : "prev_instr",
	     0},
	    {"PyCodeObject", "co_filename", 0},
	    {"PyCodeObject", v310 ? "co_name" : "co_qualname", 0},
	    {"PyCodeObject", "co_firstlineno", 0},
	    {"PyCodeObject", "co_linetable", 0},
	    {"PyASCIIObject", "", 0},
	    {"PyCompactUnicodeObject", "", 0},
	    {"_PyCFrame", "current_frame", 0},
	    {frame, "owner", 0},
	    {frame, "is_entry", 0},
	    {"PyCodeObject", "co_code_adaptive", 0},
	};
	size_t n = 0;

	if (!v)
		return 0;
	b = &v->bpf;
	all[0].offset = b->runtime_interp_head;
	all[1].offset = b->interp_tstate_head;
	all[2].offset = b->tstate_next;
	all[3].offset = b->tstate_thread_id;
	all[4].offset = b->tstate_frame;
	all[5].offset = b->frame_previous;
	all[6].offset = b->frame_code;
	all[7].offset = b->frame_instr;
	all[8].offset = v->co_filename;
	all[9].offset = v->co_name;
	all[10].offset = v->co_firstlineno;
	all[11].offset = v->co_linetable;
	all[12].offset = v->ascii_data;
	all[13].offset = v->compact_data;
	all[14].offset = b->cframe_current_frame;
	all[15].offset = b->frame_owner;
	all[16].offset = b->frame_is_entry;
	all[17].offset = v->co_code_adaptive ? v->co_code_adaptive : NO;
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]) && n < cap; i++)
		if (all[i].offset != NO)
			out[n++] = all[i];
	return n;
}

void python__stats(struct python *py, struct python_stats *out)
{
	*out = py ? py->stats : (struct python_stats){0};
}
