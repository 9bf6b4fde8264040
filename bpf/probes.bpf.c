// SPDX-License-Identifier: GPL-2.0-only
/*
 * Function latency probes: a uprobe at a function's entry (on its first cheap instruction, placed
 * by user space) pushes the call onto the thread's stack of calls in flight, the uretprobe of the
 * same call pops it and sends its start and end. A line probe sends a hit. The attach cookie is
 * the probe's id, and in its high half which of the probe's addresses it is. Each hit costs a
 * uprobe (~0.6 us emulated) and a few map operations: nothing here walks a stack. A probe that
 * captures values reads them at its address, as user space translated their DWARF locations
 * for that address (probe_captures): a register and at most a few reads of user memory each.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "helpers.bpf.h"
#include "probes.bpf.h"

/* Wake user space only when this much is waiting; otherwise it drains on its own timer. */
const volatile __u64 wakeup_bytes = 256 * 1024;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20); /* resized before load */
} probe_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct probes_conf);
} probe_conf SEC(".maps");

/* Held only for probes that capture: no room is taken before. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, struct probes_site_key);
	__type(value, struct probes_captures);
} probe_captures SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PROBES_CNT__MAX);
	__type(key, __u32);
	__type(value, __u64);
} probe_counters SEC(".maps");

/* Indexes are masked into the array for the verifier (PROBES_MAX_NEST is a power of two). */
#define NEST_MASK (PROBES_MAX_NEST - 1)

static __always_inline void count(__u32 idx)
{
	counters__add(&probe_counters, idx, 1);
}

static __always_inline void send(struct probes_event *ev)
{
	__u64 flags =
	    ringbuf__filled(&probe_events, &wakeup_bytes) ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;

	if (bpf_ringbuf_output(&probe_events, ev, sizeof(*ev), flags))
		count(PROBES_CNT_DROP_RINGBUF);
}

/*
 * The call of probe `outer` the thread is in (innermost), flagged as holding a narrowed call;
 * its start, or 0 when there is none.
 */
static __always_inline __u64 enclosing(struct probes_thread *t, __u32 outer)
{
	for (int i = PROBES_MAX_NEST - 1; i >= 0; i--) {
		if ((__u32)i >= t->depth || t->calls[i].probe != outer)
			continue;
		t->calls[i].flags |= PROBES_CALL_INNER;
		return t->calls[i].start_ns;
	}
	return 0;
}

/*
 * Forgets calls whose return was never seen (longjmp, exceptions): those deeper than sp, and one
 * of the same probe at sp (it cannot be in flight twice there).
 */
static __always_inline void drop_stale(struct probes_thread *t, __u64 sp, __u32 id)
{
	for (int i = 0; i < PROBES_MAX_NEST; i++) {
		__u32 top = t->depth, k = (top - 1) & NEST_MASK;

		if (!top || top > PROBES_MAX_NEST || t->calls[k].sp > sp ||
		    (t->calls[k].sp == sp && t->calls[k].probe != id))
			break;
		t->depth = top - 1;
	}
}

/*
 * The registers by DWARF number (struct probes_capture's reg). Each read at its own constant
 * offset: the verifier refuses a load from the context at a computed one.
 */
static __always_inline void load_regs(struct pt_regs *r, __u64 *regs)
{
	regs[0] = r->ax;
	regs[1] = r->dx;
	regs[2] = r->cx;
	regs[3] = r->bx;
	regs[4] = r->si;
	regs[5] = r->di;
	regs[6] = r->bp;
	regs[7] = r->sp;
	regs[8] = r->r8;
	regs[9] = r->r9;
	regs[10] = r->r10;
	regs[11] = r->r11;
	regs[12] = r->r12;
	regs[13] = r->r13;
	regs[14] = r->r14;
	regs[15] = r->r15;
	regs[16] = r->ip;
}

/* The values the probe's address (cookie) captures into values; their PROBES_VALUE_* bits. */
static __always_inline __u32 capture(struct pt_regs *ctx, __u64 cookie, __u64 *values)
{
	struct probes_site_key k = { .probe = (__u32)cookie, .site = (__u32)(cookie >> 32) };
	struct probes_captures *cs = bpf_map_lookup_elem(&probe_captures, &k);
	__u64 regs[PROBES_NR_REGS];
	__u32 state = 0;

	if (!cs)
		return 0;
	load_regs(ctx, regs);
	for (int i = 0; i < PROBES_MAX_CAPTURES; i++) {
		struct probes_capture *c = &cs->c[i];
		bool fault = false;
		__u64 v;

		if ((__u32)i >= cs->nr)
			break;
		if (c->kind == PROBES_CAP_CONST) {
			values[i] = (__u64)c->add;
			state |= PROBES_VALUE_OK(i);
			continue;
		}
		if (c->kind != PROBES_CAP_READ) {
			state |= PROBES_VALUE_GONE(i);
			continue;
		}
		if (c->reg >= PROBES_NR_REGS) {
			state |= PROBES_VALUE_FAULT(i);
			continue;
		}
		v = regs[c->reg] + (__u64)c->add;
		for (int j = 0; j < PROBES_MAX_READS; j++) {
			__u32 size = 8;
			__u64 x = 0;

			if (j >= c->nr_reads)
				break;
			if (j == c->nr_reads - 1)
				size = c->size;
			if (size > 8 || !size)
				size = 8;
			if (bpf_probe_read_user(&x, size, (void *)(v + (__s64)c->off[j]))) {
				fault = true;
				break;
			}
			v = x;
		}
		if (fault) {
			state |= PROBES_VALUE_FAULT(i);
			continue;
		}
		values[i] = v;
		state |= PROBES_VALUE_OK(i);
	}
	return state;
}

SEC("uprobe.multi")
int probe_entry(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 id = (__u32)cookie;
	__u64 now = bpf_ktime_get_ns(), sp = PT_REGS_SP(ctx), outer = 0;
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct probes_thread *t;
	struct probes_conf *conf;
	struct probes_call *c;
	__u32 depth;

	conf = bpf_map_lookup_elem(&probe_conf, &id);
	if (!conf)
		return 0;
	t = bpf_task_storage_get(
	    &probe_threads, bpf_get_current_task_btf(), 0,
	    conf->kind == PROBES_KIND_CALL || conf->inside ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	if (t)
		drop_stale(t, sp, id);
	if (conf->inside) {
		outer = t ? enclosing(t, conf->inside) : 0;
		if (!outer) {
			count(PROBES_CNT_OUTSIDE);
			return 0;
		}
	}
	if (conf->kind == PROBES_KIND_LINE) {
		struct probes_event ev = {
		    .start_ns = now,
		    .end_ns = now,
		    .outer_start_ns = outer,
		    .pid = pid_tgid >> 32,
		    .tid = (__u32)pid_tgid,
		    .probe = id,
		};

		if (conf->captures)
			ev.captured = capture(ctx, cookie, ev.values);
		count(PROBES_CNT_HITS);
		send(&ev);
		return 0;
	}
	if (!t)
		return 0;
	depth = t->depth;
	if (depth >= PROBES_MAX_NEST) {
		count(PROBES_CNT_NEST_FULL);
		return 0;
	}
	c = &t->calls[depth & NEST_MASK];
	c->start_ns = now;
	c->sp = sp;
	c->probe = id;
	c->flags = 0;
	c->captured = conf->captures ? capture(ctx, cookie, c->values) : 0;
	t->depth = depth + 1;
	return 0;
}

SEC("uretprobe.multi")
int probe_return(struct pt_regs *ctx)
{
	__u32 id = (__u32)bpf_get_attach_cookie(ctx);
	/* The entry saw the return address at sp; it has been popped since. */
	__u64 sp = PT_REGS_SP(ctx) - 8, pid_tgid = bpf_get_current_pid_tgid();
	struct probes_event ev = {};
	struct probes_thread *t;
	struct probes_conf *conf;
	__u32 depth;
	int found = -1;

	t = bpf_task_storage_get(&probe_threads, bpf_get_current_task_btf(), 0, 0);
	if (!t)
		return 0;
	/* Deeper calls still recorded never returned through their probes. */
	for (int i = 0; i < PROBES_MAX_NEST; i++) {
		depth = t->depth;
		if (!depth || depth > PROBES_MAX_NEST || t->calls[(depth - 1) & NEST_MASK].sp >= sp)
			break;
		t->depth = depth - 1;
	}
	depth = t->depth;
	/* Two probes on one function share the sp; returns may come in either order. */
	for (int i = PROBES_MAX_NEST - 1; i >= 0; i--) {
		if ((__u32)i >= depth)
			continue;
		if (t->calls[i].sp != sp)
			break;
		if (t->calls[i].probe == id) {
			found = i;
			break;
		}
	}
	if (found < 0) {
		count(PROBES_CNT_UNMATCHED);
		return 0;
	}
	ev.start_ns = t->calls[found & NEST_MASK].start_ns;
	ev.end_ns = bpf_ktime_get_ns();
	ev.flags = t->calls[found & NEST_MASK].flags;
	ev.captured = t->calls[found & NEST_MASK].captured;
	for (int i = 0; i < PROBES_MAX_CAPTURES; i++)
		ev.values[i] = t->calls[found & NEST_MASK].values[i];
	ev.pid = pid_tgid >> 32;
	ev.tid = (__u32)pid_tgid;
	ev.probe = id;
	conf = bpf_map_lookup_elem(&probe_conf, &id);
	if (conf && conf->inside)
		ev.outer_start_ns = enclosing(t, conf->inside);
	for (int i = 0; i < PROBES_MAX_NEST - 1; i++)
		if (i >= found && (__u32)i + 1 < depth)
			t->calls[i] = t->calls[i + 1];
	t->depth = depth - 1;
	count(PROBES_CNT_CALLS);
	send(&ev);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
