/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_MEMORY_MEMSAMPLE_H
#define AUTOPROF_MEMORY_MEMSAMPLE_H

/*
 * The pure logic of memory profiling, apart from BPF so that it is unit tested: where to put a
 * uprobe in an allocator function, the sampling intervals and how samples are scaled back to
 * estimates, and what a memory target is (pid or executable-name glob).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How a probe address was chosen. */
enum memprobe_kind {
	MEMPROBE_EMULATED = 0, /* on an instruction the kernel emulates (push, jcc, jmp, nop...) */
	MEMPROBE_ENTRY,	       /* none found: the entry, single-stepped (~12 us per hit) */
};

/*
 * Chooses where to probe a function whose first bytes are code[0, len): the first instruction
 * the kernel emulates, skipping at most a few leading instructions that only set flags (test
 * reg,reg; cmp $imm, disp32(%rip); cmp reg,reg; Go's stack check cmp disp8(%r14),%rsp) and so
 * change neither the argument registers,
 * the stack pointer nor the control flow. A probe there sees every call with the arguments and
 * the return address (at %rsp) of the entry, so a return probe can sit there too. Anything else
 * before an emulated instruction: the entry. Returns the offset; *kind says which.
 */
size_t memprobe__place(const uint8_t *code, size_t len, enum memprobe_kind *kind);

/*
 * Fills table[0, n) (n a power of two) with -ln(u) at the n quantiles u = (i + 1/2) / n, in
 * fixed point << shift and normalized to a mean of exactly 1: a sampling interval is
 * mean * table[random] >> shift, a quantized exponential distribution with the given mean.
 */
void memsample__exp_table(uint32_t *table, size_t n, unsigned int shift);

/*
 * What one sampled allocation of size bytes stands for, with byte sampling at mean interval:
 * it was sampled with probability 1 - exp(-size/mean), so it estimates 1/that allocations
 * (Go's and tcmalloc's scaling). *bytes is rounded to the nearest integer; *objects, whose
 * fraction matters (a 64 KiB block at a 64 KiB mean stands for 1.58), is rounded up with the
 * probability of its fraction, u uniform in [0, 1), so that sums stay unbiased.
 */
void memsample__scale(uint64_t size, uint64_t mean, double u, uint64_t *objects,
		      uint64_t *bytes);

/*
 * A cgroup, as /proc/PID/cgroup names it: the hierarchy (cgroup v2, or the v1 hierarchy of
 * some controllers) and the path inside it.
 */
struct memcg {
	char dir[256];	       /* the cgroup's directory, as given (no trailing '/') */
	char rel[256];	       /* its path inside its hierarchy, "/" for the root */
	char controllers[256]; /* v1: the hierarchy's mount options ("rw,memory"); "" for v2 */
	bool v2;
};

/*
 * Resolves dir, the absolute path of a cgroup directory, against the text of
 * /proc/self/mountinfo: the cgroup or cgroup2 mount holding it (the longest mount point that is
 * a prefix). 0, or -ENOENT with a reason in why when no cgroup file system holds it.
 */
int memcg__resolve(const char *mountinfo, const char *dir, struct memcg *out, char *why,
		   size_t why_len);
/* True when the text of a /proc/PID/cgroup puts the process in cg or a cgroup below it. */
bool memcg__match(const struct memcg *cg, const char *proc_cgroup);
/* memcg__resolve against this machine: dir must be a directory. 0 or -ENOENT with why. */
int memcg__lookup(const char *dir, struct memcg *out, char *why, size_t why_len);

/* A memory target: a process id, a glob on the executable name, or a cgroup. */
#define MEMORY_MAX_TARGETS 64 /* each is matched against every exec: a bound on that cost */
struct memtarget_spec {
	uint32_t pid;	   /* 0 with a pattern or a cgroup */
	char pattern[256]; /* "" with a pid or a cgroup */
	bool is_cgroup;
	struct memcg cgroup;
};

/*
 * Parses an API request body, {"pid": 123}, {"exe": "pattern"} or {"cgroup": "/sys/fs/cgroup/x"}
 * (one key, JSON; the cgroup is looked up on this machine). Returns 0, or -EINVAL with a reason
 * in why.
 */
int memtarget__parse(const char *body, struct memtarget_spec *out, char *why, size_t why_len);
/*
 * Parses one memory.targets entry: "cgroup:DIR" or an executable-name glob. 0, or -EINVAL with a
 * reason in why.
 */
int memtarget__parse_config(const char *entry, struct memtarget_spec *out, char *why,
			    size_t why_len);
/* True when exe (a basename) matches the glob. */
bool memtarget__match(const char *pattern, const char *exe);

#endif
