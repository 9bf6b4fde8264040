// SPDX-License-Identifier: GPL-2.0-only
/*
 * libautoprof_preload.so (and .a): memory profiling's preload mode. Interposes the malloc
 * family and mmap/munmap (LD_PRELOAD=/path/libautoprof_preload.so app, or the archive linked
 * into the program), decides sampling in the process itself and reaches autoprof only for
 * sampled allocations and their frees, and then without a trap: it writes them into a ring in
 * its own memory that autoprof drains (see autoprof_preload.h). autoprof finds this library,
 * or the executable that links it, in a target's maps by the autoprof_preload_v1 symbol.
 *
 * Why no trap per sample: an allocation-heavy program samples often (a loop of 700-byte blocks
 * at 57 GB/s takes 110,000 samples a second at a 512 KiB mean), and a uprobe's trap with a BPF
 * stack walk costs ~1-2 us, so two of them per sampled block cost such a program a quarter of
 * its time. Copying a few hundred bytes of stack costs tens of ns; the unwinding moves to
 * autoprof's CPU.
 *
 * Sampling is attach mode's: per thread, by bytes, an exponential countdown with a mean of
 * AUTOPROF_MEMORY_SAMPLE_INTERVAL bytes (default 512 KiB). A record carries the mean it was
 * drawn with, so autoprof scales each sample right whatever its own memory.sample-interval says.
 *
 * Frees: a free must know whether its pointer was sampled without a lock, since almost none
 * were. Sampled pointers are kept in an exact set (chained buckets, a lock per stripe of
 * buckets), and a 64 KiB array of counts per slot (how many sampled pointers live there) fronts
 * it: free reads one byte and jumps to the real free when it is 0, about 7 instructions. Only
 * frees whose slot holds a sampled pointer take a stripe lock (about live samples / 65536 of
 * them: 1 % with 650 live samples, a third of a GiB of heap at 512 KiB). A slot whose count
 * reached 255 stays there (a free of its pointers still finds them in the set). The counts are
 * written under the stripe lock and read without it: the free of a pointer happens after its
 * allocation returned it (the program's own synchronization carried it across threads), so
 * that free sees its count. A pointer's slot is its address / 16 modulo 65536 (malloc's
 * granule): no multiply on the hot path; page-aligned blocks (mmap'd, sampled nearly always)
 * share 256 of the slots, which costs the frees of small blocks there a lock, rarely.
 *
 * A realloc forgets the old block before the real call (see realloc). reallocarray is realloc
 * after its overflow check: glibc's reallocarray calls realloc, which would be ours again.
 *
 * The real functions come from dlsym(RTLD_NEXT): whatever allocator is next in the lookup
 * order (glibc's, or a jemalloc the program links). dlsym itself may allocate (calloc for
 * its error state) before they are known: those calls are served from a static arena whose
 * blocks are never freed.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "autoprof_preload.h"

#define EXPORT	    __attribute__((visibility("default")))
#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#define DEFAULT_MEAN (512 * 1024)
#define HINT_BITS    16
#define NR_SLOTS     (1u << HINT_BITS)
#define NR_STRIPES   64
#define HINT_STICKY  255
#define BOOT_ARENA   (64 * 1024)
/* The ring: 4 MiB holds ~40 ms of the busiest loop's records between autoprof's drains. */
#define DEFAULT_RING_SIZE (4u << 20)
/* Deep enough for the stacks of most programs; the copy is of what is there, not of this. */
#define DEFAULT_STACK_MAX (16u << 10)

/* What autoprof looks for in a process's maps (in .dynsym): the record's presence says the
 * markers are this library's; its fields are for anyone reading the process's memory. */
EXPORT struct autoprof_preload autoprof_preload_v1 = {
    .version = AUTOPROF_PRELOAD_VERSION,
    .mean = DEFAULT_MEAN,
    .stack_max = DEFAULT_STACK_MAX,
};

/*
 * The marker autoprof probes to be woken when the ring fills. Written in assembly so that the
 * first instruction is exactly the 5-byte nop (no endbr64, no frame setup before it).
 */
EXPORT void autoprof_preload_flush(void);
__asm__(".text\n"
	".globl autoprof_preload_flush\n"
	".type autoprof_preload_flush, @function\n"
	"autoprof_preload_flush:\n"
	".cfi_startproc\n"
	".byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n" /* nopl 0x0(%rax,%rax,1) */
	"ret\n"
	".cfi_endproc\n"
	".size autoprof_preload_flush, .-autoprof_preload_flush\n");

/* ---- the set of sampled pointers: declarations ----------------------------------------------- */

struct node {
	struct node *next;
	void *ptr;
};

static uint8_t hint[NR_SLOTS];
static struct node *slots[NR_SLOTS];
static pthread_mutex_t stripes[NR_STRIPES] = {
    [0 ... NR_STRIPES - 1] = PTHREAD_MUTEX_INITIALIZER,
};

static inline uint32_t slot_of(const void *p)
{
	return (uint32_t)((uintptr_t)p >> 4) & (NR_SLOTS - 1);
}

/* ---- the real allocator --------------------------------------------------------------------- */

static void *boot_malloc(size_t n);
static void *boot_calloc(size_t n, size_t size);
static void *boot_realloc(void *p, size_t n);
static void boot_free(void *p);
static int boot_posix_memalign(void **out, size_t align, size_t n);
static void *boot_aligned_alloc(size_t align, size_t n);
static void *boot_memalign(size_t align, size_t n);
static void *boot_valloc(size_t n);
static void *boot_pvalloc(size_t n);
static void *sys_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
static int sys_munmap(void *addr, size_t len);

/*
 * Each starts as a function that resolves them all, so the hot path tests nothing. resolve()
 * sets them from dlsym's void * through slot[]: an indexed store, so real's address is never
 * taken and the compiler still knows that no call the hot path makes changes it.
 */
static union {
	struct {
		void *(*malloc)(size_t);
		void *(*calloc)(size_t, size_t);
		void *(*realloc)(void *, size_t);
		void (*free)(void *);
		int (*posix_memalign)(void **, size_t, size_t);
		void *(*aligned_alloc)(size_t, size_t);
		void *(*memalign)(size_t, size_t);
		void *(*valloc)(size_t);
		void *(*pvalloc)(size_t);
		void *(*mmap)(void *, size_t, int, int, int, off_t);
		int (*munmap)(void *, size_t);
	};
	void *slot[11];
} real = { {
    boot_malloc,	boot_calloc,   boot_realloc, boot_free,	   boot_posix_memalign,
    boot_aligned_alloc, boot_memalign, boot_valloc,  boot_pvalloc, sys_mmap, sys_munmap,
} };
_Static_assert(sizeof(real) == sizeof(real.slot), "a slot for each function");

/* Until the next mmap and munmap are known: the system calls, always right. */
static void *sys_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

static int sys_munmap(void *addr, size_t len)
{
	return (int)syscall(SYS_munmap, addr, len);
}

static _Alignas(64) char boot_arena[BOOT_ARENA];
static size_t boot_used;
static int resolving, resolved;

static bool in_boot_arena(const void *p)
{
	return (uintptr_t)p - (uintptr_t)boot_arena < BOOT_ARENA;
}

/* Memory for dlsym's own allocations while the real functions are being looked up. */
static void *boot_arena_alloc(size_t n, size_t align)
{
	size_t off = __atomic_load_n(&boot_used, __ATOMIC_RELAXED), start;
	uint32_t s;

	if (align < 16)
		align = 16;
	do {
		start = (off + align - 1) & ~(align - 1);
		if (start + n > BOOT_ARENA || start + n < start)
			return NULL;
	} while (!__atomic_compare_exchange_n(&boot_used, &off, start + n, false, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	/* Its slot's count stuck at its top sends the block's free down the slow path, which
	 * knows the arena: the fast path tests nothing else. */
	s = slot_of(boot_arena + start);
	pthread_mutex_lock(&stripes[s % NR_STRIPES]);
	__atomic_store_n(&hint[s], HINT_STICKY, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&stripes[s % NR_STRIPES]);
	return boot_arena + start; /* zeroed: never handed out before */
}

static void *next_fn(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

/*
 * What resolve() looks up, in the order the slots are set. A group's functions replace the boot
 * ones only when all its required ones were found: without malloc and free nothing works (the
 * boot functions stay, the arena alone serves), mmap and munmap only as a pair (else the system
 * calls stay); the heap's others each when found.
 */
enum real_group { REAL_HEAP, REAL_MAP };
#define REAL_SLOT(fn) (offsetof(typeof(real), fn) / sizeof(void *))

static const struct real_fn {
	const char *name;
	uint8_t slot; /* real.slot[] index of real.NAME */
	uint8_t group;
	bool required;
} real_fns[] = {
	{ "malloc", REAL_SLOT(malloc), REAL_HEAP, true },
	{ "free", REAL_SLOT(free), REAL_HEAP, true },
	{ "calloc", REAL_SLOT(calloc), REAL_HEAP, false },
	{ "realloc", REAL_SLOT(realloc), REAL_HEAP, false },
	{ "posix_memalign", REAL_SLOT(posix_memalign), REAL_HEAP, false },
	{ "aligned_alloc", REAL_SLOT(aligned_alloc), REAL_HEAP, false },
	{ "memalign", REAL_SLOT(memalign), REAL_HEAP, false },
	{ "valloc", REAL_SLOT(valloc), REAL_HEAP, false },
	{ "pvalloc", REAL_SLOT(pvalloc), REAL_HEAP, false },
	{ "mmap", REAL_SLOT(mmap), REAL_MAP, true },
	{ "munmap", REAL_SLOT(munmap), REAL_MAP, true },
};

#define NR_REAL_FNS (sizeof(real_fns) / sizeof(real_fns[0]))

/* dlsym may allocate meanwhile (served by the arena): nothing here may call into libc else. */
static void resolve(void)
{
	void *fn[NR_REAL_FNS];
	unsigned int missing = 0; /* groups a required function of which was not found */
	size_t i;

	if (__atomic_load_n(&resolved, __ATOMIC_ACQUIRE))
		return;
	__atomic_store_n(&resolving, 1, __ATOMIC_RELAXED);
	/* All looked up before any slot is set: a group is whole or not only once all are. */
	for (i = 0; i < NR_REAL_FNS; i++) {
		fn[i] = next_fn(real_fns[i].name);
		if (!fn[i] && real_fns[i].required)
			missing |= 1u << real_fns[i].group;
	}
	for (i = 0; i < NR_REAL_FNS; i++)
		if (fn[i] && !(missing & (1u << real_fns[i].group)))
			real.slot[real_fns[i].slot] = fn[i];
	__atomic_store_n(&resolving, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&resolved, 1, __ATOMIC_RELEASE);
}

/* The boot functions: during the lookup, the arena; after it, the real function. */
static bool booting(void)
{
	if (__atomic_load_n(&resolving, __ATOMIC_RELAXED))
		return true;
	resolve();
	return false;
}

static void *boot_malloc(size_t n)
{
	if (booting() || real.malloc == boot_malloc)
		return boot_arena_alloc(n, 16);
	return real.malloc(n);
}

static void *boot_calloc(size_t n, size_t size)
{
	size_t total;

	if (__builtin_mul_overflow(n, size, &total))
		return NULL;
	if (booting() || real.calloc == boot_calloc)
		return boot_arena_alloc(total, 16);
	return real.calloc(n, size);
}

static void *boot_realloc(void *p, size_t n)
{
	if (booting() || real.realloc == boot_realloc) {
		void *q = boot_arena_alloc(n, 16);

		/* Only arena blocks exist yet: copy what the arena may hold of the old one. */
		if (q && p && in_boot_arena(p))
			memmove(q, p,
				(size_t)(boot_arena + BOOT_ARENA - (char *)p) < n
				    ? (size_t)(boot_arena + BOOT_ARENA - (char *)p)
				    : n);
		return q;
	}
	return real.realloc(p, n);
}

static void boot_free(void *p)
{
	if (booting() || real.free == boot_free)
		return;
	real.free(p);
}

static int boot_posix_memalign(void **out, size_t align, size_t n)
{
	if (booting() || real.posix_memalign == boot_posix_memalign) {
		*out = boot_arena_alloc(n, align);
		return *out ? 0 : ENOMEM;
	}
	return real.posix_memalign(out, align, n);
}

static void *boot_aligned_alloc(size_t align, size_t n)
{
	if (booting() || real.aligned_alloc == boot_aligned_alloc)
		return boot_arena_alloc(n, align);
	return real.aligned_alloc(align, n);
}

static void *boot_memalign(size_t align, size_t n)
{
	if (booting() || real.memalign == boot_memalign)
		return boot_arena_alloc(n, align);
	return real.memalign(align, n);
}

static void *boot_valloc(size_t n)
{
	if (booting() || real.valloc == boot_valloc)
		return boot_arena_alloc(n, 4096);
	return real.valloc(n);
}

static void *boot_pvalloc(size_t n)
{
	if (booting() || real.pvalloc == boot_pvalloc)
		return boot_arena_alloc((n + 4095) & ~(size_t)4095, 4096);
	return real.pvalloc(n);
}

/* ---- the ring ------------------------------------------------------------------------------ */

struct thread_state {
	int64_t left; /* bytes until the next sample; < 0: take the slow path */
	uint64_t rng; /* 0: this thread has not drawn yet */
	uintptr_t stack_lo, stack_hi; /* this thread's stack; stack_hi 0: not looked up yet */
	uint32_t tid;
	bool busy; /* in the sampled path: what it allocates itself is not sampled */
};
static __thread struct thread_state ts __attribute__((tls_model("initial-exec")));

/* Where the kernel put argc, argv and the environment: the main thread's frames are below. */
extern void *__libc_stack_end;

static struct autoprof_preload_ring *ring;

/*
 * The ring's memory: a sealed memfd mapped shared, so that autoprof maps the same pages
 * (through /proc/PID/map_files) and reads them without a system call or a copy. Sealed against
 * shrinking, so that this process cannot make autoprof's accesses fault. At addr (MAP_FIXED:
 * replacing a forked child's inherited one) or anywhere. Mapped with the system call itself:
 * our mmap would take it for an allocation. NULL when it cannot be made.
 */
static void *ring_map(void *addr)
{
	size_t len = sizeof(*ring) + autoprof_preload_v1.ring_size;
	int fd = memfd_create("autoprof-preload-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	void *p = MAP_FAILED;

	if (fd < 0)
		return NULL;
	if (!ftruncate(fd, (off_t)len) &&
	    !fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
		p = sys_mmap(addr, len, PROT_READ | PROT_WRITE, MAP_SHARED | (addr ? MAP_FIXED : 0),
			     fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

static void ring_init(void)
{
	const char *s = getenv("AUTOPROF_PRELOAD_RING_SIZE");
	uint64_t size = DEFAULT_RING_SIZE;
	void *p;

	if (s && *s) {
		unsigned long long v = strtoull(s, NULL, 10);

		if (v >= 64 * 1024 && v <= (1ull << 30))
			while (size != v && (size < v || size / 2 >= v))
				size = size < v ? size * 2 : size / 2;
	}
	s = getenv("AUTOPROF_PRELOAD_STACK_MAX");
	if (s && *s) {
		unsigned long long v = strtoull(s, NULL, 10);

		if (v <= size / 4 && v <= (512u << 10))
			autoprof_preload_v1.stack_max = v & ~7ull;
	}
	autoprof_preload_v1.ring_size = size;
	p = ring_map(NULL);
	if (!p)
		return;
	ring = p;
	__atomic_store_n(&autoprof_preload_v1.ring, (uint64_t)(uintptr_t)p, __ATOMIC_RELEASE);
}

/* This thread's stack, once: a record copies from the allocating call's sp up to its end. */
static void thread_stack(struct thread_state *t)
{
	pthread_attr_t attr;
	size_t size;
	void *addr;

	t->tid = (uint32_t)syscall(SYS_gettid);
	t->stack_hi = 1; /* looked up, even if that fails */
	if (pthread_getattr_np(pthread_self(), &attr))
		return;
	if (!pthread_attr_getstack(&attr, &addr, &size)) {
		t->stack_lo = (uintptr_t)addr;
		t->stack_hi = (uintptr_t)addr + size;
		/* The main thread's frames end where the kernel's data starts. */
		if ((uintptr_t)__libc_stack_end > t->stack_lo &&
		    (uintptr_t)__libc_stack_end < t->stack_hi)
			t->stack_hi = (uintptr_t)__libc_stack_end;
	}
	pthread_attr_destroy(&attr);
}

/*
 * Room for a record of type with bytes bytes (rounded up to AUTOPROF_REC_ALIGN), its type and
 * len set, or NULL when the ring is full (counted). A record that would cross the ring's end
 * leaves a pad record there and starts at the beginning.
 */
static struct autoprof_preload_rec *ring_reserve(uint32_t type, uint64_t bytes, uint64_t *pos)
{
	uint32_t len = (bytes + AUTOPROF_REC_ALIGN - 1) & ~(AUTOPROF_REC_ALIGN - 1);
	struct autoprof_preload_rec *r;
	uint64_t size = autoprof_preload_v1.ring_size, head, need, off;

	head = __atomic_load_n(&ring->head, __ATOMIC_RELAXED);
	do {
		off = head & (size - 1);
		need = off + len > size ? size - off + len : len;
		if (head + need - __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE) > size) {
			__atomic_fetch_add(&autoprof_preload_v1.dropped, 1, __ATOMIC_RELAXED);
			return NULL;
		}
	} while (!__atomic_compare_exchange_n(&ring->head, &head, head + need, false,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	if (need != len) {
		struct autoprof_preload_rec *pad = (void *)(ring->data + off);

		pad->type = AUTOPROF_REC_PAD;
		pad->len = (uint32_t)(size - off);
		__atomic_store_n(&pad->commit, head + 1, __ATOMIC_RELEASE);
		head += size - off;
	}
	*pos = head;
	r = (void *)(ring->data + (head & (size - 1)));
	r->type = type;
	r->len = len;
	return r;
}

/* Publishes the record at pos; every quarter ring, wakes autoprof. */
static void ring_commit(struct autoprof_preload_rec *r, uint64_t pos)
{
	uint64_t end = pos + r->len, last = __atomic_load_n(&ring->notified, __ATOMIC_RELAXED);

	__atomic_store_n(&r->commit, pos + 1, __ATOMIC_RELEASE);
	if (end - last >= autoprof_preload_v1.ring_size / 4 &&
	    __atomic_compare_exchange_n(&ring->notified, &last, end, false, __ATOMIC_RELAXED,
					__ATOMIC_RELAXED))
		autoprof_preload_flush();
}

static bool ring_open(void)
{
	return ring && __atomic_load_n(&autoprof_preload_v1.consumer, __ATOMIC_RELAXED);
}

static uint64_t now_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
}

/*
 * Asks for the ring's lines where the next record of len bytes (up to 4 KiB) will go, for
 * writing, while the program runs on: they were last written a whole ring ago and autoprof has
 * read them since, so they are out of this CPU's caches or shared with autoprof's, and the next
 * record's copy would wait on each of them (about 300 of the ~900 cycles a sample cost the bench
 * loop). PREFETCHW where the compiler may emit it (a NOP on x86 CPUs without it).
 */
#if defined(__x86_64__)
#define PREFETCHW __attribute__((target("prfchw")))
#else
#define PREFETCHW
#endif
static PREFETCHW void ring_prefetch(uint64_t pos, uint64_t len)
{
	uint64_t mask = autoprof_preload_v1.ring_size - 1;

	if (len > 4096)
		len = 4096;
	for (uint64_t off = 0; off < len; off += 64)
		__builtin_prefetch(ring->data + ((pos + off) & mask), 1, 3);
}

/* A sampled allocation, with the stack of the call that made it (see CALLER). */
static void ring_alloc(void *p, size_t size, uint64_t mean, void *ret, void **frame)
{
	struct thread_state *t = &ts;
	uintptr_t sp = (uintptr_t)(frame + 2);
	uint64_t max = autoprof_preload_v1.stack_max, copy = 0, pos;
	struct autoprof_preload_rec *r;

	if (!ring_open())
		return;
	if (!t->stack_hi)
		thread_stack(t);
	/* Only memory known to be this thread's stack (not a signal or coroutine stack). */
	if (sp >= t->stack_lo && sp < t->stack_hi)
		copy = t->stack_hi - sp < max ? t->stack_hi - sp : max;
	r = ring_reserve(AUTOPROF_REC_ALLOC, sizeof(*r) + copy, &pos);
	if (!r)
		return;
	r->ptr = (uintptr_t)p;
	r->size = size;
	r->mean = mean;
	r->time_ns = now_ns();
	r->tid = t->tid;
	r->stack_len = (uint32_t)copy;
	r->pc = (uintptr_t)ret;
	r->sp = sp;
	r->bp = (uintptr_t)frame[0];
	memcpy(r + 1, (const void *)sp, copy);
	if (copy == max && t->stack_hi - sp > max)
		__atomic_fetch_add(&autoprof_preload_v1.stack_cut, 1, __ATOMIC_RELAXED);
	ring_commit(r, pos);
	/* This thread's next sample likely copies about as much stack. */
	ring_prefetch(pos + r->len, r->len);
}

/* A sampled block is about to be freed. */
static void ring_free(void *p)
{
	struct autoprof_preload_rec *r;
	uint64_t pos;

	if (!ring_open())
		return;
	r = ring_reserve(AUTOPROF_REC_FREE, sizeof(*r), &pos);
	if (!r)
		return;
	memset(&r->ptr, 0, sizeof(*r) - offsetof(struct autoprof_preload_rec, ptr));
	r->ptr = (uintptr_t)p;
	r->tid = ts.tid;
	ring_commit(r, pos);
}

/* ---- the set of sampled pointers ------------------------------------------------------------ */

/* Remembers p as sampled. False when there is no memory for it. */
static bool track(void *p)
{
	uint32_t s = slot_of(p);
	struct node *n = real.malloc(sizeof(*n));

	if (!n)
		return false;
	n->ptr = p;
	pthread_mutex_lock(&stripes[s % NR_STRIPES]);
	n->next = slots[s];
	slots[s] = n;
	if (hint[s] != HINT_STICKY)
		__atomic_store_n(&hint[s], hint[s] + 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&stripes[s % NR_STRIPES]);
	__atomic_fetch_add(&autoprof_preload_v1.live, 1, __ATOMIC_RELAXED);
	return true;
}

/* Forgets p; true when it was sampled. */
static __attribute__((noinline)) bool untrack(void *p)
{
	uint32_t s = slot_of(p);
	struct node **pp, *n = NULL;

	pthread_mutex_lock(&stripes[s % NR_STRIPES]);
	for (pp = &slots[s]; *pp; pp = &(*pp)->next) {
		if ((*pp)->ptr == p) {
			n = *pp;
			*pp = n->next;
			if (hint[s] != HINT_STICKY)
				__atomic_store_n(&hint[s], hint[s] - 1, __ATOMIC_RELAXED);
			break;
		}
	}
	pthread_mutex_unlock(&stripes[s % NR_STRIPES]);
	if (!n)
		return false;
	real.free(n);
	__atomic_fetch_sub(&autoprof_preload_v1.live, 1, __ATOMIC_RELAXED);
	return true;
}

/* Called before the real free (or realloc) of p when its slot holds a sampled pointer (or an
 * arena block), so that its address cannot be handed out and sampled again before this free
 * is in the ring. Out of line: free stays a leaf. */
static __attribute__((noinline)) void free_sampled(void *p)
{
	if (untrack(p))
		ring_free(p);
}

static inline bool slot_busy(const void *p)
{
	return unlikely(__atomic_load_n(&hint[slot_of(p)], __ATOMIC_RELAXED));
}

/* ---- sampling ------------------------------------------------------------------------------- */

static uint64_t next_random(struct thread_state *t)
{
	if (!t->rng) {
		struct timespec now;

		clock_gettime(CLOCK_MONOTONIC, &now);
		t->rng =
		    ((uint64_t)now.tv_nsec << 20 ^ (uint64_t)syscall(SYS_gettid) ^ (uintptr_t)t) |
		    1;
	}
	/* xorshift64* */
	t->rng ^= t->rng >> 12;
	t->rng ^= t->rng << 25;
	t->rng ^= t->rng >> 27;
	return t->rng * 0x2545f4914f6cdd1dULL;
}

/* An exponential interval with the configured mean, at least 1 byte. */
static int64_t next_interval(struct thread_state *t, uint64_t mean)
{
	/* u in (0, 1]: 53 random bits, never 0 */
	double u = ((double)(next_random(t) >> 11) + 1.0) / 9007199254740992.0;
	double v = -log(u) * (double)mean;

	return v < 1 ? 1 : v > 1e15 ? (int64_t)1e15 : (int64_t)v;
}

/*
 * The allocation of size bytes that drove the countdown below 0: whether it is sampled (always,
 * but for a thread's first allocation, which only starts its countdown), with a new interval
 * drawn. Out of line so that the interposed functions stay small.
 */
static __attribute__((noinline)) bool sample_due(size_t size)
{
	struct thread_state *t = &ts;
	uint64_t mean = __atomic_load_n(&autoprof_preload_v1.mean, __ATOMIC_RELAXED);

	if (!mean)
		mean = 1;
	/* An allocation of the sampled path itself (looking up the thread's stack). */
	if (t->busy) {
		t->left = next_interval(t, mean);
		return false;
	}
	/* A thread's first allocation: its countdown starts at a draw, not at 0. */
	if (!t->rng) {
		t->left = next_interval(t, mean) - (int64_t)size;
		if (t->left >= 0)
			return false;
	}
	/* Sampled: the next countdown is a fresh draw, the overshoot not carried over (the
	 * exponential forgets it anyway; Go and the BPF side do the same), so a huge block costs
	 * one draw. */
	t->left = next_interval(t, mean);
	return true;
}

/* The countdown: true when this allocation is to be sampled. */
static inline bool sample(size_t size)
{
	struct thread_state *t = &ts;

	t->left -= (int64_t)size;
	return unlikely(t->left < 0) && sample_due(size);
}

/*
 * Where the program called the interposed function: its return address, and that function's
 * frame (built with frame pointers: the saved rbp at frame[0], the return address at frame[1]),
 * so that autoprof starts the stack there instead of walking the shim's own frames.
 */
#define CALLER __builtin_return_address(0), __builtin_frame_address(0)

/* Reports a sampled allocation of p (NULL: failed, nothing to report). */
static __attribute__((noinline)) void *sampled(void *p, size_t size, void *ret, void **frame)
{
	if (!p || in_boot_arena(p))
		return p;
	__atomic_fetch_add(&autoprof_preload_v1.sampled, 1, __ATOMIC_RELAXED);
	if (!track(p)) {
		__atomic_fetch_add(&autoprof_preload_v1.untracked, 1, __ATOMIC_RELAXED);
		return p;
	}
	ts.busy = true;
	ring_alloc(p, size, __atomic_load_n(&autoprof_preload_v1.mean, __ATOMIC_RELAXED), ret,
		   frame);
	ts.busy = false;
	return p;
}

/* ---- the interposed functions --------------------------------------------------------------- */

EXPORT void *malloc(size_t n)
{
	if (likely(!sample(n)))
		return real.malloc(n);
	return sampled(real.malloc(n), n, CALLER);
}

static __attribute__((noinline)) void free_slow(void *p)
{
	if (in_boot_arena(p))
		return;
	free_sampled(p);
	real.free(p);
}

/* The fast path reads one byte: free(NULL) too (slot 0; the set never holds NULL). */
EXPORT void free(void *p)
{
	if (slot_busy(p))
		return free_slow(p);
	real.free(p);
}

EXPORT void *calloc(size_t n, size_t size)
{
	size_t total;

	if (__builtin_mul_overflow(n, size, &total) || likely(!sample(total)))
		return real.calloc(n, size);
	return sampled(real.calloc(n, size), total, CALLER);
}

/*
 * The old block is forgotten before the real call: once realloc freed it, another thread may
 * be given the address and sample it. Should realloc fail, the old block (still live) stays
 * unreported: a lost sample, not a wrong one.
 */
EXPORT void *realloc(void *p, size_t n)
{
	if (p && slot_busy(p)) {
		if (in_boot_arena(p)) {
			void *q = malloc(n);

			if (q)
				memcpy(q, p,
				       (size_t)(boot_arena + BOOT_ARENA - (char *)p) < n
					   ? (size_t)(boot_arena + BOOT_ARENA - (char *)p)
					   : n);
			return q;
		}
		free_sampled(p);
	}
	if (likely(!sample(n)) || (p && !n))
		return real.realloc(p, n);
	return sampled(real.realloc(p, n), n, CALLER);
}

/* Through our realloc: glibc's own reallocarray would call it again (sampling twice). */
EXPORT void *reallocarray(void *p, size_t n, size_t size)
{
	size_t total;

	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, total);
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	int err;

	if (likely(!sample(n)))
		return real.posix_memalign(out, align, n);
	err = real.posix_memalign(out, align, n);
	if (!err)
		sampled(*out, n, CALLER);
	return err;
}

EXPORT void *aligned_alloc(size_t align, size_t n)
{
	if (likely(!sample(n)))
		return real.aligned_alloc(align, n);
	return sampled(real.aligned_alloc(align, n), n, CALLER);
}

EXPORT void *memalign(size_t align, size_t n)
{
	if (likely(!sample(n)))
		return real.memalign(align, n);
	return sampled(real.memalign(align, n), n, CALLER);
}

EXPORT void *valloc(size_t n)
{
	if (likely(!sample(n)))
		return real.valloc(n);
	return sampled(real.valloc(n), n, CALLER);
}

EXPORT void *pvalloc(size_t n)
{
	if (likely(!sample(n)))
		return real.pvalloc(n);
	return sampled(real.pvalloc(n), n, CALLER);
}

/*
 * Big anonymous mappings the program makes itself are allocations (as in attach mode, from
 * 64 KiB): the same countdown, the same set. glibc's malloc maps through its internal mmap,
 * which is not this one, so a big malloc still counts once.
 */
#define MMAP_MIN (64 * 1024)

static void *mmap_common(void *addr, size_t len, int prot, int flags, int fd, off_t off,
			 void *ret, void **frame)
{
	void *p = real.mmap(addr, len, prot, flags, fd, off);

	if (p == MAP_FAILED || !(flags & MAP_ANONYMOUS) || len < MMAP_MIN || likely(!sample(len)))
		return p;
	return sampled(p, len, ret, frame);
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap_common(addr, len, prot, flags, fd, off, CALLER);
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap_common(addr, len, prot, flags, fd, off, CALLER);
}

/* A sampled mapping unmapped from its start is gone (all of it, even when only a part was). */
EXPORT int munmap(void *addr, size_t len)
{
	if (slot_busy(addr))
		free_sampled(addr);
	return real.munmap(addr, len);
}

/* A fork while another thread holds a stripe must not leave the child's locked for good. */
static void fork_prepare(void)
{
	for (int i = 0; i < NR_STRIPES; i++)
		pthread_mutex_lock(&stripes[i]);
}

static void fork_done(void)
{
	for (int i = NR_STRIPES - 1; i >= 0; i--)
		pthread_mutex_unlock(&stripes[i]);
}

/* The child is a process autoprof has not attached to: nobody drains its copy of the ring. */
static void fork_child(void)
{
	fork_done();
	__atomic_store_n(&autoprof_preload_v1.consumer, 0, __ATOMIC_RELAXED);
	/* The parent's ring is shared memory: the child gets its own, where the old one was. */
	if (ring && !ring_map(ring)) {
		__atomic_store_n(&autoprof_preload_v1.ring, 0, __ATOMIC_RELEASE);
		ring = NULL;
	}
}

/* Before main: the real functions, and the interval from the environment. */
__attribute__((constructor)) static void preload_init(void)
{
	const char *s = getenv("AUTOPROF_MEMORY_SAMPLE_INTERVAL");

	resolve();
	ring_init();
	pthread_atfork(fork_prepare, fork_done, fork_child);
	if (s && *s) {
		char *end;
		unsigned long long v = strtoull(s, &end, 10);

		if (!*end && v)
			__atomic_store_n(&autoprof_preload_v1.mean, v, __ATOMIC_RELAXED);
	}
}
