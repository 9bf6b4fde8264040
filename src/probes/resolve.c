// SPDX-License-Identifier: GPL-2.0-only
/* Resolving a probe in its binary: a function's entry, or a source line's addresses (DWARF). */
#define pr_fmt(fmt) "probes: " fmt

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <limits.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/ufile.h"
#include "lib/x86insn.h"
#include "probes/probes.h"
#include "symbolize/elf.h"
#include "probes/probes_priv.h"

/* ---- resolving a probe in its binary ------------------------------------------------------- */

struct func_query {
	const char *name;
	uint64_t vaddr, size;
};

static int func_query__match(const struct elf_symbol *s, void *ctx)
{
	struct func_query *q = ctx;

	if (GELF_ST_TYPE(s->sym.st_info) != STT_FUNC || s->sym.st_shndx == SHN_UNDEF ||
	    !s->sym.st_value || strcmp(s->name, q->name))
		return 0;
	q->vaddr = s->sym.st_value;
	q->size = s->sym.st_size;
	return 1;
}

/* The file offset to probe function `name` at (moved to an emulated instruction). */
static int resolve_function(Elf *elf, int fd, const char *name, struct probe *p, char *why,
			    size_t why_len)
{
	struct func_query q = {.name = name};
	uint8_t code[CODE_BYTES];
	enum x86insn_probe kind;
	uint64_t off, moved;
	ssize_t len;

	/* The first definition in section order: .dynsym comes before .symtab. */
	elf__for_each_symbol(elf, ELF_SYMTAB | ELF_DYNSYM, func_query__match, &q);
	if (!q.vaddr) {
		snprintf(why, why_len, "function: no function \"%s\" in %s", name, p->spec.binary);
		return -EINVAL;
	}
	if (elf__vaddr_to_offset(elf, q.vaddr, &off)) {
		snprintf(why, why_len, "function: \"%s\" is outside the loadable segments", name);
		return -EINVAL;
	}
	len = pread(fd, code, q.size && q.size < sizeof(code) ? q.size : sizeof(code), (off_t)off);
	moved = x86insn__probe_offset(code, len > 0 ? (size_t)len : 0, &kind);
	p->emulated = kind == X86INSN_EMULATED;
	p->offsets[0] = off + moved;
	p->vaddrs[0] = q.vaddr + moved;
	p->nr_sites = 1;
	return 0;
}

static bool suffix_matches(const char *path, const char *file)
{
	size_t pl = strlen(path), fl = strlen(file);

	if (!strcmp(path, file))
		return true;
	return pl > fl && path[pl - fl - 1] == '/' && !strcmp(path + pl - fl, file);
}

/*
 * Whether a line table's source path names file: the same path, or one ending in it. A relative
 * path is the compilation directory's, as the symbolizer names it (what the web view's source
 * view asks for).
 */
static bool file_matches(const char *path, const char *comp_dir, const char *file)
{
	char joined[PATH_MAX];

	if (suffix_matches(path, file))
		return true;
	if (path[0] == '/' || !comp_dir || file[0] != '/' ||
	    (size_t)snprintf(joined, sizeof(joined), "%s/%s", comp_dir, path) >= sizeof(joined))
		return false;
	return !strcmp(joined, file);
}

/* The addresses where `file:line` begins: the first row of each run of its rows. */
static int resolve_location(Elf *elf, const char *loc, struct probe *p, char *why, size_t why_len)
{
	char file[PROBE_LOCATION_MAX];
	unsigned int line;
	Dwarf_Off cu = 0, next;
	size_t hsize;
	bool any_file = false;
	Dwarf *dw;

	if (probespec__location(loc, file, sizeof(file), &line)) {
		snprintf(why, why_len, "location: \"%s\" is not FILE:LINE", loc);
		return -EINVAL;
	}
	dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (!dw) {
		snprintf(why, why_len, "location: %s has no DWARF line tables", p->spec.binary);
		return -EINVAL;
	}
	p->nr_sites = 0;
	while (!dwarf_nextcu(dw, cu, &next, &hsize, NULL, NULL, NULL)) {
		Dwarf_Die die;
		Dwarf_Attribute attr;
		Dwarf_Lines *lines;
		const char *comp_dir;
		size_t n;
		int prev_line = -1;
		const char *prev_src = NULL;

		if (!dwarf_offdie(dw, cu + hsize, &die) || dwarf_getsrclines(&die, &lines, &n)) {
			cu = next;
			continue;
		}
		cu = next;
		comp_dir = dwarf_formstring(dwarf_attr(&die, DW_AT_comp_dir, &attr));
		for (size_t i = 0; i < n; i++) {
			Dwarf_Line *l = dwarf_onesrcline(lines, i);
			const char *src = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
			bool stmt = false, end = false;
			Dwarf_Addr addr;
			uint64_t off;
			int ln;

			if (!src || dwarf_lineno(l, &ln) || dwarf_lineaddr(l, &addr))
				continue;
			dwarf_linebeginstatement(l, &stmt);
			dwarf_lineendsequence(l, &end);
			if (file_matches(src, comp_dir, file)) {
				any_file = true;
				if ((unsigned int)ln == line && stmt && !end &&
				    !(prev_line == ln && prev_src == src) &&
				    !elf__vaddr_to_offset(elf, addr, &off)) {
					bool dup = false;

					for (size_t k = 0; k < p->nr_sites; k++)
						dup |= p->offsets[k] == off;
					if (!dup && p->nr_sites < MAX_SITES) {
						p->vaddrs[p->nr_sites] = addr;
						p->offsets[p->nr_sites++] = off;
					}
				}
			}
			prev_line = end ? -1 : ln;
			prev_src = src;
		}
	}
	dwarf_end(dw);
	if (!p->nr_sites) {
		if (any_file)
			snprintf(why, why_len, "location: no code at line %u of %s", line, file);
		else
			snprintf(why, why_len, "location: no source file \"%s\" in the line tables",
				 file);
		return -EINVAL;
	}
	return 0;
}

/* Why ufile__openat refused a binary, for the answer. */
static const char *open_error(int err)
{
	switch (err) {
	case -EINVAL:
		return "not a regular file";
	case -EFBIG:
		return "too large";
	default:
		return strerror(-err);
	}
}

/*
 * Opens the binary as a file others may control (ufile.h: a FIFO, a device or a directory is
 * refused, a FIFO without blocking) and keeps it open in p->fd for attach().
 */
int probe__locate(struct probe *p, char *why, size_t why_len)
{
	const struct ufile_how how = { .max_size = UFILE_MAX_ELF };
	int root, fd, err;
	Elf *elf;

	root = ufile__root(0);
	if (root < 0) {
		snprintf(why, why_len, "binary: cannot open /: %s", strerror(-root));
		return -EINVAL;
	}
	fd = ufile__openat(root, p->spec.binary, &how, NULL);
	close(root);
	if (fd < 0) {
		snprintf(why, why_len, "binary: cannot open %s: %s", p->spec.binary,
			 open_error(fd));
		return -EINVAL;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		snprintf(why, why_len, "binary: %s is not an ELF file", p->spec.binary);
		err = -EINVAL;
		goto out;
	}
	if (p->spec.function[0])
		err = resolve_function(elf, fd, p->spec.function, p, why, why_len);
	else
		err = resolve_location(elf, p->spec.location, p, why, why_len);
	if (!err && p->spec.nr_captures)
		err = probe__captures(p, elf, why, why_len);
out:
	elf_end(elf);
	if (err)
		close(fd);
	else
		p->fd = fd;
	return err;
}
