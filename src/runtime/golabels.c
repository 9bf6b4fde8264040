// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "golabels: " fmt

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/log.h"
#include "symbolize/elf.h"
#include "runtime/golabels.h"

#define BUILDINFO_MAGIC "\xff Go buildinf:"
#define BUILDINFO_MAGIC_LEN 14
#define BUILDINFO_HEADER 32
/* Flag bits of the header's byte 15. */
#define BUILDINFO_BIG_ENDIAN 1
#define BUILDINFO_INLINE 2

/* Results by file identity: Go programs are often run many times, and their DWARF is big. */
#define PROBE_CACHE 16

struct probe_cache_entry {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	int err;
	struct golabels_offsets o;
};

static struct probe_cache_entry probe_cache[PROBE_CACHE];
static unsigned int probe_cache_next;

bool golabels__is_go(Elf *elf)
{
	GElf_Shdr shdr;

	return elf__section(elf, ".go.buildinfo", &shdr) ||
	       elf__section(elf, ".note.go.buildid", &shdr);
}

/* An unsigned LEB128 ("uvarint") at *p below end: its value, or -1. */
static long long uvarint(const uint8_t **p, const uint8_t *end)
{
	unsigned long long v = 0;

	for (unsigned int shift = 0; *p < end && shift < 63; shift += 7) {
		uint8_t b = *(*p)++;

		v |= (unsigned long long)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v > (1ULL << 40) ? -1 : (long long)v;
	}
	return -1;
}

int golabels__buildinfo_version(const uint8_t *data, size_t size, char *out, size_t n)
{
	const uint8_t *p = data + BUILDINFO_HEADER, *end = data + size;
	long long len;

	if (size < BUILDINFO_HEADER || memcmp(data, BUILDINFO_MAGIC, BUILDINFO_MAGIC_LEN))
		return -EINVAL;
	if (!(data[15] & BUILDINFO_INLINE))
		return -ENOENT;
	len = uvarint(&p, end);
	if (len < 0 || len > end - p || (size_t)len >= n)
		return -EINVAL;
	memcpy(out, p, len);
	out[len] = '\0';
	return 0;
}

/* Before Go 1.18 the header points at runtime.buildVersion, a string header. */
static int buildinfo__version_by_pointer(Elf *elf, const uint8_t *data, char *out, size_t n)
{
	uint64_t ptr, hdr[2];

	/* Little-endian 64-bit only: what this amd64 profiler meets. */
	if (data[14] != 8 || (data[15] & BUILDINFO_BIG_ENDIAN))
		return -ENOTSUP;
	memcpy(&ptr, data + 16, sizeof(ptr));
	if (elf__read_vaddr(elf, ptr, hdr, sizeof(hdr)) || !hdr[1] || hdr[1] >= n)
		return -EINVAL;
	if (elf__read_vaddr(elf, hdr[0], out, hdr[1]))
		return -EINVAL;
	out[hdr[1]] = '\0';
	return 0;
}

static int go_version__read(Elf *elf, char *out, size_t n)
{
	GElf_Shdr shdr;
	Elf_Scn *scn;
	Elf_Data *d;
	int err;

	scn = elf__section(elf, ".go.buildinfo", &shdr);
	if (!scn)
		return -ENOENT;
	d = elf_rawdata(scn, NULL);
	if (!d || !d->d_buf)
		return -EINVAL;
	err = golabels__buildinfo_version(d->d_buf, d->d_size, out, n);
	if (err == -ENOENT)
		err = buildinfo__version_by_pointer(elf, d->d_buf, out, n);
	return err;
}

struct go_release_offsets {
	int first, last;	/* Go 1.first to 1.last */
	uint16_t g_m, m_curg, g_labels;
};

/*
 * runtime.g.labels moves as fields are added before it; m and curg have stayed put. Checked
 * against the DWARF of Go 1.19 (tests/unit/test_golabels.c reads it from a binary built here);
 * the other rows are from the runtime's struct definitions of each release.
 */
static const struct go_release_offsets go_releases[] = {
	{ 11, 16, 48, 192, 344 },
	{ 17, 20, 48, 192, 360 },
	{ 21, 22, 48, 192, 344 },
	{ 23, 23, 48, 192, 352 },
};

/* The N of "go1.N...", "devel go1.N...": 0 or -EINVAL. */
static int go_version__minor(const char *version, int *minor)
{
	char *end;
	long v;

	if (!strncmp(version, "devel ", 6))
		version += 6;
	if (strncmp(version, "go1.", 4))
		return -EINVAL;
	v = strtol(version + 4, &end, 10);
	if (end == version + 4 || v < 0 || v > 1000)
		return -EINVAL;
	*minor = (int)v;
	return 0;
}

int golabels__version_offsets(const char *version, struct golabels_offsets *o)
{
	int minor, err;

	err = go_version__minor(version, &minor);
	if (err)
		return err;
	for (size_t i = 0; i < sizeof(go_releases) / sizeof(go_releases[0]); i++) {
		const struct go_release_offsets *r = &go_releases[i];

		if (minor < r->first || minor > r->last)
			continue;
		o->g_m = r->g_m;
		o->m_curg = r->m_curg;
		o->g_labels = r->g_labels;
		return 0;
	}
	return -ENOTSUP;
}

/* The data member location of the member name of struct die, or -1. */
static long die__member_offset(Dwarf_Die *die, const char *name)
{
	Dwarf_Die child;

	if (dwarf_child(die, &child))
		return -1;
	do {
		Dwarf_Attribute attr;
		Dwarf_Word off;
		const char *n;

		if (dwarf_tag(&child) != DW_TAG_member)
			continue;
		n = dwarf_diename(&child);
		if (!n || strcmp(n, name))
			continue;
		if (!dwarf_attr(&child, DW_AT_data_member_location, &attr) ||
		    dwarf_formudata(&attr, &off) || off > UINT16_MAX)
			return -1;
		return (long)off;
	} while (!dwarf_siblingof(&child, &child));
	return -1;
}

/* runtime.g's m and labels, runtime.m's curg from DWARF: 0, -ENODATA when not all are there. */
static int dwarf__go_offsets(Elf *elf, struct golabels_offsets *o)
{
	long g_m = -1, g_labels = -1, m_curg = -1;
	Dwarf_Off off = 0, next;
	size_t hsize;
	Dwarf *dw;

	dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (!dw)
		return -ENODATA;
	/* Go emits its types at the top level of a unit: no need to walk deeper. */
	while ((g_labels < 0 || m_curg < 0) &&
	       !dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL)) {
		Dwarf_Die cu, die;

		if (dwarf_offdie(dw, off + hsize, &cu) && !dwarf_child(&cu, &die)) {
			do {
				const char *n;

				if (dwarf_tag(&die) != DW_TAG_structure_type)
					continue;
				n = dwarf_diename(&die);
				if (!n)
					continue;
				if (!strcmp(n, "runtime.g")) {
					g_m = die__member_offset(&die, "m");
					g_labels = die__member_offset(&die, "labels");
				} else if (!strcmp(n, "runtime.m")) {
					m_curg = die__member_offset(&die, "curg");
				}
			} while ((g_labels < 0 || m_curg < 0) && !dwarf_siblingof(&die, &die));
		}
		off = next;
	}
	dwarf_end(dw);
	if (g_m < 0 || g_labels < 0 || m_curg < 0)
		return -ENODATA;
	o->g_m = g_m;
	o->m_curg = m_curg;
	o->g_labels = g_labels;
	return 0;
}

/* runtime.tlsg in .symtab: where g lives in the TLS block when a system linker placed it. */
static int tlsg__match(const struct elf_symbol *s, void *ctx)
{
	struct golabels_offsets *o = ctx;

	if (GELF_ST_TYPE(s->sym.st_info) != STT_TLS || strcmp(s->name, "runtime.tlsg"))
		return 0;
	o->tlsg_found = true;
	o->tlsg = s->sym.st_value;
	return 1;
}

static int probe(Elf *elf, struct golabels_offsets *o)
{
	int err;

	if (!golabels__is_go(elf))
		return -ENODATA;
	memset(o, 0, sizeof(*o));
	err = go_version__read(elf, o->version, sizeof(o->version));
	if (err)
		o->version[0] = '\0';
	/*
	 * The label storage changed in Go 1.24 (a slice, not a map): the version decides whether
	 * we can read it at all, DWARF only where its offsets are. Without a version (a build
	 * info we cannot read), DWARF alone tells.
	 */
	if (o->version[0]) {
		err = golabels__version_offsets(o->version, o);
		if (err)
			return err == -EINVAL ? -ENOTSUP : err;
	}
	if (!dwarf__go_offsets(elf, o))
		o->from_dwarf = true;
	else if (!o->version[0])
		return -ENOTSUP;
	elf__for_each_symbol(elf, ELF_SYMTAB, tlsg__match, o);
	return 0;
}

int golabels__probe(int fd, Elf *elf, struct golabels_offsets *o)
{
	struct probe_cache_entry *c;
	struct stat st;
	int err;

	if (fstat(fd, &st))
		return probe(elf, o);
	for (unsigned int i = 0; i < PROBE_CACHE; i++) {
		c = &probe_cache[i];
		if (c->ino && c->ino == st.st_ino && c->dev == st.st_dev &&
		    c->size == st.st_size && c->mtime.tv_sec == st.st_mtim.tv_sec &&
		    c->mtime.tv_nsec == st.st_mtim.tv_nsec) {
			*o = c->o;
			return c->err;
		}
	}
	err = probe(elf, o);
	/* Not Go is cheap to find again, and most files are not Go: keep the slots for Go. */
	if (err == -ENODATA)
		return err;
	c = &probe_cache[probe_cache_next++ % PROBE_CACHE];
	*c = (struct probe_cache_entry){
		.dev = st.st_dev,
		.ino = st.st_ino,
		.size = st.st_size,
		.mtime = st.st_mtim,
		.err = err,
		.o = *o,
	};
	pr_debug("%s: labels at g+%u (m %u, curg %u) from %s%s\n",
		 o->version[0] ? o->version : "Go of unknown version", o->g_labels, o->g_m,
		 o->m_curg, o->from_dwarf ? "DWARF" : "the version table",
		 err ? " (labels not read)" : "");
	return err;
}
