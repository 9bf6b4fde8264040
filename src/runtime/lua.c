// SPDX-License-Identifier: GPL-2.0-only
/*
 * Lua frames: which processes run PUC Lua (a fact of their files, learned once per file), the
 * offsets the sampler needs, and the naming and placing of the frames it sends. See lua.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpf/lua_abi.h"
#include "bpf/unwind_abi.h"
#include "collect/collect.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/procmem.h"
#include "lib/ufile.h"
#include "proc/proctab.h"
#include "runtime/lua.h"
#include "symbolize/dso.h"
#include "symbolize/elf.h"
#include "symbolize/symbolizer.h"
#include "unwind/unwind.h"

#define PID_BUCKETS 256
/* Files whose Lua facts are kept; past it the table starts over (each file is read again). */
#define MAX_FILES 4096
/* Functions named per process before its cache starts over. */
#define MAX_FUNCS 8192
/* C-to-Lua entry points whose frames begin a run of the interpreter's own. */
#define MAX_ENTRIES 8
/* A source file read for a function's name: at most this big. */
#define MAX_SOURCE (8u << 20)
#define MAX_NAME   128

/* The C API functions through which C code starts Lua code running. */
static const char *const entry_names[] = {
    "lua_call", "lua_callk", "lua_pcall", "lua_pcallk", "lua_cpcall", "lua_resume",
};

enum lua_result {
	LUA_NONE = 0, /* not Lua (as far as its files tell yet) */
	LUA_SUPPORTED,
	LUA_UNKNOWN_VERSION,
	LUA_ERROR,
};

/* What one file says, kept by (device, inode). */
struct lua_file {
	uint64_t dev, ino;
	enum lua_result result;
	uint32_t version;
	uint32_t nr_entries;
	uint64_t entry_start[MAX_ENTRIES], entry_end[MAX_ENTRIES]; /* file offsets */
	struct lua_file *next;
};

struct luafunc_slot {
	uint64_t addr; /* 0: empty */
	struct lua_func f;
	bool bad;
};

struct luaproc {
	uint32_t pid;
	uint32_t gen;
	bool looked;
	enum lua_result result;
	uint32_t version;
	char *path; /* the file holding the interpreter */
	const struct lua_file *file;
	int mem_fd;
	struct luafunc_slot *funcs; /* open addressing, MAX_FUNCS * 2 slots once used */
	uint32_t nr_funcs;
	struct luaproc *next;
};

struct lua {
	struct collect_ctx *ctx;
	struct luaproc *buckets[PID_BUCKETS];
	struct lua_file *files[PID_BUCKETS];
	uint32_t nr_files;
	struct lua_stats stats;
};

struct lua *lua__new(struct collect_ctx *ctx)
{
	struct lua *lua = calloc(1, sizeof(*lua));

	if (!lua)
		return NULL;
	lua->ctx = ctx;
	return lua;
}

static void funcs__clear(struct luaproc *lp)
{
	if (lp->funcs)
		for (uint32_t i = 0; i < 2 * MAX_FUNCS; i++)
			lua_func__clear(&lp->funcs[i].f);
	free(lp->funcs);
	lp->funcs = NULL;
	lp->nr_funcs = 0;
}

static void luaproc__free(struct luaproc *lp)
{
	funcs__clear(lp);
	if (lp->mem_fd >= 0)
		close(lp->mem_fd);
	free(lp->path);
	free(lp);
}

static void files__clear(struct lua *lua)
{
	for (int b = 0; b < PID_BUCKETS; b++) {
		while (lua->files[b]) {
			struct lua_file *f = lua->files[b];

			lua->files[b] = f->next;
			free(f);
		}
	}
	lua->nr_files = 0;
	/* Processes point at files: they look again. */
	for (int b = 0; b < PID_BUCKETS; b++)
		for (struct luaproc *lp = lua->buckets[b]; lp; lp = lp->next)
			lp->file = NULL;
}

void lua__free(struct lua *lua)
{
	if (!lua)
		return;
	for (int b = 0; b < PID_BUCKETS; b++) {
		while (lua->buckets[b]) {
			struct luaproc *lp = lua->buckets[b];

			lua->buckets[b] = lp->next;
			luaproc__free(lp);
		}
	}
	files__clear(lua);
	free(lua);
}

static struct luaproc **luaproc__slot(struct lua *lua, uint32_t pid)
{
	struct luaproc **lp = &lua->buckets[hash__u64(pid) % PID_BUCKETS];

	while (*lp && (*lp)->pid != pid)
		lp = &(*lp)->next;
	return lp;
}

static void lua__forget(struct lua *lua, uint32_t pid)
{
	struct luaproc **slot, *lp;

	if (!lua)
		return;
	slot = luaproc__slot(lua, pid);
	lp = *slot;
	if (!lp)
		return;
	*slot = lp->next;
	luaproc__free(lp);
}

void lua__sweep(struct lua *lua)
{
	if (!lua)
		return;
	for (int b = 0; b < PID_BUCKETS; b++) {
		struct luaproc **slot = &lua->buckets[b];

		while (*slot) {
			struct luaproc *lp = *slot;

			if (kill((pid_t)lp->pid, 0) == 0 || errno != ESRCH) {
				slot = &lp->next;
				continue;
			}
			*slot = lp->next;
			luaproc__free(lp);
		}
	}
}

/* --- what a file says ------------------------------------------------------------------- */

struct luasyms {
	GElf_Sym ident;
	bool has_ident, luajit, luajit21;
	uint32_t nr_entries;
	GElf_Sym entries[MAX_ENTRIES];
};

static int luasyms__match(const struct elf_symbol *es, void *ctx)
{
	struct luasyms *s = ctx;
	const char *n = es->name;

	if (es->sym.st_shndx == SHN_UNDEF || n[0] != 'l')
		return 0;
	if (!strcmp(n, "lua_ident")) {
		s->ident = es->sym;
		s->has_ident = true;
	} else if (!strcmp(n, "luaJIT_setmode")) { /* every LuaJIT's */
		s->luajit = true;
	} else if (!strcmp(n, "luaJIT_profile_start")) { /* 2.1's, not 2.0's */
		s->luajit21 = true;
	} else if (!strncmp(n, "lua_", 4) && s->nr_entries < MAX_ENTRIES) {
		for (size_t i = 0; i < sizeof(entry_names) / sizeof(entry_names[0]); i++)
			if (!strcmp(n, entry_names[i]))
				s->entries[s->nr_entries++] = es->sym;
	}
	return 0;
}

/* "5.4" out of lua_ident ("$LuaVersion: Lua 5.4.4  Copyright ..."): 0x0504, 0 if none. */
static uint32_t version_of_ident(const char *s)
{
	const char *p = strstr(s, "Lua 5.");

	if (!p || p[6] < '0' || p[6] > '9')
		return 0;
	return 0x0500 | (uint32_t)(p[6] - '0');
}

static void file__read(int fd, struct lua_file *f)
{
	struct luasyms s = {};
	char ident[96] = "";
	uint64_t off;
	Elf *elf;

	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf) {
		f->result = LUA_NONE;
		return;
	}
	elf__for_each_symbol(elf, ELF_DYNSYM | ELF_SYMTAB, luasyms__match, &s);
	if (s.luajit) {
		/* LuaJIT 2.0 (no profiler API) keeps its native frames. */
		f->version = s.luajit21 ? LUA_VERSION_LUAJIT : 0x0200;
	} else if (s.has_ident) {
		if (elf__read_vaddr(elf, s.ident.st_value, ident,
				    s.ident.st_size && s.ident.st_size < sizeof(ident)
					? s.ident.st_size
					: sizeof(ident) - 1)) {
			f->result = LUA_ERROR;
			goto out;
		}
		ident[sizeof(ident) - 1] = '\0';
		f->version = version_of_ident(ident);
	} else {
		goto out;
	}
	f->result =
	    lua__offsets(f->version, &(struct lua_proc){}) ? LUA_SUPPORTED : LUA_UNKNOWN_VERSION;
	for (uint32_t i = 0; i < s.nr_entries; i++) {
		if (elf__vaddr_to_offset(elf, s.entries[i].st_value, &off))
			continue;
		f->entry_start[f->nr_entries] = off;
		f->entry_end[f->nr_entries++] = off + (s.entries[i].st_size ?: 1);
	}
out:
	elf_end(elf);
}

/* The facts of the file of pid's mapping m, read at first sight; NULL out of memory. */
static const struct lua_file *file__get(struct lua *lua, uint32_t pid, const struct proc_map *m)
{
	uint32_t b = hash__u64(m->dev ^ hash__u64(m->ino)) % PID_BUCKETS;
	struct lua_file *f;
	int fd;

	for (f = lua->files[b]; f; f = f->next)
		if (f->dev == m->dev && f->ino == m->ino)
			return f;
	if (lua->nr_files >= MAX_FILES)
		files__clear(lua);
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->dev = m->dev;
	f->ino = m->ino;
	fd = proc_map__open(pid, m);
	if (fd >= 0) {
		file__read(fd, f);
		close(fd);
	} else {
		/* Gone or unreadable: not kept, so that the next process mapping it looks. */
		f->result = LUA_NONE;
		return f->next = NULL, free(f), NULL;
	}
	f->next = lua->files[b];
	lua->files[b] = f;
	lua->nr_files++;
	return f;
}

static void lua__locate(struct lua *lua, struct proc *p, uint32_t pid)
{
	struct luaproc **slot, *lp;
	uint32_t gen = proc__maps_generation(p), n;
	const struct proc_map *maps = proc__maps(p, &n);
	struct lua_proc_entry bp = {0};

	if (lua->ctx->lua_fd < 0)
		return;
	slot = luaproc__slot(lua, pid);
	lp = *slot;
	if (lp && (lp->result != LUA_NONE || (lp->looked && lp->gen == gen)))
		return;
	if (!lp) {
		lp = calloc(1, sizeof(*lp));
		if (!lp)
			return;
		lp->pid = pid;
		lp->mem_fd = -1;
		*slot = lp;
	}
	lp->looked = true;
	lp->gen = gen;
	for (uint32_t i = 0; i < n; i++) {
		const struct lua_file *f;

		if (!maps[i].ino || dso__path(maps[i].dso)[0] != '/')
			continue;
		f = file__get(lua, pid, &maps[i]);
		if (!f || f->result == LUA_NONE)
			continue;
		lp->result = f->result;
		lp->version = f->version;
		if (f->result != LUA_SUPPORTED)
			break;
		lp->path = strdup(dso__path(maps[i].dso));
		lp->file = f;
		/* Where its code is: the span of the file's mappings (code only are kept). */
		bp.text_lo = maps[i].start;
		bp.text_hi = maps[i].end;
		for (uint32_t k = 0; k < n; k++) {
			if (maps[k].ino != maps[i].ino || maps[k].dev != maps[i].dev)
				continue;
			bp.text_lo = maps[k].start < bp.text_lo ? maps[k].start : bp.text_lo;
			bp.text_hi = maps[k].end > bp.text_hi ? maps[k].end : bp.text_hi;
		}
		if (!lp->path || !lua__offsets(f->version, &bp.lp) ||
		    bpf_map_update_elem(lua->ctx->lua_fd, &pid, &bp, BPF_ANY)) {
			pr_debug("pid %u: cannot record its Lua release: %s\n", pid,
				 strerror(errno));
			lp->result = LUA_ERROR;
			break;
		}
		if (lua->ctx->unwinder)
			unwinder__set_proc_flag(lua->ctx->unwinder, pid, UNWIND_PROC_LUA);
		pr_debug("pid %u: Lua %u.%u in %s\n", pid, f->version >> 8, f->version & 0xff,
			 lp->path);
		break;
	}
	switch (lp->result) {
	case LUA_SUPPORTED:
		lua->stats.supported++;
		break;
	case LUA_UNKNOWN_VERSION:
		lua->stats.unknown_version++;
		pr_debug("pid %u: Lua of a release whose frames are not known (%s): native "
			 "frames only\n",
			 pid, lp->version == 0x0200 ? "LuaJIT 2.0" : "no offsets");
		break;
	case LUA_ERROR:
		lua->stats.errors++;
		break;
	default:
		break;
	}
}

static void maps_cb(void *ctx, uint32_t pid, const struct proc_map *maps, uint32_t n)
{
	struct lua *lua = ctx;
	struct proc *p;

	(void)maps;
	if (!n)
		return;
	p = proctab__find(lua->ctx->proctab, pid);
	if (p && !proc__new_image(p))
		lua__locate(lua, p, pid);
}

static void exec_cb(void *ctx, uint32_t pid, struct proc *p)
{
	lua__forget(ctx, pid);
	if (p)
		lua__locate(ctx, p, pid);
}

static void exit_cb(void *ctx, uint32_t pid)
{
	lua__forget(ctx, pid);
}

static bool claims_cb(void *ctx, uint32_t pid)
{
	struct luaproc *lp = *luaproc__slot(ctx, pid);

	return lp && lp->result != LUA_NONE;
}

int lua__observe(struct lua *lua, struct proctab *pt)
{
	if (!lua)
		return 0;
	return proctab__observe(pt, &(struct proc_observer){
					.name = "lua",
					.maps = maps_cb,
					.exec = exec_cb,
					.exit = exit_cb,
					.claims = claims_cb,
					.ctx = lua,
				    });
}

/* --- naming functions -------------------------------------------------------------------- */

static int mem_read(void *ctx, uint64_t addr, void *buf, size_t n)
{
	struct luaproc *lp = ctx;

	if (lp->mem_fd < 0) {
		int fd = procmem__open(lp->pid);

		if (fd < 0)
			return fd;
		lp->mem_fd = fd;
	}
	return procmem__read(lp->mem_fd, addr, buf, n);
}

/*
 * Line `line` of the process's source file path (relative paths from its working directory),
 * into buf: false when it cannot be had. Only a regular, world-readable file is read: the
 * chunk name is the process's to choose, and autoprof reads as root.
 */
static bool source_line(uint32_t pid, const char *path, uint32_t line, char *buf, size_t cap)
{
	char cwd[4096], link[64], *full = NULL;
	struct ufile_how how = {.max_size = MAX_SOURCE};
	struct stat st;
	bool ok = false;
	ssize_t len;
	FILE *fp;
	int fd;

	if (path[0] != '/') {
		snprintf(link, sizeof(link), "/proc/%u/cwd", pid);
		len = readlink(link, cwd, sizeof(cwd) - 1);
		if (len <= 0)
			return false;
		cwd[len] = '\0';
		if (asprintf(&full, "%s/%s", cwd, path) < 0)
			return false;
		path = full;
	}
	fd = ufile__open_proc((int)pid, path, &how, &st);
	free(full);
	if (fd < 0)
		return false;
	if (!(st.st_mode & S_IROTH)) {
		close(fd);
		return false;
	}
	fp = fdopen(fd, "r");
	if (!fp) {
		close(fd);
		return false;
	}
	for (uint32_t n = 1; fgets(buf, (int)cap, fp); n++) {
		if (n == line) {
			ok = true;
			break;
		}
	}
	fclose(fp);
	return ok;
}

static void func__name(struct luaproc *lp, struct lua_func *f)
{
	char text[512], name[MAX_NAME];

	if (!f->line_defined) {
		f->name = strdup("main chunk");
		return;
	}
	if (f->is_file && source_line(lp->pid, f->chunk, f->line_defined, text, sizeof(text)) &&
	    lua__name_from_source(text, name, sizeof(name))) {
		f->name = strdup(name);
		return;
	}
	/* As Lua's own tracebacks name a function they know no name of. */
	if (asprintf(&f->name, "function <%s:%u>", f->chunk, f->line_defined) < 0)
		f->name = NULL;
}

static struct luafunc_slot *func__get(struct lua *lua, struct luaproc *lp, uint64_t addr)
{
	uint32_t mask = 2 * MAX_FUNCS - 1, i;
	struct luafunc_slot *s;
	int err;

	if (!lp->funcs) {
		lp->funcs = calloc(2 * MAX_FUNCS, sizeof(*lp->funcs));
		if (!lp->funcs)
			return NULL;
	}
	for (i = hash__u64(addr) & mask;; i = (i + 1) & mask) {
		s = &lp->funcs[i];
		if (s->addr == addr)
			return s->bad ? NULL : s;
		if (!s->addr)
			break;
	}
	if (lp->nr_funcs >= MAX_FUNCS) {
		funcs__clear(lp);
		return func__get(lua, lp, addr);
	}
	s->addr = addr;
	lp->nr_funcs++;
	err = lua_func__read(lp->version, mem_read, lp, addr, &s->f);
	if (!err)
		func__name(lp, &s->f);
	if (err || !s->f.name) {
		lua->stats.proto_errors++;
		s->bad = true;
		return NULL;
	}
	return s;
}

/* The frame naming Lua function proto at pc, or -1. */
static int name_pair(struct lua *lua, struct luaproc *lp, uint64_t proto, uint64_t pc,
		     struct frame *out)
{
	struct luafunc_slot *s = func__get(lua, lp, proto);

	if (!s)
		return -1;
	return symbolizer__runtime_frame(lua->ctx->sym, DSO_LUA, s->f.name, s->f.chunk,
					 lua_func__line(&s->f, pc), out)
		   ? -1
		   : 0;
}

/* --- placing them among the native frames ------------------------------------------------ */

bool lua__pairs(const uint64_t *pairs, uint32_t np)
{
	return np && pairs[0] == LUA_FRAMES_MAGIC;
}

static bool in_runtime(const struct luaproc *lp, const struct frame *f)
{
	return dso__kind(f->dso) == DSO_ELF && !strcmp(dso__path(f->dso), lp->path);
}

static bool is_entry(const struct luaproc *lp, const struct frame *f)
{
	if (!in_runtime(lp, f))
		return false;
	for (uint32_t i = 0; i < lp->file->nr_entries; i++)
		if (f->addr >= lp->file->entry_start[i] && f->addr < lp->file->entry_end[i])
			return true;
	return false;
}

/* The root-most of a run of the runtime's frames whose caller is outside it. */
static bool called_from_outside(const struct luaproc *lp, const struct frame *user, uint32_t n,
				uint32_t i)
{
	return in_runtime(lp, &user[i]) && i + 1 < n && !in_runtime(lp, &user[i + 1]);
}

/* A run of Lua functions between two C functions, leaf first: pairs [first, first + n), and
 * the second word of the C marker that ends it (LuaJIT: where its VM entry returns; 0: none). */
struct segment {
	uint32_t first, n;
	uint64_t ret;
};

/* Whether native frame i is where a LuaJIT VM entry returns to ret (stepped back a byte into
 * the call, or the walk's first frame as it is). */
static bool returns_to(const uint64_t *addrs, uint32_t i, uint64_t ret)
{
	return ret && (addrs[i] == ret || addrs[i] + 1 == ret);
}

/* How native frames are matched with runs of Lua calls, best first. */
enum entry_match {
	MATCH_RETURN,  /* LuaJIT: each run's VM entry returns to a known native frame */
	MATCH_API,     /* the runtime's C-to-Lua API functions (lua_pcall, ...) */
	MATCH_OUTSIDE, /* the interpreter's frames called from outside the runtime */
	MATCH__END,
};

static uint32_t emit_segment(struct lua *lua, struct luaproc *lp, const uint64_t *pairs,
			     const struct segment *s, struct frame *out, uint32_t o, uint32_t cap,
			     uint32_t *named)
{
	for (uint32_t k = s->first; k < s->first + s->n && o < cap; k++) {
		if (!name_pair(lua, lp, pairs[2 * k], pairs[2 * k + 1], &out[o])) {
			o++;
			(*named)++;
		}
	}
	return o;
}

uint32_t lua__splice(struct lua *lua, uint32_t pid, const struct frame *user, const uint64_t *addrs,
		     uint32_t n, bool *truncated, const uint64_t *pairs, uint32_t np,
		     struct frame *out, uint32_t cap)
{
	struct luaproc *lp = lua ? *luaproc__slot(lua, pid) : NULL;
	struct segment segs[LUA_MAX_ENTRIES + 2];
	uint32_t nseg = 0, o = 0, j = 0, run = 0, named = 0;
	enum entry_match mode = MATCH_RETURN;
	bool cut = false;

	if (!lp || lp->result != LUA_SUPPORTED || !lp->file || !lua__pairs(pairs, np))
		np = 0;
	/* The walk stopped short: the last run's callers, and so its entry, are not known. */
	if (np > 1 && pairs[2 * (np - 1)] == LUA_FRAME_CUT) {
		cut = true;
		np--;
	}
	/*
	 * Segments, leaf first, split at C functions. The i-th C-to-Lua entry from the leaf ran
	 * the i-th segment: a C function that called Lua (pcall, a C module) sits between the
	 * two. A sample in a C function has no leaf segment: the first entry ran its callers.
	 */
	if (np > 1)
		segs[nseg++] = (struct segment){1, 0, 0};
	for (uint32_t k = 1; k < np; k++) {
		if (pairs[2 * k] != LUA_FRAME_C) {
			segs[nseg - 1].n++;
		} else if (nseg < LUA_MAX_ENTRIES + 2) {
			segs[nseg - 1].ret = pairs[2 * k + 1];
			segs[nseg++] = (struct segment){k + 1, 0, 0};
		}
	}
	if (nseg && !segs[0].n) {
		memmove(segs, segs + 1, (nseg - 1) * sizeof(*segs));
		nseg--;
	}
	/*
	 * LuaJIT says where each run's VM entry returns to C: the run goes right above that
	 * native frame, when every run can be placed so. (Its lua_call and lua_resume jump into
	 * the VM and leave no frame of their own: table.sort's comparator, nginx's handlers.)
	 * A last run that nothing entered (the bottom's) needs no place.
	 */
	if (lp && lp->version == LUA_VERSION_LUAJIT && addrs) {
		while (nseg && !segs[nseg - 1].n && !segs[nseg - 1].ret)
			nseg--;
		for (uint32_t k = 0; k < nseg && mode == MATCH_RETURN; k++)
			if (!segs[k].ret)
				mode = MATCH_API;
	} else {
		mode = MATCH_API;
	}
	/*
	 * Else the entries are the runtime's C-to-Lua API functions, and where none is among
	 * the native frames, the interpreter's frames called from outside the runtime (nginx's)
	 * stand for them.
	 */
	for (; mode < MATCH__END; mode++) {
		o = j = run = named = 0;
		for (uint32_t i = 0; i < n && o < cap; i++) {
			if (j >= nseg)
				continue;
			if (mode == MATCH_RETURN ? !returns_to(addrs, i, segs[j].ret)
			    : mode == MATCH_API	 ? !is_entry(lp, &user[i])
						 : !called_from_outside(lp, user, n, i))
				continue;
			/* user[run, i): what ran between the last entry and this one. */
			if (segs[j].n) {
				uint32_t keep = run;

				/* Callees outside the interpreter (libc, C modules) stay, as does
				 * what is leafward of them; the interpreter's own frames give way.
				 */
				for (uint32_t k = run; k < i; k++)
					if (!in_runtime(lp, &user[k]))
						keep = k + 1;
				for (uint32_t k = run; k < keep && o < cap; k++)
					out[o++] = user[k];
				o = emit_segment(lua, lp, pairs, &segs[j], out, o, cap, &named);
				/* A cut walk's last run: this entry may not be the one that ran
				 * it, nor what follows its callers. The stack ends here, marked. */
				if (cut && j == nseg - 1) {
					run = n;
					j++;
					break;
				}
			} else {
				for (uint32_t k = run; k < i && o < cap; k++)
					out[o++] = user[k];
			}
			if (o < cap)
				out[o++] = user[i];
			run = i + 1;
			j++;
		}
		if (mode == MATCH_RETURN ? j == nseg : j || !nseg)
			break;
	}
	for (uint32_t k = run; k < n && o < cap; k++)
		out[o++] = user[k];
	/*
	 * Fewer entries among native frames that claim to be whole than runs of Lua calls: each
	 * run has one, so the native walk missed some (code whose unwind tables are wrong:
	 * LuaJIT calls helpers such as its modulo from the interpreter's frame without saying
	 * so). Then it is short: the runs left over go after it, marked, never dropped unsaid.
	 */
	if (!*truncated) {
		for (uint32_t k = j; k < nseg; k++)
			if (segs[k].n) {
				*truncated = true;
				if (j)
					lua->stats.mismatches++;
				else
					lua->stats.short_walks++;
				break;
			}
	}
	if (cut && !*truncated) {
		*truncated = true;
		lua->stats.cut_walks++;
	}
	/* The native walk stopped short of the entries that ran the rest: their Lua frames are
	 * still the callers, above where the stack is marked truncated. */
	for (; *truncated && j < nseg; j++)
		o = emit_segment(lua, lp, pairs, &segs[j], out, o, cap, &named);
	if (np) {
		lua->stats.samples += named > 0;
		lua->stats.frames += named;
	}
	return o;
}

void lua__stats(struct lua *lua, struct lua_stats *out)
{
	*out = lua ? lua->stats : (struct lua_stats){};
}
