// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "tracectx: " fmt

#include <ctype.h>
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/hash.h"
#include "lib/log.h"
#include "lib/procmem.h"
#include "symbolize/elf.h"
#include "symbolize/dso.h"
#include "lib/procmaps.h"
#include "proc/proctab.h"
#include "runtime/golabels.h"
#include "runtime/tracectx.h"

#define TRACECTX_SYMBOL "otel_thread_ctx_v1"
#define ELASTIC_SYMBOL "elastic_apm_profiling_correlation_tls_v1"
#define ELASTIC_PREFIX "elastic-jvmti-linux-"
/* Where Go's own linker keeps g on linux/amd64: the word below the thread pointer. */
#define GO_G_TP_OFFSET (-8)

/* Defined by the x86-64 psABI; older <elf.h> copies lack the TLSDESC one. */
#ifndef R_X86_64_TPOFF64
#define R_X86_64_TPOFF64 18
#endif
#ifndef R_X86_64_TLSDESC
#define R_X86_64_TLSDESC 36
#endif

struct locate_ctx {
	int pid;
	const char *exe;	/* the executable's path, "" when unknown */
	struct tracectx_loc loc;	/* the OTEP variable, once found */
	struct tracectx_loc alt;	/* else Go labels or Elastic's variable, when alt_found */
	bool alt_found;
	int defined_err;	/* why an object defining the variable gave no offset, or 0 */
	int open_err;		/* first file that could not be read, or 0 */
};

/* One mapping of a file, as a process maps it. */
struct file_view {
	const char *path;
	uint64_t start, pgoff;
};

/* A TLS variable in the object's .dynsym, defined here or not. */
struct tls_sym {
	size_t dynsym_ndx;	/* section index of .dynsym */
	size_t index;		/* symbol index in .dynsym */
	uint64_t value;		/* offset in the object's TLS block */
	bool defined;
};

struct tls_sym_query {
	const char *want;
	struct tls_sym *ts;
};

static int tls_sym__match(const struct elf_symbol *s, void *ctx)
{
	struct tls_sym_query *q = ctx;

	if (GELF_ST_TYPE(s->sym.st_info) != STT_TLS || strcmp(s->name, q->want))
		return 0;
	*q->ts = (struct tls_sym){
	    .dynsym_ndx = s->table,
	    .index = s->index,
	    .value = s->sym.st_value,
	    .defined = s->sym.st_shndx != SHN_UNDEF,
	};
	return 1;
}

/* Returns 0 with the symbol filled, -ENOENT when .dynsym has no such TLS symbol. */
static int tls_sym__find(Elf *elf, const char *want, struct tls_sym *ts)
{
	struct tls_sym_query q = {.want = want, .ts = ts};

	return elf__for_each_symbol(elf, ELF_DYNSYM, tls_sym__match, &q) ? 0 : -ENOENT;
}

/*
 * The executable's TLS block comes first and ends at the thread pointer (TLS variant II), laid
 * out as glibc's _dl_determine_tlsoffset does for the first module: the block's end rounded up
 * to its alignment, keeping the address of its first byte congruent to p_vaddr. Linkers align
 * PT_TLS, so the first byte's misalignment is 0 in practice and this is roundup(memsz, align),
 * which is also what a static executable gets.
 */
static int tls__exe_tp_offset(Elf *elf, uint64_t sym_value, int64_t *tp_offset)
{
	size_t phnum;

	if (elf_getphdrnum(elf, &phnum))
		return -EINVAL;
	for (size_t i = 0; i < phnum; i++) {
		uint64_t align, firstbyte, block;
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_TLS)
			continue;
		align = ph.p_align ? ph.p_align : 1;
		if (align & (align - 1))
			return -EINVAL;
		firstbyte = -ph.p_vaddr & (align - 1);
		block = ((ph.p_memsz - firstbyte + align - 1) & ~(align - 1)) + firstbyte;
		*tp_offset = (int64_t)sym_value - (int64_t)block;
		return 0;
	}
	/* A TLS symbol without a TLS segment: a broken object. */
	return -EINVAL;
}

/*
 * A GOT slot of the object that ld.so filled with the variable's tp offset: the argument word of
 * a TLSDESC pair (-mtls-dialect=gnu2) or an initial-exec TPOFF64 entry. Either is against the
 * symbol, or, when the object binds it locally, against symbol 0 with the variable's offset in
 * the block as addend. *addend is what ld.so added to the variable's offset. -ENOENT: none.
 */
static int tls_sym__find_got(Elf *elf, const struct tls_sym *ts, uint64_t *got, int64_t *addend)
{
	bool found_ie = false;
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		Elf_Data *data;
		size_t n;

		/* .rela.dyn and .rela.plt: GNU ld puts TLSDESC in the latter. */
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_RELA ||
		    shdr.sh_link != ts->dynsym_ndx || !shdr.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		n = shdr.sh_size / shdr.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			uint64_t type, symi;
			GElf_Rela r;

			if (!gelf_getrela(data, i, &r))
				continue;
			type = GELF_R_TYPE(r.r_info);
			symi = GELF_R_SYM(r.r_info);
			if (type != R_X86_64_TLSDESC && type != R_X86_64_TPOFF64)
				continue;
			if (symi == ts->index) {
				*addend = r.r_addend;
			} else if (!symi && ts->defined && (uint64_t)r.r_addend == ts->value) {
				*addend = 0;
			} else {
				continue;
			}
			if (type == R_X86_64_TLSDESC) {
				/* Second word of the pair: the descriptor's argument. */
				*got = r.r_offset + 8;
				return 0;
			}
			/* Keep looking for a TLSDESC: it tells static from dynamic TLS. */
			if (!found_ie) {
				*got = r.r_offset;
				found_ie = true;
			}
		}
	}
	return found_ie ? 0 : -ENOENT;
}

static bool tls__has_segment(Elf *elf)
{
	size_t phnum;

	if (elf_getphdrnum(elf, &phnum))
		return false;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_TLS)
			return true;
	}
	return false;
}

bool tracectx__elastic_path(const char *path)
{
	const char *base = strrchr(path, '/'), *p;
	size_t n;

	/* .*\/elastic-jvmti-linux-([\w-]*)\.so */
	if (!base)
		return false;
	base++;
	n = strlen(base);
	if (strncmp(base, ELASTIC_PREFIX, strlen(ELASTIC_PREFIX)) ||
	    n < strlen(ELASTIC_PREFIX) + 3 || strcmp(base + n - 3, ".so"))
		return false;
	for (p = base + strlen(ELASTIC_PREFIX); p < base + n - 3; p++)
		if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-')
			return false;
	return true;
}


/* --- what a file tells, whoever maps it ------------------------------------------------- */

/* PT_LOAD segments kept per file: enough for any linker's output (4 is usual). */
#define FACTS_MAX_LOADS 16

/* A TLS variable of the file: its offset in the executable's block, or its GOT slot. */
struct var_facts {
	bool found;		/* .dynsym has it as a TLS symbol */
	bool defined;
	int exe_err;		/* 0: exe_off is the offset, were the file the executable */
	int64_t exe_off;
	int got_err;		/* 0: the GOT slot ld.so fills (tls_sym__find_got) */
	uint64_t got;
	int64_t addend;
};

struct file_facts {
	bool elf;		/* ELF64 x86-64: nothing else is looked at in other files */
	bool et_exec;
	uint8_t nr_loads;
	struct {
		uint64_t offset, vaddr, filesz;
	} loads[FACTS_MAX_LOADS];
	struct var_facts otep, elastic;
	bool go;		/* a Go executable: go_err or go_loc */
	int go_err;
	struct tracectx_loc go_loc;
};

static void var_facts__read(Elf *elf, const char *name, struct var_facts *v)
{
	struct tls_sym ts;

	*v = (struct var_facts){ .exe_err = -ENOENT, .got_err = -ENOENT };
	if (tls_sym__find(elf, name, &ts))
		return;
	v->found = true;
	v->defined = ts.defined;
	if (ts.defined)
		v->exe_err = tls__exe_tp_offset(elf, ts.value, &v->exe_off);
	v->got_err = tls_sym__find_got(elf, &ts, &v->got, &v->addend);
}

/*
 * A Go executable: its g slot and the runtime's offsets. Go's own linker (no cgo) gives the
 * executable no PT_TLS and keeps g at a fixed -8; a system linker (cgo, -linkmode=external)
 * places runtime.tlsg in the executable's TLS block like any local-exec variable. Where
 * .symtab does not name it (stripped; a PIE by Go's linker, whose PT_TLS holds g alone), it is
 * taken to open the block: Go's object comes first on the link line.
 */
static int go_facts__read(int fd, Elf *elf, struct tracectx_loc *loc)
{
	struct golabels_offsets go;
	int64_t off = GO_G_TP_OFFSET;
	int err;

	err = golabels__probe(fd, elf, &go);
	if (err)
		return err;
	if (tls__has_segment(elf)) {
		err = tls__exe_tp_offset(elf, go.tlsg_found ? go.tlsg : 0, &off);
		if (err)
			return err;
	}
	*loc = (struct tracectx_loc){
		.tp_offset = off,
		.kind = TRACECTX_GO_MAP,
		.go_g_m = go.g_m,
		.go_m_curg = go.m_curg,
		.go_g_labels = go.g_labels,
	};
	return 0;
}

/* Reads what fd's file tells: all of it, so that any process mapping it needs no more. */
static void file_facts__read(int fd, struct file_facts *f)
{
	GElf_Ehdr ehdr;
	size_t phnum;
	Elf *elf;

	*f = (struct file_facts){};
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return;
	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &ehdr) ||
	    ehdr.e_ident[EI_CLASS] != ELFCLASS64 || ehdr.e_machine != EM_X86_64 ||
	    elf_getphdrnum(elf, &phnum))
		goto end_elf;
	f->elf = true;
	f->et_exec = ehdr.e_type == ET_EXEC;
	for (size_t i = 0; i < phnum && f->nr_loads < FACTS_MAX_LOADS; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		f->loads[f->nr_loads].offset = ph.p_offset;
		f->loads[f->nr_loads].vaddr = ph.p_vaddr;
		f->loads[f->nr_loads].filesz = ph.p_filesz;
		f->nr_loads++;
	}
	var_facts__read(elf, TRACECTX_SYMBOL, &f->otep);
	var_facts__read(elf, ELASTIC_SYMBOL, &f->elastic);
	f->go = golabels__is_go(elf);
	if (f->go)
		f->go_err = go_facts__read(fd, elf, &f->go_loc);
end_elf:
	elf_end(elf);
}

/* As elf__load_base, from the segments kept. */
static int file_facts__load_base(const struct file_facts *f, uint64_t start, uint64_t pgoff,
				 uint64_t *base)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

	for (unsigned int i = 0; i < f->nr_loads; i++) {
		if (pgoff < (f->loads[i].offset & ~(page - 1)) ||
		    pgoff >= f->loads[i].offset + f->loads[i].filesz)
			continue;
		*base = start - pgoff - (f->loads[i].vaddr - f->loads[i].offset);
		return 0;
	}
	return -ENOENT;
}

/* --- where this process has it ----------------------------------------------------------- */

/* The variable in a shared library (or any object referencing it through the GOT). */
static int locate__from_got(struct locate_ctx *lc, const struct file_facts *f,
			    const struct var_facts *v, const struct file_view *fv,
			    const char *name, int64_t *tp_offset)
{
	int64_t word;
	uint64_t base;
	int err;

	if (v->got_err)
		/* General-dynamic only (__tls_get_addr): no offset stored in the process. */
		return -ENOTSUP;
	err = file_facts__load_base(f, fv->start, fv->pgoff, &base);
	if (err)
		return err;
	err = procmem__read_once((uint32_t)lc->pid, base + v->got, &word, sizeof(word));
	if (err)
		return err;
	/*
	 * Static TLS lies below the thread pointer: ld.so stored a negative offset. A positive
	 * word is a pointer to a dynamic TLS descriptor (the library came with dlopen after
	 * start and got no static TLS), or a slot not resolved yet.
	 */
	if (word >= 0) {
		pr_debug("pid %d: %s: %s in dynamic TLS (GOT word %#" PRIx64 ")\n", lc->pid,
			 fv->path, name, (uint64_t)word);
		return -ENOTSUP;
	}
	*tp_offset = word - v->addend;
	return 0;
}

/* The variable v of the object: in the executable's own block, or by the GOT ld.so filled. */
static int locate__var(struct locate_ctx *lc, const struct file_facts *f,
		       const struct var_facts *v, const struct file_view *fv, bool is_exe,
		       const char *name, int64_t *tp_offset)
{
	if (is_exe && v->defined) {
		*tp_offset = v->exe_off;
		return v->exe_err;
	}
	return locate__from_got(lc, f, v, fv, name, tp_offset);
}

/* Remembers why an object that should have given a context did not. */
static void locate__failed(struct locate_ctx *lc, int err)
{
	if (err && err != -ENOENT && err != -ENODATA && !lc->defined_err)
		lc->defined_err = err;
}

/* Elastic APM's agent library: its correlation variable, read like the OTEP one. */
static int locate__elastic(struct locate_ctx *lc, const struct file_facts *f,
			   const struct file_view *fv, bool is_exe)
{
	int64_t off;
	int err;

	if (!f->elastic.found)
		return -ENOENT;
	err = locate__var(lc, f, &f->elastic, fv, is_exe, ELASTIC_SYMBOL, &off);
	if (err)
		return f->elastic.defined ? err : 0;
	lc->alt = (struct tracectx_loc){ .tp_offset = off, .kind = TRACECTX_ELASTIC };
	lc->alt_found = true;
	pr_debug("pid %d: %s in %s at tp%+" PRId64 "\n", lc->pid, ELASTIC_SYMBOL, fv->path, off);
	return 0;
}

/* One file the process maps, told by its facts. 1 stops the walk: the OTEP variable found. */
static int locate__file(struct locate_ctx *lc, const struct file_facts *f,
			const struct file_view *fv)
{
	bool is_exe;
	int err;

	if (!f->elf)
		return 0;
	is_exe = !strcmp(fv->path, lc->exe) || f->et_exec;
	if (f->otep.found) {
		int64_t off;

		err = locate__var(lc, f, &f->otep, fv, is_exe, TRACECTX_SYMBOL, &off);
		if (!err) {
			pr_debug("pid %d: %s in %s at tp%+" PRId64 "\n", lc->pid, TRACECTX_SYMBOL,
				 fv->path, off);
			lc->loc = (struct tracectx_loc){ .tp_offset = off, .kind = TRACECTX_OTEP };
			/* The standard wins over the rest: stop the walk. */
			return 1;
		}
		/* Another object's GOT may still tell; remember why this one did not. */
		if (f->otep.defined)
			locate__failed(lc, err);
	}
	/* Go labels and Elastic's variable count only where no OTEP variable is found. */
	if (!lc->alt_found && is_exe && f->go) {
		locate__failed(lc, f->go_err);
		if (!f->go_err) {
			lc->alt = f->go_loc;
			lc->alt_found = true;
			pr_debug("pid %d: %s (Go) keeps g at tp%+" PRId64 ", labels at g+%u\n",
				 lc->pid, fv->path, (int64_t)f->go_loc.tp_offset,
				 f->go_loc.go_g_labels);
		}
	}
	if (!lc->alt_found && tracectx__elastic_path(fv->path))
		locate__failed(lc, locate__elastic(lc, f, fv, is_exe));
	return 0;
}

/* The walk's outcome as tracectx__locate tells it. */
static int locate__result(struct locate_ctx *lc, int err, struct tracectx_loc *loc)
{
	if (err == 1) {
		*loc = lc->loc;
		return 0;
	}
	if (err == -ENOENT)
		/* maps is gone with the process; -ENOENT means "publishes none" to callers. */
		return -ESRCH;
	if (err)
		return err;
	if (lc->alt_found) {
		*loc = lc->alt;
		return 0;
	}
	return lc->defined_err ? lc->defined_err : lc->open_err ? lc->open_err : -ENOENT;
}

/* --- facts kept per file ----------------------------------------------------------------- */

#define CACHE_BUCKETS 1024

struct facts_entry {
	struct dso_file_key key;
	struct file_facts facts;
	struct facts_entry *hnext;		/* bucket chain */
	struct facts_entry *prev, *next;	/* LRU list: the cache's head is the newest */
};

struct tracectx_cache {
	pthread_mutex_t lock;
	struct facts_entry *buckets[CACHE_BUCKETS];
	struct facts_entry lru;	/* sentinel */
	unsigned int nr, max;
	uint64_t hits, misses, evictions;
};

struct tracectx_cache *tracectx_cache__new(unsigned int max_entries)
{
	struct tracectx_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	pthread_mutex_init(&c->lock, NULL);
	c->lru.prev = c->lru.next = &c->lru;
	c->max = max_entries ? max_entries : 1;
	return c;
}

void tracectx_cache__free(struct tracectx_cache *c)
{
	struct facts_entry *e, *next;

	if (!c)
		return;
	for (e = c->lru.next; e != &c->lru; e = next) {
		next = e->next;
		free(e);
	}
	pthread_mutex_destroy(&c->lock);
	free(c);
}

void tracectx_cache__stats(struct tracectx_cache *c, struct tracectx_cache_stats *out)
{
	pthread_mutex_lock(&c->lock);
	*out = (struct tracectx_cache_stats){
		.entries = c->nr,
		.max_entries = c->max,
		.hits = c->hits,
		.misses = c->misses,
		.evictions = c->evictions,
	};
	pthread_mutex_unlock(&c->lock);
}

static uint32_t key_bucket(const struct dso_file_key *k)
{
	return (uint32_t)(hash__u64(k->dev ^ hash__u64(k->ino)) % CACHE_BUCKETS);
}

static bool key_eq(const struct dso_file_key *a, const struct dso_file_key *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->ctime_ns == b->ctime_ns &&
	       a->size == b->size;
}

static void lru_unlink(struct facts_entry *e)
{
	e->prev->next = e->next;
	e->next->prev = e->prev;
}

static void lru_push(struct tracectx_cache *c, struct facts_entry *e)
{
	e->next = c->lru.next;
	e->prev = &c->lru;
	c->lru.next->prev = e;
	c->lru.next = e;
}

static void cache__unhash(struct tracectx_cache *c, struct facts_entry *e)
{
	struct facts_entry **pp = &c->buckets[key_bucket(&e->key)];

	while (*pp && *pp != e)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = e->hnext;
}

/* Copies the facts of key's file to *f: true when known. Under the lock. */
static bool cache__get(struct tracectx_cache *c, const struct dso_file_key *key,
		       struct file_facts *f)
{
	for (struct facts_entry *e = c->buckets[key_bucket(key)]; e; e = e->hnext) {
		if (!key_eq(&e->key, key))
			continue;
		lru_unlink(e);
		lru_push(c, e);
		*f = e->facts;
		return true;
	}
	return false;
}

/* Keeps f for key's file, the least recently used file making room. Under the lock. */
static void cache__put(struct tracectx_cache *c, const struct dso_file_key *key,
		       const struct file_facts *f)
{
	struct facts_entry *e;
	uint32_t b;

	if (c->nr >= c->max) {
		e = c->lru.prev;
		lru_unlink(e);
		cache__unhash(c, e);
		c->nr--;
		c->evictions++;
	} else {
		e = malloc(sizeof(*e));
		/* Out of memory only costs reading the file again. */
		if (!e)
			return;
	}
	e->key = *key;
	e->facts = *f;
	b = key_bucket(key);
	e->hnext = c->buckets[b];
	c->buckets[b] = e;
	lru_push(c, e);
	c->nr++;
}

/* The facts of the dso's file: kept ones, else read from its open file (and kept). */
static int cache__facts(struct tracectx_cache *c, const struct dso *dso, struct file_facts *f)
{
	struct dso_file_key key;
	bool hit;

	if (dso__file_key(dso, &key))
		return -EBADF;
	pthread_mutex_lock(&c->lock);
	hit = cache__get(c, &key, f);
	if (hit)
		c->hits++;
	else
		c->misses++;
	pthread_mutex_unlock(&c->lock);
	if (hit)
		return 0;
	/* Read unlocked: another thread reading the same file at once only costs a read. */
	file_facts__read(dso__fd(dso), f);
	pthread_mutex_lock(&c->lock);
	if (!cache__get(c, &key, f))
		cache__put(c, &key, f);
	pthread_mutex_unlock(&c->lock);
	return 0;
}

int tracectx__locate_maps(struct tracectx_cache *c, int pid, const char *exe,
			  const struct proc_map *maps, uint32_t n, struct tracectx_loc *loc)
{
	struct locate_ctx lc = {.pid = pid, .exe = exe ? exe : ""};
	int err = 0;

	for (uint32_t i = 0; i < n && err != 1; i++) {
		const struct dso *dso = maps[i].dso;
		const char *path = dso__path(dso);
		struct file_facts f;
		bool seen = false;

		if (dso__kind(dso) != DSO_ELF || path[0] != '/')
			continue;
		/* A file maps more than once: its first mapping tells. */
		for (uint32_t j = 0; j < i && !seen; j++)
			seen = maps[j].dso == dso;
		if (seen)
			continue;
		if (cache__facts(c, dso, &f)) {
			if (!lc.open_err)
				lc.open_err = -EBADF;
			continue;
		}
		err = locate__file(&lc, &f,
				   &(struct file_view){ path, maps[i].start, maps[i].pgoff });
	}
	return locate__result(&lc, err, loc);
}

/* --- from /proc/PID/maps alone ----------------------------------------------------------- */

struct maps_walk {
	struct locate_ctx lc;
	uint64_t seen[64][2];	/* (dev, inode) of files looked at: a file maps more than once */
	unsigned int nr_seen;
};

static int walk__mapping(const struct map_entry *e, void *ctx)
{
	struct maps_walk *w = ctx;
	uint64_t dev = ((uint64_t)e->dev_major << 32) | e->dev_minor;
	struct file_facts f;
	int fd;

	/* Anonymous memory, [vdso] and the like have no file to read. */
	if (e->path[0] != '/')
		return 0;
	for (unsigned int i = 0; i < w->nr_seen; i++)
		if (w->seen[i][0] == dev && w->seen[i][1] == e->inode)
			return 0;
	if (w->nr_seen < sizeof(w->seen) / sizeof(w->seen[0])) {
		w->seen[w->nr_seen][0] = dev;
		w->seen[w->nr_seen++][1] = e->inode;
	}
	fd = maps__open_file(w->lc.pid, e);
	if (fd < 0) {
		pr_debug("pid %d: cannot open %s: %s\n", w->lc.pid, e->path, strerror(-fd));
		if (!w->lc.open_err)
			w->lc.open_err = fd;
		return 0;
	}
	/* Whatever this file is, it only counts if it holds a context. */
	file_facts__read(fd, &f);
	close(fd);
	return locate__file(&w->lc, &f, &(struct file_view){ e->path, e->start, e->pgoff });
}

int tracectx__locate(int pid, struct tracectx_loc *loc)
{
	struct maps_walk w = {.lc.pid = pid};
	char exe[PATH_MAX] = "", path[64];
	ssize_t n;
	int err;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n > 0) {
		const char *del = " (deleted)";
		size_t dl = strlen(del);

		exe[n] = '\0';
		/* maps strips the suffix from its paths too. */
		if ((size_t)n > dl && !strcmp(exe + n - dl, del))
			exe[n - dl] = '\0';
	}
	w.lc.exe = exe;
	err = maps__for_each(pid, true, walk__mapping, &w);
	return locate__result(&w.lc, err, loc);
}
