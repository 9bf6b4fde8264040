// SPDX-License-Identifier: GPL-2.0-only
/* The history file format: see histfile.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "history/histfile.h"
#include "lib/array.h"
#include "lib/keyindex.h"
#include "lib/strtab.h"

size_t histfile__body_offset(const struct histfile_hdr *h)
{
	return HISTFILE_HDR_SIZE + (size_t)h->nr_summary * HISTFILE_SUMMARY_SIZE;
}

size_t histfile__record_size(const struct histfile_hdr *h)
{
	return histfile__body_offset(h) + h->dict_zlen + h->rows_zlen;
}

/* ---- little-endian fields and varints ---- */

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static int put_varint(struct buf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	do {
		tmp[n++] = (uint8_t)(v & 0x7f) | (v > 0x7f ? 0x80 : 0);
		v >>= 7;
	} while (v);
	return buf__append(b, tmp, n);
}

struct cursor {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t get_varint(struct cursor *c)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		if (c->p >= c->end)
			break;
		v |= (uint64_t)(*c->p & 0x7f) << shift;
		if (!(*c->p++ & 0x80))
			return v;
	}
	c->bad = true;
	return 0;
}

/* A count of items of at least min_size bytes each: no more than the bytes left allow. */
static uint32_t get_count(struct cursor *c, size_t min_size)
{
	uint64_t n = get_varint(c);

	if (n > (uint64_t)(c->end - c->p) / min_size)
		c->bad = true;
	return c->bad ? 0 : (uint32_t)n;
}

/* ---- writer ---- */

struct histfile_writer {
	struct strtab *strings;
	struct keyindex locs;  /* struct histfile_loc */
	struct keyindex nodes; /* struct histfile_node */
	/* What earlier committed records defined. */
	uint32_t strings_done, locs_done, nodes_done;
	struct buf dict, rows, z;
};

struct histfile_writer *histfile_writer__new(void)
{
	struct histfile_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->strings = strtab__new();
	if (!w->strings) {
		free(w);
		return NULL;
	}
	w->strings_done = 1; /* "" is id 0 in every file, never written */
	w->locs.key_size = sizeof(struct histfile_loc);
	w->nodes.key_size = sizeof(struct histfile_node);
	return w;
}

void histfile_writer__free(struct histfile_writer *w)
{
	if (!w)
		return;
	strtab__free(w->strings);
	keyindex__free(&w->locs);
	keyindex__free(&w->nodes);
	buf__free(&w->dict);
	buf__free(&w->rows);
	buf__free(&w->z);
	free(w);
}

int64_t histfile_writer__str(struct histfile_writer *w, const char *s)
{
	return strtab__intern(w->strings, s);
}

int64_t histfile_writer__loc(struct histfile_writer *w, const struct histfile_loc *loc)
{
	return keyindex__id(&w->locs, loc, NULL);
}

int64_t histfile_writer__node(struct histfile_writer *w, uint32_t parent, uint32_t loc)
{
	struct histfile_node key = { parent, loc };
	int64_t id = keyindex__id(&w->nodes, &key, NULL);

	return id < 0 ? id : id + 1;
}

static int encode_dict(struct histfile_writer *w)
{
	uint32_t nr_str = strtab__count(w->strings);
	const struct histfile_loc *locs = w->locs.keys;
	const struct histfile_node *nodes = w->nodes.keys;
	int err;

	buf__reset(&w->dict);
	err = put_varint(&w->dict, nr_str - w->strings_done);
	for (uint32_t i = w->strings_done; !err && i < nr_str; i++) {
		const char *s = strtab__str(w->strings, i);
		size_t n = strlen(s);

		err = put_varint(&w->dict, n) ?: buf__append(&w->dict, s, n);
	}
	err = err ?: put_varint(&w->dict, w->locs.nr - w->locs_done);
	for (uint32_t i = w->locs_done; !err && i < w->locs.nr; i++)
		err = put_varint(&w->dict, locs[i].mapping) ?:
		      put_varint(&w->dict, locs[i].function) ?:
		      put_varint(&w->dict, locs[i].file) ?: put_varint(&w->dict, locs[i].line);
	err = err ?: put_varint(&w->dict, w->nodes.nr - w->nodes_done);
	for (uint32_t i = w->nodes_done; !err && i < w->nodes.nr; i++)
		err = put_varint(&w->dict, nodes[i].parent) ?: put_varint(&w->dict, nodes[i].loc);
	return err;
}

static int encode_rows(struct histfile_writer *w, uint32_t nr_values,
		       const struct histfile_row *rows, size_t nr)
{
	int err;

	buf__reset(&w->rows);
	err = put_varint(&w->rows, nr);
	for (size_t i = 0; !err && i < nr; i++) {
		const struct histfile_row *r = &rows[i];
		const uint32_t f[] = { r->node,	     r->pid,	   r->tid,     r->comm, r->exe,
				       r->exe_path, r->container, r->service, r->gpu_api, r->gpu };

		for (size_t k = 0; !err && k < sizeof(f) / sizeof(f[0]); k++)
			err = put_varint(&w->rows, f[k]);
		for (uint32_t k = 0; !err && k < nr_values; k++)
			err = put_varint(&w->rows, r->values[k]);
	}
	return err;
}

/* Appends in's deflated bytes to out; their count in *zlen. */
static int deflate_into(const struct buf *in, struct buf *out, uint32_t *zlen)
{
	uLongf n = compressBound(in->len);
	int err;

	if (in->len > HISTFILE_MAX_PART || n > HISTFILE_MAX_PART)
		return -EFBIG;
	err = buf__reserve(out, n);
	if (err)
		return err;
	if (compress2((Bytef *)out->data + out->len, &n, (const Bytef *)in->data, in->len, 6) !=
	    Z_OK)
		return -EIO;
	out->len += n;
	*zlen = (uint32_t)n;
	return 0;
}

int histfile_writer__record(struct histfile_writer *w, struct histfile_hdr *h,
			    const struct histfile_summary *summary, const struct histfile_row *rows,
			    size_t nr_rows, struct buf *out)
{
	size_t at = out->len, sum_at;
	uint8_t *p;
	int err;

	if (h->nr_values > HISTFILE_MAX_VALUES || h->nr_summary > HISTFILE_SUMMARY_MAX)
		return -EINVAL;
	err = encode_dict(w) ?: encode_rows(w, h->nr_values, rows, nr_rows);
	if (err)
		return err;
	h->dict_len = (uint32_t)w->dict.len;
	h->rows_len = (uint32_t)w->rows.len;
	err = buf__reserve(out, HISTFILE_HDR_SIZE + (size_t)h->nr_summary * HISTFILE_SUMMARY_SIZE);
	if (err)
		return err;
	memset(out->data + at, 0, HISTFILE_HDR_SIZE);
	out->len += HISTFILE_HDR_SIZE;
	sum_at = out->len;
	for (uint32_t i = 0; i < h->nr_summary; i++) {
		p = (uint8_t *)out->data + out->len;
		put32(p, summary[i].pid);
		memcpy(p + 4, summary[i].exe, sizeof(summary[i].exe));
		for (int k = 0; k < HISTFILE_MAX_VALUES; k++)
			put64(p + 20 + 8 * k, summary[i].values[k]);
		out->len += HISTFILE_SUMMARY_SIZE;
	}
	err = deflate_into(&w->dict, out, &h->dict_zlen) ?:
	      deflate_into(&w->rows, out, &h->rows_zlen);
	if (err) {
		out->len = at;
		return err;
	}
	p = (uint8_t *)out->data + at;
	put32(p, HISTFILE_MAGIC);
	memcpy(p + 16, h->type, sizeof(h->type));
	put64(p + 32, h->start_ns);
	put64(p + 40, h->end_ns);
	put64(p + 48, h->period);
	put32(p + 56, h->nr_values);
	put32(p + 60, h->nr_summary);
	put32(p + 64, h->dict_zlen);
	put32(p + 68, h->dict_len);
	put32(p + 72, h->rows_zlen);
	put32(p + 76, h->rows_len);
	/* The body's CRC, then the header's over the rest of it and the summary. */
	put32(p + 8, (uint32_t)crc32(0, (const Bytef *)out->data + sum_at +
						 (size_t)h->nr_summary * HISTFILE_SUMMARY_SIZE,
				     h->dict_zlen + h->rows_zlen));
	put32(p + 4, (uint32_t)crc32(crc32(0, p + 8, HISTFILE_HDR_SIZE - 8),
				     (const Bytef *)out->data + sum_at,
				     (size_t)h->nr_summary * HISTFILE_SUMMARY_SIZE));
	return 0;
}

void histfile_writer__commit(struct histfile_writer *w)
{
	w->strings_done = strtab__count(w->strings);
	w->locs_done = w->locs.nr;
	w->nodes_done = w->nodes.nr;
}

/* ---- reader ---- */

struct histfile_reader {
	char **strings;
	uint32_t nr_strings, cap_strings;
	struct histfile_loc *locs;
	uint32_t nr_locs, cap_locs;
	struct histfile_node *nodes;
	uint32_t nr_nodes, cap_nodes;
	struct histfile_row *rows;
	size_t nr_rows;
	uint32_t cap_rows;
	uint8_t *scratch;
	size_t scratch_size;
};

static char empty[] = "";

struct histfile_reader *histfile_reader__new(void)
{
	struct histfile_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->strings = calloc(64, sizeof(*r->strings));
	if (!r->strings) {
		free(r);
		return NULL;
	}
	r->cap_strings = 64;
	r->strings[0] = empty;
	r->nr_strings = 1;
	return r;
}

void histfile_reader__free(struct histfile_reader *r)
{
	if (!r)
		return;
	for (uint32_t i = 1; i < r->nr_strings; i++)
		free(r->strings[i]);
	free(r->strings);
	free(r->locs);
	free(r->nodes);
	free(r->rows);
	free(r->scratch);
	free(r);
}

int histfile__parse_hdr(const void *p, size_t n, struct histfile_hdr *h,
			struct histfile_summary summary[HISTFILE_SUMMARY_MAX])
{
	const uint8_t *b = p;
	size_t sum_size;

	if (n < HISTFILE_HDR_SIZE)
		return -ENODATA;
	if (get32(b) != HISTFILE_MAGIC)
		return -EBADMSG;
	memset(h, 0, sizeof(*h));
	memcpy(h->type, b + 16, sizeof(h->type) - 1);
	h->start_ns = get64(b + 32);
	h->end_ns = get64(b + 40);
	h->period = get64(b + 48);
	h->nr_values = get32(b + 56);
	h->nr_summary = get32(b + 60);
	h->dict_zlen = get32(b + 64);
	h->dict_len = get32(b + 68);
	h->rows_zlen = get32(b + 72);
	h->rows_len = get32(b + 76);
	if (h->nr_values > HISTFILE_MAX_VALUES || h->nr_summary > HISTFILE_SUMMARY_MAX ||
	    h->dict_zlen > HISTFILE_MAX_PART || h->dict_len > HISTFILE_MAX_PART ||
	    h->rows_zlen > HISTFILE_MAX_PART || h->rows_len > HISTFILE_MAX_PART)
		return -EBADMSG;
	sum_size = (size_t)h->nr_summary * HISTFILE_SUMMARY_SIZE;
	if (n < HISTFILE_HDR_SIZE + sum_size)
		return -ENODATA;
	if (get32(b + 4) != (uint32_t)crc32(crc32(0, b + 8, HISTFILE_HDR_SIZE - 8),
					    b + HISTFILE_HDR_SIZE, sum_size))
		return -EBADMSG;
	for (uint32_t i = 0; summary && i < h->nr_summary; i++) {
		const uint8_t *s = b + HISTFILE_HDR_SIZE + i * HISTFILE_SUMMARY_SIZE;

		summary[i].pid = get32(s);
		memcpy(summary[i].exe, s + 4, sizeof(summary[i].exe));
		summary[i].exe[sizeof(summary[i].exe) - 1] = 0;
		for (int k = 0; k < HISTFILE_MAX_VALUES; k++)
			summary[i].values[k] = get64(s + 20 + 8 * k);
	}
	h->body_crc = get32(b + 8);
	return 0;
}

static int inflate_part(struct histfile_reader *r, const uint8_t *z, uint32_t zlen, uint32_t len,
			struct cursor *c)
{
	uLongf n = len;

	if (len > r->scratch_size) {
		uint8_t *p = realloc(r->scratch, len);

		if (!p)
			return -ENOMEM;
		r->scratch = p;
		r->scratch_size = len;
	}
	if (uncompress(r->scratch, &n, z, zlen) != Z_OK || n != len)
		return -EBADMSG;
	*c = (struct cursor){ r->scratch, r->scratch + len, false };
	return 0;
}

static int decode_dict(struct histfile_reader *r, struct cursor *c)
{
	uint32_t n = get_count(c, 1);
	int err = array__reserve((void **)&r->strings, &r->cap_strings,
				 (uint64_t)r->nr_strings + n, sizeof(char *));

	for (uint32_t i = 0; !err && !c->bad && i < n; i++) {
		uint64_t len = get_varint(c);
		char *s;

		if (c->bad || len > (uint64_t)(c->end - c->p))
			return -EBADMSG;
		s = strndup((const char *)c->p, len);
		if (!s)
			return -ENOMEM;
		/* A NUL inside would make two strings of one: refused as damage. */
		if (strlen(s) != len) {
			free(s);
			return -EBADMSG;
		}
		c->p += len;
		r->strings[r->nr_strings++] = s;
	}
	n = get_count(c, 4);
	err = err ?: array__reserve((void **)&r->locs, &r->cap_locs,
					 (uint64_t)r->nr_locs + n, sizeof(*r->locs));
	for (uint32_t i = 0; !err && !c->bad && i < n; i++) {
		struct histfile_loc l = { (uint32_t)get_varint(c), (uint32_t)get_varint(c),
					  (uint32_t)get_varint(c), (uint32_t)get_varint(c) };

		if (l.mapping >= r->nr_strings || l.function >= r->nr_strings ||
		    l.file >= r->nr_strings)
			return -EBADMSG;
		r->locs[r->nr_locs++] = l;
	}
	n = get_count(c, 2);
	err = err ?: array__reserve((void **)&r->nodes, &r->cap_nodes,
					 (uint64_t)r->nr_nodes + n, sizeof(*r->nodes));
	for (uint32_t i = 0; !err && !c->bad && i < n; i++) {
		struct histfile_node nd = { (uint32_t)get_varint(c), (uint32_t)get_varint(c) };

		/* A parent is an earlier node: no cycle can be read. */
		if (nd.parent > r->nr_nodes || nd.loc >= r->nr_locs)
			return -EBADMSG;
		r->nodes[r->nr_nodes++] = nd;
	}
	if (err)
		return err;
	return c->bad || c->p != c->end ? -EBADMSG : 0;
}

static int decode_rows(struct histfile_reader *r, uint32_t nr_values, struct cursor *c)
{
	uint32_t n = get_count(c, 10 + nr_values);
	int err = array__reserve((void **)&r->rows, &r->cap_rows, n, sizeof(*r->rows));

	if (err)
		return err;
	r->nr_rows = 0;
	for (uint32_t i = 0; !c->bad && i < n; i++) {
		struct histfile_row *row = &r->rows[r->nr_rows];
		uint32_t *f[] = { &row->node, &row->pid,      &row->tid,       &row->comm,
				  &row->exe,  &row->exe_path, &row->container, &row->service,
				  &row->gpu_api, &row->gpu };

		memset(row, 0, sizeof(*row));
		for (size_t k = 0; k < sizeof(f) / sizeof(f[0]); k++)
			*f[k] = (uint32_t)get_varint(c);
		for (uint32_t k = 0; k < nr_values; k++)
			row->values[k] = get_varint(c);
		if (row->node > r->nr_nodes || row->comm >= r->nr_strings ||
		    row->exe >= r->nr_strings || row->exe_path >= r->nr_strings ||
		    row->container >= r->nr_strings || row->service >= r->nr_strings)
			return -EBADMSG;
		r->nr_rows++;
	}
	return c->bad || c->p != c->end ? -EBADMSG : 0;
}

int histfile_reader__body(struct histfile_reader *r, const struct histfile_hdr *h,
			  const void *body, bool rows)
{
	const uint8_t *b = body;
	struct cursor c;
	int err;

	r->nr_rows = 0;
	if ((uint32_t)crc32(0, b, h->dict_zlen + h->rows_zlen) != h->body_crc)
		return -EBADMSG;
	err = inflate_part(r, b, h->dict_zlen, h->dict_len, &c) ?: decode_dict(r, &c);
	if (!err && rows)
		err = inflate_part(r, b + h->dict_zlen, h->rows_zlen, h->rows_len, &c) ?:
		      decode_rows(r, h->nr_values, &c);
	return err;
}

const struct histfile_row *histfile_reader__rows(const struct histfile_reader *r, size_t *nr)
{
	*nr = r->nr_rows;
	return r->rows;
}

const char *histfile_reader__str(const struct histfile_reader *r, uint32_t id)
{
	return id < r->nr_strings ? r->strings[id] : NULL;
}

bool histfile_reader__loc(const struct histfile_reader *r, uint32_t id, struct histfile_loc *out)
{
	if (id >= r->nr_locs)
		return false;
	*out = r->locs[id];
	return true;
}

bool histfile_reader__node(const struct histfile_reader *r, uint32_t id, struct histfile_node *out)
{
	if (id >= r->nr_nodes)
		return false;
	*out = r->nodes[id];
	return true;
}
