// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "kallsyms: " fmt

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "lib/buf.h"
#include "lib/hex.h"
#include "lib/log.h"
#include "symbolize/kallsyms.h"

/*
 * A kernel of ~120,000 text symbols has ~3 MiB of names, which a profile needs a few hundred
 * of. So the table is kept small (1.8 MiB rather than 5):
 * - each symbol is 8 bytes: its address as an offset from KSYM_BASE, and its line's index
 *   among the kept lines of the file;
 * - the names are compressed (zlib) in blocks of KS_BLOCK lines in file order, 4:1; a lookup
 *   inflates its block (about 1 KiB, microseconds), and the last block is kept for the next;
 * - module names are runs of line indexes (the file lists a module's symbols together).
 */

/* x86-64 puts the kernel's text, its modules, BPF programs and trampolines in the top 2 GiB. */
#define KSYM_BASE 0xffffffff80000000ull
#define KS_BLOCK  32
/* Line indexes share a word with the sort's rank (ksym__cmp). */
#define KS_IDX_MASK ((1u << 30) - 1)
#define NO_MODULE   UINT32_MAX

/*
 * The kernel reports no symbol sizes, so a symbol runs to the next one. The last one gets a
 * bounded extent rather than the rest of the address space.
 */
#define LAST_SYMBOL_MAX 4096

struct ksym {
	uint32_t off; /* address - KSYM_BASE */
	uint32_t idx; /* the line's index among kept lines; while sorting, the rank above it */
};

/* Lines [first, next run's first) are of module name (an offset into mods), or the core's. */
struct kmod_run {
	uint32_t first;
	uint32_t name;
};

struct kallsyms {
	struct ksym *syms;
	size_t nr_syms;
	uint32_t *block_off; /* nr_blocks + 1 offsets into z */
	uint32_t *block_raw; /* each block's inflated size */
	size_t nr_blocks;
	uint8_t *z;
	struct kmod_run *runs;
	size_t nr_runs;
	char *mods;
	size_t mods_size;
	/* The block inflated last, and its names; lookups are serialized by the caller. */
	size_t cur_block;
	char *cur_names;
	size_t cur_cap;
};

/* Text symbols: local and global code, and weak symbols (which kallsyms shows for code). */
static int ksym_type__rank(char type)
{
	switch (type) {
	case 'T':
		return 0;
	case 't':
		return 1;
	case 'W':
		return 2;
	case 'w':
		return 3;
	default:
		return -1;
	}
}

/* Orders by address; among aliases, global text beats local beats weak, then file order. */
static int ksym__cmp(const void *pa, const void *pb)
{
	const struct ksym *a = pa, *b = pb;

	if (a->off != b->off)
		return a->off < b->off ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

struct kparse {
	struct buf syms;  /* struct ksym */
	struct buf block; /* the names of the block being filled */
	struct buf z;
	struct buf block_off, block_raw; /* uint32_t each */
	struct buf runs;		 /* struct kmod_run */
	struct buf mods;
	z_stream zs; /* one deflate state for every block: its setup costs more than a block */
	bool zs_ready;
	uint32_t lines; /* kept so far */
	size_t below_base;
	bool all_zero;
};

static int kparse__u32(struct buf *b, uint32_t v)
{
	return buf__append(b, &v, sizeof(v));
}

static int kparse__flush_block(struct kparse *ps)
{
	uLong bound;
	int err;

	if (!ps->block.len)
		return 0;
	if (!ps->zs_ready) {
		/* A block is about 1 KiB: a window and hash that size make each reset cheap. */
		if (deflateInit2(&ps->zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 10, 2,
				 Z_DEFAULT_STRATEGY) != Z_OK)
			return -ENOMEM;
		ps->zs_ready = true;
	} else if (deflateReset(&ps->zs) != Z_OK) {
		return -EINVAL;
	}
	bound = deflateBound(&ps->zs, ps->block.len);
	if (ps->z.len > UINT32_MAX - bound)
		return -EFBIG;
	err = buf__reserve(&ps->z, bound);
	if (err)
		return err;
	ps->zs.next_in = (Bytef *)ps->block.data;
	ps->zs.avail_in = (uInt)ps->block.len;
	ps->zs.next_out = (Bytef *)ps->z.data + ps->z.len;
	ps->zs.avail_out = (uInt)bound;
	if (deflate(&ps->zs, Z_FINISH) != Z_STREAM_END)
		return -EINVAL;
	err = kparse__u32(&ps->block_raw, (uint32_t)ps->block.len);
	if (!err)
		err = kparse__u32(&ps->block_off, (uint32_t)ps->z.len);
	ps->z.len += bound - ps->zs.avail_out;
	ps->block.len = 0;
	return err;
}

/* The module of the line being kept: a new run when it is not the last run's. */
static int kparse__module(struct kparse *ps, const char *mod, size_t mod_len)
{
	struct kmod_run run = {.first = ps->lines, .name = NO_MODULE};
	const struct kmod_run *last = NULL;
	const char *last_name = NULL;
	int err;

	if (ps->runs.len) {
		last = (const struct kmod_run *)(ps->runs.data + ps->runs.len) - 1;
		last_name = last->name == NO_MODULE ? NULL : ps->mods.data + last->name;
	}
	if (last &&
	    (mod ? last_name && strlen(last_name) == mod_len && !memcmp(last_name, mod, mod_len)
		 : !last_name))
		return 0;
	if (mod) {
		run.name = (uint32_t)ps->mods.len;
		err = buf__append(&ps->mods, mod, mod_len);
		if (!err)
			err = buf__append(&ps->mods, "", 1);
		if (err)
			return err;
	}
	return buf__append(&ps->runs, &run, sizeof(run));
}

static int kparse__keep(struct kparse *ps, uint64_t addr, int rank, const char *name,
			size_t name_len, const char *mod, size_t mod_len)
{
	int err;

	if (ps->lines >= KS_IDX_MASK)
		return -EFBIG;
	if (addr < KSYM_BASE) {
		/* Not x86-64 kernel text: the name keeps its block slot, the symbol is dropped. */
		ps->below_base++;
	} else {
		/* The rank rides above the index until ksyms__finish. */
		struct ksym sym = {
		    .off = (uint32_t)(addr - KSYM_BASE),
		    .idx = (uint32_t)rank << 30 | ps->lines,
		};

		err = buf__append(&ps->syms, &sym, sizeof(sym));
		if (err)
			return err;
	}
	err = kparse__module(ps, mod, mod_len);
	if (!err)
		err = buf__append(&ps->block, name, name_len);
	if (!err)
		err = buf__append(&ps->block, "", 1);
	if (err)
		return err;
	if (++ps->lines % KS_BLOCK == 0)
		return kparse__flush_block(ps);
	return 0;
}

/* One line, "ADDR TYPE NAME[\t[MODULE]]", without its newline. */
static int kparse__line(struct kparse *ps, const char *line, const char *eol)
{
	const char *p = line, *name, *name_end, *mod = NULL, *mod_end = NULL;
	uint64_t addr = 0;
	int rank, digits = 0;

	for (int v; p < eol && (v = hex__digit(*p)) >= 0; p++, digits++)
		addr = addr << 4 | (uint64_t)v;
	if (!digits || digits > 16 || p + 3 > eol || p[0] != ' ' || p[2] != ' ')
		return 0;
	if (addr)
		ps->all_zero = false;
	rank = ksym_type__rank(p[1]);
	if (rank < 0)
		return 0;
	name = p + 3;
	name_end = name;
	while (name_end < eol && *name_end != '\t' && *name_end != ' ')
		name_end++;
	if (name_end == name)
		return 0;
	if (name_end < eol) {
		mod = memchr(name_end, '[', (size_t)(eol - name_end));
		mod_end = mod ? memchr(mod, ']', (size_t)(eol - mod)) : NULL;
		if (mod && mod_end)
			mod++;
		else
			mod = NULL;
	}
	return kparse__keep(ps, addr, rank, name, (size_t)(name_end - name), mod,
			    mod ? (size_t)(mod_end - mod) : 0);
}

/*
 * Reads the file a buffer at a time: the whole file (about 8 MiB of text for 200,000 symbols)
 * is never held. procfs files report size 0, so this reads until EOF. A line longer than the
 * buffer is not a symbol's: it is skipped.
 */
#define KALLSYMS_READ_BUF (64 << 10)

static int kparse__file(struct kparse *ps, int fd)
{
	char *buf = malloc(KALLSYMS_READ_BUF);
	size_t have = 0;
	bool skipping = false;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n = read(fd, buf + have, KALLSYMS_READ_BUF - have);
		char *r = buf, *end, *eol;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		end = buf + have + n;
		while ((eol = memchr(r, '\n', (size_t)(end - r)))) {
			if (!skipping)
				err = kparse__line(ps, r, eol);
			skipping = false;
			if (err)
				goto out;
			r = eol + 1;
		}
		if (!n) {
			if (r < end && !skipping)
				err = kparse__line(ps, r, end);
			break;
		}
		have = (size_t)(end - r);
		if (have == KALLSYMS_READ_BUF) {
			skipping = true;
			have = 0;
		} else {
			memmove(buf, r, have);
		}
	}
out:
	free(buf);
	return err ? err : kparse__flush_block(ps);
}

/* Sorts, drops aliases (the best name sorted first) and strips the ranks again. */
static size_t ksyms__finish(struct ksym *v, size_t nr)
{
	size_t kept = 0;

	qsort(v, nr, sizeof(*v), ksym__cmp);
	for (size_t i = 0; i < nr; i++) {
		if (kept && v[kept - 1].off == v[i].off)
			continue;
		v[kept] = v[i];
		v[kept++].idx &= KS_IDX_MASK;
	}
	return kept;
}

static void kparse__free(struct kparse *ps)
{
	if (ps->zs_ready)
		deflateEnd(&ps->zs);
	buf__free(&ps->syms);
	buf__free(&ps->block);
	buf__free(&ps->z);
	buf__free(&ps->block_off);
	buf__free(&ps->block_raw);
	buf__free(&ps->runs);
	buf__free(&ps->mods);
}

/* A block moved out of the parse, shrunk to its length (the old one stays if that fails). */
static void *shrunk(struct buf *b)
{
	void *p = realloc(b->data, b->len ? b->len : 1) ?: b->data;

	*b = (struct buf){0};
	return p;
}

int kallsyms__load(const char *path, struct kallsyms **out)
{
	struct kparse ps = {.all_zero = true};
	struct kallsyms *ks;
	size_t nr;
	int fd, err;

	if (!path)
		path = "/proc/kallsyms";
	fd = open(path, O_RDONLY | O_CLOEXEC);
	err = fd < 0 ? -errno : kparse__file(&ps, fd);
	if (fd >= 0)
		close(fd);
	if (!err)
		err = kparse__u32(&ps.block_off, (uint32_t)ps.z.len);
	if (err) {
		/* The caller decides how loud a kernel without symbols is. */
		pr_debug("%s: %s\n", path, strerror(-err));
		goto out_free;
	}
	if (ps.all_zero) {
		/* kptr_restrict hides addresses from readers without CAP_SYSLOG. */
		err = -EPERM;
		goto out_free;
	}
	nr = ps.syms.len / sizeof(struct ksym);
	if (!nr) {
		err = -ENODATA;
		goto out_free;
	}
	if (ps.below_base)
		pr_debug("%zu symbols below %#llx left out\n", ps.below_base, KSYM_BASE);
	ks = calloc(1, sizeof(*ks));
	if (!ks) {
		err = -ENOMEM;
		goto out_free;
	}
	ks->nr_syms = ksyms__finish((struct ksym *)ps.syms.data, nr);
	ps.syms.len = ks->nr_syms * sizeof(struct ksym);
	ks->syms = shrunk(&ps.syms);
	ks->nr_blocks = ps.block_raw.len / sizeof(uint32_t);
	ks->block_off = shrunk(&ps.block_off);
	ks->block_raw = shrunk(&ps.block_raw);
	ks->z = (uint8_t *)shrunk(&ps.z);
	ks->nr_runs = ps.runs.len / sizeof(struct kmod_run);
	ks->runs = shrunk(&ps.runs);
	ks->mods_size = ps.mods.len;
	ks->mods = shrunk(&ps.mods);
	ks->cur_block = SIZE_MAX;
	kparse__free(&ps);
	*out = ks;
	return 0;

out_free:
	kparse__free(&ps);
	return err;
}

void kallsyms__free(struct kallsyms *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->block_off);
	free(ks->block_raw);
	free(ks->z);
	free(ks->runs);
	free(ks->mods);
	free(ks->cur_names);
	free(ks);
}

/* The name of kept line idx, inflating its block unless it is the last one inflated. */
static const char *kallsyms__name(struct kallsyms *ks, uint32_t idx)
{
	size_t b = idx / KS_BLOCK;
	const char *p, *end;

	if (b >= ks->nr_blocks)
		return NULL;
	if (b != ks->cur_block) {
		uLongf raw = ks->block_raw[b];

		if (raw > ks->cur_cap) {
			char *names = realloc(ks->cur_names, raw);

			if (!names)
				return NULL;
			ks->cur_names = names;
			ks->cur_cap = raw;
		}
		ks->cur_block = SIZE_MAX;
		if (uncompress((Bytef *)ks->cur_names, &raw, ks->z + ks->block_off[b],
			       ks->block_off[b + 1] - ks->block_off[b]) != Z_OK ||
		    raw != ks->block_raw[b])
			return NULL;
		ks->cur_block = b;
	}
	p = ks->cur_names;
	end = p + ks->block_raw[b];
	for (uint32_t k = idx % KS_BLOCK; k && p < end; k--)
		p += strnlen(p, (size_t)(end - p)) + 1;
	return p < end ? p : NULL;
}

static const char *kallsyms__module(const struct kallsyms *ks, uint32_t idx)
{
	size_t lo = 0, hi = ks->nr_runs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->runs[mid].first <= idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || ks->runs[lo - 1].name == NO_MODULE)
		return NULL;
	return ks->mods + ks->runs[lo - 1].name;
}

const char *kallsyms__lookup(struct kallsyms *ks, uint64_t addr, uint64_t *sym_start,
			     const char **module)
{
	size_t lo = 0, hi = ks->nr_syms;
	const struct ksym *sym;
	uint64_t off;

	if (addr < KSYM_BASE)
		return NULL;
	off = addr - KSYM_BASE;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->syms[mid].off <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	sym = &ks->syms[lo - 1];
	if (lo == ks->nr_syms && off - sym->off >= LAST_SYMBOL_MAX)
		return NULL;
	if (sym_start)
		*sym_start = KSYM_BASE + sym->off;
	if (module)
		*module = kallsyms__module(ks, sym->idx);
	return kallsyms__name(ks, sym->idx);
}

size_t kallsyms__nr_symbols(const struct kallsyms *ks)
{
	return ks->nr_syms;
}

size_t kallsyms__bytes(const struct kallsyms *ks)
{
	return sizeof(*ks) + ks->nr_syms * sizeof(struct ksym) +
	       (2 * ks->nr_blocks + 1) * sizeof(uint32_t) + ks->block_off[ks->nr_blocks] +
	       ks->nr_runs * sizeof(struct kmod_run) + ks->mods_size + ks->cur_cap;
}
