/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_DEBUGINFO_H
#define AUTOPROF_DEBUGINFO_H

/*
 * Where the symbols of a stripped binary went: a separate debug file (distribution -dbg/-dbgsym
 * packages, objcopy --only-keep-debug) or MiniDebugInfo embedded in the binary itself (Fedora).
 * Both give an ELF file that elf_file__open() reads like any other.
 */

/*
 * Opens the separate debug file for an ELF binary, the way gdb and elfutils look for it:
 * 1. ROOT/usr/lib/debug/.build-id/xx/yyyy.debug (build_id hex, first byte as dir), accepted
 *    only when its own build ID is build_id;
 * 2. .gnu_debuglink name (CRC32 checked against the section's CRC) in DIR(binary)/NAME,
 *    DIR/.debug/NAME, ROOT/usr/lib/debug/DIR/NAME, DIR being bin_path's directory, under ROOT.
 * root: "" (or NULL) for the host, or "/proc/PID/root" for a process in another mount namespace;
 * bin_path: the absolute path as the process mapped it (without a " (deleted)" suffix);
 * bin_fd: an open fd of the binary (for reading .gnu_debuglink); build_id: hex (any case), NULL or
 * "" when unknown. Under a root, paths (symlinks included) resolve inside it (openat2
 * RESOLVE_IN_ROOT). Returns an fd (caller closes) or a negative errno: -ENOENT when none was
 * found, another one (-EACCES, ...) when a candidate exists but could not be opened or read.
 */
int debuginfo__open_debug_file(const char *root, const char *bin_path, int bin_fd,
			       const char *build_id);

/*
 * MiniDebugInfo: decompresses the binary's .gnu_debugdata section (xz/LZMA, an ELF file holding a
 * .symtab of local symbols) into an anonymous memfd the caller can pass to elf_file__open().
 * Returns the fd (caller closes) or a negative errno: -ENODATA when there is no such section,
 * -ENOEXEC when bin_fd is not ELF, -EFBIG when it would decompress to more than 64 MiB,
 * -EBADMSG when the section is not valid xz data.
 */
int debuginfo__open_minidebuginfo(int bin_fd);

#endif
