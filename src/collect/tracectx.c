// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "tracectx: " fmt

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../symbolize/elf.h"
#include "../symbolize/maps.h"
#include "golabels.h"
#include "tracectx.h"

#define TRACECTX_SYMBOL "otel_thread_ctx_v1"
#define ELASTIC_SYMBOL "elastic_apm_profiling_correlation_tls_v1"
#define ELASTIC_PREFIX "elastic-jvmti-linux-"
/* Where Go's own linker keeps g on linux/amd64: the word below the thread pointer. */
#define GO_G_TP_OFFSET (-8)

/* Defined by the x86-64 psABI; older <elf.h> copies lack the TLSDESC one. */
#ifndef R_X86_64_TPOFF64
#define R_X86_64_TPOFF64 18
#endif
#ifndef R_X86_64_TLSDESC
#define R_X86_64_TLSDESC 36
#endif

struct locate_ctx {
	int pid;
	char exe[PATH_MAX];	/* readlink of /proc/PID/exe, "" when unreadable */
	char **seen;		/* paths already looked at: a file maps more than once */
	size_t nr_seen;
	size_t cap_seen;
	struct tracectx_loc loc;	/* the OTEP variable, once found */
	struct tracectx_loc alt;	/* else Go labels or Elastic's variable, when alt_found */
	bool alt_found;
	int defined_err;	/* why an object defining the variable gave no offset, or 0 */
	int open_err;		/* first file that could not be read, or 0 */
};

/* A TLS variable in the object's .dynsym, defined here or not. */
struct tls_sym {
	size_t dynsym_ndx;	/* section index of .dynsym */
	size_t index;		/* symbol index in .dynsym */
	uint64_t value;		/* offset in the object's TLS block */
	bool defined;
};

/* Returns true when path was seen before, else records it. */
static bool locate__seen(struct locate_ctx *lc, const char *path)
{
	char *copy;

	for (size_t i = 0; i < lc->nr_seen; i++)
		if (!strcmp(lc->seen[i], path))
			return true;
	if (lc->nr_seen == lc->cap_seen) {
		size_t cap = lc->cap_seen ? 2 * lc->cap_seen : 16;
		char **seen = realloc(lc->seen, cap * sizeof(*seen));

		/* Out of memory only costs looking at a file twice. */
		if (!seen)
			return false;
		lc->seen = seen;
		lc->cap_seen = cap;
	}
	copy = strdup(path);
	if (copy)
		lc->seen[lc->nr_seen++] = copy;
	return false;
}

struct tls_sym_query {
	const char *want;
	struct tls_sym *ts;
};

static int tls_sym__match(const struct elf_symbol *s, void *ctx)
{
	struct tls_sym_query *q = ctx;

	if (GELF_ST_TYPE(s->sym.st_info) != STT_TLS || strcmp(s->name, q->want))
		return 0;
	*q->ts = (struct tls_sym){
	    .dynsym_ndx = s->table,
	    .index = s->index,
	    .value = s->sym.st_value,
	    .defined = s->sym.st_shndx != SHN_UNDEF,
	};
	return 1;
}

/* Returns 0 with the symbol filled, -ENOENT when .dynsym has no such TLS symbol. */
static int tls_sym__find(Elf *elf, const char *want, struct tls_sym *ts)
{
	struct tls_sym_query q = {.want = want, .ts = ts};

	return elf__for_each_symbol(elf, ELF_DYNSYM, tls_sym__match, &q) ? 0 : -ENOENT;
}

/*
 * The executable's TLS block comes first and ends at the thread pointer (TLS variant II), laid
 * out as glibc's _dl_determine_tlsoffset does for the first module: the block's end rounded up
 * to its alignment, keeping the address of its first byte congruent to p_vaddr. Linkers align
 * PT_TLS, so the first byte's misalignment is 0 in practice and this is roundup(memsz, align),
 * which is also what a static executable gets.
 */
static int tls__exe_tp_offset(Elf *elf, uint64_t sym_value, int64_t *tp_offset)
{
	size_t phnum;

	if (elf_getphdrnum(elf, &phnum))
		return -EINVAL;
	for (size_t i = 0; i < phnum; i++) {
		uint64_t align, firstbyte, block;
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_TLS)
			continue;
		align = ph.p_align ? ph.p_align : 1;
		if (align & (align - 1))
			return -EINVAL;
		firstbyte = -ph.p_vaddr & (align - 1);
		block = ((ph.p_memsz - firstbyte + align - 1) & ~(align - 1)) + firstbyte;
		*tp_offset = (int64_t)sym_value - (int64_t)block;
		return 0;
	}
	/* A TLS symbol without a TLS segment: a broken object. */
	return -EINVAL;
}

/*
 * A GOT slot of the object that ld.so filled with the variable's tp offset: the argument word of
 * a TLSDESC pair (-mtls-dialect=gnu2) or an initial-exec TPOFF64 entry. Either is against the
 * symbol, or, when the object binds it locally, against symbol 0 with the variable's offset in
 * the block as addend. *addend is what ld.so added to the variable's offset. -ENOENT: none.
 */
static int tls_sym__find_got(Elf *elf, const struct tls_sym *ts, uint64_t *got, int64_t *addend)
{
	bool found_ie = false;
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		Elf_Data *data;
		size_t n;

		/* .rela.dyn and .rela.plt: GNU ld puts TLSDESC in the latter. */
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_RELA ||
		    shdr.sh_link != ts->dynsym_ndx || !shdr.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		n = shdr.sh_size / shdr.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			uint64_t type, symi;
			GElf_Rela r;

			if (!gelf_getrela(data, i, &r))
				continue;
			type = GELF_R_TYPE(r.r_info);
			symi = GELF_R_SYM(r.r_info);
			if (type != R_X86_64_TLSDESC && type != R_X86_64_TPOFF64)
				continue;
			if (symi == ts->index) {
				*addend = r.r_addend;
			} else if (!symi && ts->defined && (uint64_t)r.r_addend == ts->value) {
				*addend = 0;
			} else {
				continue;
			}
			if (type == R_X86_64_TLSDESC) {
				/* Second word of the pair: the descriptor's argument. */
				*got = r.r_offset + 8;
				return 0;
			}
			/* Keep looking for a TLSDESC: it tells static from dynamic TLS. */
			if (!found_ie) {
				*got = r.r_offset;
				found_ie = true;
			}
		}
	}
	return found_ie ? 0 : -ENOENT;
}

static int locate__read_word(int pid, uint64_t addr, int64_t *word)
{
	char path[64];
	ssize_t n;
	int fd, err;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		return err;
	}
	n = pread(fd, word, sizeof(*word), (off_t)addr);
	if (n < 0) {
		err = -errno;
		goto close_fd;
	}
	err = n == sizeof(*word) ? 0 : -EIO;
close_fd:
	close(fd);
	return err;
}

/* The variable in a shared library (or any object referencing it through the GOT). */
static int locate__from_got(struct locate_ctx *lc, Elf *elf, const struct map_entry *e,
			    const struct tls_sym *ts, const char *name, int64_t *tp_offset)
{
	int64_t addend, word;
	uint64_t base, got;
	int err;

	err = tls_sym__find_got(elf, ts, &got, &addend);
	if (err)
		/* General-dynamic only (__tls_get_addr): no offset stored in the process. */
		return -ENOTSUP;
	err = elf__load_base(elf, e->start, e->pgoff, &base);
	if (err)
		return err;
	err = locate__read_word(lc->pid, base + got, &word);
	if (err)
		return err;
	/*
	 * Static TLS lies below the thread pointer: ld.so stored a negative offset. A positive
	 * word is a pointer to a dynamic TLS descriptor (the library came with dlopen after
	 * start and got no static TLS), or a slot not resolved yet.
	 */
	if (word >= 0) {
		pr_debug("pid %d: %s: %s in dynamic TLS (GOT word %#" PRIx64 ")\n", lc->pid,
			 e->path, name, (uint64_t)word);
		return -ENOTSUP;
	}
	*tp_offset = word - addend;
	return 0;
}

/* The variable ts of the object: in the executable's own block, or by the GOT ld.so filled. */
static int locate__var(struct locate_ctx *lc, Elf *elf, const struct map_entry *e, bool is_exe,
		       const struct tls_sym *ts, const char *name, int64_t *tp_offset)
{
	if (is_exe && ts->defined)
		return tls__exe_tp_offset(elf, ts->value, tp_offset);
	return locate__from_got(lc, elf, e, ts, name, tp_offset);
}

static bool tls__has_segment(Elf *elf)
{
	size_t phnum;

	if (elf_getphdrnum(elf, &phnum))
		return false;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_TLS)
			return true;
	}
	return false;
}

/*
 * A Go executable: its g slot and the runtime's offsets. Go's own linker (no cgo) gives the
 * executable no PT_TLS and keeps g at a fixed -8; a system linker (cgo, -linkmode=external)
 * places runtime.tlsg in the executable's TLS block like any local-exec variable. Where
 * .symtab does not name it (stripped; a PIE by Go's linker, whose PT_TLS holds g alone), it is
 * taken to open the block: Go's object comes first on the link line.
 */
static int locate__go(struct locate_ctx *lc, int fd, Elf *elf, const struct map_entry *e)
{
	struct golabels_offsets go;
	int64_t off = GO_G_TP_OFFSET;
	int err;

	err = golabels__probe(fd, elf, &go);
	if (err)
		return err;
	if (tls__has_segment(elf)) {
		err = tls__exe_tp_offset(elf, go.tlsg_found ? go.tlsg : 0, &off);
		if (err)
			return err;
	}
	lc->alt = (struct tracectx_loc){
		.tp_offset = off,
		.kind = TRACECTX_GO_MAP,
		.go_g_m = go.g_m,
		.go_m_curg = go.m_curg,
		.go_g_labels = go.g_labels,
	};
	lc->alt_found = true;
	pr_debug("pid %d: %s (%s) keeps g at tp%+" PRId64 ", labels at g+%u\n", lc->pid, e->path,
		 go.version[0] ? go.version : "Go", off, go.g_labels);
	return 0;
}

bool tracectx__elastic_path(const char *path)
{
	const char *base = strrchr(path, '/'), *p;
	size_t n;

	/* .*\/elastic-jvmti-linux-([\w-]*)\.so */
	if (!base)
		return false;
	base++;
	n = strlen(base);
	if (strncmp(base, ELASTIC_PREFIX, strlen(ELASTIC_PREFIX)) ||
	    n < strlen(ELASTIC_PREFIX) + 3 || strcmp(base + n - 3, ".so"))
		return false;
	for (p = base + strlen(ELASTIC_PREFIX); p < base + n - 3; p++)
		if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-')
			return false;
	return true;
}

/* Elastic APM's agent library: its correlation variable, read like the OTEP one. */
static int locate__elastic(struct locate_ctx *lc, Elf *elf, const struct map_entry *e,
			   bool is_exe)
{
	struct tls_sym ts;
	int64_t off;
	int err;

	if (tls_sym__find(elf, ELASTIC_SYMBOL, &ts))
		return -ENOENT;
	err = locate__var(lc, elf, e, is_exe, &ts, ELASTIC_SYMBOL, &off);
	if (err)
		return ts.defined ? err : 0;
	lc->alt = (struct tracectx_loc){ .tp_offset = off, .kind = TRACECTX_ELASTIC };
	lc->alt_found = true;
	pr_debug("pid %d: %s in %s at tp%+" PRId64 "\n", lc->pid, ELASTIC_SYMBOL, e->path, off);
	return 0;
}

/* Remembers why an object that should have given a context did not. */
static void locate__failed(struct locate_ctx *lc, int err)
{
	if (err && err != -ENOENT && err != -ENODATA && !lc->defined_err)
		lc->defined_err = err;
}

static int locate__mapping(const struct map_entry *e, void *ctx)
{
	struct locate_ctx *lc = ctx;
	struct tls_sym ts;
	GElf_Ehdr ehdr;
	int fd, err;
	bool is_exe;
	Elf *elf;

	/* Anonymous memory, [vdso] and the like have no file to read. */
	if (e->path[0] != '/' || locate__seen(lc, e->path))
		return 0;
	fd = maps__open_file(lc->pid, e);
	if (fd < 0) {
		pr_debug("pid %d: cannot open %s: %s\n", lc->pid, e->path, strerror(-fd));
		if (!lc->open_err)
			lc->open_err = fd;
		return 0;
	}
	/* Whatever this file is, it only counts if it holds a context: errors skip it. */
	err = 0;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		goto close_fd;
	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &ehdr) ||
	    ehdr.e_ident[EI_CLASS] != ELFCLASS64 || ehdr.e_machine != EM_X86_64)
		goto end_elf;
	is_exe = !strcmp(e->path, lc->exe) || ehdr.e_type == ET_EXEC;

	if (!tls_sym__find(elf, TRACECTX_SYMBOL, &ts)) {
		int64_t off;

		err = locate__var(lc, elf, e, is_exe, &ts, TRACECTX_SYMBOL, &off);
		if (!err) {
			pr_debug("pid %d: %s in %s at tp%+" PRId64 "\n", lc->pid, TRACECTX_SYMBOL,
				 e->path, off);
			lc->loc = (struct tracectx_loc){ .tp_offset = off, .kind = TRACECTX_OTEP };
			/* The standard wins over the rest: stop the walk. */
			err = 1;
			goto end_elf;
		}
		/* Another object's GOT may still tell; remember why this one did not. */
		if (ts.defined)
			locate__failed(lc, err);
		err = 0;
	}
	/* Go labels and Elastic's variable count only where no OTEP variable is found. */
	if (!lc->alt_found && is_exe && golabels__is_go(elf))
		locate__failed(lc, locate__go(lc, fd, elf, e));
	if (!lc->alt_found && tracectx__elastic_path(e->path))
		locate__failed(lc, locate__elastic(lc, elf, e, is_exe));
end_elf:
	elf_end(elf);
close_fd:
	close(fd);
	return err;
}

int tracectx__locate(int pid, struct tracectx_loc *loc)
{
	struct locate_ctx lc = {.pid = pid};
	char path[64];
	ssize_t n;
	int err;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, lc.exe, sizeof(lc.exe) - 1);
	if (n > 0) {
		const char *del = " (deleted)";
		size_t dl = strlen(del);

		lc.exe[n] = '\0';
		/* maps strips the suffix from its paths too. */
		if ((size_t)n > dl && !strcmp(lc.exe + n - dl, del))
			lc.exe[n - dl] = '\0';
	}

	err = maps__for_each(pid, true, locate__mapping, &lc);
	if (err == 1) {
		*loc = lc.loc;
		err = 0;
	} else if (err == -ENOENT) {
		/* maps is gone with the process; -ENOENT means "publishes none" to callers. */
		err = -ESRCH;
	} else if (!err && lc.alt_found) {
		*loc = lc.alt;
	} else if (!err) {
		err = lc.defined_err ? lc.defined_err : lc.open_err ? lc.open_err : -ENOENT;
	}

	for (size_t i = 0; i < lc.nr_seen; i++)
		free(lc.seen[i]);
	free(lc.seen);
	return err;
}
