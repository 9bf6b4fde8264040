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

/* The exported variables that describe the entries of gHotSpotVMStructs. */
enum {
	SYM_STRUCTS,	/* VMStructEntry *: the array */
	SYM_TYPE_NAME,	/* offset of const char *typeName in an entry (NULL ends the array) */
	SYM_FIELD_NAME, /* offset of const char *fieldName */
	SYM_OFFSET,	/* offset of uint64_t offset (of the field in its type) */
	SYM_IS_STATIC,	/* offset of int32_t isStatic */
	SYM_STRIDE,	/* the size of an entry */
	NR_SYMS,
};
static const char *const sym_names[NR_SYMS] = {
    [SYM_STRUCTS] = "gHotSpotVMStructs",
    [SYM_TYPE_NAME] = "gHotSpotVMStructEntryTypeNameOffset",
    [SYM_FIELD_NAME] = "gHotSpotVMStructEntryFieldNameOffset",
    [SYM_OFFSET] = "gHotSpotVMStructEntryOffsetOffset",
    [SYM_IS_STATIC] = "gHotSpotVMStructEntryIsStaticOffset",
    [SYM_STRIDE] = "gHotSpotVMStructEntryArrayStride",
};

/* The fields wanted: (type, field) and where its offset goes. */
static const struct {
	const char *type, *field;
	size_t at; /* in struct hotspot_offsets */
} fields[] = {
    {"Klass", "_name", offsetof(struct hotspot_offsets, klass_name)},
    {"Symbol", "_length", offsetof(struct hotspot_offsets, symbol_length)},
    {"Symbol", "_body", offsetof(struct hotspot_offsets, symbol_body)},
};
#define NR_FIELDS (sizeof(fields) / sizeof(fields[0]))

/* JDK 17 has ~2,000 entries, each release a few more: a bound against a garbage array. */
#define MAX_ENTRIES 20000
#define MAX_STRIDE  256
/* Entries read at once. */
#define CHUNK 64
/* Longer than any type or field name wanted, with room to tell "Klass" from "KlassXyz". */
#define NAME_MAX_READ 16

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

int hotspot__offsets(int mem_fd, int fd, const struct map_entry *e, struct hotspot_offsets *out)
{
	uint64_t base, lay[NR_SYMS], addr;
	uint8_t chunk[CHUNK * MAX_STRIDE];
	struct syms q = {0};
	bool found[NR_FIELDS] = {false};
	size_t nr_found = 0;
	Elf *elf;
	int err;

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
	    lay[SYM_OFFSET] + 8 > lay[SYM_STRIDE] || lay[SYM_IS_STATIC] + 4 > lay[SYM_STRIDE])
		return -EPROTO;
	addr = lay[SYM_STRUCTS];
	for (uint32_t i = 0; i < MAX_ENTRIES; i += CHUNK) {
		size_t stride = lay[SYM_STRIDE];
		uint64_t at = addr + i * stride;
		/* The array's last chunk may run past its mapping: then one entry at a time. */
		bool whole = !procmem__read(mem_fd, at, chunk, CHUNK * stride);

		for (uint32_t j = 0; j < CHUNK; j++) {
			const uint8_t *ent = chunk + j * stride;
			uint64_t type, field, offset;
			int32_t is_static;

			if (!whole) {
				err = procmem__read(mem_fd, at + j * stride, chunk + j * stride,
						    stride);
				if (err)
					return err;
			}
			memcpy(&type, ent + lay[SYM_TYPE_NAME], sizeof(type));
			if (!type)
				return -ENOENT; /* the end, with a field not found */
			memcpy(&field, ent + lay[SYM_FIELD_NAME], sizeof(field));
			memcpy(&offset, ent + lay[SYM_OFFSET], sizeof(offset));
			memcpy(&is_static, ent + lay[SYM_IS_STATIC], sizeof(is_static));
			if (is_static || offset > UINT16_MAX)
				continue;
			for (size_t k = 0; k < NR_FIELDS; k++) {
				if (found[k] || !str_at(mem_fd, field, fields[k].field) ||
				    !str_at(mem_fd, type, fields[k].type))
					continue;
				*(uint32_t *)((char *)out + fields[k].at) = (uint32_t)offset;
				found[k] = true;
				if (++nr_found == NR_FIELDS)
					return 0;
			}
		}
	}
	return -EPROTO;
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

int hotspot__klass_name(int mem_fd, const struct hotspot_offsets *o, uint64_t klass, char *buf,
			size_t n)
{
	char body[256];
	uint64_t sym;
	uint16_t len;
	int err;

	if (!klass)
		return -EIO;
	err = read_u64(mem_fd, klass + o->klass_name, &sym);
	if (!err && !sym)
		err = -EIO;
	if (!err)
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
	return hotspot__java_name(body, len, buf, n);
}
