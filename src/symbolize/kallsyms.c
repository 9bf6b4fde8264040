// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "kallsyms: " fmt

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/hex.h"
#include "symbolize/kallsyms.h"

#define NO_MODULE UINT32_MAX

/*
 * The kernel reports no symbol sizes, so a symbol runs to the next one. The last one gets a
 * bounded extent rather than the rest of the address space.
 */
#define LAST_SYMBOL_MAX 4096

struct ksym {
	uint64_t addr;
	uint32_t name;	 /* offset into kallsyms.blob */
	uint32_t module; /* offset into kallsyms.blob, or NO_MODULE */
};

struct kallsyms {
	struct ksym *syms;
	size_t nr_syms;
	char *blob;
	size_t blob_size;
};

/* procfs files report size 0, so read until EOF into a buffer that grows. */
static int file__read_all(const char *path, char **out, size_t *out_len)
{
	size_t len = 0, alloc = 4 << 20;
	char *buf = NULL;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	buf = malloc(alloc);
	if (!buf) {
		err = -ENOMEM;
		goto out_close;
	}
	for (;;) {
		ssize_t n;

		/* Keep one byte for the terminating NUL. */
		if (alloc - len < 2) {
			char *tmp = realloc(buf, alloc * 2);

			if (!tmp) {
				err = -ENOMEM;
				goto out_free;
			}
			buf = tmp;
			alloc *= 2;
		}
		n = read(fd, buf + len, alloc - len - 1);
		if (n < 0) {
			err = -errno;
			if (err == -EINTR)
				continue;
			goto out_free;
		}
		if (!n)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	close(fd);
	*out = buf;
	*out_len = len;
	return 0;

out_free:
	free(buf);
out_close:
	close(fd);
	return err;
}

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

/*
 * Orders by address; among aliases, global text beats local beats weak, then file order.
 * Name offsets grow in file order, so they break ties without storing the line number. The
 * rank is carried in the top bits of module while sorting, see kallsyms__parse().
 */
static int ksym__cmp(const void *pa, const void *pb)
{
	const struct ksym *a = pa, *b = pb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if (a->module >> 30 != b->module >> 30)
		return (a->module >> 30) < (b->module >> 30) ? -1 : 1;
	return a->name < b->name ? -1 : a->name > b->name;
}

struct ksyms {
	struct ksym *v;
	size_t nr, alloc;
};

static int ksyms__add(struct ksyms *s, const struct ksym *sym)
{
	if (s->nr == s->alloc) {
		size_t alloc = s->alloc ? 2 * s->alloc : 65536;
		struct ksym *v = realloc(s->v, alloc * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->alloc = alloc;
	}
	s->v[s->nr++] = *sym;
	return 0;
}

/*
 * Parses buf in place: each kept name (and each module name, once per run of lines from the
 * same module) is moved down to the write cursor, which never overtakes the line being read
 * because the address and type columns dropped are longer than the NUL terminators added.
 * buf then is the string blob, without one malloc a name. *blob_len gets its used length.
 */
static int kallsyms__parse(char *buf, size_t len, struct ksyms *s, size_t *blob_len, bool *all_zero)
{
	char *r = buf, *end = buf + len, *w = buf;
	uint32_t cur_mod = NO_MODULE;
	size_t cur_mod_len = 0;
	int err;

	*all_zero = true;
	while (r < end) {
		char *line = r, *eol = memchr(r, '\n', (size_t)(end - r));
		char *p = line, *name, *name_end, *mod = NULL, *mod_end = NULL;
		uint64_t addr = 0;
		struct ksym sym;
		int rank, digits = 0;

		if (!eol)
			eol = end;
		r = eol + 1;
		for (int v; p < eol && (v = hex__digit(*p)) >= 0; p++, digits++)
			addr = addr << 4 | (uint64_t)v;
		if (!digits || digits > 16 || p + 3 > eol || p[0] != ' ' || p[2] != ' ')
			continue;
		if (addr)
			*all_zero = false;
		rank = ksym_type__rank(p[1]);
		if (rank < 0)
			continue;
		name = p + 3;
		name_end = name;
		while (name_end < eol && *name_end != '\t' && *name_end != ' ')
			name_end++;
		if (name_end == name)
			continue;
		if (name_end < eol) {
			mod = memchr(name_end, '[', (size_t)(eol - name_end));
			mod_end = mod ? memchr(mod, ']', (size_t)(eol - mod)) : NULL;
			if (mod && mod_end)
				mod++;
			else
				mod = NULL;
		}

		sym.addr = addr;
		sym.name = (uint32_t)(w - buf);
		memmove(w, name, (size_t)(name_end - name));
		w += name_end - name;
		*w++ = '\0';
		if (!mod) {
			sym.module = NO_MODULE;
		} else {
			size_t mod_len = (size_t)(mod_end - mod);

			/* Modules' symbols come in runs: store each run's name once. */
			if (cur_mod == NO_MODULE || cur_mod_len != mod_len ||
			    memcmp(buf + cur_mod, mod, mod_len)) {
				cur_mod = (uint32_t)(w - buf);
				cur_mod_len = mod_len;
				memmove(w, mod, mod_len);
				w += mod_len;
				*w++ = '\0';
			}
			sym.module = cur_mod;
		}
		if (sym.name >= 1u << 30 ||
		    (sym.module != NO_MODULE && sym.module >= (1u << 30) - 1))
			return -EFBIG;
		/* Park the rank in module's spare top bits for the sort. */
		if (sym.module == NO_MODULE)
			sym.module = (uint32_t)rank << 30 | ((1u << 30) - 1);
		else
			sym.module |= (uint32_t)rank << 30;
		err = ksyms__add(s, &sym);
		if (err)
			return err;
	}
	*blob_len = (size_t)(w - buf);
	return 0;
}

/* Sorts, drops aliases (the best name sorted first) and strips the ranks again. */
static void ksyms__finish(struct ksyms *s)
{
	size_t kept = 0;

	qsort(s->v, s->nr, sizeof(*s->v), ksym__cmp);
	for (size_t i = 0; i < s->nr; i++) {
		struct ksym sym = s->v[i];
		uint32_t mod = sym.module & ((1u << 30) - 1);

		if (kept && s->v[kept - 1].addr == sym.addr)
			continue;
		sym.module = mod == (1u << 30) - 1 ? NO_MODULE : mod;
		s->v[kept++] = sym;
	}
	s->nr = kept;
}

int kallsyms__load(const char *path, struct kallsyms **out)
{
	struct ksyms syms = {};
	struct kallsyms *ks;
	size_t len = 0, blob_len = 0;
	bool all_zero;
	char *buf = NULL;
	int err;

	if (!path)
		path = "/proc/kallsyms";
	err = file__read_all(path, &buf, &len);
	if (err) {
		/* The caller decides how loud a kernel without symbols is. */
		pr_debug("%s: %s\n", path, strerror(-err));
		return err;
	}
	err = kallsyms__parse(buf, len, &syms, &blob_len, &all_zero);
	if (err)
		goto out_free;
	if (all_zero) {
		/* kptr_restrict hides addresses from readers without CAP_SYSLOG. */
		err = -EPERM;
		goto out_free;
	}
	if (!syms.nr) {
		err = -ENODATA;
		goto out_free;
	}
	ksyms__finish(&syms);
	ks = calloc(1, sizeof(*ks));
	if (!ks) {
		err = -ENOMEM;
		goto out_free;
	}
	/* Shrinking never fails in practice, and the old block stays valid if it does. */
	ks->blob = realloc(buf, blob_len ? blob_len : 1) ?: buf;
	ks->blob_size = blob_len;
	ks->syms = realloc(syms.v, syms.nr * sizeof(*syms.v)) ?: syms.v;
	ks->nr_syms = syms.nr;
	*out = ks;
	return 0;

out_free:
	free(syms.v);
	free(buf);
	return err;
}

void kallsyms__free(struct kallsyms *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->blob);
	free(ks);
}

const char *kallsyms__lookup(const struct kallsyms *ks, uint64_t addr, uint64_t *sym_start,
			     const char **module)
{
	size_t lo = 0, hi = ks->nr_syms;
	const struct ksym *sym;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	sym = &ks->syms[lo - 1];
	if (lo == ks->nr_syms && addr - sym->addr >= LAST_SYMBOL_MAX)
		return NULL;
	if (sym_start)
		*sym_start = sym->addr;
	if (module)
		*module = sym->module == NO_MODULE ? NULL : ks->blob + sym->module;
	return ks->blob + sym->name;
}

size_t kallsyms__nr_symbols(const struct kallsyms *ks)
{
	return ks->nr_syms;
}

size_t kallsyms__bytes(const struct kallsyms *ks)
{
	return sizeof(*ks) + ks->nr_syms * sizeof(struct ksym) + ks->blob_size;
}
