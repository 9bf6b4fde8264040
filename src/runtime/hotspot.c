// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "hotspot: " fmt

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "lib/log.h"
#include "lib/procmaps.h"
#include "lib/procmem.h"
#include "symbolize/elf.h"
#include "runtime/hotspot.h"

/*
 * The exported variables that describe gHotSpotVMStructs (fields: type, name, offset or, for a
 * static one, address) and gHotSpotVMTypes (types: name, size).
 */
enum {
	SYM_STRUCTS,	  /* VMStructEntry *: the array */
	SYM_TYPE_NAME,	  /* offset of const char *typeName in an entry (NULL ends the array) */
	SYM_FIELD_NAME,	  /* offset of const char *fieldName */
	SYM_OFFSET,	  /* offset of uint64_t offset (of the field in its type) */
	SYM_IS_STATIC,	  /* offset of int32_t isStatic */
	SYM_ADDRESS,	  /* offset of void *address (of a static field) */
	SYM_STRIDE,	  /* the size of an entry */
	SYM_TYPES,	  /* VMTypeEntry *: the array */
	SYM_TYPES_NAME,	  /* offset of const char *typeName (NULL ends the array) */
	SYM_TYPES_SIZE,	  /* offset of uint64_t size */
	SYM_TYPES_STRIDE, /* the size of an entry */
	NR_SYMS,
};
static const char *const sym_names[NR_SYMS] = {
    [SYM_STRUCTS] = "gHotSpotVMStructs",
    [SYM_TYPE_NAME] = "gHotSpotVMStructEntryTypeNameOffset",
    [SYM_FIELD_NAME] = "gHotSpotVMStructEntryFieldNameOffset",
    [SYM_OFFSET] = "gHotSpotVMStructEntryOffsetOffset",
    [SYM_IS_STATIC] = "gHotSpotVMStructEntryIsStaticOffset",
    [SYM_ADDRESS] = "gHotSpotVMStructEntryAddressOffset",
    [SYM_STRIDE] = "gHotSpotVMStructEntryArrayStride",
    [SYM_TYPES] = "gHotSpotVMTypes",
    [SYM_TYPES_NAME] = "gHotSpotVMTypeEntryTypeNameOffset",
    [SYM_TYPES_SIZE] = "gHotSpotVMTypeEntrySizeOffset",
    [SYM_TYPES_STRIDE] = "gHotSpotVMTypeEntryArrayStride",
};

/*
 * What is wanted of the tables: (type, field) of gHotSpotVMStructs (field NULL: the type's size,
 * of gHotSpotVMTypes), where it goes in struct hotspot_offsets, and whether a class's name
 * needs it (without one of those, nothing is named; without the others, methods are not).
 */
enum want_kind { W_OFFSET, W_STATIC, W_SIZE };
static const struct {
	const char *type, *field;
	enum want_kind kind;
	size_t at;
	bool for_class;
} wants[] = {
    {"Klass", "_name", W_OFFSET, offsetof(struct hotspot_offsets, klass_name), true},
    {"Symbol", "_length", W_OFFSET, offsetof(struct hotspot_offsets, symbol_length), true},
    {"Symbol", "_body", W_OFFSET, offsetof(struct hotspot_offsets, symbol_body), true},
    {"Method", "_constMethod", W_OFFSET, offsetof(struct hotspot_offsets, method_const), false},
    {"ConstMethod", "_constants", W_OFFSET, offsetof(struct hotspot_offsets, const_pool), false},
    {"ConstMethod", "_name_index", W_OFFSET, offsetof(struct hotspot_offsets, name_index), false},
    {"ConstantPool", "_pool_holder", W_OFFSET, offsetof(struct hotspot_offsets, pool_holder),
     false},
    {"ConstantPool", "_length", W_OFFSET, offsetof(struct hotspot_offsets, pool_length), false},
    {"ConstantPool", NULL, W_SIZE, offsetof(struct hotspot_offsets, pool_size), false},
    {"AbstractInterpreter", "_code", W_STATIC, offsetof(struct hotspot_offsets, interp_code),
     false},
    {"StubQueue", "_stub_buffer", W_OFFSET, offsetof(struct hotspot_offsets, stubq_buffer), false},
    {"StubQueue", "_buffer_limit", W_OFFSET, offsetof(struct hotspot_offsets, stubq_limit), false},
};
#define NR_WANTS (sizeof(wants) / sizeof(wants[0]))

/* JDK 17 has ~2,000 entries, each release a few more: a bound against a garbage array. */
#define MAX_ENTRIES 20000
#define MAX_STRIDE  256
/* Entries read at once. */
#define CHUNK 64
/* Longer than any type or field name wanted, with room to tell "Klass" from "KlassXyz". */
#define NAME_MAX_READ 24

struct syms {
	uint64_t vaddr[NR_SYMS];
};

static int match_sym(const struct elf_symbol *s, void *ctx)
{
	struct syms *q = ctx;

	if (s->sym.st_shndx == SHN_UNDEF || !s->sym.st_value)
		return 0;
	for (int k = 0; k < NR_SYMS; k++)
		if (!q->vaddr[k] && !strcmp(s->name, sym_names[k]))
			q->vaddr[k] = s->sym.st_value;
	return 0;
}

/* A NUL-terminated string of at most n - 1 bytes at addr: whether it equals want. */
static bool str_at(int mem_fd, uint64_t addr, const char *want)
{
	char buf[NAME_MAX_READ + 1];
	size_t len = strlen(want) + 1;

	if (!addr || len > sizeof(buf) || procmem__read(mem_fd, addr, buf, len))
		return false;
	return !memcmp(buf, want, len);
}

static int read_u64(int mem_fd, uint64_t addr, uint64_t *v)
{
	return procmem__read(mem_fd, addr, v, sizeof(*v));
}

/* One table's layout: where its array is, its stride, and its entries' name offsets. */
struct table {
	uint64_t addr, stride;
	uint64_t type_name, field_name; /* field_name ~0: a table of types */
};

/* One entry (its bytes at ent) against every want of its table not found yet. */
static void match_entry(int mem_fd, const uint64_t *lay, const struct table *t, const uint8_t *ent,
			uint64_t type, struct hotspot_offsets *out, bool *found, size_t *nr_found)
{
	bool types = t->field_name == ~0ULL;
	uint64_t field = 0, value;
	int32_t is_static = 0;

	if (types) {
		memcpy(&value, ent + lay[SYM_TYPES_SIZE], sizeof(value));
	} else {
		memcpy(&field, ent + t->field_name, sizeof(field));
		memcpy(&is_static, ent + lay[SYM_IS_STATIC], sizeof(is_static));
		memcpy(&value, ent + (is_static ? lay[SYM_ADDRESS] : lay[SYM_OFFSET]),
		       sizeof(value));
	}
	for (size_t k = 0; k < NR_WANTS; k++) {
		if (found[k] || (wants[k].kind == W_SIZE) != types ||
		    (wants[k].kind == W_STATIC) != !!is_static)
			continue;
		if (!types && !str_at(mem_fd, field, wants[k].field))
			continue;
		if (!str_at(mem_fd, type, wants[k].type))
			continue;
		if (wants[k].kind == W_STATIC)
			*(uint64_t *)((char *)out + wants[k].at) = value;
		else if (value <= UINT16_MAX)
			*(uint32_t *)((char *)out + wants[k].at) = (uint32_t)value;
		else
			continue;
		found[k] = true;
		(*nr_found)++;
	}
}

/* Reads one table's entries until its end, every want found, or the bound. */
static int read_table(int mem_fd, const uint64_t *lay, const struct table *t,
		      struct hotspot_offsets *out, bool *found, size_t *nr_found)
{
	uint8_t chunk[CHUNK * MAX_STRIDE];
	int err;

	for (uint32_t i = 0; i < MAX_ENTRIES && *nr_found < NR_WANTS; i += CHUNK) {
		uint64_t at = t->addr + i * t->stride;
		/* The array's last chunk may run past its mapping: then one entry at a time. */
		bool whole = !procmem__read(mem_fd, at, chunk, CHUNK * t->stride);

		for (uint32_t j = 0; j < CHUNK; j++) {
			const uint8_t *ent = chunk + j * t->stride;
			uint64_t type;

			if (!whole) {
				err = procmem__read(mem_fd, at + j * t->stride,
						    chunk + j * t->stride, t->stride);
				if (err)
					return err;
			}
			memcpy(&type, ent + t->type_name, sizeof(type));
			if (!type)
				return 0; /* the end */
			match_entry(mem_fd, lay, t, ent, type, out, found, nr_found);
		}
	}
	return 0;
}

int hotspot__offsets(int mem_fd, int fd, const struct map_entry *e, struct hotspot_offsets *out)
{
	uint64_t base, lay[NR_SYMS];
	struct syms q = {0};
	bool found[NR_WANTS] = {false};
	size_t nr_found = 0;
	struct table t;
	Elf *elf;
	int err;

	memset(out, 0, sizeof(*out));
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return -ENOEXEC;
	elf__for_each_symbol(elf, ELF_DYNSYM, match_sym, &q);
	err = elf__load_base(elf, e->start, e->pgoff, &base);
	elf_end(elf);
	if (err)
		return err;
	for (int k = 0; k < NR_SYMS; k++) {
		if (!q.vaddr[k])
			return -ENOENT;
		err = read_u64(mem_fd, base + q.vaddr[k], &lay[k]);
		if (err)
			return err;
	}
	if (!lay[SYM_STRUCTS] || lay[SYM_STRIDE] < 32 || lay[SYM_STRIDE] > MAX_STRIDE ||
	    lay[SYM_TYPE_NAME] + 8 > lay[SYM_STRIDE] || lay[SYM_FIELD_NAME] + 8 > lay[SYM_STRIDE] ||
	    lay[SYM_OFFSET] + 8 > lay[SYM_STRIDE] || lay[SYM_IS_STATIC] + 4 > lay[SYM_STRIDE] ||
	    lay[SYM_ADDRESS] + 8 > lay[SYM_STRIDE] || !lay[SYM_TYPES] ||
	    lay[SYM_TYPES_STRIDE] < 16 || lay[SYM_TYPES_STRIDE] > MAX_STRIDE ||
	    lay[SYM_TYPES_NAME] + 8 > lay[SYM_TYPES_STRIDE] ||
	    lay[SYM_TYPES_SIZE] + 8 > lay[SYM_TYPES_STRIDE])
		return -EPROTO;
	t = (struct table){lay[SYM_STRUCTS], lay[SYM_STRIDE], lay[SYM_TYPE_NAME],
			   lay[SYM_FIELD_NAME]};
	err = read_table(mem_fd, lay, &t, out, found, &nr_found);
	t = (struct table){lay[SYM_TYPES], lay[SYM_TYPES_STRIDE], lay[SYM_TYPES_NAME], ~0ULL};
	if (!err)
		err = read_table(mem_fd, lay, &t, out, found, &nr_found);
	if (err)
		return err;
	out->methods = true;
	for (size_t k = 0; k < NR_WANTS; k++) {
		if (found[k])
			continue;
		if (wants[k].for_class)
			return -ENOENT;
		out->methods = false;
	}
	return 0;
}

/* Java's names of primitive types, by their descriptor letter (an array's element type). */
static const char *const primitives[128] = {
    ['B'] = "byte", ['C'] = "char", ['D'] = "double", ['F'] = "float",
    ['I'] = "int",  ['J'] = "long", ['S'] = "short",  ['Z'] = "boolean",
};

int hotspot__java_name(const char *internal, size_t len, char *buf, size_t n)
{
	size_t dims = 0, o = 0;
	const char *elem = NULL;

	if (!n)
		return -ENOSPC;
	while (dims < len && internal[dims] == '[')
		dims++;
	if (dims) {
		internal += dims;
		len -= dims;
		if (len == 1)
			elem =
			    (unsigned char)internal[0] < 128 ? primitives[(int)internal[0]] : NULL;
		else if (len > 2 && internal[0] == 'L' && internal[len - 1] == ';')
			internal++, len -= 2;
		else
			len = 0;
		if (!len || (len == 1 && !elem))
			return -EPROTO;
	}
	if (elem) {
		o = (size_t)snprintf(buf, n, "%s", elem);
	} else {
		/* The process wrote it: no control characters reach a profile or a page. */
		for (size_t i = 0; i < len && o + 1 < n; i++) {
			unsigned char c = (unsigned char)internal[i];

			buf[o++] = c == '/' ? '.' : c < 0x20 || c == 0x7f ? '?' : (char)c;
		}
		buf[o] = '\0';
	}
	for (size_t d = 0; d < dims && o + 3 <= n; d++, o += 2)
		memcpy(buf + o, "[]", 3);
	return 0;
}

static int symbol_at(int mem_fd, const struct hotspot_offsets *o, uint64_t sym, bool class_name,
		     char *buf, size_t n);

int hotspot__klass_name(int mem_fd, const struct hotspot_offsets *o, uint64_t klass, char *buf,
			size_t n)
{
	uint64_t sym;
	int err;

	if (!klass)
		return -EIO;
	err = read_u64(mem_fd, klass + o->klass_name, &sym);
	if (err)
		return err;
	return symbol_at(mem_fd, o, sym, true, buf, n);
}

/* The bytes of the Symbol at sym, in Java's spelling into buf (n bytes); 0 or a negative errno. */
static int symbol_at(int mem_fd, const struct hotspot_offsets *o, uint64_t sym, bool class_name,
		     char *buf, size_t n)
{
	char body[256];
	uint16_t len;
	int err;

	if (!sym)
		return -EIO;
	err = procmem__read(mem_fd, sym + o->symbol_length, &len, sizeof(len));
	if (err)
		return err;
	if (!len)
		return -EPROTO;
	if (len > sizeof(body))
		len = sizeof(body);
	err = procmem__read(mem_fd, sym + o->symbol_body, body, len);
	if (err)
		return err;
	if (class_name)
		return hotspot__java_name(body, len, buf, n);
	/* A method's name: no '/' nor '[' to read, the same care for control characters. */
	return hotspot__java_name(body[0] == '[' ? "?" : body, body[0] == '[' ? 1 : len, buf, n);
}

int hotspot__method_name(int mem_fd, const struct hotspot_offsets *o, uint64_t method, char *buf,
			 size_t n)
{
	uint64_t cm, cp, holder, sym;
	uint16_t idx;
	int32_t plen;
	size_t k;
	int err;

	if (!o->methods)
		return -ENOTSUP;
	if (!method || n < 4)
		return -EIO;
	err = read_u64(mem_fd, method + o->method_const, &cm);
	if (!err)
		err = read_u64(mem_fd, cm + o->const_pool, &cp);
	if (!err)
		err = procmem__read(mem_fd, cm + o->name_index, &idx, sizeof(idx));
	if (!err)
		err = procmem__read(mem_fd, cp + o->pool_length, &plen, sizeof(plen));
	if (!err)
		err = read_u64(mem_fd, cp + o->pool_holder, &holder);
	if (err)
		return err;
	/* A method's constant pool names it: an index past the pool is no method of it. */
	if (!idx || idx >= plen)
		return -EPROTO;
	err = read_u64(mem_fd, cp + o->pool_size + (uint64_t)idx * 8, &sym);
	if (!err)
		err = hotspot__klass_name(mem_fd, o, holder, buf, n);
	if (err)
		return err;
	k = strlen(buf);
	if (k + 2 >= n)
		return 0;
	buf[k++] = '.';
	return symbol_at(mem_fd, o, sym, false, buf + k, n - k);
}

int hotspot__interpreter(int mem_fd, const struct hotspot_offsets *o, uint64_t *lo, uint64_t *hi)
{
	uint64_t q, buffer;
	int32_t limit;
	int err;

	if (!o->methods || !o->interp_code)
		return -ENOTSUP;
	err = read_u64(mem_fd, o->interp_code, &q);
	if (!err && !q)
		err = -EAGAIN; /* not generated yet: the JVM is starting */
	if (!err)
		err = read_u64(mem_fd, q + o->stubq_buffer, &buffer);
	if (!err)
		err = procmem__read(mem_fd, q + o->stubq_limit, &limit, sizeof(limit));
	if (err)
		return err;
	if (!buffer || limit <= 0)
		return -EAGAIN;
	*lo = buffer;
	*hi = buffer + (uint64_t)limit;
	return 0;
}
