// SPDX-License-Identifier: GPL-2.0-only
/*
 * Function latency probes (the user side of bpf/probes.bpf.c).
 *
 * A probe is resolved in the binary (symbol -> file offset, moved to the first instruction the
 * kernel emulates as x86insn__probe_offset does for allocators; or a source line -> its addresses
 * through the DWARF line tables) and attached as uprobe_multi links whose cookie is the probe's
 * id. Call durations arrive through a ring buffer and go into one histogram per second (for
 * windows of the last N seconds), an all-time histogram (/metrics) and an exponentially decayed
 * one (the moving-average percentiles).
 *
 * Samples taken inside a probed call wait, keyed by (thread, probe, call start), until that
 * call's end says whether it was slow or fast; they are then stored again with that label. The
 * sampler flags the calls it sampled in BPF, so only their ends are matched here. The sample and
 * the end travel through different rings: a call that ended is remembered for a few seconds in
 * case its samples are drained after it. A probe narrowed to the slow (or fast) calls of another
 * is timed in BPF only inside a call of that probe; its records and samples wait once more, for
 * the enclosing call's end, and are kept only when that call was of the asked-for class.
 */
#define pr_fmt(fmt) "probes: " fmt

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/counters.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/metrics.h"
#include "lib/timeconst.h"
#include "store/store.h"
#include "symbolize/dso.h"
#include "bpf/probes.skel.h"
#include "probes/probes.h"
#include "probes/probes_priv.h"

#define MAX_PROBES	 256
#define WAIT_BUCKETS	 4096
#define MAX_WAITING	 65536		     /* samples and records waiting for a call's end */
#define WAIT_MAX_NS	 (60 * NSEC_PER_SEC) /* a call that has not ended by then: its samples go */
#define ENDED_KEEP_NS	 (5 * NSEC_PER_SEC)  /* an ended call, for samples drained after its end */

struct wait_key {
	uint32_t tid, probe;
	uint64_t start;
};

/* A sample or a call record waiting for a call's end. */
struct item {
	struct item *next;
	uint32_t probe; /* the probe it is for */
	uint8_t stage;	/* 0: waits for its own call; 1: for the enclosing call */
	uint8_t is_sample;
	uint8_t latency; /* enum store_latency, from stage 1 on */
	uint64_t outer_start;
	uint64_t added_ns;
	/* record */
	uint64_t dur_ns, end_ns;
	uint64_t captures[PROBE_CAPTURES_MAX];
	uint32_t captured;
	/* sample */
	uint32_t pid, tid;
	uint64_t time_ns;
	uint64_t values[PROFILE_MAX_VALUES];
	char comm[16];
	char *strs; /* exe, exe_path, container_id, service, each NUL-terminated */
	char *args; /* its call's captured values, once it ended (struct sample's args) */
	struct frame *frames;
	uint32_t nr_frames;
};

struct wait {
	struct wait *next;
	struct wait_key key;
	int latency; /* enum store_latency once the call ended, -1 before */
	char *args;  /* then the values it captured ("name=value" lines), or NULL */
	uint64_t touched_ns;
	struct item *items;
};

struct probes {
	pthread_mutex_t lock;
	struct collect_ctx *ctx;
	struct probes_bpf *skel;
	struct probe *probes[MAX_PROBES];
	uint32_t nr_probes;
	uint32_t next_id;
	struct wait *waits[WAIT_BUCKETS];
	unsigned int nr_waiting;
	uint64_t next_tick_ns;
	unsigned long long samples_labelled, samples_expired, samples_dropped, narrowed_out;
};

/* ---- samples and records waiting for a call's end ------------------------------------------ */

static struct probe *find(struct probes *pr, uint32_t id)
{
	for (uint32_t i = 0; i < pr->nr_probes; i++)
		if (pr->probes[i]->id == id)
			return pr->probes[i];
	return NULL;
}

static size_t wait_hash(const struct wait_key *k)
{
	uint64_t h = (k->start ^ ((uint64_t)k->tid << 32) ^ k->probe) * 0x9e3779b97f4a7c15ULL;

	return (size_t)(h >> 52) & (WAIT_BUCKETS - 1);
}

static struct wait **wait_find(struct probes *pr, const struct wait_key *k)
{
	struct wait **pp = &pr->waits[wait_hash(k)];

	for (; *pp; pp = &(*pp)->next)
		if ((*pp)->key.tid == k->tid && (*pp)->key.probe == k->probe &&
		    (*pp)->key.start == k->start)
			return pp;
	return pp;
}

static struct wait *wait_get(struct probes *pr, const struct wait_key *k)
{
	struct wait **pp = wait_find(pr, k), *w = *pp;

	if (w)
		return w;
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->key = *k;
	w->latency = -1;
	w->touched_ns = now_ns();
	*pp = w;
	return w;
}

static void wait_free(struct wait *w)
{
	free(w->args);
	free(w);
}

static void item_free(struct probes *pr, struct item *it)
{
	free(it->args);
	if (it->is_sample) {
		for (uint32_t i = 0; i < it->nr_frames; i++)
			dso__put(it->frames[i].dso);
		free(it->frames);
		free(it->strs);
	}
	pr->nr_waiting--;
	free(it);
}

static void finish(struct probes *pr, struct probe *p, struct item *it)
{
	if (it->is_sample) {
		const char *exe = it->strs, *path = exe + strlen(exe) + 1;
		const char *cid = path + strlen(path) + 1, *svc = cid + strlen(cid) + 1;
		struct sample smp = {
		    .type = PROFILE_CPU,
		    .pid = it->pid,
		    .tid = it->tid,
		    .time_ns = it->time_ns,
		    .comm = it->comm,
		    .exe = exe,
		    .exe_path = path,
		    .container_id = cid,
		    .service = svc,
		    .probe = p->id,
		    .latency = it->latency,
		    .args = it->args,
		    .frames = it->frames,
		    .nr_frames = it->nr_frames,
		};

		memcpy(smp.values, it->values, sizeof(smp.values));
		if (!store__add(pr->ctx->store, &smp))
			pr->samples_labelled++;
		else
			pr->samples_dropped++;
	} else {
		probe__observe(p, it->dur_ns, it->end_ns, it->captures, it->captured);
	}
	item_free(pr, it);
}

static void deliver(struct probes *pr, struct item *it, const struct wait_key *k);

/* The call it waited for ended with `latency`, having captured args (NULL: nothing). */
static void advance(struct probes *pr, struct item *it, enum store_latency latency,
		    const char *args)
{
	struct probe *p = find(pr, it->probe);

	if (!p) {
		item_free(pr, it);
		return;
	}
	if (it->stage == 0) {
		it->latency = latency;
		/* Its own call's values label it (not the enclosing call's). */
		if (args && it->is_sample && !it->args)
			it->args = strdup(args);
		if (p->spec.inside) {
			struct wait_key k = {it->tid, p->spec.inside, it->outer_start};

			it->stage = 1;
			deliver(pr, it, &k);
			return;
		}
		finish(pr, p, it);
		return;
	}
	if (p->spec.inside_latency && latency != p->spec.inside_latency) {
		pr->narrowed_out++;
		item_free(pr, it);
		return;
	}
	finish(pr, p, it);
}

static void deliver(struct probes *pr, struct item *it, const struct wait_key *k)
{
	struct wait *w = wait_get(pr, k);

	if (!w) {
		if (it->is_sample)
			pr->samples_dropped++;
		item_free(pr, it);
		return;
	}
	if (w->latency >= 0) {
		advance(pr, it, w->latency, w->args);
		return;
	}
	it->next = w->items;
	w->items = it;
}

/* Call k ended as `latency`: what waited for it moves on; kept a while when it was sampled. */
static void resolve(struct probes *pr, const struct wait_key *k, enum store_latency latency,
		    bool keep, const char *args)
{
	struct wait **pp = wait_find(pr, k), *w = *pp;
	struct item *it;
	char *wargs;

	if (!w) {
		if (!keep)
			return;
		w = wait_get(pr, k);
		if (!w)
			return;
		pp = wait_find(pr, k);
	}
	w->latency = latency;
	w->touched_ns = now_ns();
	if (args && !w->args)
		w->args = strdup(args);
	it = w->items;
	w->items = NULL;
	/* Unlinked before the items move on: advancing one may add waits. */
	wargs = w->args;
	if (!keep) {
		*pp = w->next;
		free(w);
	}
	while (it) {
		struct item *next = it->next;

		advance(pr, it, latency, wargs);
		it = next;
	}
	if (!keep)
		free(wargs);
}

static struct item *item_new(struct probes *pr)
{
	struct item *it;

	if (pr->nr_waiting >= MAX_WAITING)
		return NULL;
	it = calloc(1, sizeof(*it));
	if (!it)
		return NULL;
	pr->nr_waiting++;
	it->added_ns = now_ns();
	return it;
}

/* The values e captured as "name=value" lines (struct sample's args), or NULL for none. */
static const char *format_args(const struct probe *p, const struct probes_event *e, char *out,
			       size_t size)
{
	size_t len = 0;

	if (!p->spec.nr_captures)
		return NULL;
	out[0] = '\0';
	for (uint32_t i = 0; i < p->spec.nr_captures && len < size; i++) {
		char v[32];
		int n;

		if (e->captured & PROBES_VALUE_OK(i))
			probe__format_value(p, i, e->values[i], v, sizeof(v));
		else
			snprintf(v, sizeof(v), "%s",
				 e->captured & PROBES_VALUE_FAULT(i) ? "unreadable" : "optimized out");
		n = snprintf(out + len, size - len, "%s%s=%s", i ? "\n" : "", p->spec.capture[i], v);
		if (n < 0)
			break;
		len += (size_t)n;
	}
	return out;
}

static int handle_event(void *arg, void *data, size_t size)
{
	struct probes *pr = arg;
	const struct probes_event *e = data;
	struct probe *p;
	uint64_t dur;
	enum store_latency latency = STORE_LATENCY_FAST;

	if (size < sizeof(*e))
		return 0;
	dur = e->end_ns - e->start_ns;
	pthread_mutex_lock(&pr->lock);
	p = find(pr, e->probe);
	if (!p)
		goto out;
	/* Observed first: the first call of a probe then has a p95 to be compared with. */
	if (!p->spec.inside)
		probe__observe(p, dur, e->end_ns, (const uint64_t *)e->values, e->captured);
	if (p->kind == PROBES_KIND_CALL)
		latency = probe__classify(p, dur, e->end_ns);
	if (p->spec.inside) {
		struct wait_key k = {e->tid, p->spec.inside, e->outer_start_ns};
		struct item *it = item_new(pr);

		if (it) {
			it->probe = p->id;
			it->stage = 1;
			it->latency = latency;
			it->dur_ns = dur;
			it->end_ns = e->end_ns;
			it->tid = e->tid;
			memcpy(it->captures, e->values, sizeof(it->captures));
			it->captured = e->captured;
			deliver(pr, it, &k);
		}
	}
	if (e->flags & (PROBES_CALL_SAMPLED | PROBES_CALL_INNER)) {
		struct wait_key k = {e->tid, e->probe, e->start_ns};
		char args[PROBE_CAPTURES_MAX * (PROBE_CAPTURE_MAX + 24)];

		resolve(pr, &k, latency, e->flags & PROBES_CALL_SAMPLED,
			format_args(p, e, args, sizeof(args)));
	}
out:
	pthread_mutex_unlock(&pr->lock);
	return 0;
}

/* A copy of smp that outlives the sampler's buffers. */
static struct item *sample_item(struct probes *pr, const struct sample *smp)
{
	const char *s[4] = {smp->exe, smp->exe_path, smp->container_id, smp->service};
	struct item *it = item_new(pr);
	size_t len = 0, off = 0;

	if (!it)
		return NULL;
	it->is_sample = 1;
	for (int i = 0; i < 4; i++)
		len += strlen(s[i] ? s[i] : "") + 1;
	it->strs = malloc(len);
	it->frames = malloc((smp->nr_frames ? smp->nr_frames : 1) * sizeof(*it->frames));
	if (!it->strs || !it->frames) {
		free(it->strs);
		free(it->frames);
		it->strs = NULL;
		it->frames = NULL;
		it->is_sample = 0;
		item_free(pr, it);
		return NULL;
	}
	for (int i = 0; i < 4; i++) {
		size_t n = strlen(s[i] ? s[i] : "") + 1;

		memcpy(it->strs + off, s[i] ? s[i] : "", n);
		off += n;
	}
	for (uint32_t i = 0; i < smp->nr_frames; i++) {
		it->frames[i] = smp->frames[i];
		dso__get(it->frames[i].dso);
	}
	it->nr_frames = smp->nr_frames;
	it->pid = smp->pid;
	it->tid = smp->tid;
	it->time_ns = smp->time_ns;
	memcpy(it->values, smp->values, sizeof(it->values));
	snprintf(it->comm, sizeof(it->comm), "%s", smp->comm ? smp->comm : "");
	return it;
}

void probes__sample(struct probes *pr, const struct sample *smp, uint32_t n, const uint32_t *probe,
		    const uint64_t *start)
{
	if (!pr)
		return;
	pthread_mutex_lock(&pr->lock);
	for (uint32_t i = 0; i < n; i++) {
		struct probe *p = find(pr, probe[i]);
		struct wait_key k = {smp->tid, probe[i], start[i]};
		uint64_t outer = 0;
		struct item *it;

		if (!p || p->kind != PROBES_KIND_CALL)
			continue;
		if (p->spec.inside) {
			for (uint32_t j = i; j-- > 0;) {
				if (probe[j] == p->spec.inside) {
					outer = start[j];
					break;
				}
			}
			if (!outer)
				continue;
		}
		it = sample_item(pr, smp);
		if (!it) {
			pr->samples_dropped++;
			continue;
		}
		it->probe = p->id;
		it->outer_start = outer;
		deliver(pr, it, &k);
	}
	pthread_mutex_unlock(&pr->lock);
}

/* Drops what waited too long for a call's end, and ended calls no sample can still be late for. */
static void expire(struct probes *pr, uint64_t now)
{
	for (size_t b = 0; b < WAIT_BUCKETS; b++) {
		struct wait **pp = &pr->waits[b];

		while (*pp) {
			struct wait *w = *pp;
			struct item **ip = &w->items;

			while (*ip) {
				struct item *it = *ip;

				if (now - it->added_ns < WAIT_MAX_NS) {
					ip = &it->next;
					continue;
				}
				*ip = it->next;
				if (it->is_sample)
					pr->samples_expired++;
				item_free(pr, it);
			}
			if (!w->items && (w->latency >= 0 ? now - w->touched_ns > ENDED_KEEP_NS
							  : now - w->touched_ns > WAIT_MAX_NS)) {
				*pp = w->next;
				wait_free(w);
				continue;
			}
			pp = &w->next;
		}
	}
}

void probes__tick(struct probes *pr)
{
	uint64_t now = now_ns();

	if (!pr || now < pr->next_tick_ns)
		return;
	pr->next_tick_ns = now + NSEC_PER_SEC;
	pthread_mutex_lock(&pr->lock);
	for (uint32_t i = 0; i < pr->nr_probes; i++)
		probe__ewma_update(pr->probes[i], (int64_t)(now / NSEC_PER_SEC));
	expire(pr, now);
	pthread_mutex_unlock(&pr->lock);
}

/*
 * What libbpf and the kernel resolve for the probe: /proc/self/fd/N of the descriptor the
 * binary was checked and read through, exactly that file (a path swapped since is not followed).
 */
static void attach_path(int fd, char *out, size_t size)
{
	snprintf(out, size, "/proc/self/fd/%d", fd);
}

static struct bpf_link *attach(struct probes *pr, struct probe *p, bool ret)
{
	__u64 cookies[MAX_SITES];
	char path[32];
	LIBBPF_OPTS(bpf_uprobe_multi_opts, opts, .offsets = p->offsets, .cookies = cookies,
		    .cnt = p->nr_sites, .retprobe = ret);

	/* Which address fired, for the values it captures (probe_captures). */
	for (size_t i = 0; i < p->nr_sites; i++)
		cookies[i] = p->id | (__u64)i << 32;
	attach_path(p->fd, path, sizeof(path));
	return bpf_program__attach_uprobe_multi(
	    ret ? pr->skel->progs.probe_return : pr->skel->progs.probe_entry,
	    p->spec.pid ? (pid_t)p->spec.pid : -1, path, NULL, &opts);
}

/* Writes (or deletes) what each of p's addresses captures. 0 or a negative errno. */
static int set_captures(struct probes *pr, struct probe *p, bool set)
{
	int fd = bpf_map__fd(pr->skel->maps.probe_captures);

	if (!p->spec.nr_captures)
		return 0;
	for (size_t i = 0; i < p->nr_sites; i++) {
		struct probes_site_key k = {.probe = p->id, .site = (__u32)i};

		if (!set) {
			bpf_map_delete_elem(fd, &k);
			continue;
		}
		if (bpf_map_update_elem(fd, &k, &p->caps[i], BPF_ANY)) {
			int err = -errno;

			while (i--) {
				k.site = (__u32)i;
				bpf_map_delete_elem(fd, &k);
			}
			return err;
		}
	}
	return 0;
}

static void probe_free(struct probe *p)
{
	if (!p)
		return;
	bpf_link__destroy(p->ret);
	bpf_link__destroy(p->entry);
	if (p->fd >= 0)
		close(p->fd);
	free(p->secs);
	free(p->recent);
	free(p);
}

int probes__add(struct probes *pr, const struct probe_spec *spec, uint32_t *id, char *why,
		size_t why_len)
{
	struct probe *p = calloc(1, sizeof(*p)), *outer;
	struct probes_conf conf = {0};
	int err;

	if (p) {
		p->fd = -1;
		p->secs = calloc(PROBES_MAX_SECONDS, sizeof(*p->secs));
		p->recent = calloc(RECENT_CALLS, sizeof(*p->recent));
	}
	if (!p || !p->secs || !p->recent) {
		probe_free(p);
		snprintf(why, why_len, "out of memory");
		return -ENOMEM;
	}
	p->spec = *spec;
	p->kind = spec->function[0] ? PROBES_KIND_CALL : PROBES_KIND_LINE;
	for (size_t i = 0; i < PROBES_MAX_SECONDS; i++)
		p->sec_of[i] = -1;
	p->ewma_sec = (int64_t)(now_ns() / NSEC_PER_SEC) - 1;
	if (spec->pid && kill((pid_t)spec->pid, 0) && errno == ESRCH) {
		snprintf(why, why_len, "pid: no process %u", spec->pid);
		probe_free(p);
		return -EINVAL;
	}
	/* The binary is read outside the lock: events keep flowing meanwhile. */
	err = probe__locate(p, why, why_len);
	if (err) {
		probe_free(p);
		return err;
	}
	pthread_mutex_lock(&pr->lock);
	if (pr->nr_probes == MAX_PROBES) {
		snprintf(why, why_len, "at most %d probes", MAX_PROBES);
		err = -EINVAL;
		goto out_unlock;
	}
	if (spec->inside) {
		outer = find(pr, spec->inside);
		if (!outer || outer->kind != PROBES_KIND_CALL) {
			snprintf(why, why_len, "inside.probe: %u is not a function probe",
				 spec->inside);
			err = -EINVAL;
			goto out_unlock;
		}
	}
	p->id = ++pr->next_id;
	conf.kind = p->kind;
	conf.inside = spec->inside;
	conf.captures = spec->nr_captures;
	err = set_captures(pr, p, true);
	if (err) {
		snprintf(why, why_len, "cannot configure the probe's captures: %s", strerror(-err));
		goto out_unlock;
	}
	if (bpf_map_update_elem(bpf_map__fd(pr->skel->maps.probe_conf), &p->id, &conf, BPF_ANY)) {
		err = -errno;
		snprintf(why, why_len, "cannot configure the probe: %s", strerror(-err));
		goto out_unlock;
	}
	/* The return first: an entry without its return would leave calls in flight. */
	if (p->kind == PROBES_KIND_CALL) {
		p->ret = attach(pr, p, true);
		if (!p->ret) {
			err = -errno;
			goto out_attach;
		}
	}
	p->entry = attach(pr, p, false);
	if (!p->entry) {
		err = -errno;
		goto out_attach;
	}
	/* The uprobes hold the inode: the descriptor is no longer needed. */
	close(p->fd);
	p->fd = -1;
	pr->probes[pr->nr_probes++] = p;
	*id = p->id;
	pthread_mutex_unlock(&pr->lock);
	pr_info("probe %u (%s): %s in %s at %zu address%s (+0x%lx%s)%s\n", p->id, spec->name,
		spec->function[0] ? spec->function : spec->location, spec->binary, p->nr_sites,
		p->nr_sites == 1 ? "" : "es", p->offsets[0],
		p->kind == PROBES_KIND_CALL ? (p->emulated ? ", emulated" : ", entry") : "",
		spec->pid ? " of one process" : "");
	return 0;

out_attach:
	snprintf(why, why_len, "cannot attach to %s: %s", spec->binary, strerror(-err));
	bpf_map_delete_elem(bpf_map__fd(pr->skel->maps.probe_conf), &p->id);
	set_captures(pr, p, false);
	/* A pid that exited, or a binary not executable: the request's fault either way. */
	if (err == -ESRCH || err == -ENOENT || err == -EINVAL)
		err = -EINVAL;
out_unlock:
	pthread_mutex_unlock(&pr->lock);
	probe_free(p);
	return err;
}

int probes__remove(struct probes *pr, uint32_t id)
{
	int err = -ENOENT;

	pthread_mutex_lock(&pr->lock);
	for (uint32_t i = 0; i < pr->nr_probes; i++) {
		struct probe *p = pr->probes[i];

		if (p->id != id)
			continue;
		/* Detaching is the only change to the target: its breakpoints go. */
		bpf_map_delete_elem(bpf_map__fd(pr->skel->maps.probe_conf), &id);
		set_captures(pr, p, false);
		pr->probes[i] = pr->probes[--pr->nr_probes];
		probe_free(p);
		pr_info("probe %u removed\n", id);
		err = 0;
		break;
	}
	pthread_mutex_unlock(&pr->lock);
	return err;
}

bool probes__exists(struct probes *pr, uint32_t id)
{
	bool found;

	pthread_mutex_lock(&pr->lock);
	found = find(pr, id) != NULL;
	pthread_mutex_unlock(&pr->lock);
	return found;
}

/* ---- API answers ---------------------------------------------------------------------------- */

/* s, or null when it is "" (a probe has a function or a location). */
static json_t *str_or_null(const char *s)
{
	return *s ? json__str(s) : json_null();
}

/* One probe's entry in the list. NULL when out of memory. */
static json_t *probe_json(struct probe *p, uint64_t now)
{
	json_t *o = json_pack("{s:I,s:o,s:o,s:o,s:o,s:I,s:o,s:o,s:o,s:s}", "id", (json_int_t)p->id,
			      "name", json__str(p->spec.name), "binary", json__str(p->spec.binary),
			      "function", str_or_null(p->spec.function), "location",
			      str_or_null(p->spec.location), "pid", (json_int_t)p->spec.pid,
			      "threshold_ns",
			      json__u64(p->kind == PROBES_KIND_CALL ? probe__threshold(p, now) : 0), "calls",
			      json__u64(p->calls), "addresses", json__u64(p->nr_sites), "placement",
			      p->kind == PROBES_KIND_LINE ? "line" :
			      p->emulated		   ? "emulated" :
							     "entry");

	if (o && p->spec.nr_captures) {
		json_t *caps = json_array();

		for (uint32_t i = 0; caps && i < p->spec.nr_captures; i++)
			if (json_array_append_new(
				caps, json_pack("{s:s,s:s,s:I,s:b}", "name", p->spec.capture[i],
						"where", p->cap_info[i].where, "size",
						(json_int_t)p->cap_info[i].size, "signed",
						p->cap_info[i].is_signed))) {
				json_decref(caps);
				caps = NULL;
			}
		if (!caps || json_object_set_new(o, "capture", caps)) {
			json_decref(o);
			return NULL;
		}
	}
	if (o && p->spec.inside &&
	    json_object_set_new(o, "inside",
				json_pack("{s:I,s:s}", "probe", (json_int_t)p->spec.inside,
					  "latency",
					  p->spec.inside_latency == STORE_LATENCY_SLOW	 ? "slow"
					  : p->spec.inside_latency == STORE_LATENCY_FAST ? "fast"
											 : "any"))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

bool probes__captures(struct probes *pr, uint32_t id, const char *name)
{
	struct probe *p;
	bool found = false;

	pthread_mutex_lock(&pr->lock);
	p = find(pr, id);
	for (uint32_t i = 0; p && i < p->spec.nr_captures; i++)
		found |= !strcmp(p->spec.capture[i], name);
	pthread_mutex_unlock(&pr->lock);
	return found;
}

int probes__list(struct probes *pr, struct buf *out)
{
	json_t *list = json_array();
	uint64_t now = now_ns();
	int err = 0;

	pthread_mutex_lock(&pr->lock);
	for (uint32_t i = 0; !err && i < pr->nr_probes; i++)
		err = json_array_append_new(list, probe_json(pr->probes[i], now));
	pthread_mutex_unlock(&pr->lock);
	if (err) {
		json_decref(list);
		return -ENOMEM;
	}
	return json__writeln(out, json_pack("{s:o}", "probes", list), 0);
}

int probes__latency(struct probes *pr, uint32_t id, unsigned int seconds, const char *group_by,
		    struct buf *out, char *why, size_t why_len)
{
	struct probe *p;
	json_t *doc;
	int by = -1;

	pthread_mutex_lock(&pr->lock);
	p = find(pr, id);
	if (!p) {
		pthread_mutex_unlock(&pr->lock);
		snprintf(why, why_len, "no probe %u", id);
		return -ENOENT;
	}
	for (uint32_t i = 0; group_by && i < p->spec.nr_captures; i++)
		if (!strcmp(p->spec.capture[i], group_by))
			by = (int)i;
	if (group_by && by < 0) {
		pthread_mutex_unlock(&pr->lock);
		snprintf(why, why_len,
			 "group_by: \"%s\" is not a capture of probe %u (its \"capture\" list)",
			 group_by, id);
		return -EINVAL;
	}
	doc = probe__latency_json(p, seconds, by);
	pthread_mutex_unlock(&pr->lock);
	return json__writeln(out, doc, 0);
}

/* ---- /metrics -------------------------------------------------------------------------------- */

/* Powers of two from ~1 us to ~34 s: bucket bounds of the histogram (histogram.h). */
#define METRIC_MIN_POW2 10
#define METRIC_MAX_POW2 35
#define METRIC_BOUNDS	(METRIC_MAX_POW2 - METRIC_MIN_POW2 + 1)

/* By hand, not a table (metrics__table): a histogram per probe in the list, labelled with it. */
static void write_metrics(struct metrics_writer *w, void *ctx)
{
	struct probes *pr = ctx;
	double bounds[METRIC_BOUNDS];
	unsigned long long cum[METRIC_BOUNDS];

	for (int i = 0; i < METRIC_BOUNDS; i++)
		bounds[i] = (double)(1ULL << (METRIC_MIN_POW2 + i)) / 1e9;
	metrics__family(w, "autoprof_probe_latency_seconds", METRIC_HISTOGRAM,
			"Duration of the calls of each latency probe (a line probe's hits count "
			"as 0 s), since it was added.");
	pthread_mutex_lock(&pr->lock);
	for (uint32_t i = 0; i < pr->nr_probes; i++) {
		struct probe *p = pr->probes[i];
		unsigned long long c = 0;
		size_t b = 0;
		char id[16];

		for (int k = 0; k < METRIC_BOUNDS; k++) {
			uint64_t le = 1ULL << (METRIC_MIN_POW2 + k);

			for (; b < LATENCY_BUCKETS && latency__le(b) <= le; b++)
				c += p->total[b];
			cum[k] = c;
		}
		snprintf(id, sizeof(id), "%u", p->id);
		metrics__histogram(w, bounds, cum, METRIC_BOUNDS, p->calls, p->total_sum_ns / 1e9,
				   "probe", p->spec.name, "id", id, NULL);
	}
	pthread_mutex_unlock(&pr->lock);
}

/* The probe collector's own health. */
static const struct metrics_row health_rows[] = {
	METRICS_FAMILY("autoprof_probes", METRIC_GAUGE, "Latency probes attached."),
	METRICS_SAMPLE(struct probes_stats, probes),
	METRICS_FAMILY("autoprof_probe_events", METRIC_COUNTER,
		       "Probe hits in BPF, by outcome: call (timed), hit (line), outside (a "
		       "narrowed probe outside its enclosing probe's calls), nest_full (too many "
		       "calls in flight), unmatched (a return without its entry), ringbuf_full "
		       "(lost)."),
	METRICS_SAMPLE(struct probes_stats, calls, "outcome", "call"),
	METRICS_SAMPLE(struct probes_stats, hits, "outcome", "hit"),
	METRICS_SAMPLE(struct probes_stats, outside, "outcome", "outside"),
	METRICS_SAMPLE(struct probes_stats, nest_full, "outcome", "nest_full"),
	METRICS_SAMPLE(struct probes_stats, unmatched, "outcome", "unmatched"),
	METRICS_SAMPLE(struct probes_stats, drop_ringbuf, "outcome", "ringbuf_full"),
	METRICS_FAMILY("autoprof_probe_samples", METRIC_COUNTER,
		       "On-CPU samples taken inside probed calls: labelled (stored with the call's "
		       "latency class), expired (the call never ended), dropped (no memory), "
		       "narrowed_out (the enclosing call was not of the class asked for)."),
	METRICS_SAMPLE(struct probes_stats, samples_labelled, "outcome", "labelled"),
	METRICS_SAMPLE(struct probes_stats, samples_expired, "outcome", "expired"),
	METRICS_SAMPLE(struct probes_stats, samples_dropped, "outcome", "dropped"),
	METRICS_SAMPLE(struct probes_stats, narrowed_out, "outcome", "narrowed_out"),
};

static void write_health(struct metrics_writer *w, void *ctx)
{
	struct probes_stats st;

	probes__stats(ctx, &st);
	METRICS_TABLE(w, health_rows, &st);
}

/* ---- life cycle ------------------------------------------------------------------------------ */

struct probes *probes__new(const struct probes_opts *opts, struct collect_ctx *ctx, int *err)
{
	struct probes *pr = calloc(1, sizeof(*pr));

	if (!pr) {
		*err = -ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&pr->lock, NULL);
	pr->ctx = ctx;
	pr->skel = probes_bpf__open();
	if (!pr->skel) {
		*err = -errno;
		pr_err("cannot open BPF object: %s\n", strerror(-*err));
		goto out_free;
	}
	pr->skel->rodata->wakeup_bytes = opts->ringbuf_size / 4;
	*err = bpf_map__set_max_entries(pr->skel->maps.probe_events, opts->ringbuf_size);
	if (*err)
		goto out_free;
	*err = probes_bpf__load(pr->skel);
	if (*err) {
		pr_err("cannot load BPF program: %s\n", strerror(-*err));
		goto out_free;
	}
	*err = collect__add_ring(ctx, bpf_map__fd(pr->skel->maps.probe_events), handle_event, pr,
				 NULL);
	if (*err)
		goto out_free;
	*err = metrics__register(write_metrics, pr) ?: metrics__register(write_health, pr);
	if (*err)
		goto out_free;
	ctx->probe_threads_fd = bpf_map__fd(pr->skel->maps.probe_threads);
	ctx->probes = pr;
	return pr;

out_free:
	probes__free(pr);
	return NULL;
}

void probes__free(struct probes *pr)
{
	if (!pr)
		return;
	metrics__unregister(write_metrics, pr);
	metrics__unregister(write_health, pr);
	for (uint32_t i = 0; i < pr->nr_probes; i++)
		probe_free(pr->probes[i]);
	for (size_t b = 0; b < WAIT_BUCKETS; b++) {
		while (pr->waits[b]) {
			struct wait *w = pr->waits[b];

			while (w->items) {
				struct item *it = w->items;

				w->items = it->next;
				item_free(pr, it);
			}
			pr->waits[b] = w->next;
			wait_free(w);
		}
	}
	probes_bpf__destroy(pr->skel);
	pthread_mutex_destroy(&pr->lock);
	free(pr);
}

void probes__stats(struct probes *pr, struct probes_stats *out)
{
	unsigned long long c[PROBES_CNT__MAX] = {0};

	counters__read(bpf_map__fd(pr->skel->maps.probe_counters), c, PROBES_CNT__MAX);
	pthread_mutex_lock(&pr->lock);
	*out = (struct probes_stats){
	    .calls = c[PROBES_CNT_CALLS],
	    .hits = c[PROBES_CNT_HITS],
	    .outside = c[PROBES_CNT_OUTSIDE],
	    .nest_full = c[PROBES_CNT_NEST_FULL],
	    .unmatched = c[PROBES_CNT_UNMATCHED],
	    .drop_ringbuf = c[PROBES_CNT_DROP_RINGBUF],
	    .samples_labelled = pr->samples_labelled,
	    .samples_expired = pr->samples_expired,
	    .samples_dropped = pr->samples_dropped,
	    .narrowed_out = pr->narrowed_out,
	    .probes = pr->nr_probes,
	};
	pthread_mutex_unlock(&pr->lock);
}

/* ---- probes from the configuration --------------------------------------------------------- */

/* Calls fn for each probe of the config's list (BINARY:FUNCTION or BINARY:FILE:LINE, commas). */
static int each_configured(const char *list, int (*fn)(struct probe_spec *, void *, char *, size_t),
			   void *arg, char *why, size_t why_len)
{
	struct probe_spec *spec = malloc(sizeof(*spec));
	const char *s = list;
	int err = 0;

	if (!spec)
		return -ENOMEM;
	while (!err && *s) {
		size_t len = strcspn(s, ",");

		if (len) {
			err = probespec__parse_short(s, len, spec, why, why_len)
				  ?: fn(spec, arg, why, why_len);
		}
		s += len + (s[len] == ',');
	}
	free(spec);
	return err;
}

static int check_one(struct probe_spec *spec, void *arg, char *why, size_t why_len)
{
	struct probe *p = calloc(1, sizeof(*p));
	int err;

	(void)arg;
	if (!p)
		return -ENOMEM;
	p->spec = *spec;
	err = probe__locate(p, why, why_len);
	if (!err)
		close(p->fd);
	free(p);
	return err;
}

int probes__check_configured(const char *list, char *why, size_t why_len)
{
	return each_configured(list, check_one, NULL, why, why_len);
}

static int add_one(struct probe_spec *spec, void *arg, char *why, size_t why_len)
{
	uint32_t id;

	return probes__add(arg, spec, &id, why, why_len);
}

int probes__add_configured(struct probes *pr, const char *list, char *why, size_t why_len)
{
	return each_configured(list, add_one, pr, why, why_len);
}
