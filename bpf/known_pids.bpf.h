/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_KNOWN_PIDS_BPF_H
#define AUTOPROF_KNOWN_PIDS_BPF_H

/*
 * pid -> samples of its current image seen by the samplers. bpf/proc.bpf.c owns it and clears a
 * pid at exec and exit; every sampler object includes this definition and user space makes them
 * share proc's map (bpf_map__reuse_fd) before loading, so the first PROC_WAKE_SAMPLES samples of
 * each image wake user space while the process lives.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	/* Processes sampled while they live (their entry goes at exec and exit). Its buckets are
	 * what an idle host pays for it, 16 bytes an entry allowed: past 16,384 at once, a new
	 * process's every sample wakes user space, which loses nothing. */
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC); /* grows with the host's processes */
	__type(key, __u32);
	__type(value, __u32);
} known_pids SEC(".maps");

/* The first samples of a new process image must reach user space while the process lives. */
static __always_inline bool known_pids__young(__u32 pid)
{
	__u32 one = 1, *seen = bpf_map_lookup_elem(&known_pids, &pid);

	if (!seen) {
		bpf_map_update_elem(&known_pids, &pid, &one, BPF_NOEXIST);
		return true;
	}
	if (*seen >= PROC_WAKE_SAMPLES)
		return false;
	__sync_fetch_and_add(seen, 1);
	return true;
}

/*
 * A sample of pid that needed no wake-up (a quiet process walked whole by BPF's own table): its
 * exit reports its mappings all the same (bpf/proc.bpf.c), for what is left in the rings. The
 * entry counts no sample: its first samples that want one still wake user space.
 */
static __always_inline void known_pids__sampled(__u32 pid)
{
	__u32 none = 0;

	if (!bpf_map_lookup_elem(&known_pids, &pid))
		bpf_map_update_elem(&known_pids, &pid, &none, BPF_NOEXIST);
}

#endif
