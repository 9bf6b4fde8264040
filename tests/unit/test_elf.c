/* DEPS: src/symbolize/elf.c src/lib/procmaps.c src/lib/log.c src/lib/ufile.c */
// SPDX-License-Identifier: GPL-2.0-only
/*
 * Symbol tables, build IDs and offset translation of the fixtures built by tests/unit/elf.mk,
 * checked against what nm and readelf say about the same files.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "symbolize/elf.h"
#include "src/lib/procmaps.h"
#include "testlib.h"

static const char *fixture(const char *name)
{
	static char path[PATH_MAX];
	const char *build = getenv("BUILD");

	snprintf(path, sizeof(path), "%s/fixtures/%s", build && *build ? build : "build", name);
	return path;
}

/* The build ID readelf -n prints, "" when there is none. */
static int readelf__build_id(const char *path, char *hex, size_t hex_size)
{
	char cmd[PATH_MAX + 64], line[512];
	FILE *p;

	hex[0] = '\0';
	snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	if (!p)
		return -errno;
	while (fgets(line, sizeof(line), p)) {
		const char *s = strstr(line, "Build ID: ");

		if (s && sscanf(s + strlen("Build ID: "), "%127s", hex) == 1)
			hex[hex_size - 1] = '\0';
	}
	return pclose(p) ? -EIO : 0;
}

/* The executable PT_LOAD as readelf -lW lists it. */
static int readelf__exec_load(const char *path, uint64_t *offset, uint64_t *vaddr, uint64_t *filesz)
{
	char cmd[PATH_MAX + 64], line[512];
	int err = -ENOENT;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -lW '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	if (!p)
		return -errno;
	while (fgets(line, sizeof(line), p)) {
		uint64_t off, va, pa, fsz, msz;
		char flags[16];

		if (sscanf(line,
			   " LOAD 0x%" SCNx64 " 0x%" SCNx64 " 0x%" SCNx64 " 0x%" SCNx64
			   " 0x%" SCNx64 " %15[RWE ]",
			   &off, &va, &pa, &fsz, &msz, flags) == 6 &&
		    strchr(flags, 'E')) {
			*offset = off;
			*vaddr = va;
			*filesz = fsz;
			err = 0;
		}
	}
	pclose(p);
	return err;
}

static int elf_file__open_path(const char *path, struct elf_file **ef)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = elf_file__open(fd, ef);
	close(fd);
	return err;
}

/*
 * For each function: nm's start, start+1 and start+size-1 all name it, and the reported start
 * is nm's. Fails the calling test through the CHECK macros' return.
 */
static void check_functions(const char *path, bool dynamic, const char *const *names)
{
	struct elf_file *ef = NULL;
	int err = elf_file__open_path(path, &ef);

	if (err)
		FAILF("%s: elf_file__open: %s", path, strerror(-err));
	for (const char *const *n = names; !err && *n; n++) {
		uint64_t start, size, probes[3], got;
		const char *sym;

		if (test_nm_symbol(path, *n, dynamic, &start, &size) || !size) {
			FAILF("%s: nm does not list %s with a size", path, *n);
			break;
		}
		probes[0] = start;
		probes[1] = start + 1;
		probes[2] = start + size - 1;
		for (int i = 0; i < 3; i++) {
			sym = elf_file__symbol(ef, probes[i], &got);

			if (!sym || strcmp(sym, *n) || got != start) {
				FAILF("%s: 0x%" PRIx64 " gives %s@0x%" PRIx64
				      ", expected %s@0x%" PRIx64,
				      path, probes[i], sym ? sym : "(null)", sym ? got : 0, *n,
				      start);
				goto out;
			}
		}
		/* One past the end is padding (no symbol) or the next function, never this one. */
		sym = elf_file__symbol(ef, start + size, &got);
		if (sym && got != start + size) {
			FAILF("%s: 0x%" PRIx64 " (end of %s) gives %s@0x%" PRIx64, path,
			      start + size, *n, sym, got);
			break;
		}
	}
out:
	elf_file__free(ef);
}

static const char *const exe_funcs[] = {"fixture_alpha", "fixture_beta", "fixture_static",
					"fixture_weak",	 "main",	 NULL};
static const char *const exe_dyn_funcs[] = {"fixture_alpha", "fixture_beta", "fixture_weak", "main",
					    NULL};
static const char *const lib_funcs[] = {"libsym_one", "libsym_two", "libsym_hidden", NULL};
static const char *const lib_dyn_funcs[] = {"libsym_one", "libsym_two", NULL};

TEST(symbols_pie)
{
	check_functions(fixture("symbols-pie"), false, exe_funcs);
}

TEST(symbols_nopie)
{
	check_functions(fixture("symbols-nopie"), false, exe_funcs);
}

TEST(symbols_shared_lib)
{
	check_functions(fixture("libsym.so"), false, lib_funcs);
}

TEST(symbols_nobuildid)
{
	check_functions(fixture("symbols-nobuildid"), false, exe_funcs);
}

TEST(stripped_exe_keeps_dynamic_symbols)
{
	uint64_t start, size, got;
	struct elf_file *ef;
	const char *sym;

	check_functions(fixture("symbols-stripped"), true, exe_dyn_funcs);
	if (test_cur_failed)
		return;
	/* The static function is gone with .symtab: its address must not borrow a name. */
	CHECK_EQ(test_nm_symbol(fixture("symbols-pie"), "fixture_static", false, &start, &size), 0);
	CHECK_EQ(elf_file__open_path(fixture("symbols-stripped"), &ef), 0);
	sym = elf_file__symbol(ef, start, &got);
	elf_file__free(ef);
	CHECK(!sym || strcmp(sym, "fixture_static"));
	CHECK_EQ(test_nm_symbol(fixture("symbols-stripped"), "fixture_alpha", false, &start, &size),
		 -ENOENT);
}

/* Whether path's symbol at its entry point plus off is _start, starting at the entry. */
static bool entry_named_start(const char *path, uint64_t off)
{
	uint64_t entry, got = 0;
	struct elf_file *ef;
	const char *sym;
	bool ok;

	if (test_elf_entry(path, &entry) || elf_file__open_path(path, &ef))
		return false;
	sym = elf_file__symbol(ef, entry + off, &got);
	ok = sym && !strcmp(sym, "_start") && got == entry;
	elf_file__free(ef);
	return ok;
}

/* The loader keeps .dynsym alone: its entry point is named _start, up to its next FDE. */
TEST(loader_entry_named_start)
{
	const char *ld = "/lib64/ld-linux-x86-64.so.2";

	if (access(ld, R_OK))
		SKIP("%s: %s", ld, strerror(errno));
	CHECK(entry_named_start(ld, 0));
	/* Its RTLD_START block: _start calls _dl_start, whose return lands 8 bytes on. */
	CHECK(entry_named_start(ld, 8));
	/* Not past the next function the CFI knows. */
	CHECK(!entry_named_start(ld, 4096));
	/* A stripped program's: the return into _start from __libc_start_main is _start's. */
	CHECK(entry_named_start(fixture("symbols-stripped"), 0x20));
	/* A program's own _start is its symbol. */
	CHECK(entry_named_start(fixture("symbols-pie"), 4));
}

TEST(stripped_lib_keeps_dynamic_symbols)
{
	check_functions(fixture("libsym-stripped.so"), true, lib_dyn_funcs);
}

/* fixture_beta is 64-byte aligned: the padding before it is no function's. */
static void check_padding(const char *path, bool dynamic)
{
	uint64_t a_start, a_size, b_start, b_size, got;
	struct elf_file *ef;
	const char *sym;

	CHECK_EQ(test_nm_symbol(path, "fixture_alpha", dynamic, &a_start, &a_size), 0);
	CHECK_EQ(test_nm_symbol(path, "fixture_beta", dynamic, &b_start, &b_size), 0);
	CHECK(a_start + a_size < b_start);
	CHECK_EQ(elf_file__open_path(path, &ef), 0);
	sym = elf_file__symbol(ef, a_start + a_size, &got);
	elf_file__free(ef);
	CHECK(sym == NULL);
}

TEST(padding_has_no_symbol)
{
	check_padding(fixture("symbols-pie"), false);
	if (!test_cur_failed)
		check_padding(fixture("symbols-nopie"), false);
	if (!test_cur_failed)
		check_padding(fixture("symbols-stripped"), true);
}

/* The name chosen among aliases (see sym__rank() in elf.c), in every flavour of the fixture. */
static void check_aliases(const char *path, bool dynamic)
{
	static const char *const winners[][2] = {
	    {"fixture_public", "fixture_local_impl"}, /* WEAK over LOCAL */
	    {"fixture_gimpl", "fixture_aaa_weak"},    /* GLOBAL over WEAK */
	    {"fixture_under", "__fixture_under"},     /* fewer underscores */
	};
	struct elf_file *ef;

	CHECK_EQ(elf_file__open_path(path, &ef), 0);
	for (size_t i = 0; i < sizeof(winners) / sizeof(winners[0]); i++) {
		uint64_t start, size, other, got = 0;
		const char *sym;

		if (test_nm_symbol(path, winners[i][0], dynamic, &start, &size)) {
			FAILF("%s: nm does not list %s", path, winners[i][0]);
			break;
		}
		/* The loser must really share the address, or the test proves nothing. */
		if (!(dynamic && i == 0) &&
		    (test_nm_symbol(path, winners[i][1], dynamic, &other, &size) || other != start)) {
			FAILF("%s: %s is not an alias of %s", path, winners[i][1], winners[i][0]);
			break;
		}
		sym = elf_file__symbol(ef, start, &got);
		if (!sym || strcmp(sym, winners[i][0]) || got != start) {
			FAILF("%s: 0x%" PRIx64 " gives %s, expected %s", path, start,
			      sym ? sym : "(null)", winners[i][0]);
			break;
		}
	}
	elf_file__free(ef);
}

TEST(alias_naming_rule)
{
	check_aliases(fixture("symbols-pie"), false);
	if (!test_cur_failed)
		check_aliases(fixture("symbols-nopie"), false);
	if (!test_cur_failed)
		check_aliases(fixture("symbols-stripped"), true);
}

TEST(build_id_matches_readelf)
{
	static const char *const files[] = {"symbols-pie", "symbols-nopie", "symbols-stripped",
					    "libsym.so", "libsym-stripped.so"};

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		const char *path = fixture(files[i]);
		char want[128], got[128];
		struct elf_file *ef;
		int fd;

		CHECK_EQ(readelf__build_id(path, want, sizeof(want)), 0);
		CHECK_EQ(strlen(want), 40);
		fd = open(path, O_RDONLY);
		CHECK(fd >= 0);
		CHECK_EQ(elf__read_build_id(fd, got, sizeof(got)), 0);
		CHECK_STR(got, want);
		CHECK_EQ(elf__read_build_id(fd, got, 10), -ERANGE);
		CHECK_EQ(elf_file__open(fd, &ef), 0);
		close(fd);
		snprintf(got, sizeof(got), "%s", elf_file__build_id(ef));
		elf_file__free(ef);
		CHECK_STR(got, want);
	}
}

TEST(stripped_copy_keeps_build_id)
{
	char a[128], b[128];

	CHECK_EQ(readelf__build_id(fixture("symbols-pie"), a, sizeof(a)), 0);
	CHECK_EQ(readelf__build_id(fixture("symbols-stripped"), b, sizeof(b)), 0);
	CHECK(a[0]);
	CHECK_STR(a, b);
}

TEST(no_build_id)
{
	const char *path = fixture("symbols-nobuildid");
	char want[128], got[128] = "x";
	struct elf_file *ef;
	int fd;

	CHECK_EQ(readelf__build_id(path, want, sizeof(want)), 0);
	CHECK_STR(want, "");
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	CHECK_EQ(elf__read_build_id(fd, got, sizeof(got)), 0);
	CHECK_EQ(elf_file__open(fd, &ef), 0);
	close(fd);
	CHECK_STR(got, "");
	snprintf(got, sizeof(got), "%s", elf_file__build_id(ef));
	elf_file__free(ef);
	CHECK_STR(got, "");
}

static void check_offset_to_vaddr(const char *path, bool pie)
{
	uint64_t off, va, fsz, got = 0;
	struct elf_file *ef;

	CHECK_EQ(readelf__exec_load(path, &off, &va, &fsz), 0);
	CHECK(fsz > 0x20);
	/* The fixtures' text is never at the file offset it is loaded at. */
	CHECK(pie ? va < 0x400000 : va >= 0x400000);
	CHECK_EQ(elf_file__open_path(path, &ef), 0);
	CHECK_EQ(elf_file__offset_to_vaddr(ef, off + 0x10, &got), 0);
	CHECK_EQ(got, va + 0x10);
	CHECK_EQ(elf_file__offset_to_vaddr(ef, off, &got), 0);
	CHECK_EQ(got, va);
	CHECK_EQ(elf_file__offset_to_vaddr(ef, off + fsz - 1, &got), 0);
	CHECK_EQ(got, va + fsz - 1);
	CHECK_EQ(elf_file__offset_to_vaddr(ef, 1ull << 40, &got), -ENOENT);
	elf_file__free(ef);
}

TEST(offset_to_vaddr_pie)
{
	check_offset_to_vaddr(fixture("symbols-pie"), true);
}

TEST(offset_to_vaddr_nopie)
{
	check_offset_to_vaddr(fixture("symbols-nopie"), false);
}

static int elf__open_path(const char *path, int *fd, Elf **elf)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return -errno;
	*elf = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!*elf) {
		close(*fd);
		return -ENOEXEC;
	}
	return 0;
}

struct sym_seen {
	const char *want;
	int nr_symtab, nr_dynsym, nr_want;
	struct elf_symbol last;
	bool stop;
};

static int sym_seen__count(const struct elf_symbol *s, void *ctx)
{
	struct sym_seen *ss = ctx;

	if (s->dynsym)
		ss->nr_dynsym++;
	else
		ss->nr_symtab++;
	if (strcmp(s->name, ss->want))
		return 0;
	ss->nr_want++;
	ss->last = *s;
	return ss->stop ? 7 : 0;
}

/* Counts and finds want in path's tables; the table and index it gives must hold it. */
static void check_symbols(const char *path, unsigned int tables, const char *want,
			  struct sym_seen *ss)
{
	GElf_Shdr shdr;
	GElf_Sym sym;
	Elf_Scn *scn;
	int fd, ret;
	Elf *elf;

	memset(ss, 0, sizeof(*ss));
	ss->want = want;
	CHECK_EQ(elf__open_path(path, &fd, &elf), 0);
	ret = elf__for_each_symbol(elf, tables, sym_seen__count, ss);
	CHECK_EQ(ret, 0);
	if (ss->nr_want) {
		scn = elf_getscn(elf, ss->last.table);
		CHECK(scn && gelf_getshdr(scn, &shdr));
		CHECK_EQ(shdr.sh_type, ss->last.dynsym ? SHT_DYNSYM : SHT_SYMTAB);
		CHECK(gelf_getsym(elf_getdata(scn, NULL), (int)ss->last.index, &sym));
		CHECK_EQ(sym.st_value, ss->last.sym.st_value);
		CHECK_STR(elf_strptr(elf, shdr.sh_link, sym.st_name), want);
	}
	elf_end(elf);
	close(fd);
}

TEST(for_each_symbol_tables)
{
	const char *path = fixture("symbols-pie");
	uint64_t start, size;
	struct sym_seen ss;

	CHECK_EQ(test_nm_symbol(path, "fixture_alpha", false, &start, &size), 0);
	check_symbols(path, ELF_SYMTAB, "fixture_alpha", &ss);
	CHECK_EQ(ss.nr_want, 1);
	CHECK_EQ(ss.nr_dynsym, 0);
	CHECK(!ss.last.dynsym);
	CHECK_EQ(ss.last.sym.st_value, start);
	/* -rdynamic: in both tables, .dynsym first in section order. */
	check_symbols(path, ELF_SYMTAB | ELF_DYNSYM, "fixture_alpha", &ss);
	CHECK_EQ(ss.nr_want, 2);
	CHECK(ss.nr_dynsym > 0 && ss.nr_symtab > ss.nr_dynsym);
	CHECK(!ss.last.dynsym);
	check_symbols(path, ELF_DYNSYM, "fixture_alpha", &ss);
	CHECK_EQ(ss.nr_want, 1);
	CHECK(ss.last.dynsym);
	CHECK_EQ(ss.last.sym.st_value, start);
	/* A static function is in .symtab only. */
	check_symbols(path, ELF_DYNSYM, "fixture_static", &ss);
	CHECK_EQ(ss.nr_want, 0);
	check_symbols(path, ELF_SYMTAB, "fixture_static", &ss);
	CHECK_EQ(ss.nr_want, 1);
	CHECK_EQ(GELF_ST_BIND(ss.last.sym.st_info), STB_LOCAL);
	/* Undefined symbols are passed too: printf comes from libc. */
	check_symbols(path, ELF_DYNSYM, "printf", &ss);
	CHECK_EQ(ss.nr_want, 1);
	CHECK_EQ(ss.last.sym.st_shndx, SHN_UNDEF);
	check_symbols(path, 0, "fixture_alpha", &ss);
	CHECK_EQ(ss.nr_symtab + ss.nr_dynsym, 0);
}

TEST(for_each_symbol_stripped_and_debug_file)
{
	struct sym_seen ss;

	check_symbols(fixture("symbols-stripped"), ELF_SYMTAB, "fixture_alpha", &ss);
	CHECK_EQ(ss.nr_symtab, 0);
	check_symbols(fixture("symbols-stripped"), ELF_SYMTAB | ELF_DYNSYM, "fixture_alpha", &ss);
	CHECK_EQ(ss.nr_want, 1);
	CHECK(ss.last.dynsym);
	/* The debug file's .dynsym is NOBITS: nothing from it, and no crash. */
	check_symbols(fixture("symbols-pie.debug"), ELF_DYNSYM, "fixture_alpha", &ss);
	CHECK_EQ(ss.nr_dynsym, 0);
	check_symbols(fixture("symbols-pie.debug"), ELF_SYMTAB, "fixture_alpha", &ss);
	CHECK_EQ(ss.nr_want, 1);
}

TEST(for_each_symbol_stops)
{
	struct sym_seen ss = {.want = "fixture_beta", .stop = true};
	int fd, nr;
	Elf *elf;

	CHECK_EQ(elf__open_path(fixture("symbols-pie"), &fd, &elf), 0);
	CHECK_EQ(elf__for_each_symbol(elf, ELF_SYMTAB | ELF_DYNSYM, sym_seen__count, &ss), 7);
	CHECK_EQ(ss.nr_want, 1);
	CHECK(ss.last.dynsym);
	nr = ss.nr_symtab + ss.nr_dynsym;
	/* It stopped in .dynsym: .symtab was never reached. */
	CHECK_EQ(ss.nr_symtab, 0);
	CHECK(nr > 0);
	elf_end(elf);
	close(fd);
}

TEST(section_by_name)
{
	GElf_Shdr shdr, dbg;
	Elf_Scn *scn;
	int fd, fd2;
	Elf *elf, *elf2;

	CHECK_EQ(elf__open_path(fixture("symbols-pie"), &fd, &elf), 0);
	scn = elf__section(elf, ".text", &shdr);
	CHECK(scn);
	CHECK_EQ(shdr.sh_type, SHT_PROGBITS);
	CHECK(shdr.sh_flags & SHF_EXECINSTR);
	CHECK(elf__section(elf, ".symtab", &shdr));
	CHECK_EQ(shdr.sh_type, SHT_SYMTAB);
	CHECK(!elf__section(elf, ".no_such_section", &shdr));
	CHECK(!elf__section(elf, ".tex", &shdr));
	CHECK(elf__section(elf, ".text", &shdr) == scn);
	/* The debug file keeps the name and address, the code becomes NOBITS. */
	CHECK_EQ(elf__open_path(fixture("symbols-pie.debug"), &fd2, &elf2), 0);
	CHECK(elf__section(elf2, ".text", &dbg));
	CHECK_EQ(dbg.sh_type, SHT_NOBITS);
	CHECK_EQ(dbg.sh_addr, shdr.sh_addr);
	elf_end(elf2);
	close(fd2);
	elf_end(elf);
	close(fd);
}

TEST(read_vaddr)
{
	const char *path = fixture("symbols-nopie");
	uint64_t start, size, off, va, fsz, file_off;
	uint8_t got[16], want[16];
	int fd;
	Elf *elf;

	CHECK_EQ(test_nm_symbol(path, "fixture_alpha", false, &start, &size), 0);
	CHECK_EQ(readelf__exec_load(path, &off, &va, &fsz), 0);
	CHECK_EQ(elf__open_path(path, &fd, &elf), 0);
	CHECK_EQ(elf__vaddr_to_offset(elf, start, &file_off), 0);
	CHECK_EQ(pread(fd, want, sizeof(want), (off_t)file_off), (ssize_t)sizeof(want));
	CHECK_EQ(elf__read_vaddr(elf, start, got, sizeof(got)), 0);
	CHECK(!memcmp(got, want, sizeof(got)));
	/* The last bytes of the segment, and one byte too many. */
	CHECK_EQ(elf__read_vaddr(elf, va + fsz - 4, got, 4), 0);
	CHECK_EQ(elf__read_vaddr(elf, va + fsz - 4, got, 5), -ENOENT);
	CHECK_EQ(elf__read_vaddr(elf, 1ull << 40, got, 1), -ENOENT);
	elf_end(elf);
	close(fd);
}

static int write_temp(const char *content, size_t len, char *path, size_t path_size)
{
	int fd;

	snprintf(path, path_size, "/tmp/test_elf.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	if (write(fd, content, len) != (ssize_t)len) {
		close(fd);
		unlink(path);
		return -EIO;
	}
	return fd;
}

TEST(not_elf)
{
	static const char text[] = "#!/bin/sh\necho this is not an ELF file\n";
	char path[64], hex[64];
	struct elf_file *ef = NULL;
	int fd, open_err, bid_err;

	fd = write_temp(text, sizeof(text) - 1, path, sizeof(path));
	CHECK(fd >= 0);
	open_err = elf_file__open(fd, &ef);
	bid_err = elf__read_build_id(fd, hex, sizeof(hex));
	close(fd);
	unlink(path);
	CHECK_EQ(open_err, -ENOEXEC);
	CHECK_EQ(bid_err, -ENOEXEC);
	CHECK(ef == NULL);

	fd = write_temp("", 0, path, sizeof(path));
	CHECK(fd >= 0);
	open_err = elf_file__open(fd, &ef);
	close(fd);
	unlink(path);
	CHECK_EQ(open_err, -ENOEXEC);

	/* A truncated ELF: the magic is there, the headers are not. */
	fd = write_temp("\177ELF\2\1\1", 7, path, sizeof(path));
	CHECK(fd >= 0);
	open_err = elf_file__open(fd, &ef);
	close(fd);
	unlink(path);
	CHECK_EQ(open_err, -ENOEXEC);
}

/*
 * An ELF file of nsyms functions that all share one name of name_len bytes: each is a table
 * entry of 24 bytes, so a few make a file that claims more names than it has bytes.
 */
static int shared_name_elf(size_t nsyms, size_t name_len)
{
	static const char shstr[] = "\0.text\0.symtab\0.strtab\0.shstrtab";
	size_t sym_off = sizeof(Elf64_Ehdr), str_off = sym_off + (nsyms + 1) * sizeof(Elf64_Sym);
	size_t shstr_off = str_off + name_len + 2, sh_off = (shstr_off + sizeof(shstr) + 7) & ~7ul;
	Elf64_Ehdr eh = {
		.e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT },
		.e_type = ET_DYN, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
		.e_shoff = sh_off, .e_ehsize = sizeof(Elf64_Ehdr),
		.e_shentsize = sizeof(Elf64_Shdr), .e_shnum = 5, .e_shstrndx = 4,
	};
	Elf64_Shdr sh[5] = {
		{},
		{ .sh_name = 1, .sh_type = SHT_NOBITS, .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
		  .sh_addr = 0x1000, .sh_size = 0x100000, .sh_addralign = 16 },
		{ .sh_name = 7, .sh_type = SHT_SYMTAB, .sh_offset = sym_off,
		  .sh_size = (nsyms + 1) * sizeof(Elf64_Sym), .sh_link = 3, .sh_info = 1,
		  .sh_addralign = 8, .sh_entsize = sizeof(Elf64_Sym) },
		{ .sh_name = 15, .sh_type = SHT_STRTAB, .sh_offset = str_off,
		  .sh_size = name_len + 2, .sh_addralign = 1 },
		{ .sh_name = 23, .sh_type = SHT_STRTAB, .sh_offset = shstr_off,
		  .sh_size = sizeof(shstr), .sh_addralign = 1 },
	};
	size_t len = sh_off + sizeof(sh);
	char *img = calloc(1, len);
	int fd = memfd_create("test_elf", MFD_CLOEXEC);

	if (!img || fd < 0)
		goto fail;
	memcpy(img, &eh, sizeof(eh));
	for (size_t i = 1; i <= nsyms; i++) {
		Elf64_Sym sym = { .st_name = 1, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
				  .st_shndx = 1, .st_value = 0x1000 + 16 * i, .st_size = 16 };

		memcpy(img + sym_off + i * sizeof(sym), &sym, sizeof(sym));
	}
	memset(img + str_off + 1, 'f', name_len);
	memcpy(img + shstr_off, shstr, sizeof(shstr));
	memcpy(img + sh_off, sh, sizeof(sh));
	if (write(fd, img, len) != (ssize_t)len)
		goto fail;
	free(img);
	return fd;
fail:
	free(img);
	if (fd >= 0)
		close(fd);
	return -1;
}

/* The names copied out are bounded by the file's size: a small file cannot claim gigabytes. */
TEST(names_bounded_by_file_size)
{
	struct elf_file *ef = NULL;
	uint64_t start;
	int fd, err;

	/* Two functions of one 3000-byte name: 6 KB of names in a file of 6 KB. */
	fd = shared_name_elf(2, 3000);
	CHECK(fd >= 0);
	err = elf_file__open(fd, &ef);
	close(fd);
	CHECK_EQ(err, 0);
	if (err)
		return;
	CHECK_EQ(elf_file__nr_symbols(ef), 2);
	CHECK(elf_file__symbol(ef, 0x1018, &start) != NULL);
	CHECK_EQ(start, 0x1010);
	elf_file__free(ef);

	/* 200 of them: 600 KB of names in a file of 8 KB. */
	ef = NULL;
	fd = shared_name_elf(200, 3000);
	CHECK(fd >= 0);
	CHECK_EQ(elf_file__open(fd, &ef), -EFBIG);
	CHECK(ef == NULL);
	close(fd);
}

TEST(sizes)
{
	struct elf_file *ef;
	size_t nr, bytes;

	CHECK_EQ(elf_file__open_path(fixture("symbols-pie"), &ef), 0);
	nr = elf_file__nr_symbols(ef);
	bytes = elf_file__bytes(ef);
	elf_file__free(ef);
	CHECK(nr >= 5);
	/* Every symbol costs its table entry and at least a one-letter name. */
	CHECK(bytes >= nr * 18);
	CHECK(bytes < 64 * 1024);
}

/* Where code address addr comes from: its mapping's path and its file offset. */
struct find_map {
	uint64_t addr;
	char path[PATH_MAX];
	uint64_t offset;
};

static int find_map__cb(const struct map_entry *e, void *ctx)
{
	struct find_map *fm = ctx;

	if (fm->addr < e->start || fm->addr >= e->end || !e->path[0])
		return 0;
	snprintf(fm->path, sizeof(fm->path), "%s", e->path);
	fm->offset = fm->addr - e->start + e->pgoff;
	return 1;
}

__attribute__((noinline)) int test_elf_marker(int x);
__attribute__((noinline)) int test_elf_marker(int x)
{
	return x * 11 + (int)getpid();
}

/* The symbolizer's own path: address -> mapping -> file offset -> ELF vaddr -> name. */
static void symbolize_self(uint64_t addr, const char **name, uint64_t *sym_start, uint64_t *vaddr,
			   double *load_ms, char *namebuf, size_t namebuf_size)
{
	struct find_map fm = {.addr = addr};
	struct timespec t0, t1;
	struct elf_file *ef;
	const char *sym;

	*name = NULL;
	CHECK_EQ(maps__for_each(getpid(), true, find_map__cb, &fm), 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_EQ(elf_file__open_path(fm.path, &ef), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*load_ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	CHECK_EQ(elf_file__offset_to_vaddr(ef, fm.offset, vaddr), 0);
	sym = elf_file__symbol(ef, *vaddr, sym_start);
	if (sym) {
		snprintf(namebuf, namebuf_size, "%s", sym);
		*name = namebuf;
	}
	elf_file__free(ef);
}

TEST(symbolizes_own_function)
{
	uint64_t addr = (uintptr_t)&test_elf_marker, start = 0, vaddr = 0;
	const char *name;
	char buf[256];
	double ms;

	symbolize_self(addr + 2, &name, &start, &vaddr, &ms, buf, sizeof(buf));
	if (test_cur_failed)
		return;
	CHECK_STR(name, "test_elf_marker");
	CHECK_EQ(start, vaddr - 2);
}

TEST(libc_symbols_load_fast)
{
	void *fn = dlsym(RTLD_DEFAULT, "getpid");
	uint64_t start = 0, vaddr = 0;
	const char *name;
	char buf[256];
	double ms;

	CHECK(fn != NULL);
	symbolize_self((uintptr_t)fn, &name, &start, &vaddr, &ms, buf, sizeof(buf));
	if (test_cur_failed)
		return;
	CHECK(name != NULL);
	CHECK_EQ(start, vaddr);
	/* Whichever alias was chosen, the dynamic linker must agree it is this function. */
	CHECK(dlsym(RTLD_DEFAULT, name) == fn);
	if (ms > 20)
		FAILF("loading libc's symbols took %.1f ms", ms);
}

int main(void)
{
	RUN(symbols_pie);
	RUN(symbols_nopie);
	RUN(symbols_shared_lib);
	RUN(symbols_nobuildid);
	RUN(stripped_exe_keeps_dynamic_symbols);
	RUN(stripped_lib_keeps_dynamic_symbols);
	RUN(loader_entry_named_start);
	RUN(padding_has_no_symbol);
	RUN(alias_naming_rule);
	RUN(build_id_matches_readelf);
	RUN(stripped_copy_keeps_build_id);
	RUN(no_build_id);
	RUN(offset_to_vaddr_pie);
	RUN(offset_to_vaddr_nopie);
	RUN(for_each_symbol_tables);
	RUN(for_each_symbol_stripped_and_debug_file);
	RUN(for_each_symbol_stops);
	RUN(section_by_name);
	RUN(read_vaddr);
	RUN(not_elf);
	RUN(names_bounded_by_file_size);
	RUN(sizes);
	RUN(symbolizes_own_function);
	RUN(libc_symbols_load_fast);
	return test_summary();
}
