// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "debuginfo: " fmt

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <lzma.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "lib/log.h"
#include "lib/ufile.h"
#include "symbolize/debuginfo.h"
#include "symbolize/elf.h"

#define DEBUG_DIR "/usr/lib/debug"
/* Build IDs are 20 bytes (sha1) by default; --build-id=0x... may be longer, but not sanely. */
#define BUILD_ID_HEX_MAX 128
/* MiniDebugInfo is a symbol table only: even huge binaries stay far below this. */
#define MINIDEBUGINFO_MAX (64u << 20)
/* xz -6 (what the gdb recipe uses) needs ~9 MiB to decode; -9 needs ~65 MiB. */
#define MINIDEBUGINFO_MEMLIMIT (64u << 20)
#define CHUNK_SIZE	       (64u << 10)

/* The filesystem that candidate paths are looked up in: the host, or a process's root. */
struct debug_root {
	int dirfd;	    /* the root directory (O_PATH) */
	const char *prefix; /* "" for the host, else root: for messages */
};

static int debug_root__init(struct debug_root *r, const char *root)
{
	r->prefix = root && root[0] ? root : "";
	r->dirfd = open(r->prefix[0] ? root : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	return r->dirfd < 0 ? -errno : 0;
}

static void debug_root__exit(struct debug_root *r)
{
	if (r->dirfd >= 0)
		close(r->dirfd);
}

/*
 * Opens path (absolute, as seen inside the root) read-only. Inside a process's root, absolute
 * symlinks (common in .build-id/) must resolve against that root, not the host's; a FIFO or a
 * device planted there must not hang or feed the profiler: ufile.h does both.
 */
static int debug_root__open(struct debug_root *r, const char *path)
{
	const struct ufile_how how = { .max_size = UFILE_MAX_ELF };

	return ufile__openat(r->dirfd, path, &how, NULL);
}

/* Lookup outcome so far: not-found is the default, a real error (EACCES, ...) is worth more. */
static void lookup__note(int *result, int err)
{
	if (err == -ENOENT || err == -ENOTDIR)
		return;
	if (*result == -ENOENT)
		*result = err;
}

/* Lower-case copy of a hex build ID; -EINVAL for anything that could not name a .build-id file. */
static int build_id__normalize(const char *build_id, char *out, size_t out_size)
{
	size_t len = strlen(build_id);

	/* Two bytes at least: one for the directory, one for the file name. */
	if (len < 4 || len % 2 || len >= out_size || len > BUILD_ID_HEX_MAX)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (!isxdigit((unsigned char)build_id[i]))
			return -EINVAL;
		out[i] = (char)tolower((unsigned char)build_id[i]);
	}
	out[len] = '\0';
	return 0;
}

static int debuginfo__open_by_build_id(struct debug_root *r, const char *build_id)
{
	char id[BUILD_ID_HEX_MAX + 1], path[PATH_MAX], found[BUILD_ID_HEX_MAX + 1];
	int fd, err;

	err = build_id__normalize(build_id, id, sizeof(id));
	if (err)
		return err;
	snprintf(path, sizeof(path), DEBUG_DIR "/.build-id/%.2s/%s.debug", id, id + 2);
	fd = debug_root__open(r, path);
	if (fd < 0)
		return fd;
	/* A stale file from an older package version would name every frame wrongly. */
	err = elf__read_build_id(fd, found, sizeof(found));
	if (err || strcmp(found, id)) {
		pr_debug("%s%s: build ID %s, expected %s\n", r->prefix, path,
			 err ? "unreadable" : found, id);
		close(fd);
		return -ENOENT;
	}
	return fd;
}

static int debuginfo__elf_begin(int fd, Elf **out)
{
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return -ENOEXEC;
	if (elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		return -ENOEXEC;
	}
	*out = elf;
	return 0;
}

/*
 * .gnu_debuglink: the debug file's base name, NUL, padding to 4 bytes, then the CRC32 of the
 * whole debug file in the binary's byte order. Returns 0, -ENODATA or -EINVAL (malformed).
 */
static int debuglink__read(int bin_fd, char *name, size_t name_size, uint32_t *crc)
{
	const unsigned char *p;
	GElf_Ehdr ehdr;
	GElf_Shdr shdr;
	Elf_Data *data;
	Elf_Scn *scn;
	size_t len, crc_off;
	Elf *elf;
	int err;

	err = debuginfo__elf_begin(bin_fd, &elf);
	if (err)
		return err;
	err = -ENODATA;
	scn = elf__section(elf, ".gnu_debuglink", &shdr);
	if (!scn || shdr.sh_type == SHT_NOBITS || !gelf_getehdr(elf, &ehdr))
		goto out_elf;
	data = elf_rawdata(scn, NULL);
	if (!data || !data->d_buf)
		goto out_elf;
	err = -EINVAL;
	p = data->d_buf;
	len = strnlen((const char *)p, data->d_size);
	crc_off = (len + 1 + 3) & ~(size_t)3;
	if (!len || len >= name_size || crc_off + 4 > data->d_size)
		goto out_elf;
	memcpy(name, p, len + 1);
	/*
	 * The name is a base name by definition; one with a '/' (or "..") would let a binary
	 * point the lookup anywhere in the filesystem, so it is refused rather than followed.
	 */
	if (strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		goto out_elf;
	p += crc_off;
	if (ehdr.e_ident[EI_DATA] == ELFDATA2MSB)
		*crc = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	else
		*crc = (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
	err = 0;
out_elf:
	elf_end(elf);
	return err;
}

/* CRC32 (zlib's, which is the one .gnu_debuglink uses) of the whole file. */
static int file__crc32(int fd, uint32_t *out)
{
	unsigned char *buf;
	uLong crc = crc32(0L, Z_NULL, 0);
	off_t off = 0;
	int err = 0;

	buf = malloc(CHUNK_SIZE * 16);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n = pread(fd, buf, CHUNK_SIZE * 16, off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (!n)
			break;
		crc = crc32(crc, buf, (uInt)n);
		off += n;
	}
	free(buf);
	*out = (uint32_t)crc;
	return err;
}

static int debuginfo__open_by_debuglink(struct debug_root *r, const char *bin_path, int bin_fd)
{
	char name[NAME_MAX + 1], dir[PATH_MAX], path[PATH_MAX];
	const char *slash;
	int result = -ENOENT;
	uint32_t want;
	int err;

	if (bin_fd < 0 || !bin_path || bin_path[0] != '/')
		return -ENOENT;
	/* No section, not ELF or a malformed section all mean the same: nothing to follow. */
	if (debuglink__read(bin_fd, name, sizeof(name), &want))
		return -ENOENT;
	slash = strrchr(bin_path, '/');
	if ((size_t)(slash - bin_path) >= sizeof(dir))
		return -ENAMETOOLONG;
	/* "" for a binary in "/", so that every candidate below still starts with '/'. */
	memcpy(dir, bin_path, (size_t)(slash - bin_path));
	dir[slash - bin_path] = '\0';

	for (int i = 0; i < 3; i++) {
		uint32_t crc;
		int fd, n;

		switch (i) {
		case 0:
			n = snprintf(path, sizeof(path), "%s/%s", dir, name);
			break;
		case 1:
			n = snprintf(path, sizeof(path), "%s/.debug/%s", dir, name);
			break;
		default:
			n = snprintf(path, sizeof(path), DEBUG_DIR "%s/%s", dir, name);
			break;
		}
		if ((size_t)n >= sizeof(path))
			continue;
		fd = debug_root__open(r, path);
		if (fd < 0) {
			lookup__note(&result, fd);
			continue;
		}
		err = file__crc32(fd, &crc);
		if (!err && crc == want)
			return fd;
		if (err)
			lookup__note(&result, err);
		else
			pr_debug("%s%s: CRC %08x, .gnu_debuglink wants %08x\n", r->prefix, path,
				 crc, want);
		close(fd);
	}
	return result;
}

int debuginfo__open_debug_file(const char *root, const char *bin_path, int bin_fd,
			       const char *build_id)
{
	struct debug_root r;
	int result = -ENOENT;
	int fd, err;

	err = debug_root__init(&r, root);
	if (err)
		return err;
	if (build_id && build_id[0]) {
		fd = debuginfo__open_by_build_id(&r, build_id);
		if (fd >= 0)
			goto out_root;
		if (fd != -EINVAL)
			lookup__note(&result, fd);
	}
	fd = debuginfo__open_by_debuglink(&r, bin_path, bin_fd);
	if (fd >= 0)
		goto out_root;
	lookup__note(&result, fd);
	fd = result;
out_root:
	debug_root__exit(&r);
	return fd;
}

/* Writes all of buf, retrying short writes. */
static int fd__write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int lzma__errno(lzma_ret ret)
{
	switch (ret) {
	case LZMA_MEM_ERROR:
	case LZMA_MEMLIMIT_ERROR:
		return -ENOMEM;
	case LZMA_OPTIONS_ERROR:
	case LZMA_UNSUPPORTED_CHECK:
		return -ENOTSUP;
	default:
		/* LZMA_FORMAT_ERROR, LZMA_DATA_ERROR, LZMA_BUF_ERROR (truncated input), ... */
		return -EBADMSG;
	}
}

/* Decompresses the xz stream in into fd, at most MINIDEBUGINFO_MAX bytes of output. */
static int xz__decompress_to_fd(const void *in, size_t in_size, int fd)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	uint8_t *out;
	uint64_t total = 0;
	lzma_ret ret;
	int err = 0;

	out = malloc(CHUNK_SIZE);
	if (!out)
		return -ENOMEM;
	ret = lzma_stream_decoder(&strm, MINIDEBUGINFO_MEMLIMIT, 0);
	if (ret != LZMA_OK) {
		err = lzma__errno(ret);
		goto out_buf;
	}
	strm.next_in = in;
	strm.avail_in = in_size;
	do {
		size_t n;

		strm.next_out = out;
		strm.avail_out = CHUNK_SIZE;
		/* The whole input is there: LZMA_FINISH makes a truncated stream an error. */
		ret = lzma_code(&strm, LZMA_FINISH);
		if (ret != LZMA_OK && ret != LZMA_STREAM_END) {
			err = lzma__errno(ret);
			goto out_strm;
		}
		n = CHUNK_SIZE - strm.avail_out;
		/* Checked before anything is written: the bound is on memory, memfds are RAM. */
		if (total + n > MINIDEBUGINFO_MAX) {
			err = -EFBIG;
			goto out_strm;
		}
		if (!total && n && (n < SELFMAG || memcmp(out, ELFMAG, SELFMAG))) {
			err = -EBADMSG;
			goto out_strm;
		}
		err = fd__write_all(fd, out, n);
		if (err)
			goto out_strm;
		total += n;
	} while (ret != LZMA_STREAM_END);
	if (!total)
		err = -EBADMSG;
out_strm:
	lzma_end(&strm);
out_buf:
	free(out);
	return err;
}

int debuginfo__open_minidebuginfo(int bin_fd)
{
	GElf_Shdr shdr;
	Elf_Data *data;
	Elf_Scn *scn;
	Elf *elf;
	int fd, err;

	err = debuginfo__elf_begin(bin_fd, &elf);
	if (err)
		return err;
	scn = elf__section(elf, ".gnu_debugdata", &shdr);
	if (!scn || shdr.sh_type == SHT_NOBITS || !shdr.sh_size) {
		err = -ENODATA;
		goto out_elf;
	}
	data = elf_rawdata(scn, NULL);
	if (!data || !data->d_buf || !data->d_size) {
		err = -ENODATA;
		goto out_elf;
	}
	fd = memfd_create("autoprof-minidebuginfo", MFD_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto out_elf;
	}
	err = xz__decompress_to_fd(data->d_buf, data->d_size, fd);
	if (err) {
		pr_debug(".gnu_debugdata: %s\n", strerror(-err));
		goto out_memfd;
	}
	elf_end(elf);
	return fd;

out_memfd:
	close(fd);
out_elf:
	elf_end(elf);
	return err;
}
