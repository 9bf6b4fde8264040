/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_TESTS_GOPCLNTAB_ELF_H
#define AUTOPROF_TESTS_GOPCLNTAB_ELF_H

/* For test_gosym and test_symbolizer: a Go table that claims more than a budget allows. */
#include <elf.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

/*
 * An ELF file whose .gopclntab header claims tab_size bytes at the end of a file of file_size
 * bytes (sparse: nothing is written past the headers), its first bytes a Go 1.20 table's magic.
 */
static inline int claimed_table_elf(uint64_t tab_size, uint64_t file_size)
{
	static const char shstr[] = "\0.gopclntab\0.shstrtab";
	static const uint8_t magic[8] = { 0xf1, 0xff, 0xff, 0xff, 0, 0, 1, 8 };
	uint64_t sh_off = sizeof(Elf64_Ehdr), str_off = sh_off + 3 * sizeof(Elf64_Shdr);
	uint64_t tab_off = str_off + sizeof(shstr);
	Elf64_Ehdr eh = {
		.e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT },
		.e_type = ET_EXEC, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
		.e_shoff = sh_off, .e_ehsize = sizeof(Elf64_Ehdr),
		.e_shentsize = sizeof(Elf64_Shdr), .e_shnum = 3, .e_shstrndx = 2,
	};
	Elf64_Shdr sh[3] = {
		{},
		{ .sh_name = 1, .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC, .sh_addr = 0x500000,
		  .sh_offset = tab_off, .sh_size = tab_size, .sh_addralign = 1 },
		{ .sh_name = 12, .sh_type = SHT_STRTAB, .sh_offset = str_off,
		  .sh_size = sizeof(shstr), .sh_addralign = 1 },
	};
	int fd = memfd_create("test_gosym", MFD_CLOEXEC);

	if (fd < 0 || ftruncate(fd, (off_t)file_size) ||
	    pwrite(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    pwrite(fd, sh, sizeof(sh), (off_t)sh_off) != sizeof(sh) ||
	    pwrite(fd, shstr, sizeof(shstr), (off_t)str_off) != sizeof(shstr) ||
	    pwrite(fd, magic, sizeof(magic), (off_t)tab_off) != sizeof(magic)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

#endif
