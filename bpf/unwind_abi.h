/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_BPF_UNWIND_ABI_H
#define AUTOPROF_BPF_UNWIND_ABI_H

/*
 * Table unwinding of user stacks (x86-64), shared between bpf/unwind.bpf.h and src/unwind/:
 * __u32/__u64 only, no libc.
 *
 * User space turns each file's .eh_frame/.debug_frame into sorted rows, one per address range
 * with the same rule, keyed by offset in the file (so BPF needs no ELF segment math: the offset
 * is pc - mapping start + mapping file offset). Rows of every file live in one array, a file
 * holding the contiguous range [row_start, row_start + row_count) of it; each process has a
 * sorted table of its executable mappings naming the file slot behind each.
 */

/*
 * That array is a space of 8-byte elements (rows, and the page index's pairs: a file's page
 * index, then its rows, in one run of it), held in chunks of UNWIND_CHUNK_ELEMS: unwind_chunks
 * is an array of equal arrays that user space makes as the tables reach them, so that its
 * memory grows with the binaries seen, up to unwind.memory-limit, rather than being taken
 * whole at start. Element i is element i % UNWIND_CHUNK_ELEMS of chunk i / UNWIND_CHUNK_ELEMS.
 * (256 KiB a chunk: a quiet host's tables fill about 16 of them.)
 */
#define UNWIND_CHUNK_SHIFT 15
#define UNWIND_CHUNK_ELEMS (1u << UNWIND_CHUNK_SHIFT)

/* How the canonical frame address (the caller's stack pointer) is found. */
enum unwind_cfa_type {
	UNWIND_CFA_UNDEFINED = 0, /* the return address is undefined: the outermost frame */
	UNWIND_CFA_RSP,		  /* cfa = rsp + cfa_off */
	UNWIND_CFA_RBP,		  /* cfa = rbp + cfa_off */
	UNWIND_CFA_PLT,		  /* lazy PLT: cfa = rsp + 8 + ((rip & 15) >= cfa_off ? 8 : 0) */
	UNWIND_CFA_SIGNAL,	  /* __restore_rt: registers come from the ucontext at rsp */
	UNWIND_CFA_INVALID,	  /* a rule BPF cannot follow (other expressions): stop here */
	UNWIND_CFA_NONE,	  /* no unwind info covers this range: use the frame pointer */
	UNWIND_CFA_RBP_SWITCH,	  /* cfa = rbp + cfa_off, on another stack (Go's cgo call from
				     the system stack): not above the callee's frame */
};

/* Where the caller's rbp is. */
enum unwind_rbp_type {
	UNWIND_RBP_SAME = 0, /* unchanged (not saved by this frame) */
	UNWIND_RBP_OFFSET,   /* saved at cfa + rbp_off */
	UNWIND_RBP_INVALID,  /* saved some way BPF cannot follow: the caller's rbp is lost */
};

/* One address range of one file: the rule holds from pc up to the next row's pc. */
struct unwind_row {
	__u32 pc;   /* offset in the file */
	__u32 rule; /* UNWIND_ROW_RULE(): 8 bytes a row, as the array stores them (12 took 16) */
};

/*
 * A row's rule packed in 32 bits: cfa_off in bits 0-18 (signed: +-256 KiB), rbp_off / 8 in
 * 19-26 (signed: +-1 KiB), rbp_type in 27-28, cfa_type in 29-31. A rule outside that
 * (unwind_rule__pack) is UNWIND_CFA_INVALID: the walk ends there, marked truncated.
 */
#define UNWIND_ROW_CFA_OFF_MAX ((1 << 18) - 1)
#define UNWIND_ROW_RBP_OFF_MAX (127 * 8)
#define UNWIND_ROW_RULE(cfa_type, cfa_off, rbp_type, rbp_off)                              \
	(((__u32)(cfa_off) & 0x7ffff) | ((__u32)((rbp_off) / 8) & 0xff) << 19 |             \
	 ((__u32)(rbp_type) & 3) << 27 | ((__u32)(cfa_type) & 7) << 29)
#define UNWIND_ROW_CFA_OFF(w)  ((__s32)((__u32)(w) << 13) >> 13)
#define UNWIND_ROW_RBP_OFF(w)  ((__s32)(__s8)(__u8)((__u32)(w) >> 19) * 8)
#define UNWIND_ROW_RBP_TYPE(w) (((__u32)(w) >> 27) & 3)
#define UNWIND_ROW_CFA_TYPE(w) ((__u32)(w) >> 29)

/* A file slot: its rows, or how to unwind it without any. */
enum unwind_file_flags {
	UNWIND_FILE_FP = 1 << 0, /* walk frame pointers (files without unwind info) */
	/* Its table is being built: frame pointers would guess at code whose rules are about
	 * to be known, so a walk reaching it ends there, marked truncated. */
	UNWIND_FILE_PENDING = 1 << 1,
	/* Its table did not fit unwind.memory-limit (too big, or evicted until room frees up):
	 * a walk reaching it ends there, marked truncated, rather than guess by frame pointers. */
	UNWIND_FILE_NO_ROOM = 1 << 2,
};

/*
 * Rows are found in two steps, to touch few cache lines at sample time (at 99 Hz nothing is
 * cached): the file's page index gives, for each 256-byte "page" of file offsets from
 * first_page on, the row covering the page's first byte (pages[page_start + k], an index into
 * the elements), which bounds the binary search to the few rows of one page (a line or two).
 */
#define UNWIND_PAGE_SHIFT 8

/*
 * The page index holds its entries two to an element: entry k is row[k & 1] of element k >> 1
 * (an array stores each element in a multiple of 8 bytes, so a lone __u32 took 8). A file's
 * entries start at an even page_start.
 */
struct unwind_page_pair {
	__u32 row[2];
};

struct unwind_file {
	__u32 row_start;
	__u32 row_count; /* 0: no rows (see flags), or evicted: frame pointers */
	__u32 flags;
	__u32 page_start; /* entry index: element page_start / 2 on */
	__u32 page_count;
	__u32 first_page; /* file offset >> UNWIND_PAGE_SHIFT of the first row */
};

#define UNWIND_NO_FILE 0xffffffffu /* a mapping with no file slot (JIT): frame pointers */

/*
 * A user frame the walk found by the kernel's mappings rather than by the ones user space
 * published (a process exec'd or forked a moment ago, a library mapped since its maps were
 * read) is sent as its file and offset, not as an address: the process may be gone before
 * user space reads its maps, and the walk knows them. Bit 63 (no user address has it), the
 * file's slot in unwind_files in bits 32-62, the offset in the file in bits 0-31 (a leaf's as
 * struck, a caller's as its return address: consumers step it back like an address).
 */
#define UNWIND_FRAME_FILE (1ULL << 63)
#define UNWIND_FRAME(slot, off) (UNWIND_FRAME_FILE | ((__u64)(slot) << 32) | (__u32)(off))
#define UNWIND_FRAME_SLOT(f) ((__u32)(((f) & ~UNWIND_FRAME_FILE) >> 32))
#define UNWIND_FRAME_OFF(f) ((__u32)(f))

/*
 * A frame of a JVM's interpreter is sent as the Method it runs (read from the frame, at rbp -
 * UNWIND_JAVA_METHOD_SLOT) with bit 62 (no user address has it, nor a file frame): the code's
 * address would say only "Interpreter". User space names the method from the JVM's structures.
 */
#define UNWIND_FRAME_JAVA (1ULL << 62)
#define UNWIND_JAVA_METHOD_SLOT 24 /* HotSpot x86_64: frame::interpreter_frame_method_offset */

/* User frames one walk writes at most (the kernel's perf_event_max_stack default). */
#define UNWIND_MAX_FRAMES 127

/* A process's executable mappings, sorted by start; a power of two (BPF masks indexes). */
#define UNWIND_MAX_MAPPINGS 256

struct unwind_mapping {
	__u64 start;
	__u32 len;
	__u32 file_off; /* offset in the file of start */
	__u32 file;	/* slot in unwind_files, or UNWIND_NO_FILE */
	__u32 pad;
};

/*
 * A file as the kernel names it (the key of unwind_inodes, whose value is its slot in
 * unwind_files): its superblock's device (the kernel's dev_t: major << 20 | minor), inode and
 * change time. A pc outside every mapping user space published (a library mapped since it last
 * read the process's maps, or a process it has not learned yet) is looked up in the kernel's
 * own mappings (bpf_find_vma) and found here: a file whose table is built is walked from a
 * process's first sample. The change time tells a file rewritten in place from the one the
 * table was built from.
 */
struct unwind_inode {
	__u64 dev;
	__u64 ino;
	__s64 ctime_ns;
};

/* The vDSO has no file: its slot is published under the key of all zeros (no file has inode 0),
 * and BPF knows its mapping by the address space's mm->context.vdso. */
#define UNWIND_VDSO_INODE ((struct unwind_inode){ 0 })

/* What else BPF should know of a process, found once by user space. */
enum unwind_proc_flags {
	/*
	 * Found no trace context once its libraries were in: samplers skip that (cold) hash
	 * lookup. Negative on purpose: the table comes after the context is published (under the
	 * builders' lock, tens of ms late on a busy host), and a table without the flag, or no
	 * table, means "look".
	 */
	UNWIND_PROC_NO_TRACECTX = 1 << 0,
	UNWIND_PROC_PYTHON = 1 << 1, /* a CPython process: worth a python_procs lookup */
	UNWIND_PROC_LUA = 1 << 2,    /* a PUC Lua process: worth a lua_procs lookup */
	/* What a process not learned yet may be: every interpreter's lookup is made. */
	UNWIND_PROC_INTERP = UNWIND_PROC_PYTHON | UNWIND_PROC_LUA,
};

/*
 * A table's gen with this bit is not user space's: the empty table under UNWIND_NO_PROC_KEY
 * (walks of processes not learned yet go by the kernel's mappings alone), or one proc.bpf.c
 * publishes at exec with the executable's text (user space replaces it whole when it reads the
 * maps). A walk by one marks its sample as not learned (user space is hurried).
 */
#define UNWIND_GEN_KERNEL (1ULL << 63)
#define UNWIND_NO_PROC_KEY 0 /* pid 0 is never a user process */

struct unwind_proc {
	__u32 nr;
	__u32 flags; /* enum unwind_proc_flags */
	/* Changes with every table user space publishes, for any process: what a walk cached
	 * under an older one may name other files at the same addresses. */
	__u64 gen;
	/* A JVM's interpreter code, [java_lo, java_hi) (0, 0: none): its frames are sent as
	 * UNWIND_FRAME_JAVA. */
	__u64 java_lo, java_hi;
	struct unwind_mapping maps[UNWIND_MAX_MAPPINGS];
};

/*
 * The walk cache (BPF only, per CPU, per sampler object): the rules of the frames above a
 * recent stack's leaf, kept as the walk found them, so that a stack seen again is walked from
 * the stack words alone (hot while its thread runs) instead of from the tables (cold lines at
 * each frame when sampling at 99 Hz). An entry is found by the process and the return
 * address of the leaf's caller (frame 1: callers vary far less than leaf pcs do), and a
 * cached frame is used only while the walk's pc is the one it was cached for: a rule is a
 * function of the address alone within one published mapping table (gen). The leaf itself is
 * always looked up.
 */
#define UNWIND_CACHE_ENTRIES 128
#define UNWIND_CACHE_FRAMES  24

/*
 * A row's rule in one word, as the walk step applies it: cfa_off in bits 0-31, rbp_off in
 * 32-47, rbp_type in 48-55, cfa_type in 56-62. Whether it came from the tables or the cache,
 * the step sees the same unknown word: the verifier then checks what follows once.
 */
#define UNWIND_RULE(cfa_type, cfa_off, rbp_type, rbp_off)                                  \
	((__u64)(__u32)(cfa_off) | (__u64)(__u16)(rbp_off) << 32 |                         \
	 (__u64)((rbp_type) & 0xff) << 48 | (__u64)((cfa_type) & 0x7f) << 56)
#define UNWIND_RULE_CFA_TYPE(r) ((__u8)((r) >> 56) & 0x7f)
#define UNWIND_RULE_CFA_OFF(r)	((__s32)(__u32)(r))
#define UNWIND_RULE_RBP_TYPE(r) ((__u8)((r) >> 48))
#define UNWIND_RULE_RBP_OFF(r)	((__s16)(__u16)((r) >> 32))
#define UNWIND_RULE_NONE	(~0ULL) /* no rule: look it up */
#define UNWIND_CACHE_INTERRUPTED (1ULL << 63) /* in a cached rule: the pc was interrupted */

struct unwind_cache_frame {
	__u64 pc;
	__u64 rule; /* UNWIND_RULE(), | UNWIND_CACHE_INTERRUPTED */
};

struct unwind_cache_entry {
	__u32 pid;
	__u32 nr; /* frames 1..nr of the walk are in f[0..nr) */
	__u64 gen;
	struct unwind_cache_frame f[UNWIND_CACHE_FRAMES];
};

/* Why a user stack ended (per-CPU counters, index into unwind_counters). */
enum unwind_counter {
	UNWIND_CNT_STACKS = 0,	  /* user stacks walked by tables */
	UNWIND_CNT_COMPLETE,	  /* reached the outermost frame (_start, thread start) */
	UNWIND_CNT_TRUNC_DEPTH,	  /* deeper than the frames a sample holds */
	UNWIND_CNT_TRUNC_READ,	  /* stack memory unreadable */
	UNWIND_CNT_TRUNC_RULE,	  /* a rule BPF cannot follow */
	UNWIND_CNT_TRUNC_NOINFO,  /* a frame with neither unwind info nor a frame pointer */
	UNWIND_CNT_NO_PROC,	  /* process not yet learned: the leaf alone, truncated */
	UNWIND_CNT_MAPPING_MISS,  /* a pc outside the process's known mappings */
	UNWIND_CNT_FRAMES_TABLE,  /* frames unwound by a table row */
	UNWIND_CNT_FRAMES_FP,	  /* frames unwound by frame pointer (no table for them) */
	UNWIND_CNT_FRAMES_CACHED, /* frames of either kind whose rule came from the walk cache */
	UNWIND_CNT_TRUNC_PENDING, /* a frame whose table or mapping is not known yet */
	UNWIND_CNT_TRUNC_NOROOM,  /* a frame whose table did not fit unwind.memory-limit */
	UNWIND_CNT_IMAGE_GONE,	  /* no user stack: the registers were an image's an exec replaced */
	UNWIND_CNT_FRAMES_JIT_EXIT, /* walks started at a JIT's entry frame (bpf/unwind.bpf.h) */
	UNWIND_CNT__MAX,
};

#endif
