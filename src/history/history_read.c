// SPDX-License-Identifier: GPL-2.0-only
/*
 * Profiles read back from disk: the records of a range into store rows (history__rows) and
 * the summaries of a range into a timeline (history__timeline). Query threads run these; the
 * files are read up to the whole records the writer had finished when the query began.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "history/history_priv.h"
#include "lib/array.h"
#include "lib/fileio.h"
#include "lib/keyindex.h"
#include "lib/strtab.h"
#include "symbolize/dso.h"
#include "symbolize/symbolizer.h"

#define MAX_CHAIN 1024 /* frames of one stack read back; a longer one is cut at its root */

/* A stack node of the answer: a frame called from its parent node (+ 1, 0 for none). */
struct rnode {
	uint32_t parent, pad;
	struct frame f;
};

/* A row of the answer; strings are ids in the answer's strtab. */
struct rkey {
	uint32_t node, pid, tid, comm, exe, exe_path, container, service, gpu_api, gpu;
};

struct reader {
	struct history *h;
	const struct profile_desc *desc;
	uint64_t start, end;
	const struct store_filter *filter;
	struct history_rows *hr;
	struct keyindex nodes; /* struct rnode */
	struct keyindex rows;  /* struct rkey */
	uint64_t (*values)[PROFILE_MAX_VALUES];
	uint32_t cap_values;
	bool last_only; /* a live set's snapshots: the last one in the range alone counts */
	struct strtab *mappings; /* mapping path -> dsos[id] */
	struct dso **dsos;
	uint32_t nr_dsos;
	/* The file being read. */
	int fd;
	struct histfile_reader *r;
	struct frame *loc_frames; /* by the file's location id; dso NULL until made */
	uint32_t nr_loc_frames;
	uint8_t *body;
	size_t body_size;
	int err;
};

static int stored_dso(struct reader *rd, const char *mapping, struct dso **out)
{
	int64_t id = strtab__intern(rd->mappings, mapping);

	if (id < 0)
		return (int)id;
	if ((uint32_t)id >= rd->nr_dsos) {
		struct dso **a = realloc(rd->dsos, ((size_t)id + 1) * sizeof(*a));

		if (!a)
			return -ENOMEM;
		rd->dsos = a;
		while (rd->nr_dsos <= (uint32_t)id)
			rd->dsos[rd->nr_dsos++] = NULL;
	}
	if (!rd->dsos[id])
		rd->dsos[id] = symbolizer__stored_dso(mapping);
	*out = rd->dsos[id];
	return *out ? 0 : -ENOMEM;
}

/* The answer's frame of the file's location loc. */
static int loc_frame(struct reader *rd, uint32_t loc, struct frame *out)
{
	struct histfile_loc l;
	struct dso *dso = NULL;
	int err;

	if (!histfile_reader__loc(rd->r, loc, &l))
		return -EBADMSG;
	if (loc >= rd->nr_loc_frames) {
		uint32_t n = loc + 256;
		struct frame *a = realloc(rd->loc_frames, n * sizeof(*a));

		if (!a)
			return -ENOMEM;
		memset(a + rd->nr_loc_frames, 0, (n - rd->nr_loc_frames) * sizeof(*a));
		rd->loc_frames = a;
		rd->nr_loc_frames = n;
	}
	if (rd->loc_frames[loc].dso) {
		*out = rd->loc_frames[loc];
		return 0;
	}
	err = stored_dso(rd, histfile_reader__str(rd->r, l.mapping), &dso) ?:
	      symbolizer__stored_frame(rd->h->o.sym, dso, histfile_reader__str(rd->r, l.function),
				       histfile_reader__str(rd->r, l.file), l.line,
				       &rd->loc_frames[loc]);
	if (err)
		return err;
	*out = rd->loc_frames[loc];
	return 0;
}

static bool wanted(const struct reader *rd, const struct histfile_row *row)
{
	const struct store_filter *f = rd->filter;
	const char *comm, *exe;

	if (!store_filter__wants_pid(f, row->pid))
		return false;
	if (!f || !f->comm)
		return true;
	comm = histfile_reader__str(rd->r, row->comm);
	exe = histfile_reader__str(rd->r, row->exe);
	return !strcmp(f->comm, comm) || !strcmp(f->comm, exe);
}

static int add_row(struct reader *rd, const struct histfile_row *row)
{
	struct frame chain[MAX_CHAIN];
	struct histfile_node nd;
	uint32_t n = 0, node = row->node, rn = 0;
	struct rkey key = { .pid = row->pid, .tid = row->tid, .gpu_api = row->gpu_api,
			    .gpu = row->gpu };
	const uint32_t strs[] = { row->comm, row->exe, row->exe_path, row->container,
				  row->service };
	uint32_t *ids[] = { &key.comm, &key.exe, &key.exe_path, &key.container, &key.service };
	bool added;
	int64_t id;
	int err;

	/* Leaf first, up to the root (a parent is always an earlier node: this ends). */
	while (node && n < MAX_CHAIN) {
		if (!histfile_reader__node(rd->r, node - 1, &nd))
			return -EBADMSG;
		err = loc_frame(rd, nd.loc, &chain[n++]);
		if (err)
			return err;
		node = nd.parent;
	}
	for (uint32_t i = n; i-- > 0;) {
		struct rnode k = { .parent = rn, .f = chain[i] };

		id = keyindex__id(&rd->nodes, &k, NULL);
		if (id < 0)
			return (int)id;
		rn = (uint32_t)id + 1;
	}
	key.node = rn;
	for (size_t k = 0; k < sizeof(strs) / sizeof(strs[0]); k++) {
		id = strtab__intern(rd->hr->strings, histfile_reader__str(rd->r, strs[k]));
		if (id < 0)
			return (int)id;
		*ids[k] = (uint32_t)id;
	}
	id = keyindex__id(&rd->rows, &key, &added);
	if (id < 0)
		return (int)id;
	if (added) {
		err = array__reserve((void **)&rd->values, &rd->cap_values, rd->rows.nr,
				     sizeof(*rd->values));
		if (err)
			return err;
		memset(rd->values[id], 0, sizeof(rd->values[id]));
	}
	for (uint32_t k = 0; k < rd->desc->nr_values && k < HISTFILE_MAX_VALUES; k++)
		rd->values[id][k] += row->values[k];
	return 0;
}

static bool overlaps(const struct histfile_hdr *hd, uint64_t start, uint64_t end)
{
	return hd->start_ns < end && hd->end_ns > start;
}

/* One record: its dictionary always (later records need it), its rows when wanted. */
static int on_record(const struct histfile_hdr *hd, const struct histfile_summary *s,
		     uint64_t off, void *ctx)
{
	struct reader *rd = ctx;
	size_t n = (size_t)hd->dict_zlen + hd->rows_zlen;
	bool want = !strcmp(hd->type, rd->desc->name) && overlaps(hd, rd->start, rd->end);
	const struct histfile_row *rows;
	size_t nr;
	int err;

	(void)s;
	if (n > rd->body_size) {
		uint8_t *p = realloc(rd->body, n);

		if (!p) {
			rd->err = -ENOMEM;
			return 1;
		}
		rd->body = p;
		rd->body_size = n;
	}
	err = fileio__pread_all(rd->fd, rd->body, n,
			   off + histfile__body_offset(hd));
	err = err ?: histfile_reader__body(rd->r, hd, rd->body, want);
	if (err == -EBADMSG || err == -ENODATA) {
		hfile__damaged(rd->h, off, err);
		return 1;
	}
	if (err) {
		rd->err = err;
		return 1;
	}
	if (!want)
		return 0;
	pthread_mutex_lock(&rd->h->lock);
	rd->h->stats.records_read++;
	pthread_mutex_unlock(&rd->h->lock);
	if (rd->last_only) {
		/* A later snapshot replaces the earlier: live then, not live twice. */
		keyindex__free(&rd->rows);
		rd->rows.key_size = sizeof(struct rkey);
		strtab__free(rd->hr->strings);
		rd->hr->strings = strtab__new();
		if (!rd->hr->strings) {
			rd->err = -ENOMEM;
			return 1;
		}
	}
	if (!rd->hr->period)
		rd->hr->period = hd->period;
	if (!rd->hr->start_ns || hd->start_ns < rd->hr->start_ns)
		rd->hr->start_ns = hd->start_ns;
	if (hd->end_ns > rd->hr->end_ns)
		rd->hr->end_ns = hd->end_ns;
	rows = histfile_reader__rows(rd->r, &nr);
	for (size_t i = 0; i < nr; i++) {
		if (!wanted(rd, &rows[i]))
			continue;
		err = add_row(rd, &rows[i]);
		if (err) {
			rd->err = err;
			return 1;
		}
	}
	return 0;
}

static int read_file(struct reader *rd, const struct hfile *f)
{
	struct stat st;
	uint64_t good;

	rd->fd = hfile__open(rd->h, f->id, &st);
	if (rd->fd < 0)
		return rd->fd == -ENOENT ? 0 : rd->fd; /* removed since: its data is gone */
	rd->r = histfile_reader__new();
	memset(rd->loc_frames, 0, rd->nr_loc_frames * sizeof(*rd->loc_frames));
	if (rd->r)
		hfile__walk(rd->h, rd->fd, f->size < (uint64_t)st.st_size ? f->size :
									    (uint64_t)st.st_size,
			    &good, on_record, rd);
	else
		rd->err = -ENOMEM;
	histfile_reader__free(rd->r);
	rd->r = NULL;
	close(rd->fd);
	rd->fd = -1;
	return rd->err;
}

/* The answer's rows, from its nodes and row keys. */
static int build(struct reader *rd)
{
	struct history_rows *hr = rd->hr;

	hr->rows = calloc(rd->rows.nr + 1, sizeof(*hr->rows));
	if (!hr->rows)
		return -ENOMEM;
	for (uint32_t i = 0; i < rd->rows.nr; i++) {
		const struct rkey *k = keyindex__key(&rd->rows, i);
		struct store_row *r = &hr->rows[hr->nr_rows];
		struct frame *frames;
		uint32_t n = 0;

		for (uint32_t nd = k->node; nd; nd = ((const struct rnode *)
							      keyindex__key(&rd->nodes, nd - 1))
							     ->parent)
			n++;
		frames = calloc(n + 1, sizeof(*frames));
		r->comm = strdup(strtab__str(hr->strings, k->comm));
		r->exe = strdup(strtab__str(hr->strings, k->exe));
		r->frames = frames;
		hr->nr_rows++;
		if (!frames || !r->comm || !r->exe)
			return -ENOMEM;
		n = 0;
		for (uint32_t nd = k->node; nd;) {
			const struct rnode *node = keyindex__key(&rd->nodes, nd - 1);

			frames[n++] = (struct frame){ dso__get(node->f.dso), node->f.addr };
			nd = node->parent;
		}
		r->nr_frames = n;
		r->pid = k->pid;
		r->tid = k->tid;
		r->exe_path = strtab__str(hr->strings, k->exe_path);
		r->container_id = strtab__str(hr->strings, k->container);
		r->service = strtab__str(hr->strings, k->service);
		r->gpu_api = (uint8_t)k->gpu_api;
		r->gpu = (uint16_t)k->gpu;
		memcpy(r->values, rd->values[i], sizeof(r->values));
	}
	return 0;
}

int history__rows(struct history *h, enum profile_type type, uint64_t start_ns, uint64_t end_ns,
		  const struct store_filter *filter, struct history_rows **out)
{
	struct reader rd = { .h = h, .desc = profile__desc(type), .start = start_ns,
			     .end = end_ns, .filter = filter, .fd = -1,
			     .last_only = type == PROFILE_HEAP || type == PROFILE_GPUHEAP };
	struct hfile *files = NULL;
	uint32_t nr_files = 0;
	int err;

	*out = NULL;
	if (!rd.desc)
		return -EINVAL;
	rd.hr = calloc(1, sizeof(*rd.hr));
	if (!rd.hr)
		return -ENOMEM;
	rd.hr->strings = strtab__new();
	rd.mappings = strtab__new();
	rd.nodes.key_size = sizeof(struct rnode);
	rd.rows.key_size = sizeof(struct rkey);
	err = rd.hr->strings && rd.mappings ? 0 : -ENOMEM;
	/* Neither probes' copies nor traces are written: such a filter keeps nothing. */
	if (!err && !(filter && (filter->probe || filter->trace_id || filter->span_id)))
		err = history__files_in(h, start_ns, end_ns, &files, &nr_files);
	for (uint32_t i = 0; !err && i < nr_files; i++)
		err = read_file(&rd, &files[i]);
	err = err ?: build(&rd);
	free(files);
	free(rd.body);
	free(rd.loc_frames);
	free(rd.values);
	for (uint32_t i = 0; i < rd.nr_dsos; i++)
		dso__put(rd.dsos[i]);
	free(rd.dsos);
	strtab__free(rd.mappings);
	keyindex__free(&rd.nodes);
	keyindex__free(&rd.rows);
	if (err) {
		history_rows__free(rd.hr);
		return err;
	}
	*out = rd.hr;
	return 0;
}

void history_rows__free(struct history_rows *hr)
{
	if (!hr)
		return;
	store_rows__free(hr->rows, hr->nr_rows);
	strtab__free(hr->strings);
	free(hr);
}

/* ---- the timeline: summaries only ---- */

struct timeline {
	const char *type;
	unsigned int vi;
	uint64_t start, end, step;
	void (*fn)(const struct history_point *p, void *ctx);
	void *ctx;
};

static int on_summary(const struct histfile_hdr *hd, const struct histfile_summary *s,
		      uint64_t off, void *ctx)
{
	struct timeline *t = ctx;
	struct history_point p;

	(void)off;
	if (strcmp(hd->type, t->type) || hd->start_ns < t->start || hd->start_ns >= t->end)
		return 0;
	p.step = (hd->start_ns - t->start) / t->step;
	for (uint32_t i = 0; i < hd->nr_summary; i++) {
		p.pid = s[i].pid;
		memcpy(p.exe, s[i].exe, sizeof(p.exe));
		p.value = s[i].values[t->vi];
		t->fn(&p, t->ctx);
	}
	return 0;
}

int history__timeline(struct history *h, enum profile_type type, unsigned int vi,
		      uint64_t start_ns, uint64_t end_ns, uint64_t step_ns,
		      void (*fn)(const struct history_point *p, void *ctx), void *ctx)
{
	const struct profile_desc *desc = profile__desc(type);
	struct timeline t = { .vi = vi, .start = start_ns, .end = end_ns, .step = step_ns,
			      .fn = fn, .ctx = ctx };
	struct hfile *files;
	uint32_t nr;
	int err;

	if (!desc || vi >= HISTFILE_MAX_VALUES || !step_ns || end_ns <= start_ns)
		return -EINVAL;
	t.type = desc->name;
	err = history__files_in(h, start_ns, end_ns, &files, &nr);
	for (uint32_t i = 0; !err && i < nr; i++) {
		struct stat st;
		uint64_t good;
		int fd = hfile__open(h, files[i].id, &st);

		if (fd < 0)
			continue;
		hfile__walk(h, fd, files[i].size < (uint64_t)st.st_size ? files[i].size :
									   (uint64_t)st.st_size,
			    &good, on_summary, &t);
		close(fd);
	}
	free(files);
	return err;
}
