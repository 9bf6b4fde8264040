/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_RUNTIME_GOLABELS_H
#define AUTOPROF_RUNTIME_GOLABELS_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Go pprof labels as trace context: a goroutine inside runtime/pprof.Do(ctx, pprof.Labels(
 * "trace_id", HEX32, "span_id", HEX16), ...) carries them in runtime.g.labels, a pointer to a
 * labelMap (map[string]string up to Go 1.23). The sampler (bpf/tracectx.bpf.h) reads the g of
 * the interrupted thread from its TLS slot, follows g.m.curg to the goroutine the thread runs,
 * then its labels; this finds, per executable, which offsets apply.
 */

struct golabels_offsets {
	char version[32];	/* "go1.19.8", from .go.buildinfo; "" when unknown */
	bool from_dwarf;	/* the struct offsets come from the binary's DWARF, not the table */
	bool tlsg_found;	/* .symtab names runtime.tlsg (external linking, cgo) */
	uint64_t tlsg;		/* its st_value: its offset in the executable's TLS block */
	uint16_t g_m;		/* runtime.g.m */
	uint16_t m_curg;	/* runtime.m.curg */
	uint16_t g_labels;	/* runtime.g.labels */
};

/* Whether elf is a Go executable: .go.buildinfo or .note.go.buildid. */
bool golabels__is_go(Elf *elf);

/*
 * The Go version recorded in a .go.buildinfo section's contents (the 1.18+ inline form; the
 * older form points elsewhere and is read by golabels__probe). 0 with out filled, -ENOENT when
 * the section has the older form, -EINVAL when it is malformed or out is too small.
 */
int golabels__buildinfo_version(const uint8_t *data, size_t size, char *out, size_t n);

/*
 * The table of struct offsets per Go release for binaries without DWARF: fills g_m, m_curg and
 * g_labels for version ("go1.N" or "go1.N.P", "devel go1.N..." too). 0, -EINVAL when the
 * string is no Go version, -ENOTSUP when the release keeps its labels some other way (before
 * Go 1.11, or 1.24 and later, which keep them in a slice) or is unknown.
 */
int golabels__version_offsets(const char *version, struct golabels_offsets *o);

/*
 * Everything the sampler needs about the Go executable elf (fd its file, both the caller's):
 * its version, the struct offsets (DWARF when present, else the table), runtime.tlsg. 0,
 * -ENODATA not a Go executable, -ENOTSUP a Go release whose labels are not read, or another
 * negative errno. Results are cached by file identity.
 */
int golabels__probe(int fd, Elf *elf, struct golabels_offsets *o);

#endif
