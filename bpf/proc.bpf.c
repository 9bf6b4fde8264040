// SPDX-License-Identifier: GPL-2.0-only
/*
 * Process life cycle for every profiler: exec (learn the new image's mappings while the process
 * is alive, so that short-lived processes still symbolize), exit (drop per-process state) and
 * dlsym after a dlopen (learn the maps again).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "helpers.bpf.h"
#include "proc_abi.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} proc_events SEC(".maps");

#include "known_pids.bpf.h"
#include "python_procs.bpf.h"
#include "lua_procs.bpf.h"
#include "tracectx.bpf.h"
#include "unwind_abi.h"
#include "unwind_vma.bpf.h"

/*
 * unwind_procs (bpf/unwind_vma.bpf.h) is the unwinder's (shared before load; a placeholder of
 * its own with unwind.mode=fp). A new image drops its old table: walked by the old image's
 * mappings, its first samples would be named by files it no longer has.
 */

/* Whether the unwinder's maps are shared (not unwind.mode=fp). */
const volatile bool unwind_tables = false;
/* Records that wake nobody wake user space past this much waiting (a quarter of the ring):
 * under exec churn its 100 ms drain would otherwise find it overrun. */
const volatile __u64 wake_bytes = 64 * 1024;

static __always_inline __u64 quiet_wakeup(void)
{
	return ringbuf__filled(&proc_events, &wake_bytes) ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PROC_CNT__MAX);
	__type(key, __u32);
	__type(value, __u64);
} proc_counters SEC(".maps");

/* The symbol name prefixes whose lookup reports (set by user space: CUDA's, PyTorch's). */
struct dlsym_name {
	char prefix[PROC_DLSYM_NAME_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PROC_DLSYM_NAMES);
	__type(key, __u32);
	__type(value, struct dlsym_name);
} dlsym_names SEC(".maps");

/* Each process's count of mappings, and the time, at its last dlsym that told user space
 * (proc_dlsym). */
struct dlsym_seen {
	__u32 map_count;
	__u32 pad;
	__u64 time_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct dlsym_seen);
} dlsym_maps SEC(".maps");

/*
 * Each forked child's parent, until the child execs (emit() drops it then): user space names a
 * child gone before its maps were read by its parent's (proctab.c, inherit()). Least recently
 * used out: not dropped at exit, when the child's last samples may still be on their way.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, PROC_FORK_PARENTS);
	__type(key, __u32);
	__type(value, __u32);
} fork_parents SEC(".maps");

/* The quiet executables (proc_abi.h), by inode and change time: set by user space. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PROC_QUIET_EXES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct unwind_inode);
	__type(value, __u8);
} quiet_exes SEC(".maps");

/* Processes that exec'd while autoprof ran, until they exit: theirs report their mappings.
 * The value says how it exec'd. */
#define EXEC_LOUD  1
#define EXEC_QUIET 2
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, __u8);
} exec_pids SEC(".maps");

static __always_inline void count(__u32 idx)
{
	counters__add(&proc_counters, idx, 1);
}

/*
 * Tasks moved between cgroups, and cgroups renamed, since load; read by user space where they
 * are mapped (src/proc/container.c): a container ID read from /proc/PID/cgroup is kept under
 * the key its exec had only when no task moved in between, and forgotten at a rename (the path
 * it was read from changed under the same key). Renames are cgroup v1's; v2 has none.
 */
__u64 cgroup_moves;
__u64 cgroup_renames;

SEC("tp_btf/cgroup_attach_task")
int BPF_PROG(proc_cgroup_attach, struct cgroup *dst, const char *path, struct task_struct *task,
	     bool threadgroup)
{
	__sync_fetch_and_add(&cgroup_moves, 1);
	return 0;
}

/* v1's cgroup.procs of one cgroup moved into another (cgroup_transfer_tasks). */
SEC("tp_btf/cgroup_transfer_tasks")
int BPF_PROG(proc_cgroup_transfer, struct cgroup *dst, const char *path, struct task_struct *task,
	     bool threadgroup)
{
	__sync_fetch_and_add(&cgroup_moves, 1);
	return 0;
}

SEC("tp_btf/cgroup_rename")
int BPF_PROG(proc_cgroup_rename, struct cgroup *cgrp, const char *path)
{
	__sync_fetch_and_add(&cgroup_renames, 1);
	return 0;
}

/* splitmix64's finalizer: every bit of x moves about half the result's. */
static __always_inline __u64 mix64(__u64 x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* The most hierarchies walked: v2's and one per v1 mount (at most 16 controllers and names). */
#define CGROUP_LINKS_MAX 20

/*
 * p's cgroups as one key: over its css_set's links (one a hierarchy it belongs to, the
 * unified one included), the sum of each cgroup's (hierarchy, kernfs node id) mixed. A kernfs
 * id is not reused within its hierarchy (its high half is a generation), so equal keys are
 * equal memberships, whatever the order of the links; the css_set's own address is reused.
 */
static __always_inline __u64 cgroup_key(struct task_struct *p)
{
	struct css_set *cset = BPF_CORE_READ(p, cgroups);
	struct list_head *head, *pos;
	__u64 key = 0;
	__u32 i;

	if (!cset)
		return 0;
	head = (void *)cset + bpf_core_field_offset(struct css_set, cgrp_links);
	pos = BPF_CORE_READ(cset, cgrp_links.next);
	for (i = 0; i < CGROUP_LINKS_MAX && pos && pos != head; i++) {
		/* A css_set's list goes through its links' cgrp_link (the names cross over). */
		struct cgrp_cset_link *link =
		    (void *)pos - bpf_core_field_offset(struct cgrp_cset_link, cgrp_link);
		struct cgroup *cg = BPF_CORE_READ(link, cgrp);
		__u64 id = BPF_CORE_READ(cg, kn, id);
		__u64 hier = BPF_CORE_READ(cg, root, hierarchy_id);

		key += mix64(id ^ mix64(hier + 1));
		pos = BPF_CORE_READ(pos, next);
	}
	/* More links than walked: no key (user space reads the file). */
	if (pos != head)
		return 0;
	return key ? key : 1;
}

static __always_inline int emit(__u32 type, struct task_struct *p)
{
	struct proc_ev *e;

	e = bpf_ringbuf_reserve(&proc_events, sizeof(*e), 0);
	if (!e) {
		__u32 pid = BPF_CORE_READ(p, tgid);

		bpf_map_delete_elem(&known_pids, &pid);
		bpf_map_delete_elem(&tracectx_offsets, &pid);
		bpf_map_delete_elem(&python_procs, &pid);
		bpf_map_delete_elem(&lua_procs, &pid);
		bpf_map_delete_elem(&unwind_procs, &pid);
		bpf_map_delete_elem(&dlsym_maps, &pid);
		if (type == PROC_EV_EXEC)
			bpf_map_delete_elem(&fork_parents, &pid);
		count(PROC_CNT_DROP_RINGBUF);
		return 0;
	}
	e->type = type;
	e->pid = BPF_CORE_READ(p, tgid);
	e->forked_from = 0;
	if (type == PROC_EV_EXEC) {
		__u32 *ppid = bpf_map_lookup_elem(&fork_parents, &e->pid);

		if (ppid) {
			e->forked_from = *ppid;
			bpf_map_delete_elem(&fork_parents, &e->pid);
		}
	}
	bpf_map_delete_elem(&known_pids, &e->pid);
	/* A new image (or none) publishes its thread context elsewhere, if at all. */
	bpf_map_delete_elem(&tracectx_offsets, &e->pid);
	bpf_map_delete_elem(&python_procs, &e->pid);
	bpf_map_delete_elem(&lua_procs, &e->pid);
	bpf_map_delete_elem(&unwind_procs, &e->pid);
	bpf_map_delete_elem(&dlsym_maps, &e->pid);
	e->time_ns = bpf_ktime_get_ns();
	e->exe_ino = BPF_CORE_READ(p, mm, exe_file, f_inode, i_ino);
	e->exe_dev = BPF_CORE_READ(p, mm, exe_file, f_inode, i_sb, s_dev);
	e->cgroup_moves = 0;
	e->cgroup_key = 0;
	e->exe_ctime_ns = 0;
	e->flags = 0;
	e->pad = 0;
	if (type == PROC_EV_EXEC) {
		struct inode *inode = BPF_CORE_READ(p, mm, exe_file, f_inode);
		struct unwind_inode key = { .dev = e->exe_dev, .ino = e->exe_ino };
		__u8 how = EXEC_LOUD;

		/* The count first: a move after it, before the key, is one after it too. */
		e->cgroup_moves = *(volatile __u64 *)&cgroup_moves;
		e->cgroup_key = cgroup_key(p);
		/* The nanoseconds' top bits are flags (as in unwind__vma_mapping). */
		key.ctime_ns = BPF_CORE_READ(inode, i_ctime_sec) * 1000000000LL +
			       (BPF_CORE_READ(inode, i_ctime_nsec) & 0x3fffffff);
		e->exe_ctime_ns = key.ctime_ns;
		/* Its first samples still wake user space (known_pids): a quiet process that
		 * is sampled is learned while it lives, its own table published for the rest of
		 * its walks; one gone first is named by its exit's mappings. */
		if (bpf_map_lookup_elem(&quiet_exes, &key)) {
			e->flags |= PROC_EV_QUIET;
			how = EXEC_QUIET;
			count(PROC_CNT_QUIET_EXECS);
		}
		bpf_map_update_elem(&exec_pids, &e->pid, &how, BPF_ANY);
	}
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), p->comm);
	/* Exec must reach user space at once: the process may live only milliseconds; unless
	 * it is quiet. An exit waits for the next wake-up (an exec, a re-read due, the drain
	 * timer): under exec churn, waking for each doubled the wake-ups. */
	bpf_ringbuf_submit(e, type == PROC_EV_EXEC && !(e->flags & PROC_EV_QUIET) ?
				  BPF_RB_FORCE_WAKEUP :
				  quiet_wakeup());
	return 0;
}

/*
 * The last thread of a process that exec'd while autoprof ran: its executable file mappings,
 * the memory still there (the tracepoint comes before exit_mm since 6.16, whose version has
 * group_dead). User space names a quiet process gone before it was learned by them, and tells
 * by them whether what it learned of a process was all it mapped.
 */
static __always_inline void emit_maps(struct task_struct *p, __u32 pid)
{
	struct vm_area_struct *vma;
	struct proc_maps_ev *e;
	__u8 *how = bpf_map_lookup_elem(&exec_pids, &pid);
	bool unsaid;
	__u32 n = 0;

	if (!how)
		return;
	/*
	 * A quiet process never sampled (known_pids: the samplers mark each they send) left
	 * nothing in the rings to name, and if user space has a table of each file it mapped
	 * (so it has read them all) and it published no trace context, nothing to take its
	 * executable out of the quiet set either: its mappings go unsaid. Most of exec churn's
	 * processes are such, and their reports were a third of what an exec cost user space.
	 */
	unsaid = unwind_tables && *how == EXEC_QUIET && !bpf_map_lookup_elem(&known_pids, &pid) &&
		 !bpf_map_lookup_elem(&tracectx_offsets, &pid);
	bpf_map_delete_elem(&exec_pids, &pid);
	e = bpf_ringbuf_reserve(&proc_events, sizeof(*e), 0);
	if (!e) {
		count(PROC_CNT_DROP_RINGBUF);
		return;
	}
	e->type = PROC_EV_MAPS;
	e->pid = pid;
	e->time_ns = bpf_ktime_get_ns();
	/* Read before emit() drops it: user space's view of it is gone with the exit. */
	e->flags = bpf_map_lookup_elem(&tracectx_offsets, &pid) ? PROC_MAPS_TRACECTX : 0;
	bpf_for_each(task_vma, vma, p, 0) {
		struct unwind_mapping m;
		struct inode *inode;

		if (!(vma->vm_flags & UNWIND_VM_EXEC) || !vma->vm_file)
			continue;
		if (n >= PROC_EXIT_MAPS) {
			e->flags |= PROC_MAPS_TRUNCATED;
			unsaid = false;
			break;
		}
		if (unsaid && !unwind__vma_mapping(vma, &m))
			unsaid = false;
		inode = vma->vm_file->f_inode;
		e->maps[n].start = vma->vm_start;
		e->maps[n].end = vma->vm_end;
		e->maps[n].pgoff = vma->vm_pgoff << 12;
		e->maps[n].ino = inode->i_ino;
		e->maps[n].dev = inode->i_sb->s_dev;
		e->maps[n].pad = 0;
		n++;
	}
	if (unsaid) {
		bpf_ringbuf_discard(e, BPF_RB_NO_WAKEUP);
		count(PROC_CNT_EXIT_MAPS_UNSAID);
		return;
	}
	e->nr = n;
	count(PROC_CNT_EXIT_MAPS);
	bpf_ringbuf_submit(e, quiet_wakeup());
}

/* The executable mappings a table BPF publishes takes at most: at exec the executable's text
 * and the loader's; at __libc_start_main the libraries' too (a process with more gets the
 * rest from user space's table, or one bpf_find_vma a sample). */
#define EXEC_TABLE_MAPS 16

/*
 * Until user space reads the new image's maps (a few ms; longer than some processes live, and
 * never for a quiet executable's that lives less than a drain), walks go by a table of the
 * executable's and the loader's text as the kernel has just mapped them, when their files'
 * unwind tables are built (binaries run before): the libraries the loader maps next are found
 * by the walk itself (bpf_find_vma, one a sample). The empty table user space keeps under
 * UNWIND_NO_PROC_KEY is the template; the entry is filled before its size says so. User
 * space's own replaces it.
 */
/* Fills t (empty: nr 0) with the executable mappings of p whose files have tables, at most
 * EXEC_TABLE_MAPS, in address order, and makes it visible: whether there was one. */
static __always_inline bool fill_exec_table(struct task_struct *p, struct unwind_proc *t)
{
	struct vm_area_struct *vma;
	__u32 n = 0;

	bpf_for_each(task_vma, vma, p, 0) {
		if (n >= EXEC_TABLE_MAPS)
			break;
		if (unwind__vma_mapping(vma, &t->maps[n & (EXEC_TABLE_MAPS - 1)]))
			n++;
	}
	if (!n)
		return false;
	t->gen = UNWIND_GEN_KERNEL | bpf_ktime_get_ns();
	/* x86 keeps stores in order: the compiler must too. */
	asm volatile("" ::: "memory");
	*(volatile __u32 *)&t->nr = n;
	return true;
}

static __always_inline void publish_exec_table(struct task_struct *p, __u32 pid)
{
	__u32 none = UNWIND_NO_PROC_KEY;
	struct unwind_proc *tmpl, *t;

	tmpl = bpf_map_lookup_elem(&unwind_procs, &none);
	if (!tmpl)
		return;
	if (bpf_map_update_elem(&unwind_procs, &pid, tmpl, BPF_NOEXIST))
		return;
	t = bpf_map_lookup_elem(&unwind_procs, &pid);
	if (!t || t->nr)
		return;
	if (fill_exec_table(p, t))
		count(PROC_CNT_EXEC_TABLES);
	else
		bpf_map_delete_elem(&unwind_procs, &pid);
}

/* glibc's __libc_start_main (src/sample/proc.c, attach_libc_start): the table of a process
 * that only its exec published again, with the libraries the loader mapped since. */
SEC("uprobe.multi")
int proc_libc_start(struct pt_regs *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 pid = task->tgid;
	struct unwind_proc *t;

	if (!unwind_tables)
		return 0;
	t = bpf_map_lookup_elem(&unwind_procs, &pid);
	if (!t) {
		publish_exec_table(task, pid);
		return 0;
	}
	if (!(t->gen & UNWIND_GEN_KERNEL))
		return 0;
	/* Emptied first: a walk meanwhile goes by the kernel's mappings, not half a table. */
	*(volatile __u32 *)&t->nr = 0;
	asm volatile("" ::: "memory");
	if (fill_exec_table(task, t))
		count(PROC_CNT_START_TABLES);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(proc_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 pid = BPF_CORE_READ(p, tgid);

	count(PROC_CNT_EXEC);
	emit(PROC_EV_EXEC, p);
	if (unwind_tables)
		publish_exec_table(p, pid);
	return 0;
}

/*
 * A forked child runs its parent's image until it execs: it is named by its parent's maps if
 * gone before its own were read (fork_parents), and the parent's mapping table walks it
 * from its first instant (a pre-fork server's workers, a shell's subshells), where the kernel's
 * mappings alone would reach one library a sample (bpf_find_vma, once per interrupt). User
 * space's own table replaces it once it learns the child; its exit drops it (emit()). Not a
 * vfork child (posix_spawn), which shares its parent's memory for the moment before its exec.
 */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(proc_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ppid = BPF_CORE_READ(parent, tgid), pid = BPF_CORE_READ(child, tgid);
	struct unwind_proc *t;

	if (pid == ppid || BPF_CORE_READ(child, mm) == BPF_CORE_READ(parent, mm))
		return 0;
	bpf_map_update_elem(&fork_parents, &pid, &ppid, BPF_ANY);
	if (!unwind_tables)
		return 0;
	t = bpf_map_lookup_elem(&unwind_procs, &ppid);
	if (t && !bpf_map_update_elem(&unwind_procs, &pid, t, BPF_NOEXIST))
		count(PROC_CNT_FORK_TABLES);
	return 0;
}

/*
 * A library loaded by dlopen long after exec (CUDA by PyTorch or ctypes) is reached through
 * dlsym before its code runs. User space probes the entry of dlsym in the C library files it
 * sees, for every process that maps them; a lookup of a watched name (dlsym_names: CUDA's,
 * PyTorch's extension modules') tells it to read the maps again when the process's count of
 * mappings changed since the last one (dlsym is called far more often than dlopen: a JVM
 * looks up natives all along). Not dlopen's return: a uretprobe replaces the return address, by which dlopen finds
 * its caller's RUNPATH. Not the loader's _dl_debug_state: debuggers break there to follow
 * libraries, and a uprobe on the same instruction takes their trap.
 */
/* Whether name (a dlsym's, in user memory) starts with one of the watched prefixes. */
static __always_inline bool name_watched(const char *name)
{
	char buf[PROC_DLSYM_NAME_LEN] = {};
	struct dlsym_name *w;
	__u32 i, k;

	if (bpf_probe_read_user_str(buf, sizeof(buf), name) <= 0)
		return false;
	for (i = 0; i < PROC_DLSYM_NAMES; i++) {
		__u32 key = i;

		w = bpf_map_lookup_elem(&dlsym_names, &key);
		if (!w || !w->prefix[0])
			return false;
		for (k = 0; k < PROC_DLSYM_NAME_LEN && w->prefix[k]; k++)
			if (buf[k] != w->prefix[k])
				break;
		if (k == PROC_DLSYM_NAME_LEN || !w->prefix[k])
			return true;
	}
	return false;
}

SEC("uprobe.multi")
int proc_dlsym(struct pt_regs *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 pid = task->tgid, n = BPF_CORE_READ(task, mm, map_count);
	__u64 now = bpf_ktime_get_ns();
	struct dlsym_seen *seen, fresh = { .map_count = n, .time_ns = now };
	struct proc_ev *e;

	seen = bpf_map_lookup_elem(&dlsym_maps, &pid);
	if (seen && seen->map_count == n)
		return 0;
	if (!name_watched((const char *)PT_REGS_PARM2(ctx)))
		return 0;
	/* At most one report a gate: a process that maps and calls dlsym in a loop must not
	 * have its maps read at its pace. The count stays the old one, so a later call reports;
	 * user space reads the maps again after each report too (proc.c's re-reads). */
	if (seen && now - seen->time_ns < PROC_DLSYM_GATE_NS)
		return 0;
	/* A full table: told at every call, within the gate of none. */
	bpf_map_update_elem(&dlsym_maps, &pid, &fresh, BPF_ANY);
	count(PROC_CNT_MAPPED);
	e = bpf_ringbuf_reserve(&proc_events, sizeof(*e), 0);
	if (!e) {
		count(PROC_CNT_DROP_RINGBUF);
		return 0;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->type = PROC_EV_MAPPED;
	e->pid = pid;
	e->time_ns = now;
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(proc_exit, struct task_struct *p, bool group_dead)
{
	__u32 tid = BPF_CORE_READ(p, pid);

	if (group_dead)
		emit_maps(p, BPF_CORE_READ(p, tgid));
	/* Every thread's: its id may be a Python or Lua thread's, and will be another thread's. */
	bpf_map_delete_elem(&python_threads, &tid);
	bpf_map_delete_elem(&lua_threads, &tid);
	/* Threads exit all the time; only the group leader's exit ends the process. */
	if (tid != BPF_CORE_READ(p, tgid))
		return 0;
	count(PROC_CNT_EXIT);
	return emit(PROC_EV_EXIT, p);
}

char LICENSE[] SEC("license") = "GPL";
