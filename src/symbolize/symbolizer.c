// SPDX-License-Identifier: GPL-2.0-only
/*
 * Addresses to names. The symbolizer owns the cache of dsos (one per distinct file, shared by
 * every process that maps it) and loads their symbol tables lazily, at query time, from a file
 * descriptor opened while the process was alive, within a memory budget (LRU).
 */
#define pr_fmt(fmt) "symbolizer: " fmt

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lib/hash.h"
#include "lib/log.h"
#include "lib/procfs.h"
#include "lib/timeconst.h"
#include "lib/ufile.h"
#include "lib/strtab.h"
#include "symbolize/dso_priv.h"
#include "symbolize/debuginfo.h"
#include "symbolize/elf.h"
#include "symbolize/objsym.h"
#include "symbolize/perfmap.h"
#include "symbolize/kallsyms.h"
#include "lib/procmaps.h"
#include "symbolize/symbolizer.h"

#define INDEX_BUCKETS 4096
/* A DWARF reader that indexed no new compilation unit for this long lets libdw go
 * (symbolizer.debuginfo-idle). A scrape or a busy host's history keeps reading new ones; an
 * idle host's history names the same few hundred frames, in CUs indexed in its first minutes. */
#define SYM_DWARF_IDLE_NS (60 * NSEC_PER_SEC)
/* Free heap beyond this is given back to the system at a sweep. */
#define SYM_TRIM_FREE_BYTES (2u << 20)

struct interp_pos {
	char *function;
	char *file;
	uint32_t line;
	uint64_t hash;
};

/*
 * Two locks, taken in this order: index_lock guards the dso index (the ingest thread's path at
 * every exec, which must never wait for a query), lock guards symbol tables and lookups (query
 * threads, which may load big debug files).
 */
/* Code pages the kernel maps into processes, named as a whole: the uprobe trampolines (a sample
 * taken while a uprobe's return or syscall trampoline runs), the legacy vsyscall page. */
static const char *const special_pages[] = { "[uprobes]", "[vsyscall]" };
static const char *const marker_names[SYM_MARKER__MAX] = {
	[SYM_MARKER_TRUNCATED] = "[truncated]",
	[SYM_MARKER_EXEC] = "[exec]",
	[SYM_MARKER_EXITED] = "[exiting]",
};
#define NR_SPECIAL (sizeof(special_pages) / sizeof(special_pages[0]))

struct symbolizer {
	pthread_mutex_t index_lock;
	pthread_mutex_t lock;
	struct symbolizer_opts opts;
	struct kallsyms *ks;
	int ks_error; /* 0: not tried yet; 1: loaded; < 0: failed */
	struct dso *kernel;
	struct dso *unknown;
	struct dso *markers[SYM_MARKER__MAX]; /* [SYM_MARKER_NONE] stays NULL */
	struct dso *anon;
	struct dso *vdso;
	struct dso *python, *lua, *java;
	struct dso *special[NR_SPECIAL];
	/* Interpreted positions: entries in the order added (a frame's addr), and an index. Guarded
	 * by interp_lock, taken after lock by lookups and alone by the ingest thread. */
	pthread_mutex_t interp_lock;
	struct interp_pos *interp;
	uint32_t nr_interp, cap_interp;
	uint32_t *interp_index; /* open addressing: entry + 1, 0 = empty */
	uint32_t interp_mask;
	struct dso *by_ino[INDEX_BUCKETS];
	struct dso *by_bid[INDEX_BUCKETS];
	struct ino_alias *alias_by_ino[INDEX_BUCKETS];
	/* Every indexed dso, for trimming. */
	struct dso **all;
	size_t nr_all, cap_all;
	uint64_t clock;
	struct symbolizer_stats stats;
	bool copying; /* a DWARF is being copied whole: symbolizer__copy_step has work */
};

/*
 * Another file with an indexed dso's build ID (a container's copy of a library: another device,
 * another inode), found once by its build ID and from then on by its own inode, as the dso's
 * own file is: without it, each exec in a container opened every library to read its build ID
 * again. Holds the file open, so that its inode is not reused and its rewrite is seen.
 */
struct ino_alias {
	struct ino_alias *next;	    /* bucket chain in alias_by_ino */
	struct ino_alias *next_dso; /* the dso's aliases */
	dev_t dev;
	uint64_t ino;
	int fd;
	int64_t ctime_ns, size;
	struct dso *dso; /* indexed: the index's reference keeps it while the alias is there */
};

static void drop_alias(struct symbolizer *sym, struct ino_alias *a);

static uint32_t ino_bucket(dev_t dev, uint64_t ino)
{
	return hash__u64(ino ^ ((uint64_t)dev << 40)) % INDEX_BUCKETS;
}

static uint32_t bid_bucket(const char *bid)
{
	return hash__bytes(bid, strlen(bid), 0) % INDEX_BUCKETS;
}

/*
 * Every process of this kernel maps the same vDSO image: ours, copied into a memfd, names the
 * vDSO frames of all of them.
 */
static int vdso_image_fd(void)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	char line[512];
	unsigned long start, end, size = 0;
	FILE *f;
	int fd;

	if (!base)
		return -ENOENT;
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", &start, &end) == 2 &&
		    start == base) {
			size = end - start;
			break;
		}
	}
	fclose(f);
	if (!size)
		return -ENOENT;
	fd = memfd_create("autoprof-vdso", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, (const void *)base, size) != (ssize_t)size) {
		close(fd);
		return -EIO;
	}
	return fd;
}

struct symbolizer *symbolizer__new(const struct symbolizer_opts *opts)
{
	struct symbolizer *sym = calloc(1, sizeof(*sym));

	if (!sym)
		return NULL;
	pthread_mutex_init(&sym->index_lock, NULL);
	pthread_mutex_init(&sym->lock, NULL);
	pthread_mutex_init(&sym->interp_lock, NULL);
	sym->opts = *opts;
	if (!sym->opts.dwarf_idle_ns)
		sym->opts.dwarf_idle_ns = SYM_DWARF_IDLE_NS;
	sym->kernel = dso__new(DSO_KERNEL, "[kernel.kallsyms]", -1);
	sym->unknown = dso__new(DSO_UNKNOWN, "[unknown]", -1);
	for (size_t i = SYM_MARKER_NONE + 1; i < SYM_MARKER__MAX; i++) {
		sym->markers[i] = dso__new(DSO_MARKER, marker_names[i], -1);
		if (!sym->markers[i])
			goto out_nomem;
	}
	sym->anon = dso__new(DSO_ANON, "[anon]", -1);
	sym->vdso = dso__new(DSO_VDSO, "[vdso]", vdso_image_fd());
	sym->python = dso__new(DSO_PYTHON, "[python]", -1);
	sym->lua = dso__new(DSO_LUA, "[lua]", -1);
	sym->java = dso__new(DSO_JAVA, "[java]", -1);
	for (size_t i = 0; i < NR_SPECIAL; i++)
		sym->special[i] = dso__new(DSO_SPECIAL, special_pages[i], -1);
	if (sym->vdso && sym->vdso->fd < 0)
		sym->vdso->fd = -1;
	if (!sym->kernel || !sym->unknown || !sym->anon || !sym->vdso || !sym->python || !sym->lua ||
	    !sym->java ||
	    !sym->special[0] || !sym->special[1])
		goto out_nomem;
	return sym;
out_nomem:
	symbolizer__free(sym);
	errno = ENOMEM;
	return NULL;
}

void symbolizer__free(struct symbolizer *sym)
{
	if (!sym)
		return;
	for (size_t i = 0; i < sym->nr_all; i++) {
		while (sym->all[i]->aliases)
			drop_alias(sym, sym->all[i]->aliases);
		dso__put(sym->all[i]);
	}
	free(sym->all);
	dso__put(sym->kernel);
	dso__put(sym->unknown);
	for (size_t i = 0; i < SYM_MARKER__MAX; i++)
		dso__put(sym->markers[i]);
	dso__put(sym->anon);
	dso__put(sym->vdso);
	dso__put(sym->python);
	dso__put(sym->lua);
	dso__put(sym->java);
	for (size_t i = 0; i < NR_SPECIAL; i++)
		dso__put(sym->special[i]);
	for (uint32_t i = 0; i < sym->nr_interp; i++) {
		free(sym->interp[i].function);
		free(sym->interp[i].file);
	}
	free(sym->interp);
	free(sym->interp_index);
	pthread_mutex_destroy(&sym->interp_lock);
	kallsyms__free(sym->ks);
	pthread_mutex_destroy(&sym->lock);
	pthread_mutex_destroy(&sym->index_lock);
	free(sym);
}

struct dso *symbolizer__kernel_dso(struct symbolizer *sym)
{
	return sym->kernel;
}

struct dso *symbolizer__unknown_dso(struct symbolizer *sym)
{
	return sym->unknown;
}

struct dso *symbolizer__marker_dso(struct symbolizer *sym, enum sym_marker m)
{
	return m < SYM_MARKER__MAX ? sym->markers[m] : NULL;
}

bool symbolizer__kernel_page(const char *path)
{
	if (!strcmp(path, "[vdso]"))
		return true;
	for (size_t i = 0; i < NR_SPECIAL; i++)
		if (!strcmp(path, special_pages[i]))
			return true;
	return false;
}

struct dso *symbolizer__jit_dso(struct symbolizer *sym, int pid)
{
	struct dso *dso = dso__new(DSO_ANON, "[jit]", -1);
	char path[96];
	int nspid;

	(void)sym;
	if (!dso)
		return NULL;
	dso->pid = pid;
	/* Unknown (gone already): only a map owned by root is taken. */
	if (procfs__ids((uint32_t)pid, &dso->perf_map_uid, &nspid))
		dso->perf_map_uid = 0;
	/* The map is written in the process's own /tmp (its pid namespace names it); the host's
	 * /tmp after it exited. */
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", nspid);
	dso->perf_map_paths[0] = strdup(path);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", pid);
	dso->perf_map_paths[1] = strdup(path);
	dso->perf_map_version = -1;
	return dso;
}

/* The change time and size of the open file fd (-1 both when it cannot be told). */
static void file_stamp(int fd, int64_t *ctime_ns, int64_t *size)
{
	struct stat st;

	if (fd < 0 || fstat(fd, &st)) {
		*ctime_ns = *size = -1;
		return;
	}
	*ctime_ns = (int64_t)st.st_ctim.tv_sec * (int64_t)NSEC_PER_SEC + st.st_ctim.tv_nsec;
	*size = st.st_size;
}

/* Whether the file open at fd, stamped (ctime_ns, size) when opened, was written since. */
static bool stamp_moved(int fd, int64_t ctime_ns, int64_t size)
{
	int64_t now_ctime_ns, now_size;

	/* Not told when it was opened (no fd, fstat failed): as read. */
	if (ctime_ns < 0)
		return false;
	file_stamp(fd, &now_ctime_ns, &now_size);
	return now_ctime_ns != ctime_ns || now_size != size;
}

/* Whether dso's file was written since it was opened: what was read of it is of the old bytes. */
static bool file_changed(const struct dso *dso)
{
	return stamp_moved(dso->fd, dso->ctime_ns, dso->size);
}

static struct dso *find_by_ino(struct symbolizer *sym, dev_t dev, uint64_t ino)
{
	for (struct dso *d = sym->by_ino[ino_bucket(dev, ino)]; d; d = d->next_ino)
		if (d->dev == dev && d->ino == ino)
			return d;
	return NULL;
}

static struct ino_alias *find_alias(struct symbolizer *sym, dev_t dev, uint64_t ino)
{
	for (struct ino_alias *a = sym->alias_by_ino[ino_bucket(dev, ino)]; a; a = a->next)
		if (a->dev == dev && a->ino == ino)
			return a;
	return NULL;
}

/* Takes over fd: the dso's file under another inode is found by that one from now on. */
static void add_alias(struct symbolizer *sym, struct dso *dso, dev_t dev, uint64_t ino, int fd)
{
	struct ino_alias *a = calloc(1, sizeof(*a));
	uint32_t b = ino_bucket(dev, ino);

	if (!a) {
		close(fd);
		return;
	}
	*a = (struct ino_alias){ .dev = dev, .ino = ino, .fd = fd, .dso = dso };
	file_stamp(fd, &a->ctime_ns, &a->size);
	a->next = sym->alias_by_ino[b];
	sym->alias_by_ino[b] = a;
	a->next_dso = dso->aliases;
	dso->aliases = a;
}

static void drop_alias(struct symbolizer *sym, struct ino_alias *a)
{
	struct ino_alias **pp = &sym->alias_by_ino[ino_bucket(a->dev, a->ino)];

	while (*pp != a)
		pp = &(*pp)->next;
	*pp = a->next;
	for (pp = &a->dso->aliases; *pp != a; pp = &(*pp)->next_dso)
		;
	*pp = a->next_dso;
	close(a->fd);
	free(a);
}

/* The dso of another file with its build ID, found by that file's inode, unless rewritten. */
static struct dso *find_by_alias(struct symbolizer *sym, dev_t dev, uint64_t ino)
{
	struct ino_alias *a = find_alias(sym, dev, ino);

	if (!a)
		return NULL;
	if (stamp_moved(a->fd, a->ctime_ns, a->size)) {
		drop_alias(sym, a);
		return NULL;
	}
	return a->dso;
}

static struct dso *find_by_bid(struct symbolizer *sym, const char *bid)
{
	for (struct dso *d = sym->by_bid[bid_bucket(bid)]; d; d = d->next_bid)
		if (!strcmp(d->build_id, bid))
			return d;
	return NULL;
}

/* Takes over the caller's reference. by_key: findable by inode and build ID. */
static int index_dso(struct symbolizer *sym, struct dso *dso, bool by_key)
{
	uint32_t b;

	if (sym->nr_all == sym->cap_all) {
		size_t cap = sym->cap_all ? sym->cap_all * 2 : 256;
		struct dso **all = realloc(sym->all, cap * sizeof(*all));

		if (!all)
			return -ENOMEM;
		sym->all = all;
		sym->cap_all = cap;
	}
	sym->all[sym->nr_all++] = dso;
	if (!by_key)
		return 0;
	b = ino_bucket(dso->dev, dso->ino);
	dso->next_ino = sym->by_ino[b];
	sym->by_ino[b] = dso;
	if (dso->build_id[0]) {
		b = bid_bucket(dso->build_id);
		dso->next_bid = sym->by_bid[b];
		sym->by_bid[b] = dso;
	}
	dso->indexed = true;
	return 0;
}

static void unindex_dso(struct symbolizer *sym, struct dso *dso)
{
	struct dso **pp;

	if (!dso->indexed)
		return;
	while (dso->aliases)
		drop_alias(sym, dso->aliases);
	for (pp = &sym->by_ino[ino_bucket(dso->dev, dso->ino)]; *pp; pp = &(*pp)->next_ino) {
		if (*pp == dso) {
			*pp = dso->next_ino;
			break;
		}
	}
	if (dso->build_id[0]) {
		for (pp = &sym->by_bid[bid_bucket(dso->build_id)]; *pp; pp = &(*pp)->next_bid) {
			if (*pp == dso) {
				*pp = dso->next_bid;
				break;
			}
		}
	}
	dso->indexed = false;
}

struct dso *symbolizer__dso_by_inode(struct symbolizer *sym, uint32_t major, uint32_t minor,
				      uint64_t ino)
{
	dev_t dev = makedev(major, minor);
	struct dso *dso;

	pthread_mutex_lock(&sym->index_lock);
	dso = find_by_ino(sym, dev, ino);
	if (!dso)
		dso = find_by_alias(sym, dev, ino);
	if (dso)
		dso__get(dso);
	pthread_mutex_unlock(&sym->index_lock);
	return dso;
}

struct dso *symbolizer__dso_for_mapping(struct symbolizer *sym, int pid, const struct map_entry *e)
{
	dev_t dev = makedev(e->dev_major, e->dev_minor);
	char bid[sizeof(((struct dso *)0)->build_id)] = "";
	char root[32];
	struct dso *dso;
	int fd;

	if (!e->executable)
		return NULL;
	if (e->path[0] != '/') {
		if (!strcmp(e->path, "[vdso]"))
			return dso__get(sym->vdso);
		for (size_t i = 0; i < NR_SPECIAL; i++)
			if (!strcmp(e->path, special_pages[i]))
				return dso__get(sym->special[i]);
		/* Anonymous executable memory: JIT code, trampolines. */
		return dso__get(sym->anon);
	}

	pthread_mutex_lock(&sym->index_lock);
	dso = e->deleted ? NULL : find_by_ino(sym, dev, e->inode);
	if (dso && file_changed(dso)) {
		/* Rewritten in place: its symbols (and the unwinder's table of it) are of the old
		 * contents. Frames already stored keep it; this mapping gets the file read anew. */
		pr_debug("%s was rewritten since it was read: reading it again\n", dso->path);
		unindex_dso(sym, dso);
		__atomic_fetch_add(&sym->stats.files_rewritten, 1, __ATOMIC_RELAXED);
		dso = NULL;
	}
	if (!dso && !e->deleted)
		dso = find_by_alias(sym, dev, e->inode);
	if (dso)
		dso__get(dso);
	pthread_mutex_unlock(&sym->index_lock);
	if (dso)
		return dso;

	__atomic_fetch_add(&sym->stats.opens, 1, __ATOMIC_RELAXED);
	fd = maps__open_file(pid, e);
	if (fd < 0) {
		__atomic_fetch_add(&sym->stats.open_errors, 1, __ATOMIC_RELAXED);
		pr_debug("cannot open %s of pid %d: %s\n", e->path, pid, strerror(-fd));
		/* Still worth a dso: frames keep their file name and offset. */
		dso = dso__new(DSO_ELF, e->path, -1);
		if (dso)
			dso->load_error = fd;
		return dso;
	}
	elf__read_build_id(fd, bid, sizeof(bid));

	pthread_mutex_lock(&sym->index_lock);
	dso = bid[0] ? find_by_bid(sym, bid) : NULL;
	if (dso) {
		/* The same file under another inode (another container's copy): share it, and
		 * find it by this inode from now on. */
		dso__get(dso);
		if (!e->deleted && !find_alias(sym, dev, e->inode))
			add_alias(sym, dso, dev, e->inode, fd);
		else
			close(fd);
		pthread_mutex_unlock(&sym->index_lock);
		return dso;
	}
	dso = dso__new(DSO_ELF, e->path, fd);
	if (!dso) {
		pthread_mutex_unlock(&sym->index_lock);
		close(fd);
		return NULL;
	}
	memcpy(dso->build_id, bid, sizeof(bid));
	/* Found now, while /proc/PID/root still leads into the process's mount namespace. */
	snprintf(root, sizeof(root), "/proc/%d/root", pid);
	dso->debug_fd = debuginfo__open_debug_file(root, e->path, fd, bid);
	if (dso->debug_fd < 0)
		dso->debug_fd = -1;
	dso->dev = dev;
	dso->ino = e->inode;
	file_stamp(fd, &dso->ctime_ns, &dso->size);
	/* A deleted file's inode may be reused by its replacement: never look it up by inode. */
	dso__get(dso);
	if (index_dso(sym, dso, !e->deleted))
		dso__put(dso);
	pthread_mutex_unlock(&sym->index_lock);
	return dso;
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static int fallback(struct dso *dso, uint64_t addr, struct strtab *st, struct sym_frame *out)
{
	char name[320];
	int64_t idx;

	switch (dso->kind) {
	case DSO_ELF:
	case DSO_VDSO:
		snprintf(name, sizeof(name), "%s+0x%" PRIx64, basename_of(dso->path), addr);
		break;
	case DSO_KERNEL:
		snprintf(name, sizeof(name), "[kernel]+0x%" PRIx64, addr);
		break;
	case DSO_MARKER:
	case DSO_SPECIAL:
		snprintf(name, sizeof(name), "%s", dso->path);
		break;
	default:
		snprintf(name, sizeof(name), "0x%" PRIx64, addr);
		break;
	}
	idx = strtab__intern(st, name);
	if (idx < 0)
		return (int)idx;
	out->nr_lines = 1;
	out->resolved = 0;
	out->lines[0] = (struct sym_line){ .function = idx, .system_name = idx };
	return 0;
}

static int named(const char *name, const char *file, uint64_t start, struct strtab *st,
		 struct sym_frame *out)
{
	int64_t n = strtab__intern(st, name);
	int64_t f = strtab__intern(st, file);

	if (n < 0 || f < 0)
		return -ENOMEM;
	out->nr_lines = 1;
	out->resolved = 1;
	out->lines[0] = (struct sym_line){
		.function = n, .system_name = n, .file = f, .sym_start = start
	};
	return 0;
}

static void load_kallsyms(struct symbolizer *sym)
{
	int err = kallsyms__load(sym->opts.kallsyms_path, &sym->ks);

	sym->stats.loads++;
	if (err) {
		sym->stats.load_errors++;
		pr_warn("cannot read kernel symbols: %s\n", strerror(-err));
		sym->ks_error = err;
		return;
	}
	sym->ks_error = 1;
}

static int load_syms(struct symbolizer *sym, struct dso *dso)
{
	int err;

	if (dso->syms)
		return 0;
	if (dso->load_error)
		return dso->load_error;
	sym->stats.loads++;
	err = dso->fd < 0 ? -EBADF : objsym__load(dso->fd, dso->debug_fd, &dso->syms);
	if (err) {
		struct stat st;

		sym->stats.load_errors++;
		/* Its owner cut it short since it was opened: read errors, never SIGBUS (ELF_C_READ). */
		if (dso->fd >= 0 && dso->size >= 0 && !fstat(dso->fd, &st) && st.st_size < dso->size)
			ufile__count(UFILE_TRUNCATED);
		if (err == -EBADF)
			sym->stats.load_errors_unreadable++;
		else if (err == -ENOEXEC || err == -EINVAL)
			sym->stats.load_errors_not_elf++;
		else if (err == -EFBIG)
			sym->stats.load_errors_too_large++;
		pr_debug("cannot load symbols of %s: %s\n", dso->path, strerror(-err));
		return dso->load_error = err;
	}
	/* A source left out for its size (a Go table, MiniDebugInfo) is a load that failed. */
	if (objsym__sources(dso->syms) & OBJSYM_TOO_LARGE) {
		sym->stats.loads++;
		sym->stats.load_errors++;
		sym->stats.load_errors_too_large++;
		pr_debug("%s: a symbol source is over its size budget\n", dso->path);
	}
	if (objsym__copying(dso->syms))
		__atomic_store_n(&sym->copying, true, __ATOMIC_RELAXED);
	pr_debug("loaded %s: sources 0x%x, %zu bytes\n", dso->path, objsym__sources(dso->syms),
		 objsym__bytes(dso->syms));
	return 0;
}

static int lookup_kernel(struct symbolizer *sym, const struct frame *f, struct strtab *st,
			 struct sym_frame *out)
{
	const char *name, *module = NULL;
	char modfile[80];
	uint64_t start;

	if (!sym->ks_error)
		load_kallsyms(sym);
	if (sym->ks_error < 0) {
		sym->stats.lookups_failed++;
		return fallback(f->dso, f->addr, st, out);
	}
	name = kallsyms__lookup(sym->ks, f->addr, &start, &module);
	if (!name) {
		sym->stats.lookups_miss++;
		return fallback(f->dso, f->addr, st, out);
	}
	sym->stats.lookups_hit++;
	if (module)
		snprintf(modfile, sizeof(modfile), "[%s]", module);
	return named(name, module ? modfile : "", start, st, out);
}

static int emit(const struct objsym_frame *fr, struct strtab *st, struct sym_frame *out)
{
	out->nr_lines = fr->nr;
	out->resolved = 1;
	for (uint32_t i = 0; i < fr->nr; i++) {
		const struct objsym_line *l = &fr->lines[i];
		int64_t fn = strtab__intern(st, l->function);
		int64_t sn = strtab__intern(st, l->system_name);
		int64_t file = strtab__intern(st, l->file);

		if (fn < 0 || sn < 0 || file < 0)
			return -ENOMEM;
		out->lines[i] = (struct sym_line){
			.function = fn, .system_name = sn, .file = file, .line = l->line,
			.sym_start = fr->sym_start,
		};
	}
	return 0;
}

static int lookup_object(struct symbolizer *sym, const struct frame *f, struct strtab *st,
			 struct sym_frame *out)
{
	struct dso *dso = f->dso;
	const struct objsym_frame *fr;
	unsigned long long reopens;
	int err;

	if (load_syms(sym, dso)) {
		sym->stats.lookups_failed++;
		return fallback(dso, f->addr, st, out);
	}
	dso->last_used = ++sym->clock;
	reopens = objsym__reopens(dso->syms);
	err = objsym__lookup(dso->syms, f->addr, &fr);
	sym->stats.dwarf_reopens += objsym__reopens(dso->syms) - reopens;
	if (err || !fr->nr) {
		sym->stats.lookups_miss++;
		return fallback(dso, f->addr, st, out);
	}
	sym->stats.lookups_hit++;
	return emit(fr, st, out);
}

/* A perf map's identity for reloading: JITs append (it grows), HotSpot's Compiler.perfmap
 * rewrites it whole (it may keep its size), so both size and modification time count. */
static int64_t file_version(const struct stat *st)
{
	return (int64_t)((uint64_t)st->st_size ^ (uint64_t)st->st_mtim.tv_sec << 32 ^
			 (uint64_t)st->st_mtim.tv_nsec << 12) & INT64_MAX;
}

/* A JIT symbol, split for users (jit_name__split); system_name keeps the raw name. */
static int named_jit(const char *raw, uint64_t start, struct strtab *st, struct sym_frame *out)
{
	struct jit_name jn;
	char fn[512], file[512];
	int64_t n, sn, f;

	jit_name__split(raw, &jn);
	snprintf(fn, sizeof(fn), "%.*s", (int)jn.function_len, jn.function);
	snprintf(file, sizeof(file), "%.*s", jn.file ? (int)jn.file_len : 0, jn.file ? jn.file : "");
	n = strtab__intern(st, fn);
	sn = strtab__intern(st, raw);
	f = strtab__intern(st, file);
	if (n < 0 || sn < 0 || f < 0)
		return -ENOMEM;
	out->nr_lines = 1;
	out->resolved = 1;
	out->lines[0] = (struct sym_line){
		.function = n, .system_name = sn, .file = f, .line = jn.line, .sym_start = start
	};
	return 0;
}

/* JIT code: the process's perf map, (re)loaded when it changed since we last read it. */
static int lookup_jit(struct symbolizer *sym, const struct frame *f, struct strtab *st,
		      struct sym_frame *out)
{
	struct dso *dso = f->dso;
	const char *name = NULL;
	uint64_t start;

	if (dso->perf_map)
		name = perf_map__lookup(dso->perf_map, f->addr, &start);
	/*
	 * This runs under sym->lock, which /metrics and every profile query wait on: the map is
	 * opened as perf_map__open says (O_NONBLOCK, a regular file only: a FIFO planted there
	 * neither blocks the open nor the read) and read bounded (perf_map__read), so that no
	 * file a user controls can stall it.
	 */
	for (int i = 0; !name && !dso->perf_map_final && i < 2 && dso->perf_map_paths[i]; i++) {
		struct perf_map *pm;
		int64_t version;
		struct stat st;
		int root, fd, err;

		root = ufile__root(i == 0 ? dso->pid : 0);
		if (root < 0)
			continue;
		fd = perf_map__open(root, dso->perf_map_paths[i], dso->perf_map_uid, &st);
		close(root);
		if (fd < 0)
			continue;
		version = file_version(&st);
		if (version == dso->perf_map_version && dso->perf_map) {
			close(fd);
			continue;
		}
		err = perf_map__read(fd, dso->perf_map_paths[i], &st, &pm);
		close(fd);
		if (err)
			continue;
		perf_map__free(dso->perf_map);
		dso->perf_map = pm;
		dso->perf_map_version = version;
		sym->stats.loads++;
		name = perf_map__lookup(pm, f->addr, &start);
	}
	if (!name) {
		sym->stats.lookups_miss++;
		return fallback(dso, f->addr, st, out);
	}
	sym->stats.lookups_hit++;
	return named_jit(name, start, st, out);
}

int symbolizer__jit_preload(struct symbolizer *sym, struct dso *dso, int dirfd, const char *name)
{
	struct perf_map *pm;
	int err;

	if (dso->kind != DSO_ANON || !dso->pid)
		return -EINVAL;
	/* Read outside the lock: queries go on meanwhile. */
	err = perf_map__load_at(dirfd, name, dso->perf_map_uid, &pm);
	if (err)
		return err;
	pthread_mutex_lock(&sym->lock);
	perf_map__free(dso->perf_map);
	dso->perf_map = pm;
	/* Its files are gone or going (a new process with its pid may write them again). */
	dso->perf_map_final = true;
	sym->stats.loads++;
	pthread_mutex_unlock(&sym->lock);
	return 0;
}

static uint64_t interp_hash(const char *function, const char *file, uint32_t line)
{
	uint64_t h = hash__bytes(function, strlen(function), line);

	return hash__bytes(file, strlen(file), h);
}

/* Doubles the index (interp_lock held). */
static int interp_grow(struct symbolizer *sym)
{
	uint32_t mask = sym->interp_mask ? 2 * sym->interp_mask + 1 : 1023;
	uint32_t *index = calloc((size_t)mask + 1, sizeof(*index));

	if (!index)
		return -ENOMEM;
	for (uint32_t i = 0; i < sym->nr_interp; i++) {
		uint32_t s = sym->interp[i].hash & mask;

		while (index[s])
			s = (s + 1) & mask;
		index[s] = i + 1;
	}
	free(sym->interp_index);
	sym->interp_index = index;
	sym->interp_mask = mask;
	return 0;
}

int symbolizer__interp_frame(struct symbolizer *sym, const char *function, const char *file,
			     uint32_t line, struct frame *out)
{
	return symbolizer__runtime_frame(sym, DSO_PYTHON, function, file, line, out);
}

int symbolizer__runtime_frame(struct symbolizer *sym, enum dso_kind kind, const char *function,
			      const char *file, uint32_t line, struct frame *out)
{
	struct dso *dso = kind == DSO_LUA ? sym->lua : kind == DSO_JAVA ? sym->java : sym->python;
	uint64_t h = interp_hash(function, file, line);
	struct interp_pos *p;
	uint32_t s;
	int err = 0;

	pthread_mutex_lock(&sym->interp_lock);
	if (2 * (sym->nr_interp + 1) > sym->interp_mask) {
		err = interp_grow(sym);
		if (err)
			goto unlock;
	}
	for (s = h & sym->interp_mask; sym->interp_index[s]; s = (s + 1) & sym->interp_mask) {
		p = &sym->interp[sym->interp_index[s] - 1];
		if (p->hash == h && p->line == line && !strcmp(p->function, function) &&
		    !strcmp(p->file, file)) {
			*out = (struct frame){ dso, sym->interp_index[s] - 1 };
			goto unlock;
		}
	}
	if (sym->nr_interp >= SYM_MAX_INTERP) {
		err = -ENOSPC;
		goto unlock;
	}
	if (sym->nr_interp == sym->cap_interp) {
		uint32_t cap = sym->cap_interp ? 2 * sym->cap_interp : 256;
		struct interp_pos *a = realloc(sym->interp, cap * sizeof(*a));

		if (!a) {
			err = -ENOMEM;
			goto unlock;
		}
		sym->interp = a;
		sym->cap_interp = cap;
	}
	p = &sym->interp[sym->nr_interp];
	*p = (struct interp_pos){ strdup(function), strdup(file), line, h };
	if (!p->function || !p->file) {
		free(p->function);
		free(p->file);
		err = -ENOMEM;
		goto unlock;
	}
	sym->interp_index[s] = ++sym->nr_interp;
	*out = (struct frame){ dso, sym->nr_interp - 1 };
unlock:
	pthread_mutex_unlock(&sym->interp_lock);
	return err;
}

struct dso *symbolizer__stored_dso(const char *mapping)
{
	return dso__new(DSO_STORED, mapping, -1);
}

int symbolizer__stored_frame(struct symbolizer *sym, struct dso *stored, const char *function,
			     const char *file, uint32_t line, struct frame *out)
{
	int err = symbolizer__interp_frame(sym, function, file, line, out);

	if (!err)
		out->dso = stored;
	return err;
}

static int lookup_interp(struct symbolizer *sym, const struct frame *f, struct strtab *st,
			 struct sym_frame *out)
{
	int64_t n, file;
	uint32_t line;

	pthread_mutex_lock(&sym->interp_lock);
	if (f->addr >= sym->nr_interp) {
		pthread_mutex_unlock(&sym->interp_lock);
		return fallback(f->dso, f->addr, st, out);
	}
	n = strtab__intern(st, sym->interp[f->addr].function);
	file = strtab__intern(st, sym->interp[f->addr].file);
	line = sym->interp[f->addr].line;
	pthread_mutex_unlock(&sym->interp_lock);
	if (n < 0 || file < 0)
		return -ENOMEM;
	out->nr_lines = 1;
	out->resolved = 1;
	out->lines[0] = (struct sym_line){
		.function = n, .system_name = n, .file = file, .line = line
	};
	return 0;
}

int symbolizer__frame(struct symbolizer *sym, const struct frame *f, struct strtab *st,
		      struct sym_frame *out)
{
	int err;

	pthread_mutex_lock(&sym->lock);
	switch (f->dso->kind) {
	case DSO_KERNEL:
		err = lookup_kernel(sym, f, st, out);
		break;
	case DSO_ELF:
	case DSO_VDSO:
		err = lookup_object(sym, f, st, out);
		break;
	case DSO_ANON:
		err = f->dso->pid ? lookup_jit(sym, f, st, out) : fallback(f->dso, f->addr, st, out);
		break;
	case DSO_MARKER:
	case DSO_SPECIAL:
		err = fallback(f->dso, f->addr, st, out);
		break;
	case DSO_PYTHON:
	case DSO_LUA:
	case DSO_JAVA:
	case DSO_STORED:
		err = lookup_interp(sym, f, st, out);
		break;
	default:
		sym->stats.lookups_miss++;
		err = fallback(f->dso, f->addr, st, out);
		break;
	}
	pthread_mutex_unlock(&sym->lock);
	return err;
}

static int by_last_used(const void *a, const void *b)
{
	const struct dso *x = *(struct dso *const *)a, *y = *(struct dso *const *)b;

	return x->last_used < y->last_used ? -1 : x->last_used > y->last_used;
}

static uint64_t held_bytes(struct symbolizer *sym)
{
	uint64_t bytes = sym->ks ? kallsyms__bytes(sym->ks) : 0;

	for (size_t i = 0; i < sym->nr_all; i++)
		if (sym->all[i]->syms)
			bytes += objsym__bytes(sym->all[i]->syms);
	if (sym->vdso->syms)
		bytes += objsym__bytes(sym->vdso->syms);
	return bytes;
}

/* Both locks held. copies_only: only the readers copying whole (symbolizer__copy_step). */
static void maintain_dwarf(struct symbolizer *sym, bool copies_only)
{
	bool copying = false;

	for (size_t i = 0; i < sym->nr_all; i++) {
		struct objsym *os = sym->all[i]->syms;

		if (!os || (copies_only && !objsym__copying(os)))
			continue;
		if (objsym__maintain(os, sym->opts.dwarf_idle_ns))
			sym->stats.dwarf_releases++;
		copying |= objsym__copying(os);
	}
	__atomic_store_n(&sym->copying, copying, __ATOMIC_RELAXED);
}

bool symbolizer__copying(struct symbolizer *sym)
{
	return __atomic_load_n(&sym->copying, __ATOMIC_RELAXED);
}

void symbolizer__copy_step(struct symbolizer *sym)
{
	if (pthread_mutex_trylock(&sym->index_lock))
		return;
	if (!pthread_mutex_trylock(&sym->lock)) {
		maintain_dwarf(sym, true);
		pthread_mutex_unlock(&sym->lock);
	}
	pthread_mutex_unlock(&sym->index_lock);
}

void symbolizer__trim(struct symbolizer *sym)
{
	size_t n = 0;

	pthread_mutex_lock(&sym->index_lock);
	/* A dso only the index references maps into no live process and no stored frame. */
	for (size_t i = 0; i < sym->nr_all; i++) {
		struct dso *dso = sym->all[i];

		if (__atomic_load_n(&dso->refcnt, __ATOMIC_ACQUIRE) == 1) {
			unindex_dso(sym, dso);
			dso__put(dso);
			continue;
		}
		sym->all[n++] = dso;
	}
	sym->nr_all = n;

	/* The ingest thread calls this: it must not wait while a query or the history writer
	 * loads a big symbol table under the lock (seconds for a DWARF file), or samples queue
	 * up behind it and reach the store late. The budget is enforced at a later sweep. */
	if (pthread_mutex_trylock(&sym->lock)) {
		pthread_mutex_unlock(&sym->index_lock);
		return;
	}
	sym->stats.bytes = held_bytes(sym);
	if (sym->stats.bytes > sym->opts.cache_bytes) {
		struct dso **lru = malloc(n * sizeof(*lru));

		if (lru) {
			memcpy(lru, sym->all, n * sizeof(*lru));
			qsort(lru, n, sizeof(*lru), by_last_used);
			for (size_t i = 0; i < n && sym->stats.bytes > sym->opts.cache_bytes; i++) {
				if (!lru[i]->syms)
					continue;
				sym->stats.bytes -= objsym__bytes(lru[i]->syms);
				objsym__free(lru[i]->syms);
				lru[i]->syms = NULL;
				sym->stats.evictions++;
			}
			free(lru);
		}
	}
	/* DWARF readers copy a step more of a small file, and let libdw go once it is all
	 * copied, or when a big file's readers read nothing new: otherwise the history's flushes,
	 * naming a few frames every few seconds, keep glibc's debug file inflated (8.6 MiB) on an
	 * idle host. What they named stays (dwarf_info__maintain). */
	maintain_dwarf(sym, false);
	/* What was freed since (tables evicted or let go, libdw's sections after a whole copy,
	 * a scrape's buffers) lies amid the heap, which free() alone seldom gives back. */
	if (mallinfo2().fordblks > SYM_TRIM_FREE_BYTES)
		malloc_trim(0);
	pthread_mutex_unlock(&sym->lock);
	pthread_mutex_unlock(&sym->index_lock);
}

void symbolizer__stats(struct symbolizer *sym, struct symbolizer_stats *out)
{
	pthread_mutex_lock(&sym->index_lock);
	pthread_mutex_lock(&sym->lock);
	*out = sym->stats;
	out->bytes = held_bytes(sym);
	out->dsos = sym->nr_all;
	pthread_mutex_lock(&sym->interp_lock);
	out->interp_frames = sym->nr_interp;
	pthread_mutex_unlock(&sym->interp_lock);
	pthread_mutex_unlock(&sym->lock);
	pthread_mutex_unlock(&sym->index_lock);
}
