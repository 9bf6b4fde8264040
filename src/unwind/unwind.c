// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "unwind: " fmt

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/hash.h"
#include "lib/counters.h"
#include "lib/log.h"
#include "lib/procmaps.h"
#include "lib/timeconst.h"
#include "symbolize/dso.h"
#include "proc/proctab.h"
#include "bpf/unwind_abi.h"
#include "unwind/cfi.h"
#include "unwind/chunks.h"
#include "unwind/extents.h"
#include "unwind/unwind.h"
#include "unwind/unwind_priv.h"

#define MAX_FILES 16384
#define FILE_BUCKETS 4096
#define PROC_BUCKETS 4096
/*
 * Tables of files that no process maps any more are kept (a binary run again, short-lived
 * processes) up to this many; each pins its file open.
 */
#define MAX_IDLE_FILES 256
/* Elements (bpf/unwind_abi.h) holding n page entries from an even start. */
#define PAGE_ELEMS(n) (((n) + 1) / 2)
_Static_assert(sizeof(struct unwind_row) == 8 && sizeof(struct unwind_page_pair) == 8,
	       "rows and page pairs are the chunks' 8-byte elements");
/* Tables from this many rows up give their build memory back at once. */
#define TRIM_ROWS 4096

_Static_assert(UNWIND_CNT__MAX <= 16, "unwinder_stats.bpf too small");

/* One file's table. Holds a reference on the dso: the open file keeps its inode from reuse. */
struct ufile {
	struct ufile *next; /* bucket chain */
	struct dso *dso;
	uint32_t slot;
	uint32_t row_start, row_count;
	uint32_t page_start, page_count, first_page;
	uint32_t flags;	  /* enum unwind_file_flags */
	uint32_t users;	  /* processes mapping it */
	uint64_t last_used;
	bool has_rows;	  /* rows are in the array */
	bool evicted;	  /* had rows, or had no room for them: rebuilt when mapped again */
	bool failed;	  /* its unwind info is unreadable: frame pointers */
	bool queued;	  /* waiting for, or in, the builder thread: not to be freed */
	bool queued_may_evict;
	bool queued_first; /* queued ahead of the backlog, for a process started since we run */
	uint64_t qseq; /* when it was last queued (unwinder.qseq) */
	struct ufile *qnext;
	bool has_inode; /* published in unwind_inodes under inode */
	struct unwind_inode inode;
};

struct uproc {
	struct uproc *next;
	uint32_t pid;
	uint32_t flags; /* enum unwind_proc_flags, kept across maps re-reads */
	uint64_t java_lo, java_hi; /* a JVM's interpreter code, kept across maps re-reads */
	bool urgent;	/* started since we run: its files are built ahead of the backlog */
	uint32_t nr;
	struct ufile **files; /* distinct files it maps, each counted in users */
};

struct unwinder {
	/* Everything below, between the ingest thread, the builder thread and stats readers. */
	pthread_mutex_t lock;
	/* Tables are built on their own threads: a big binary takes tens of ms, which the ingest
	 * thread must not spend while samples wait. Until its rows are in, a walk that reaches a
	 * file ends there, marked truncated. Two lanes: the backlog lane takes any file; the
	 * urgent lane only files of processes started since we run, so a new process's small
	 * executable is not stuck behind a library of a million rows that a process gone 20 ms
	 * ago (binutils' nm loading LLVM's plugin) happened to map first. */
	struct builder_lane {
		struct unwinder *u;
		bool urgent_only;
		bool started;
		pthread_t thread;
	} lanes[2];
	bool stopping;
	pthread_cond_t work, idle;
	struct ufile *qhead, *qtail;
	int files_fd, procs_fd, counters_fd, inodes_fd;
	struct chunks *elems; /* the rows and page index */
	/* Set once by unwinder__new, then read without the lock. */
	struct unwind_tables tables;
	uint32_t big_table_share;
	bool walk_cache;
	struct extents room; /* of elems: a file's page index and rows, one run each */
	/*
	 * Free file slots, first freed first taken: a slot a table may still name (a forked
	 * child's copy of its parent's, the one published at exec, a walk's kernel lookup in
	 * flight) is reused as late as can be, not at the next new file.
	 */
	uint32_t free_slots[MAX_FILES];
	uint32_t free_head, nr_free_slots;
	struct ufile *by_slot[MAX_FILES]; /* the file in each slot, NULL: free */
	struct ufile *files[FILE_BUCKETS];
	struct uproc *procs[PROC_BUCKETS];
	uint64_t clock;
	uint64_t gen; /* of the last mapping table published, any process's */
	uint64_t qseq; /* files queued so far */
	uint32_t idle_files;
	struct unwind_proc scratch;
	struct unwinder_stats stats;
};

static void *builder_main(void *arg);

static int create_map(enum bpf_map_type type, const char *name, uint32_t value_size,
		      uint32_t max_entries, uint32_t flags)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = flags);
	int fd = bpf_map_create(type, name, sizeof(uint32_t), value_size, max_entries, &opts);

	if (fd < 0) {
		fd = -errno;
		pr_err("cannot create map %s (%u entries): %s\n", name, max_entries,
		       strerror(-fd));
	}
	return fd;
}

/* The array's elements as BPF sees them, read-only: n of them, stride bytes apart. */
static int map_array(int fd, size_t stride, uint32_t n, const void **out)
{
	void *p = mmap(NULL, stride * n, PROT_READ, MAP_SHARED, fd, 0);

	if (p == MAP_FAILED) {
		int err = -errno;

		pr_err("cannot map an unwind array (%u entries): %s\n", n, strerror(-err));
		return err;
	}
	*out = p;
	return 0;
}

static void unmap_array(const void *p, size_t stride, uint32_t n)
{
	if (p)
		munmap((void *)p, stride * n);
}

const struct unwind_tables *unwinder__tables(struct unwinder *u)
{
	return &u->tables;
}

struct unwinder *unwinder__new(const struct unwinder_opts *opts, int *err)
{
	struct unwinder *u = calloc(1, sizeof(*u));
	/* The budget holds the rows and their page index, 8 bytes an element. */
	uint64_t elems = opts->memory_limit / sizeof(struct unwind_row);

	if (!u) {
		*err = -ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&u->lock, NULL);
	u->big_table_share = opts->big_table_share ? opts->big_table_share : 8;
	u->walk_cache = opts->walk_cache;
	u->files_fd = u->procs_fd = u->counters_fd = u->inodes_fd = -1;
	/* (Page entries are indexed in halves of elements: twice the count must fit.) */
	elems = elems > UINT32_MAX / 2 ? UINT32_MAX / 2 : elems ? elems : 1;
	if (extents__init(&u->room, (uint32_t)elems)) {
		*err = -ENOMEM;
		goto out_free;
	}
	u->stats.capacity_bytes = (uint64_t)u->room.capacity * sizeof(struct unwind_row);
	for (uint32_t i = 0; i < MAX_FILES; i++)
		u->free_slots[i] = i;
	u->nr_free_slots = MAX_FILES;

	u->elems = chunks__new("unwind_chunks", u->room.capacity, err);
	if (!u->elems)
		goto out_free;
	*err = u->files_fd = create_map(BPF_MAP_TYPE_ARRAY, "unwind_files",
					sizeof(struct unwind_file), MAX_FILES, BPF_F_MMAPABLE);
	if (*err < 0)
		goto out_free;
	/* Mappable, for user space to walk copied stacks with what BPF reads. */
	*err = map_array(u->files_fd, UNWIND_FILE_STRIDE, MAX_FILES, &u->tables.files);
	if (*err)
		goto out_free;
	u->tables.elems = u->elems;
	u->tables.nfiles = MAX_FILES;
	*err = u->procs_fd = create_map(BPF_MAP_TYPE_HASH, "unwind_procs",
					sizeof(struct unwind_proc), opts->max_processes + 1,
					BPF_F_NO_PREALLOC);
	if (*err < 0)
		goto out_free;
	*err = u->counters_fd = create_map(BPF_MAP_TYPE_PERCPU_ARRAY, "unwind_counters",
					   sizeof(uint64_t), UNWIND_CNT__MAX, 0);
	if (*err < 0)
		goto out_free;
	*err = u->inodes_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "unwind_inodes",
					     sizeof(struct unwind_inode), sizeof(uint32_t),
					     MAX_FILES,
					     &(struct bpf_map_create_opts){
						     .sz = sizeof(struct bpf_map_create_opts),
						     .map_flags = BPF_F_NO_PREALLOC,
					     });
	if (*err < 0) {
		*err = -errno;
		pr_err("cannot create map unwind_inodes: %s\n", strerror(-*err));
		goto out_free;
	}
	/* The table walks of processes not learned yet take (bpf/unwind_abi.h). */
	u->scratch = (struct unwind_proc){
		.flags = UNWIND_PROC_PYTHON,
		.gen = UNWIND_GEN_KERNEL,
	};
	if (bpf_map_update_elem(u->procs_fd, &(uint32_t){ UNWIND_NO_PROC_KEY }, &u->scratch,
				BPF_ANY)) {
		*err = -errno;
		pr_err("cannot publish the empty mapping table: %s\n", strerror(-*err));
		goto out_free;
	}
	pthread_cond_init(&u->work, NULL);
	pthread_cond_init(&u->idle, NULL);
	for (int i = 0; i < 2; i++) {
		struct builder_lane *l = &u->lanes[i];

		l->u = u;
		l->urgent_only = i == 1;
		*err = -pthread_create(&l->thread, NULL, builder_main, l);
		if (*err)
			goto out_free;
		l->started = true;
	}
	return u;

out_free:
	unwinder__free(u);
	return NULL;
}

void unwinder__free(struct unwinder *u)
{
	if (!u)
		return;
	if (u->lanes[0].started) {
		pthread_mutex_lock(&u->lock);
		u->stopping = true;
		pthread_cond_broadcast(&u->work);
		pthread_mutex_unlock(&u->lock);
		for (int i = 0; i < 2; i++)
			if (u->lanes[i].started)
				pthread_join(u->lanes[i].thread, NULL);
		pthread_cond_destroy(&u->work);
		pthread_cond_destroy(&u->idle);
	}
	for (int i = 0; i < PROC_BUCKETS; i++) {
		while (u->procs[i]) {
			struct uproc *p = u->procs[i];

			u->procs[i] = p->next;
			free(p->files);
			free(p);
		}
	}
	for (int i = 0; i < FILE_BUCKETS; i++) {
		while (u->files[i]) {
			struct ufile *f = u->files[i];

			u->files[i] = f->next;
			dso__put(f->dso);
			free(f);
		}
	}
	unmap_array(u->tables.files, UNWIND_FILE_STRIDE, MAX_FILES);
	chunks__free(u->elems);
	if (u->files_fd >= 0)
		close(u->files_fd);
	if (u->procs_fd >= 0)
		close(u->procs_fd);
	if (u->counters_fd >= 0)
		close(u->counters_fd);
	if (u->inodes_fd >= 0)
		close(u->inodes_fd);
	extents__exit(&u->room);
	pthread_mutex_destroy(&u->lock);
	free(u);
}

static const char *const map_names[] = { "unwind_chunks", "unwind_files", "unwind_procs",
					 "unwind_counters", "unwind_inodes" };

int unwinder__map_fd(struct unwinder *u, const char *name)
{
	const int fds[] = { u->elems ? chunks__fd(u->elems) : -1, u->files_fd, u->procs_fd,
			    u->counters_fd, u->inodes_fd };

	for (size_t i = 0; i < sizeof(map_names) / sizeof(map_names[0]); i++)
		if (!strcmp(name, map_names[i]))
			return fds[i];
	return -ENOENT;
}

int unwinder__reuse_maps(struct unwinder *u, struct bpf_object *obj)
{
	for (size_t i = 0; i < sizeof(map_names) / sizeof(map_names[0]); i++) {
		struct bpf_map *map = bpf_object__find_map_by_name(obj, map_names[i]);
		int err;

		if (!map)
			return -ENOENT;
		err = bpf_map__reuse_fd(map, unwinder__map_fd(u, map_names[i]));
		if (err)
			return err;
	}
	return 0;
}

int unwinder__cache_walks(struct unwinder *u, struct bpf_object *obj)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, "unwind_cache_entries");
	int err, cpus;

	if (!u->walk_cache)
		return 0;
	if (!map)
		return -ENOENT;
	cpus = libbpf_num_possible_cpus();
	if (cpus < 0)
		return cpus;
	err = bpf_map__set_max_entries(map, UNWIND_CACHE_ENTRIES);
	if (err)
		return err;
	pthread_mutex_lock(&u->lock);
	u->stats.cache_bytes +=
	    (uint64_t)UNWIND_CACHE_ENTRIES * sizeof(struct unwind_cache_entry) * cpus;
	pthread_mutex_unlock(&u->lock);
	return 1;
}

/* Elements the file's table takes: its page index, then its rows. */
static uint64_t file_elems(const struct ufile *f)
{
	return (uint64_t)PAGE_ELEMS(f->page_count) + f->row_count;
}

static uint64_t file_bytes(const struct ufile *f)
{
	return file_elems(f) * sizeof(struct unwind_row);
}

/* pending: its table is on its way (walks end at it, truncated, rather than guess). */
static void publish_file(struct unwinder *u, const struct ufile *f, bool pending)
{
	struct unwind_file v = {
		.row_start = f->row_start,
		.row_count = f->has_rows ? f->row_count : 0,
		.flags = f->flags | (pending ? UNWIND_FILE_PENDING : 0),
		.page_start = f->page_start,
		.page_count = f->has_rows ? f->page_count : 0,
		.first_page = f->first_page,
	};

	if (bpf_map_update_elem(u->files_fd, &f->slot, &v, BPF_ANY))
		u->stats.update_errors++;
}

/* Gives back what make_room took: page entries from an even page_start, then the rows. */
static void free_room(struct unwinder *u, uint32_t nrows, uint32_t page_start, uint32_t npages)
{
	extents__release(&u->room, page_start / 2, PAGE_ELEMS(npages) + nrows);
}

/* Drops the file's rows (the file stays, unwound by frame pointers until rebuilt). */
static void evict_rows(struct unwinder *u, struct ufile *f)
{
	if (!f->has_rows)
		return;
	f->has_rows = false;
	f->evicted = true;
	f->flags |= UNWIND_FILE_NO_ROOM;
	/* BPF stops using the rows before the range can be handed to another file. */
	publish_file(u, f, false);
	free_room(u, f->row_count, f->page_start, f->page_count);
	u->stats.row_bytes -= file_bytes(f);
	u->stats.files--;
	u->stats.evictions++;
}

static struct ufile **file_bucket(struct unwinder *u, const struct dso *dso)
{
	return &u->files[hash__u64((uintptr_t)dso) % FILE_BUCKETS];
}

static void file_free(struct unwinder *u, struct ufile *f)
{
	struct ufile **pp = file_bucket(u, f->dso);
	struct unwind_file zero = { 0 };

	while (*pp != f)
		pp = &(*pp)->next;
	*pp = f->next;
	if (f->has_rows) {
		evict_rows(u, f);
		u->stats.evictions--; /* dropped with its file, not to make room */
	}
	bpf_map_update_elem(u->files_fd, &f->slot, &zero, BPF_ANY);
	if (f->has_inode)
		bpf_map_delete_elem(u->inodes_fd, &f->inode);
	u->free_slots[(u->free_head + u->nr_free_slots++) % MAX_FILES] = f->slot;
	u->by_slot[f->slot] = NULL;
	if (!f->users)
		u->idle_files--;
	dso__put(f->dso);
	free(f);
}

/* The least recently used file with rows, among idle files only or among all. */
static struct ufile *lru_file(struct unwinder *u, bool idle_only, bool with_rows)
{
	struct ufile *best = NULL;

	for (int i = 0; i < FILE_BUCKETS; i++)
		for (struct ufile *f = u->files[i]; f; f = f->next) {
			if ((idle_only && f->users) || (with_rows && !f->has_rows) ||
			    (!with_rows && f->queued))
				continue;
			if (!best || f->last_used < best->last_used)
				best = f;
		}
	return best;
}

static uint64_t idle_elems(struct unwinder *u)
{
	uint64_t n = 0;

	for (int i = 0; i < FILE_BUCKETS; i++)
		for (struct ufile *f = u->files[i]; f; f = f->next)
			if (!f->users && f->has_rows)
				n += file_elems(f);
	return n;
}

static bool any_queued(struct unwinder *u)
{
	for (int i = 0; i < FILE_BUCKETS; i++)
		for (struct ufile *f = u->files[i]; f; f = f->next)
			if (f->queued)
				return true;
	return false;
}

/* The most recently mapped file in use whose table was evicted. */
static struct ufile *mru_evicted(struct unwinder *u)
{
	struct ufile *best = NULL;

	for (int i = 0; i < FILE_BUCKETS; i++)
		for (struct ufile *f = u->files[i]; f; f = f->next) {
			if (!f->evicted || !f->users || f->queued)
				continue;
			if (!best || f->last_used > best->last_used)
				best = f;
		}
	return best;
}

/*
 * The kernel would not make another chunk (memory, or the memory cgroup's limit): the budget
 * is what the chunks made hold, from now on, rather than a retry at every table that would fail
 * the same way. Said once; the capacity metric shows it.
 */
static void cap_room(struct unwinder *u, int err)
{
	uint32_t cap = chunks__made(u->elems) * UNWIND_CHUNK_ELEMS;

	if (cap >= u->room.capacity)
		return;
	pr_warn("unwind tables capped at %u KiB (unwind.memory-limit %llu KiB): the kernel made no "
		"more chunks: %s\n",
		(uint32_t)((uint64_t)cap * sizeof(struct unwind_row) >> 10),
		(unsigned long long)u->stats.capacity_bytes >> 10, strerror(-err));
	extents__cap(&u->room, cap);
	u->stats.capacity_bytes = (uint64_t)cap * sizeof(struct unwind_row);
}

/*
 * Room for page entries and rows: idle tables go first, then (only for a file never loaded, and
 * not too large a share of the budget) the least recently mapped ones. An evicted table coming
 * back never evicts a table in use, or two working sets larger than the budget would evict each
 * other at every maps read; nor does one huge binary blind autoprof to everything else.
 * *page_start: the first of npages page entries, even (PAGE_ELEMS); the rows follow them. The
 * chunks under the room are made here (first fit: the lowest room that fits, so they are made
 * only as the tables in use outgrow them).
 */
static int make_room(struct unwinder *u, uint32_t nrows, uint32_t npages, bool may_evict_used,
		     uint32_t *row_start, uint32_t *page_start)
{
	uint32_t n = PAGE_ELEMS(npages) + nrows;

	for (;;) {
		struct ufile *victim;
		uint32_t elem = extents__alloc(&u->room, n);
		int err;

		if (elem != UINT32_MAX) {
			err = chunks__reserve(u->elems, elem + n);
			if (err) {
				extents__release(&u->room, elem, n);
				cap_room(u, err);
				continue;
			}
			*page_start = elem * 2;
			*row_start = elem + PAGE_ELEMS(npages);
			return 0;
		}
		victim = lru_file(u, true, true);
		if (!victim && may_evict_used)
			victim = lru_file(u, false, true);
		if (!victim)
			return -ENOSPC;
		evict_rows(u, victim);
	}
}

/* pages[k]: the row covering the first byte of page first_page + k (the first row if none). */
static void page_index(const struct cfi_table *t, uint32_t row_start, uint32_t first_page,
		       uint32_t *pages, uint32_t npages)
{
	uint32_t r = 0;

	for (uint32_t k = 0; k < npages; k++) {
		uint64_t base = (uint64_t)(first_page + k) << UNWIND_PAGE_SHIFT;

		while (r + 1 < t->nr && t->rows[r + 1].pc <= base)
			r++;
		pages[k] = row_start + r;
	}
}

/*
 * With the lock held: takes room for a built table's rows, making room as allowed. 0: f owns
 * [row_start, +nr) and [page_start, +npages) and write_rows fills them, without the lock.
 */
static int reserve_rows(struct unwinder *u, struct ufile *f, int err, const struct cfi_table *t,
			bool may_evict_used, uint32_t *npages)
{
	if (err) {
		u->stats.build_errors++;
		f->failed = true;
		pr_debug("no unwind table for %s: %s\n", dso__path(f->dso), strerror(-err));
		return err;
	}
	u->stats.builds++;
	f->flags = t->flags;
	f->row_count = t->nr;
	f->page_count = 0;
	if (!t->nr)
		return -ENODATA;
	f->first_page = t->rows[0].pc >> UNWIND_PAGE_SHIFT;
	*npages = (t->rows[t->nr - 1].pc >> UNWIND_PAGE_SHIFT) - f->first_page + 1;
	if ((uint64_t)t->nr + PAGE_ELEMS(*npages) > u->room.capacity) {
		u->stats.too_big++;
		pr_warn("unwind table of %s (%u rows) exceeds unwind.memory-limit\n",
			dso__path(f->dso), t->nr);
		f->row_count = 0;
		f->flags |= UNWIND_FILE_NO_ROOM;
		return -E2BIG;
	}
	may_evict_used = may_evict_used && t->nr <= u->room.capacity / u->big_table_share;
	if (make_room(u, t->nr, *npages, may_evict_used, &f->row_start, &f->page_start)) {
		/* row_count stays: it says how much room bringing it back takes. */
		f->flags |= UNWIND_FILE_NO_ROOM;
		f->evicted = true;
		return -ENOSPC;
	}
	return 0;
}

/*
 * Without the lock: writes the page index and rows into the room reserve_rows took (through the
 * chunks' mappings). A big table is hundreds of thousands of rows, and the lock is what the
 * ingest loop takes to publish a new process's mappings: holding it while they were written
 * (then with map updates, tens of ms) delayed a fresh process's trace context past its first
 * samples. The room is f's alone: eviction takes only files with rows installed, and f, still
 * queued, is not freed.
 */
static int write_rows(struct unwinder *u, const struct ufile *f, const struct cfi_table *t,
		      uint32_t npages)
{
	/* Whole elements: an odd count's last entry repeats the one before (never read). */
	uint32_t *pages = malloc(PAGE_ELEMS(npages) * sizeof(struct unwind_page_pair));

	if (!pages)
		return -ENOMEM;
	page_index(t, f->row_start, f->first_page, pages, npages);
	if (npages & 1)
		pages[npages] = pages[npages - 1];
	chunks__write(u->elems, f->page_start / 2, pages, PAGE_ELEMS(npages));
	chunks__write(u->elems, f->row_start, t->rows, t->nr);
	free(pages);
	return 0;
}

/* With the lock held again: the rows written (or not) become the file's. */
static void install_rows(struct unwinder *u, struct ufile *f, int err, const struct cfi_table *t,
			 uint32_t npages)
{
	if (err) {
		u->stats.update_errors++;
		free_room(u, t->nr, f->page_start, npages);
		f->row_count = 0;
		return;
	}
	f->page_count = npages;
	f->has_rows = true;
	u->stats.row_bytes += file_bytes(f);
	u->stats.files++;
	pr_debug("%s: %u unwind rows, %u pages\n", dso__path(f->dso), t->nr, npages);
}

/*
 * Names the file's slot by the kernel's identity of its inode (bpf/unwind_abi.h, unwind_inodes),
 * for walks that meet it before its process's mappings are published. A file another slot
 * already names (the same inode reached through another dso: a container's copy found by
 * build ID keeps its own) keeps that slot.
 */
static void publish_inode(struct unwinder *u, struct ufile *f)
{
	struct dso_file_key key;

	if (dso__kind(f->dso) == DSO_VDSO) {
		f->inode = UNWIND_VDSO_INODE;
		goto publish;
	}
	if (dso__file_key(f->dso, &key))
		return;
	f->inode = (struct unwind_inode){
		.dev = kernel_dev(major(key.dev), minor(key.dev)),
		.ino = key.ino,
		.ctime_ns = key.ctime_ns,
	};
publish:
	f->has_inode = !bpf_map_update_elem(u->inodes_fd, &f->inode, &f->slot, BPF_NOEXIST);
}

/* Moves a file waiting in the queue to its head (not one being built: it is out of it). */
static void queue_first(struct unwinder *u, struct ufile *f)
{
	struct ufile **pp = &u->qhead, *prev = NULL;

	while (*pp && *pp != f) {
		prev = *pp;
		pp = &(*pp)->qnext;
	}
	if (!*pp || pp == &u->qhead)
		return;
	*pp = f->qnext;
	if (u->qtail == f)
		u->qtail = prev;
	f->qnext = u->qhead;
	u->qhead = f;
	f->queued_first = true;
	u->stats.urgent_builds++;
	pthread_cond_broadcast(&u->work);
}

/*
 * first: ahead of the queue. A file a new process maps is built before the backlog (the
 * files of every process found at start, evicted tables coming back): a new process's first
 * samples wait for its own tables, not for every other file of the host's.
 */
static void enqueue(struct unwinder *u, struct ufile *f, bool may_evict_used, bool first)
{
	if (f->queued) {
		if (first)
			queue_first(u, f);
		return;
	}
	if (first)
		u->stats.urgent_builds++;
	f->queued = true;
	f->evicted = false;
	f->queued_may_evict = may_evict_used;
	f->queued_first = first;
	f->qseq = ++u->qseq;
	f->qnext = NULL;
	if (first && u->qhead) {
		f->qnext = u->qhead;
		u->qhead = f;
	} else if (u->qtail) {
		u->qtail->qnext = f;
		u->qtail = f;
	} else {
		u->qhead = f;
		u->qtail = f;
	}
	/* Both lanes: the urgent one may be the only one free for it. */
	pthread_cond_broadcast(&u->work);
}

/*
 * Takes the next file a lane builds out of the queue, or NULL. Files some process maps come
 * before those of processes gone since they were queued (built still, after: the next run of
 * the same binary reuses them); the urgent lane takes only files queued first, in use.
 */
static struct ufile *queue_take(struct unwinder *u, bool urgent_only)
{
	struct ufile **pp, *prev = NULL, *f;

	for (pp = &u->qhead; (f = *pp); prev = f, pp = &f->qnext) {
		if (urgent_only && !f->queued_first)
			return NULL; /* files queued first are the head of the queue */
		if (f->users)
			break;
	}
	if (!f) {
		if (urgent_only || !u->qhead)
			return NULL;
		pp = &u->qhead;
		prev = NULL;
		f = u->qhead;
	}
	*pp = f->qnext;
	if (u->qtail == f)
		u->qtail = prev;
	f->qnext = NULL;
	return f;
}

static void *builder_main(void *arg)
{
	struct builder_lane *lane = arg;
	struct unwinder *u = lane->u;

	pthread_mutex_lock(&u->lock);
	for (;;) {
		struct cfi_table t = { 0 };
		struct ufile *f = NULL;
		uint32_t npages = 0;
		uint64_t t0;
		int fd, err;

		while (!u->stopping && !(f = queue_take(u, lane->urgent_only)))
			pthread_cond_wait(&u->work, &u->lock);
		if (u->stopping)
			break;
		/* f stays queued (not freeable) while it is built without the lock. */
		fd = dso__fd(f->dso);
		pthread_mutex_unlock(&u->lock);
		t0 = now_ns();
		err = fd < 0 ? -EBADF : cfi__build(fd, &t);
		t0 = now_ns() - t0;
		pthread_mutex_lock(&u->lock);
		u->stats.build_ns += t0;
		if (!reserve_rows(u, f, err, &t, f->queued_may_evict, &npages)) {
			pthread_mutex_unlock(&u->lock);
			err = write_rows(u, f, &t, npages);
			pthread_mutex_lock(&u->lock);
			install_rows(u, f, err, &t, npages);
		}
		publish_file(u, f, false);
		f->queued = false;
		if (!u->qhead)
			pthread_cond_broadcast(&u->idle);
		if (t.nr >= TRIM_ROWS) {
			pthread_mutex_unlock(&u->lock);
			cfi_table__release(&t);
			/* A big table's build buffers (tens of MiB for a compiler or a browser) would
			 * otherwise stay resident until the next one reuses them. */
			malloc_trim(0);
			pthread_mutex_lock(&u->lock);
		} else {
			cfi_table__release(&t);
		}
	}
	pthread_mutex_unlock(&u->lock);
	return NULL;
}

void unwinder__wait_idle(struct unwinder *u)
{
	pthread_mutex_lock(&u->lock);
	while (u->qhead || any_queued(u))
		pthread_cond_wait(&u->idle, &u->lock);
	pthread_mutex_unlock(&u->lock);
}

uint64_t unwinder__queue_mark(struct unwinder *u)
{
	uint64_t mark;

	pthread_mutex_lock(&u->lock);
	mark = u->qseq;
	pthread_mutex_unlock(&u->lock);
	return mark;
}

bool unwinder__built_through(struct unwinder *u, uint64_t mark)
{
	bool done = true;

	pthread_mutex_lock(&u->lock);
	for (int i = 0; i < FILE_BUCKETS && done; i++)
		for (struct ufile *f = u->files[i]; f && done; f = f->next)
			done = !f->queued || f->qseq > mark;
	pthread_mutex_unlock(&u->lock);
	return done;
}

/* The file's slot with its table loaded (built on first sight, first of all when urgent), or
 * NULL: no table. */
static struct ufile *file_get(struct unwinder *u, struct dso *dso, bool urgent)
{
	struct ufile **pp = file_bucket(u, dso), *f;

	for (f = *pp; f; f = f->next)
		if (f->dso == dso)
			break;
	if (!f) {
		if (!u->nr_free_slots)
			return NULL;
		f = calloc(1, sizeof(*f));
		if (!f)
			return NULL;
		f->dso = dso__get(dso);
		f->slot = u->free_slots[u->free_head];
		u->free_head = (u->free_head + 1) % MAX_FILES;
		u->nr_free_slots--;
		u->by_slot[f->slot] = f;
		f->next = *pp;
		*pp = f;
		u->idle_files++;
		enqueue(u, f, true, urgent);
		publish_file(u, f, true);
		publish_inode(u, f);
	} else if (f->evicted) {
		enqueue(u, f, false, urgent);
	} else if (f->queued && urgent) {
		queue_first(u, f);
	} else if (!f->failed) {
		/* Loaded or being built: what spares a binary run again a rebuild. */
		u->stats.reuses++;
	}
	f->last_used = ++u->clock;
	return f->failed ? NULL : f;
}

static struct uproc **proc_slot(struct unwinder *u, uint32_t pid)
{
	struct uproc **pp = &u->procs[hash__u64(pid) % PROC_BUCKETS];

	while (*pp && (*pp)->pid != pid)
		pp = &(*pp)->next;
	return pp;
}

static void file_unuse(struct unwinder *u, struct ufile *f)
{
	if (--f->users)
		return;
	u->idle_files++;
	while (u->idle_files > MAX_IDLE_FILES) {
		struct ufile *victim = lru_file(u, true, false);

		if (!victim)
			break;
		file_free(u, victim);
	}
}

static void proc_forget(struct unwinder *u, uint32_t pid)
{
	struct uproc **pp = proc_slot(u, pid), *p = *pp;

	if (!p)
		return;
	bpf_map_delete_elem(u->procs_fd, &pid);
	*pp = p->next;
	for (uint32_t i = 0; i < p->nr; i++)
		file_unuse(u, p->files[i]);
	free(p->files);
	free(p);
	u->stats.processes--;
}

void unwinder__update(void *arg, uint32_t pid, const struct proc_map *maps, uint32_t n)
{
	unwinder__update_flags(arg, pid, maps, n, 0);
}

void unwinder__update_flags(struct unwinder *u, uint32_t pid, const struct proc_map *maps,
			    uint32_t n, uint32_t flags)
{
	struct unwind_proc *v = &u->scratch;
	struct ufile **files, **old_files;
	struct uproc **pp, *p;
	uint32_t nf = 0, old_nr;

	pthread_mutex_lock(&u->lock);
	if (!n) {
		proc_forget(u, pid);
		goto out_unlock;
	}
	files = calloc(n, sizeof(*files));
	if (!files)
		goto out_unlock;
	pp = proc_slot(u, pid);
	p = *pp;
	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p) {
			free(files);
			goto out_unlock;
		}
		p->pid = pid;
		*pp = p;
		u->stats.processes++;
	}
	v->nr = 0;
	p->flags = (p->flags & ~UNWIND_PROC_NO_TRACECTX) | flags;
	v->flags = p->flags;
	v->java_lo = p->java_lo;
	v->java_hi = p->java_hi;
	v->gen = ++u->gen;
	for (uint32_t i = 0; i < n; i++) {
		const struct proc_map *m = &maps[i];
		struct ufile *f = NULL;
		uint32_t slot = UNWIND_NO_FILE;

		if (v->nr == UNWIND_MAX_MAPPINGS) {
			u->stats.maps_truncated++;
			break;
		}
		if (m->end - m->start > UINT32_MAX || m->pgoff > UINT32_MAX)
			continue;
		if (dso__kind(m->dso) == DSO_ELF || dso__kind(m->dso) == DSO_VDSO)
			f = file_get(u, m->dso, p->urgent);
		if (f) {
			bool seen = false;

			slot = f->slot;
			for (uint32_t j = 0; j < nf && !seen; j++)
				seen = files[j] == f;
			if (!seen) {
				if (!f->users++)
					u->idle_files--;
				files[nf++] = f;
			}
		}
		v->maps[v->nr++] = (struct unwind_mapping){
			.start = m->start,
			.len = (uint32_t)(m->end - m->start),
			.file_off = (uint32_t)m->pgoff,
			.file = slot,
		};
	}
	/* The new table replaces the old in one update: BPF never sees half of either. */
	if (bpf_map_update_elem(u->procs_fd, &pid, v, BPF_ANY)) {
		u->stats.update_errors++;
		pr_debug("cannot publish the mappings of pid %u: %s\n", pid, strerror(errno));
	}
	/* Release the previous mapping set after taking the new one: shared files stay. */
	old_files = p->files;
	old_nr = p->nr;
	p->files = files;
	p->nr = nf;
	for (uint32_t i = 0; i < old_nr; i++)
		file_unuse(u, old_files[i]);
	free(old_files);
out_unlock:
	pthread_mutex_unlock(&u->lock);
}

void unwinder__maintain(struct unwinder *u)
{
	struct ufile *f;
	uint64_t room;

	pthread_mutex_lock(&u->lock);
	/* Tables evicted while in use come back as room frees up (processes exit, files go
	 * idle), most recently mapped first, without evicting anything in use: only as many as
	 * the free and idle rows can take, or they would be rebuilt for nothing. */
	room = extents__free_count(&u->room) + idle_elems(u);
	while ((f = mru_evicted(u)) && file_elems(f) <= room) {
		room -= file_elems(f);
		enqueue(u, f, false, false);
	}
	pthread_mutex_unlock(&u->lock);
}

void unwinder__urgent(struct unwinder *u, uint32_t pid)
{
	struct uproc *p;

	pthread_mutex_lock(&u->lock);
	p = *proc_slot(u, pid);
	if (p && !p->urgent) {
		p->urgent = true;
		for (uint32_t i = 0; i < p->nr; i++)
			if (p->files[i]->queued)
				queue_first(u, p->files[i]);
	}
	pthread_mutex_unlock(&u->lock);
}

void unwinder__set_proc_flag(struct unwinder *u, uint32_t pid, uint32_t flag)
{
	struct uproc *p;

	pthread_mutex_lock(&u->lock);
	p = *proc_slot(u, pid);
	if (!p) {
		/*
		 * A runtime learned the process before its mappings reached us (observers run in
		 * turn): the flag waits in an entry without files, which the mappings fill. Dropped
		 * here, the process's off-CPU and on-CPU samples would never look for its frames.
		 */
		p = calloc(1, sizeof(*p));
		if (p) {
			p->pid = pid;
			p->flags = flag;
			*proc_slot(u, pid) = p; /* the chain's end: pid is not in it */
			u->stats.processes++;
		}
	} else if (!(p->flags & flag)) {
		p->flags |= flag;
		if (bpf_map_lookup_elem(u->procs_fd, &pid, &u->scratch) == 0) {
			u->scratch.flags = p->flags;
			if (bpf_map_update_elem(u->procs_fd, &pid, &u->scratch, BPF_EXIST))
				u->stats.update_errors++;
		}
	}
	pthread_mutex_unlock(&u->lock);
}

void unwinder__set_java(struct unwinder *u, uint32_t pid, uint64_t lo, uint64_t hi)
{
	struct uproc *p;

	pthread_mutex_lock(&u->lock);
	p = *proc_slot(u, pid);
	if (p && (p->java_lo != lo || p->java_hi != hi)) {
		p->java_lo = lo;
		p->java_hi = hi;
		if (bpf_map_lookup_elem(u->procs_fd, &pid, &u->scratch) == 0) {
			u->scratch.java_lo = lo;
			u->scratch.java_hi = hi;
			/* What walks cached of its JIT frames went by frame pointers alone. */
			u->scratch.gen = ++u->gen;
			if (bpf_map_update_elem(u->procs_fd, &pid, &u->scratch, BPF_EXIST))
				u->stats.update_errors++;
		}
	}
	pthread_mutex_unlock(&u->lock);
}

struct dso *unwinder__slot_dso(struct unwinder *u, uint32_t slot)
{
	struct dso *dso = NULL;

	pthread_mutex_lock(&u->lock);
	if (slot < MAX_FILES && u->by_slot[slot])
		dso = u->by_slot[slot]->dso;
	pthread_mutex_unlock(&u->lock);
	return dso;
}

void unwinder__stats(struct unwinder *u, struct unwinder_stats *out)
{
	pthread_mutex_lock(&u->lock);
	*out = u->stats;
	out->allocated_bytes = chunks__bytes(u->elems);
	pthread_mutex_unlock(&u->lock);
	counters__read(u->counters_fd, out->bpf, UNWIND_CNT__MAX);
}
