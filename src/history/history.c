// SPDX-License-Identifier: GPL-2.0-only
/* Profiles kept on disk: see history.h; the format is histfile.h's. */
#define pr_fmt(fmt) "history: " fmt

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "history/histfile.h"
#include "history/history.h"
#include "history/history_priv.h"
#include "lib/array.h"
#include "lib/fileio.h"
#include "lib/keyindex.h"
#include "lib/log.h"
#include "lib/strtab.h"
#include "lib/timeconst.h"
#include "symbolize/dso.h"
#include "symbolize/symbolizer.h"

/* A second is written once it ended this long ago: its late samples are in the store by then
 * (the OTLP push waits as long, for the same reason). */
#define SETTLE_NS (500 * NSEC_PER_MSEC)
#define FILE_SPAN_NS (3600 * NSEC_PER_SEC) /* a file holds an hour at most */
#define MAX_FILES 4096			   /* files listed; more are left alone */

/* The profile types the store holds rows of, and the live sets (a snapshot each flush: what
 * was live then); latency is a view of cpu's rows. */
static const enum profile_type stored_types[] = { PROFILE_CPU,	     PROFILE_OFFCPU,
						   PROFILE_ALLOCS,    PROFILE_GPUALLOCS,
						   PROFILE_HEAP,      PROFILE_GPUHEAP };

static void file_name(uint64_t id, char *buf, size_t n)
{
	snprintf(buf, n, "%" PRIu64 ".aph", id);
}

/* A file of ours by its name: digits, then ".aph". */
static bool parse_name(const char *name, uint64_t *id)
{
	char *end;

	if (name[0] < '0' || name[0] > '9')
		return false;
	errno = 0;
	*id = strtoull(name, &end, 10);
	return !errno && !strcmp(end, ".aph");
}

/* Opens one of our files for reading: a regular file, not through a symlink. */
int hfile__open(struct history *h, uint64_t id, struct stat *st)
{
	char name[32];
	int fd;

	file_name(id, name, sizeof(name));
	fd = openat(h->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) || !S_ISREG(st->st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

void hfile__damaged(struct history *h, uint64_t off, int err)
{
	pthread_mutex_lock(&h->lock);
	h->stats.records_damaged++;
	pthread_mutex_unlock(&h->lock);
	pr_warn("a damaged record at %" PRIu64 " of a file: the rest is skipped (%s)\n", off,
		strerror(-err));
}

int hfile__walk(struct history *h, int fd, uint64_t size, uint64_t *good,
		int (*fn)(const struct histfile_hdr *hd, const struct histfile_summary *s,
			  uint64_t off, void *ctx),
		void *ctx)
{
	uint8_t buf[HISTFILE_HEAD_MAX];
	struct histfile_summary sum[HISTFILE_SUMMARY_MAX];
	struct histfile_hdr hd;
	uint64_t off = 0;
	int ret = 0;

	while (off < size) {
		size_t n = size - off < sizeof(buf) ? (size_t)(size - off) : sizeof(buf);
		int err = fileio__pread_all(fd, buf, n, off);

		err = err ?: histfile__parse_hdr(buf, n, &hd, sum);
		if (!err && off + histfile__record_size(&hd) > size)
			err = -ENODATA;
		if (err) {
			hfile__damaged(h, off, err);
			break;
		}
		ret = fn ? fn(&hd, sum, off, ctx) : 0;
		if (ret)
			break;
		off += histfile__record_size(&hd);
	}
	*good = off;
	return ret;
}

static int span_of(const struct histfile_hdr *hd, const struct histfile_summary *s, uint64_t off,
		   void *ctx)
{
	struct hfile *f = ctx;

	(void)s;
	(void)off;
	if (!f->first_ns || hd->start_ns < f->first_ns)
		f->first_ns = hd->start_ns;
	if (hd->end_ns > f->last_ns)
		f->last_ns = hd->end_ns;
	return 0;
}

static int cmp_files(const void *a, const void *b)
{
	const struct hfile *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* The files already there, with the span of their whole records. */
static int scan(struct history *h)
{
	DIR *dir;
	struct dirent *de;
	int fd = openat(h->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return -errno;
	}
	h->files = calloc(MAX_FILES, sizeof(*h->files));
	if (!h->files) {
		closedir(dir);
		return -ENOMEM;
	}
	while ((de = readdir(dir)) && h->nr_files < MAX_FILES) {
		struct hfile f = { 0 };
		struct stat st;
		int ffd;

		if (!parse_name(de->d_name, &f.id))
			continue;
		ffd = hfile__open(h, f.id, &st);
		if (ffd < 0)
			continue;
		hfile__walk(h, ffd, (uint64_t)st.st_size, &f.size, span_of, &f);
		close(ffd);
		/* Nothing whole in it (a crash before its first record ended): it goes. */
		if (!f.size) {
			unlinkat(h->dirfd, de->d_name, 0);
			continue;
		}
		h->files[h->nr_files++] = f;
		h->stats.bytes += (uint64_t)st.st_size;
	}
	closedir(dir);
	qsort(h->files, h->nr_files, sizeof(*h->files), cmp_files);
	return 0;
}

/* ---- writing ---- */

/* Under h->lock: removes file i from the list and the disk. */
static void remove_file(struct history *h, uint32_t i, bool budget)
{
	char name[32];
	struct stat st;

	file_name(h->files[i].id, name, sizeof(name));
	if (!fstatat(h->dirfd, name, &st, AT_SYMLINK_NOFOLLOW))
		h->stats.bytes -= (uint64_t)st.st_size < h->stats.bytes ? (uint64_t)st.st_size :
									   h->stats.bytes;
	if (unlinkat(h->dirfd, name, 0) && errno != ENOENT)
		pr_warn("cannot remove %s: %s\n", name, strerror(errno));
	if (budget)
		h->stats.files_removed_budget++;
	else
		h->stats.files_removed_retention++;
	memmove(&h->files[i], &h->files[i + 1], (h->nr_files - i - 1) * sizeof(*h->files));
	h->nr_files--;
}

/* Oldest files go: past the retention, or while the directory is over its budget. The file
 * being written stays. */
static void expire(struct history *h, uint64_t now)
{
	pthread_mutex_lock(&h->lock);
	while (h->nr_files > 1 || (h->nr_files == 1 && h->fd < 0)) {
		const struct hfile *f = &h->files[0];
		bool current = h->fd >= 0 && h->nr_files == 1;

		if (current)
			break;
		if (f->last_ns && f->last_ns + h->o.retention_ns < now)
			remove_file(h, 0, false);
		else if (h->stats.bytes > h->o.max_bytes)
			remove_file(h, 0, true);
		else
			break;
	}
	pthread_mutex_unlock(&h->lock);
}

/* Whether a frame's names stay what they are while its dso lives: a file's code, the kernel's,
 * an interpreted position; not JIT code, whose addresses are reused for other methods. */
static bool stable(const struct dso *dso)
{
	switch (dso__kind(dso)) {
	case DSO_ELF:
	case DSO_KERNEL:
	case DSO_VDSO:
	case DSO_PYTHON:
	case DSO_LUA:
	case DSO_JAVA:
		return true;
	default:
		return false;
	}
}

/* Empties m; refs: its keys hold a reference on their dso, put now. */
static void frame_memo__reset(struct frame_memo *m, bool refs)
{
	for (uint32_t i = 0; refs && i < m->ki.nr; i++)
		dso__put(((const struct frame *)keyindex__key(&m->ki, i))->dso);
	keyindex__free(&m->ki);
	free(m->locs);
	m->locs = NULL;
	m->cap = 0;
	m->ki.key_size = sizeof(struct frame);
}

static void close_current(struct history *h)
{
	if (h->fd >= 0)
		close(h->fd);
	h->fd = -1;
	histfile_writer__free(h->w);
	h->w = NULL;
	/* Its locations were the file's. */
	frame_memo__reset(&h->memo, true);
}

/* A new file to write, named by the second it starts (later if that name is taken). */
static int open_current(struct history *h, uint64_t now)
{
	uint64_t id = now / NSEC_PER_SEC;
	char name[32];
	int fd = -1;

	pthread_mutex_lock(&h->lock);
	if (h->nr_files && h->files[h->nr_files - 1].id >= id)
		id = h->files[h->nr_files - 1].id + 1;
	if (h->nr_files == MAX_FILES)
		remove_file(h, 0, true);
	pthread_mutex_unlock(&h->lock);
	for (int tries = 0; fd < 0 && tries < 16; tries++, id++) {
		file_name(id, name, sizeof(name));
		fd = openat(h->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0600);
		if (fd < 0 && errno != EEXIST)
			return -errno;
	}
	if (fd < 0)
		return -EEXIST;
	h->w = histfile_writer__new();
	if (!h->w) {
		close(fd);
		unlinkat(h->dirfd, name, 0);
		return -ENOMEM;
	}
	h->fd = fd;
	pthread_mutex_lock(&h->lock);
	h->files[h->nr_files++] = (struct hfile){ .id = id - 1 };
	pthread_mutex_unlock(&h->lock);
	return 0;
}

struct encoder {
	struct history *h;
	struct strtab *st;	  /* the symbolizer's strings for this record */
	struct frame_memo frames; /* frames whose names may change (JIT code): this record's */
	struct keyindex rows;	  /* struct histfile_row without values -> merged row */
	struct histfile_row *merged;
	uint32_t cap_merged;
	struct keyindex pids;	  /* pid -> summary slot */
	struct histfile_summary *per_pid;
	uint32_t cap_per_pid;
};

/* A frame's locations in the file's dictionary: named once a file for a stable frame (the
 * file's memo holds a reference on its dso, so its address is never another's), once a record
 * for the others. */
static int frame_locs(struct encoder *e, const struct frame *f, struct frame_locs **out)
{
	bool keep = stable(f->dso), added;
	struct frame_memo *m = keep ? &e->h->memo : &e->frames;
	int64_t id = keyindex__id(&m->ki, f, &added);
	struct frame_locs *fl;
	struct sym_frame sf;
	int err;

	if (id < 0)
		return (int)id;
	if (!added) {
		*out = &m->locs[id];
		return 0;
	}
	if (keep)
		dso__get(f->dso);
	err = array__reserve((void **)&m->locs, &m->cap, m->ki.nr, sizeof(*m->locs)) ?:
	      symbolizer__frame(e->h->o.sym, f, e->st, &sf);
	if (err)
		return err; /* the record fails: the file, and its memo, are dropped */
	fl = &m->locs[id];
	fl->n = sf.nr_lines;
	for (uint32_t i = 0; i < sf.nr_lines; i++) {
		struct histfile_loc l;
		int64_t m = histfile_writer__str(e->h->w, dso__path(f->dso));
		int64_t fn = histfile_writer__str(e->h->w, strtab__str(e->st, sf.lines[i].function));
		int64_t file = histfile_writer__str(e->h->w, strtab__str(e->st, sf.lines[i].file));
		int64_t loc;

		if (m < 0 || fn < 0 || file < 0)
			return -ENOMEM;
		l = (struct histfile_loc){ (uint32_t)m, (uint32_t)fn, (uint32_t)file,
					   sf.lines[i].line };
		loc = histfile_writer__loc(e->h->w, &l);
		if (loc < 0)
			return (int)loc;
		fl->loc[i] = (uint32_t)loc;
	}
	*out = fl;
	return 0;
}

static int add_row(struct encoder *e, const struct store_row *r, unsigned int nr_values)
{
	struct histfile_row key = { .pid = r->pid, .tid = r->tid, .gpu_api = r->gpu_api,
				    .gpu = r->gpu };
	struct histfile_summary *s;
	uint32_t node = 0;
	bool added;
	int64_t id;
	int err;

	for (uint32_t i = r->nr_frames; i-- > 0;) {
		struct frame_locs *fl = NULL;

		err = frame_locs(e, &r->frames[i], &fl);
		if (err)
			return err;
		for (uint32_t k = fl->n; k-- > 0;) {
			int64_t n = histfile_writer__node(e->h->w, node, fl->loc[k]);

			if (n < 0)
				return (int)n;
			node = (uint32_t)n;
		}
	}
	key.node = node;
	{
		const char *strs[] = { r->comm, r->exe, r->exe_path, r->container_id, r->service };
		uint32_t *ids[] = { &key.comm, &key.exe, &key.exe_path, &key.container,
				    &key.service };

		for (size_t k = 0; k < 5; k++) {
			int64_t sid = histfile_writer__str(e->h->w, strs[k] ? strs[k] : "");

			if (sid < 0)
				return (int)sid;
			*ids[k] = (uint32_t)sid;
		}
	}
	/* Rows that differed only by what is not written (trace, span) become one. */
	id = keyindex__id(&e->rows, &key, &added);
	if (id < 0)
		return (int)id;
	if (added) {
		err = array__reserve((void **)&e->merged, &e->cap_merged, e->rows.nr,
				     sizeof(*e->merged));
		if (err)
			return err;
		e->merged[id] = key;
	}
	for (unsigned int k = 0; k < nr_values; k++)
		e->merged[id].values[k] += r->values[k];
	id = keyindex__id(&e->pids, &r->pid, &added);
	if (id < 0)
		return (int)id;
	if (added) {
		err = array__reserve((void **)&e->per_pid, &e->cap_per_pid, e->pids.nr,
				     sizeof(*e->per_pid));
		if (err)
			return err;
		e->per_pid[id] = (struct histfile_summary){ .pid = r->pid };
		snprintf(e->per_pid[id].exe, sizeof(e->per_pid[id].exe), "%s",
			 r->exe ? r->exe : "");
	}
	s = &e->per_pid[id];
	for (unsigned int k = 0; k < nr_values; k++)
		s->values[k] += r->values[k];
	return 0;
}

static int by_value(const void *a, const void *b, void *arg)
{
	const struct histfile_summary *x = a, *y = b;
	unsigned int v = *(const unsigned int *)arg;

	return x->values[v] < y->values[v] ? 1 : x->values[v] > y->values[v] ? -1 : 0;
}

/* The top processes by the type's default value, the rest summed as pid 0. */
static uint32_t summarize(struct encoder *e, const struct profile_desc *desc,
			  struct histfile_summary *out)
{
	uint32_t n = e->pids.nr, top = HISTFILE_SUMMARY_MAX - 1;
	unsigned int v = desc->default_value > 0 ? (unsigned int)desc->default_value : 0;

	qsort_r(e->per_pid, n, sizeof(*e->per_pid), by_value, &v);
	if (n <= HISTFILE_SUMMARY_MAX) {
		memcpy(out, e->per_pid, n * sizeof(*out));
		return n;
	}
	memcpy(out, e->per_pid, top * sizeof(*out));
	out[top] = (struct histfile_summary){ .pid = 0 };
	for (uint32_t i = top; i < n; i++)
		for (int k = 0; k < HISTFILE_MAX_VALUES; k++)
			out[top].values[k] += e->per_pid[i].values[k];
	return HISTFILE_SUMMARY_MAX;
}

static void encoder__free(struct encoder *e)
{
	strtab__free(e->st);
	frame_memo__reset(&e->frames, false);
	keyindex__free(&e->rows);
	keyindex__free(&e->pids);
	free(e->merged);
	free(e->per_pid);
}

/* Appends one record to the current file: one write, undone if it fell short. */
static int write_record(struct history *h, const struct buf *rec, uint64_t start, uint64_t end)
{
	struct hfile *f;
	uint64_t at;
	size_t done = 0;
	int err = 0;

	pthread_mutex_lock(&h->lock);
	at = h->files[h->nr_files - 1].size;
	pthread_mutex_unlock(&h->lock);
	while (done < rec->len) {
		ssize_t n = pwrite(h->fd, rec->data + done, rec->len - done, (off_t)(at + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			break;
		}
		done += (size_t)n;
	}
	if (err) {
		/* Whatever reached the file is cut off again; the file is left as it was. */
		if (ftruncate(h->fd, (off_t)at))
			pr_debug("cannot cut a failed record: %s\n", strerror(errno));
		return err;
	}
	histfile_writer__commit(h->w);
	pthread_mutex_lock(&h->lock);
	f = &h->files[h->nr_files - 1];
	f->size += rec->len;
	if (!f->first_ns || start < f->first_ns)
		f->first_ns = start;
	if (end > f->last_ns)
		f->last_ns = end;
	h->stats.bytes += rec->len;
	h->stats.bytes_written += rec->len;
	h->stats.records_written++;
	pthread_mutex_unlock(&h->lock);
	return 0;
}

/* One record of type: rows of [start_ns, end_ns) (CLOCK_REALTIME); a live set (heap,
 * gpuheap) is written even when empty. */
static int write_rows(struct history *h, enum profile_type type, const struct store_row *rows,
		      size_t nr, uint64_t period, uint64_t start_ns, uint64_t end_ns, uint64_t now,
		      struct buf *rec)
{
	const struct profile_desc *desc = profile__desc(type);
	struct histfile_summary summary[HISTFILE_SUMMARY_MAX];
	struct encoder e = { .h = h };
	struct histfile_hdr hd = { 0 };
	int err;

	if (!nr && type != PROFILE_HEAP && type != PROFILE_GPUHEAP)
		return 0;
	/* A file is made for records to write, never left empty. */
	if (h->fd < 0) {
		err = open_current(h, now);
		if (err)
			return err;
	}
	e.frames.ki.key_size = sizeof(struct frame);
	e.rows.key_size = sizeof(struct histfile_row);
	e.pids.key_size = sizeof(uint32_t);
	e.st = strtab__new();
	err = e.st ? 0 : -ENOMEM;
	for (size_t i = 0; !err && i < nr; i++)
		err = add_row(&e, &rows[i], desc->nr_values);
	if (!err) {
		snprintf(hd.type, sizeof(hd.type), "%s", desc->name);
		hd.start_ns = start_ns;
		hd.end_ns = end_ns;
		hd.period = period;
		hd.nr_values = desc->nr_values;
		hd.nr_summary = summarize(&e, desc, summary);
		buf__reset(rec);
		err = histfile_writer__record(h->w, &hd, summary, e.merged, e.rows.nr, rec);
	}
	if (!err)
		err = write_record(h, rec, hd.start_ns, hd.end_ns);
	encoder__free(&e);
	return err;
}

static int write_type(struct history *h, enum profile_type type, int64_t first, int64_t last,
		      uint64_t offset, uint64_t now, struct buf *rec)
{
	struct store_result *res;
	struct store_row *live;
	size_t nr;
	int err;

	if (type == PROFILE_HEAP || type == PROFILE_GPUHEAP) {
		/*
		 * What is live at this flush, as the daemon's collectors hold it, stamped with the
		 * moment it was taken (not the settled seconds written beside it, which end up to
		 * SETTLE_NS + 1 s earlier: a set taken after a program's exit would pass for one
		 * of a time it still lived). It holds until the next one; a late flush gets a
		 * second interval. Readers take the last one that starts before a range's end.
		 */
		bool *held = &h->live_held[type == PROFILE_GPUHEAP];

		if (!h->o.live_rows)
			return 0;
		err = h->o.live_rows(h->o.live_ctx, type, &live, &nr);
		if (!err && (nr || *held))
			err = write_rows(h, type, live, nr, 0, now, now + 2 * h->o.flush_ns, now,
					 rec);
		if (!err)
			*held = nr > 0;
		store_rows__free(live, nr);
		return err;
	}
	err = store__query_secs(h->o.store, type, first, last, NULL, &res);
	if (err)
		return err;
	err = write_rows(h, type, res->rows, res->nr_rows, res->period,
			 (uint64_t)first * NSEC_PER_SEC + offset,
			 (uint64_t)(last + 1) * NSEC_PER_SEC + offset, now, rec);
	store_result__free(res);
	return err;
}

/* Writes the store's seconds [next_sec, up to last) of every stored type. */
static void flush(struct history *h, int64_t last)
{
	uint64_t t0 = now_ns(), now = realtime_ns(), offset = now - t0;
	int64_t first = h->next_sec;
	struct buf rec = { 0 };
	int err = 0;

	if (first > last)
		return;
	if (h->fd >= 0) {
		const struct hfile *f;
		bool roll;

		pthread_mutex_lock(&h->lock);
		f = &h->files[h->nr_files - 1];
		roll = f->size >= h->roll_bytes || (f->first_ns && now - f->first_ns >= FILE_SPAN_NS);
		pthread_mutex_unlock(&h->lock);
		if (roll)
			close_current(h);
	}
	for (size_t i = 0; !err && i < sizeof(stored_types) / sizeof(stored_types[0]); i++)
		err = write_type(h, stored_types[i], first, last, offset, now, &rec);
	buf__free(&rec);
	if (err) {
		/* Disk full or an I/O error: these seconds stay in memory only; the next flush
		 * starts a file of its own, so that no dictionary is half written. */
		pthread_mutex_lock(&h->lock);
		h->stats.write_errors++;
		pthread_mutex_unlock(&h->lock);
		pr_warn("seconds not written: %s\n", strerror(-err));
		close_current(h);
	}
	h->next_sec = last + 1;
	pthread_mutex_lock(&h->lock);
	h->written_until = (uint64_t)(last + 1) * NSEC_PER_SEC + offset;
	h->stats.flush_ns_total += now_ns() - t0;
	pthread_mutex_unlock(&h->lock);
	expire(h, now);
}

static void *writer(void *arg)
{
	struct history *h = arg;
	struct timespec ts;

	pthread_mutex_lock(&h->lock);
	while (!h->stopping) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += (time_t)(h->o.flush_ns / NSEC_PER_SEC);
		ts.tv_nsec += (long)(h->o.flush_ns % NSEC_PER_SEC);
		if (ts.tv_nsec >= (long)NSEC_PER_SEC) {
			ts.tv_sec++;
			ts.tv_nsec -= (long)NSEC_PER_SEC;
		}
		pthread_cond_timedwait(&h->cond, &h->lock, &ts);
		if (h->stopping)
			break;
		pthread_mutex_unlock(&h->lock);
		flush(h, (int64_t)((now_ns() - SETTLE_NS) / NSEC_PER_SEC) - 1);
		pthread_mutex_lock(&h->lock);
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

/* ---- the directory ---- */

static int open_dir(const char *path, char *why, size_t why_len)
{
	struct stat st;
	int fd;

	if (mkdir(path, 0700) && errno != EEXIST) {
		snprintf(why, why_len, "cannot make %s: %s", path, strerror(errno));
		return -errno;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int err = -errno;

		snprintf(why, why_len, "%s: %s", path,
			 err == -ELOOP || err == -ENOTDIR ? "a symlink or not a directory" :
							    strerror(-err));
		return err;
	}
	/* Anyone who could write there could plant files that root reads back, or remove ours. */
	if (fstat(fd, &st) || st.st_uid != geteuid() || (st.st_mode & 022)) {
		snprintf(why, why_len, "%s: must be owned by uid %u and writable by it alone", path,
			 (unsigned int)geteuid());
		close(fd);
		return -EPERM;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		int err = -errno;

		snprintf(why, why_len, "%s: %s", path,
			 err == -EWOULDBLOCK ? "another autoprof writes there" : strerror(-err));
		close(fd);
		return err;
	}
	return fd;
}

int history__new(const struct history_opts *o, struct history **out, char *why, size_t why_len)
{
	struct history *h = calloc(1, sizeof(*h));
	int err;

	*out = NULL;
	if (!h)
		return -ENOMEM;
	h->o = *o;
	h->fd = -1;
	h->memo.ki.key_size = sizeof(struct frame);
	/* Files small enough that a budget drops data by sixteenths, not all at once. */
	h->roll_bytes = o->max_bytes / 16;
	if (h->roll_bytes < 64 * 1024)
		h->roll_bytes = 64 * 1024;
	pthread_mutex_init(&h->lock, NULL);
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&h->cond, &ca);
		pthread_condattr_destroy(&ca);
	}
	h->dirfd = open_dir(o->path, why, why_len);
	if (h->dirfd < 0) {
		err = h->dirfd;
		goto fail;
	}
	err = scan(h);
	if (err) {
		snprintf(why, why_len, "%s: cannot list: %s", o->path, strerror(-err));
		goto fail;
	}
	expire(h, realtime_ns());
	/* What an earlier run wrote answers up to its end; this run's memory from there. */
	for (uint32_t i = 0; i < h->nr_files; i++)
		if (h->files[i].last_ns > h->written_until)
			h->written_until = h->files[i].last_ns;
	h->next_sec = store__now_sec();
	err = -pthread_create(&h->thread, NULL, writer, h);
	if (err) {
		snprintf(why, why_len, "cannot start its thread: %s", strerror(-err));
		goto fail;
	}
	h->started = true;
	/* By name in top -H and bench/history.sh, which counts its CPU time. */
	pthread_setname_np(h->thread, "ap-history");
	pr_info("%s: %u files, %" PRIu64 " bytes kept\n", o->path, h->nr_files, h->stats.bytes);
	*out = h;
	return 0;
fail:
	history__free(h);
	return err;
}

void history__free(struct history *h)
{
	if (!h)
		return;
	if (h->started) {
		pthread_mutex_lock(&h->lock);
		h->stopping = true;
		pthread_cond_signal(&h->cond);
		pthread_mutex_unlock(&h->lock);
		pthread_join(h->thread, NULL);
		/* The seconds since the last flush, up to the one now filling. */
		flush(h, store__now_sec());
	}
	close_current(h);
	if (h->dirfd >= 0)
		close(h->dirfd);
	free(h->files);
	pthread_cond_destroy(&h->cond);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

uint64_t history__written_until(struct history *h)
{
	uint64_t t;

	pthread_mutex_lock(&h->lock);
	t = h->written_until;
	pthread_mutex_unlock(&h->lock);
	return t;
}

uint64_t history__oldest(struct history *h)
{
	uint64_t t = 0;

	pthread_mutex_lock(&h->lock);
	for (uint32_t i = 0; i < h->nr_files && !t; i++)
		t = h->files[i].first_ns;
	pthread_mutex_unlock(&h->lock);
	return t;
}

uint64_t history__retention_ns(const struct history *h)
{
	return h->o.retention_ns;
}

void history__stats(struct history *h, struct history_stats *out)
{
	pthread_mutex_lock(&h->lock);
	*out = h->stats;
	out->files = h->nr_files;
	pthread_mutex_unlock(&h->lock);
	out->oldest_ns = history__oldest(h);
}

/* The files whose records may overlap [start, end), copied under the lock. */
int history__files_in(struct history *h, uint64_t start, uint64_t end, struct hfile **out,
		    uint32_t *nr)
{
	struct hfile *a;

	pthread_mutex_lock(&h->lock);
	a = calloc(h->nr_files + 1, sizeof(*a));
	*nr = 0;
	for (uint32_t i = 0; a && i < h->nr_files; i++)
		if (h->files[i].size && h->files[i].first_ns < end && h->files[i].last_ns > start)
			a[(*nr)++] = h->files[i];
	pthread_mutex_unlock(&h->lock);
	*out = a;
	return a ? 0 : -ENOMEM;
}
