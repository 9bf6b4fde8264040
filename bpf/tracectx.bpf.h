/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_TRACECTX_BPF_H
#define AUTOPROF_TRACECTX_BPF_H

/*
 * Thread trace context, read at sample time for the interrupted thread: the OTEP 4947 record
 * (otel_thread_ctx_v1), Elastic APM's correlation record, or a Go goroutine's pprof labels
 * trace_id/span_id (see src/runtime/tracectx.h for how each is found). The including .bpf.c has
 * included "vmlinux.h", <bpf/bpf_helpers.h> and <bpf/bpf_core_read.h> first.
 */
#include "tracectx_abi.h"

/* pid -> where its threads publish (user space fills it from tracectx__locate). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC); /* nothing without a publishing process */
	__type(key, __u32);
	__type(value, struct tracectx_loc);
} tracectx_offsets SEC(".maps");

/* The start of the OTEP record: the ids and the valid flag, all a sampler needs. */
struct tracectx__record {
	__u8 trace_id[16];
	__u8 span_id[8];
	__u8 valid;
};

struct tracectx__ids {
	__u8 trace_id[16];
	__u8 span_id[8];
};

/*
 * Go's map[string]string as the runtime lays it out from Go 1.11 to 1.23 (amd64): the hmap
 * header, then buckets of 8 tophash bytes, 8 keys, 8 values and an overflow pointer.
 */
#define GO_HMAP_COUNT 0
#define GO_HMAP_B 9
#define GO_HMAP_BUCKETS 16
#define GO_BUCKET_SLOTS 8
#define GO_BUCKET_KEYS 8
#define GO_BUCKET_VALUES (GO_BUCKET_KEYS + GO_BUCKET_SLOTS * 16)
#define GO_BUCKET_OVERFLOW (GO_BUCKET_VALUES + GO_BUCKET_SLOTS * 16)
#define GO_BUCKET_SIZE (GO_BUCKET_OVERFLOW + 8)
/* tophash below this: an empty slot, or one whose entry moved to the grown table. */
#define GO_MIN_TOPHASH 5
/*
 * Buckets visited, overflow ones included: label sets are small (pprof.Labels builds a fresh map
 * per Do), 8 labels fit one bucket and about 10 two; more labels than that are not looked at.
 */
#define GO_MAX_BUCKETS 3

struct tracectx__go_walk {
	__u64 buckets;		/* hmap.buckets */
	__u64 bucket;		/* the bucket being read */
	__u32 nr_buckets;	/* 1 << hmap.B, capped */
	__u32 next;		/* next main bucket after the current chain */
	__s64 left;		/* entries not seen yet */
	__u8 tophash[GO_BUCKET_SLOTS];
	__u32 found;		/* 1: trace_id, 2: span_id */
	struct tracectx__ids ids;
	char hex[32];
};

/* The 2n hex digits of hex into out[0, n): 0, or -1 on anything but a hex digit. */
static __always_inline int tracectx__unhex(const char *hex, __u8 *out, __u32 n)
{
	for (__u32 i = 0; i < 2 * n && i < 32; i++) {
		char c = hex[i];
		__u8 v;

		if (c >= '0' && c <= '9')
			v = c - '0';
		else if (c >= 'a' && c <= 'f')
			v = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v = c - 'A' + 10;
		else
			return -1;
		if (i & 1)
			out[(i / 2) & 15] |= v;
		else
			out[(i / 2) & 15] = v << 4;
	}
	return 0;
}

/* One map slot per step: bucket slot 0 moves to the next bucket (overflow chain first). */
static long tracectx__go_step(__u64 i, void *arg)
{
	struct tracectx__go_walk *w = arg;
	__u32 slot = i & (GO_BUCKET_SLOTS - 1);
	struct {
		__u64 ptr;
		__s64 len;
	} key, val;
	__u64 name;

	if (w->left <= 0 || w->found == 3)
		return 1;
	if (!slot) {
		__u64 next = 0;

		if (i && bpf_probe_read_user(&next, sizeof(next),
					     (const void *)(w->bucket + GO_BUCKET_OVERFLOW)))
			return 1;
		if (!next) {
			if (w->next >= w->nr_buckets)
				return 1;
			next = w->buckets + (__u64)w->next++ * GO_BUCKET_SIZE;
		}
		w->bucket = next;
		if (bpf_probe_read_user(w->tophash, sizeof(w->tophash), (const void *)next))
			return 1;
	}
	if (w->tophash[slot] < GO_MIN_TOPHASH)
		return 0;
	w->left--;
	if (bpf_probe_read_user(&key, sizeof(key),
				(const void *)(w->bucket + GO_BUCKET_KEYS + slot * 16)))
		return 1;
	if (key.len != 8 && key.len != 7)
		return 0;
	name = 0;
	if (bpf_probe_read_user(&name, key.len == 8 ? 8 : 7, (const void *)key.ptr))
		return 0;
	if (bpf_probe_read_user(&val, sizeof(val),
				(const void *)(w->bucket + GO_BUCKET_VALUES + slot * 16)))
		return 1;
	/* Little-endian "trace_id" and "span_id" as words. */
	if (key.len == 8 && name == 0x64695f6563617274ULL && val.len == 32) {
		if (!bpf_probe_read_user(w->hex, 32, (const void *)val.ptr) &&
		    !tracectx__unhex(w->hex, w->ids.trace_id, 16))
			w->found |= 1;
	} else if (key.len == 7 && name == 0x64695f6e617073ULL && val.len == 16) {
		if (!bpf_probe_read_user(w->hex, 16, (const void *)val.ptr) &&
		    !tracectx__unhex(w->hex, w->ids.span_id, 8))
			w->found |= 2;
	}
	return 0;
}

/*
 * The pprof labels trace_id and span_id of the goroutine the thread runs: g from its TLS slot,
 * then g.m.curg, which is that goroutine also while the thread is on its scheduler stack (g0) or
 * in a signal handler (gsignal, e.g. the runtime's preemption signal). A global function: the
 * verifier checks it once, whatever the caller.
 */
__noinline int tracectx__go_labels(__u64 fsbase, const struct tracectx_loc *loc,
				   struct tracectx__ids *ids)
{
	struct tracectx__go_walk w = {};
	__u64 g, m, curg, labels, hmap;
	__u8 b;

	if (!loc || !ids)
		return 0;
	if (bpf_probe_read_user(&g, sizeof(g), (const void *)(fsbase + loc->tp_offset)) || !g ||
	    bpf_probe_read_user(&m, sizeof(m), (const void *)(g + loc->go_g_m)) || !m ||
	    bpf_probe_read_user(&curg, sizeof(curg), (const void *)(m + loc->go_m_curg)) ||
	    !curg ||
	    bpf_probe_read_user(&labels, sizeof(labels),
				(const void *)(curg + loc->go_g_labels)) || !labels)
		return 0;
	/* labels points at a labelMap, itself a map: a pointer to the hmap. */
	if (bpf_probe_read_user(&hmap, sizeof(hmap), (const void *)labels) || !hmap ||
	    bpf_probe_read_user(&w.left, sizeof(w.left), (const void *)(hmap + GO_HMAP_COUNT)) ||
	    w.left <= 0 || bpf_probe_read_user(&b, sizeof(b), (const void *)(hmap + GO_HMAP_B)) ||
	    bpf_probe_read_user(&w.buckets, sizeof(w.buckets),
				(const void *)(hmap + GO_HMAP_BUCKETS)) || !w.buckets)
		return 0;
	w.nr_buckets = b < 2 ? 1u << b : GO_MAX_BUCKETS;
	bpf_loop(GO_MAX_BUCKETS * GO_BUCKET_SLOTS, tracectx__go_step, &w, 0);
	if (w.found != 3)
		return 0;
	__builtin_memcpy(ids, &w.ids, sizeof(*ids));
	return 1;
}

/* Elastic APM's record: valid and with a trace present, else no span. */
static __always_inline int tracectx__elastic(__u64 ptr, struct tracectx__ids *ids)
{
	__u8 rec[TRACECTX_ELASTIC_SIZE];

	if (bpf_probe_read_user(rec, sizeof(rec), (const void *)ptr) ||
	    rec[TRACECTX_ELASTIC_VALID] != 1 || rec[TRACECTX_ELASTIC_PRESENT] != 1)
		return 0;
	__builtin_memcpy(ids->trace_id, rec + TRACECTX_ELASTIC_TRACE_ID, 16);
	__builtin_memcpy(ids->span_id, rec + TRACECTX_ELASTIC_SPAN_ID, 8);
	return 1;
}

/*
 * Reads the current thread's context: 1 and the ids when a valid span is active, else 0.
 *
 * Only for the thread being sampled (current): it is stopped here, so the record cannot change
 * under the read, which is what the standards' writers rely on (compiler fences only).
 * thread.fsbase is the value the kernel set at clone/arch_prctl and saved at the last switch;
 * glibc and Go never write FS base behind the kernel's back, so it is the live thread pointer.
 */
static __always_inline int tracectx__read(__u32 pid, __u8 trace_id[16], __u8 span_id[8])
{
	struct tracectx__record rec;
	struct tracectx__ids ids;
	struct tracectx_loc *loc;
	struct task_struct *task;
	__u64 fsbase, ptr, lo, hi;

	loc = bpf_map_lookup_elem(&tracectx_offsets, &pid);
	if (!loc)
		return 0;
	task = (struct task_struct *)bpf_get_current_task();
	fsbase = BPF_CORE_READ(task, thread.fsbase);
	/* A thread that never set up TLS (or a kernel thread) has nothing to point at. */
	if (!fsbase)
		return 0;
	if (loc->kind == TRACECTX_GO_MAP) {
		if (!tracectx__go_labels(fsbase, loc, &ids))
			return 0;
	} else {
		ptr = fsbase + loc->tp_offset;
		if (bpf_probe_read_user(&ptr, sizeof(ptr), (const void *)ptr) || !ptr)
			return 0;
		if (loc->kind == TRACECTX_ELASTIC) {
			if (!tracectx__elastic(ptr, &ids))
				return 0;
		} else {
			/* Paged-out or unmapped records read as "no span": no faults taken here. */
			if (bpf_probe_read_user(&rec, sizeof(rec), (const void *)ptr) ||
			    rec.valid != 1)
				return 0;
			__builtin_memcpy(ids.trace_id, rec.trace_id, 16);
			__builtin_memcpy(ids.span_id, rec.span_id, 8);
		}
	}
	__builtin_memcpy(&lo, ids.trace_id, sizeof(lo));
	__builtin_memcpy(&hi, ids.trace_id + 8, sizeof(hi));
	if (!lo && !hi)
		return 0;
	__builtin_memcpy(trace_id, ids.trace_id, 16);
	__builtin_memcpy(span_id, ids.span_id, 8);
	return 1;
}

#endif
