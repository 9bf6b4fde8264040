// SPDX-License-Identifier: GPL-2.0-only
/*
 * Least privilege: autoprof starts as root (or with the capabilities below), and keeps only
 * what it uses after start. Everything else goes from every set, including the bounding set,
 * and no_new_privs is set, so that neither a bug in autoprof nor a program it could be tricked
 * into executing gets any capability back. libcap does the bit work.
 */
#define pr_fmt(fmt) "privs: " fmt

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>

#include "lib/log.h"
#include "daemon/privs.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static bool low_port(const struct config *cfg);

/*
 * The capabilities autoprof keeps, measured by dropping each and running the integration
 * suites that exercise it (README, "Privileges"). A row with a condition is kept only when
 * the configuration needs it.
 */
static const struct kept_cap {
	cap_value_t cap;
	const char *name;
	const char *why;
	bool required; /* autoprof cannot start without it */
	bool (*when)(const struct config *cfg);
} kept_caps[] = {
    /* bpf(): load programs and maps at start, attach uprobes later (probes, memory). */
    {.cap = CAP_BPF, .name = "CAP_BPF", .why = "to load BPF programs and maps", .required = true},
    /* perf_event_open: the CPU sampler, tracepoints and the uprobes attached at run time. */
    {.cap = CAP_PERFMON,
     .name = "CAP_PERFMON",
     .why = "to open perf events and uprobes",
     .required = true},
    /*
     * /proc/PID/map_files (deleted and memfd binaries), uprobe_multi links, setns() into a
     * container's mount namespace (with cap_sys_chroot) for the JVM attach.
     */
    {.cap = CAP_SYS_ADMIN,
     .name = "CAP_SYS_ADMIN",
     .why = "to open deleted binaries through /proc/PID/map_files and enter mount namespaces"},
    /* /proc/PID/mem, maps, root, cwd and ns of processes of other users (ptrace access). */
    {.cap = CAP_SYS_PTRACE,
     .name = "CAP_SYS_PTRACE",
     .why = "to read other processes' /proc/PID/mem and maps"},
    /* Open binaries and perf maps that only their owner can read (mode 0700 directories). */
    {.cap = CAP_DAC_READ_SEARCH,
     .name = "CAP_DAC_READ_SEARCH",
     .why = "to read binaries of other users"},
    /* setns(CLONE_NEWNS) needs it besides cap_sys_admin. */
    {.cap = CAP_SYS_CHROOT,
     .name = "CAP_SYS_CHROOT",
     .why = "to enter a container's mount namespace"},
    /*
     * The JVM attach child becomes the JVM's user before it writes the attach file; it sends
     * the SIGQUIT as that user too, so no CAP_KILL.
     */
    {.cap = CAP_SETUID, .name = "CAP_SETUID", .why = "to attach to a JVM as its user"},
    {.cap = CAP_SETGID, .name = "CAP_SETGID", .why = "to attach to a JVM as its group"},
    /*
     * /proc/kallsyms shows addresses only to a reader with it (perf_event_paranoid > 1 here),
     * checked when the file is opened, and kernel symbols are loaded when a profile first
     * needs them: without it every kernel frame stays unnamed.
     */
    {.cap = CAP_SYSLOG, .name = "CAP_SYSLOG", .why = "to read kernel symbol addresses"},
    /* Only for a web.listen-address below 1024. */
    {.cap = CAP_NET_BIND_SERVICE,
     .name = "CAP_NET_BIND_SERVICE",
     .why = "to listen on a port below 1024",
     .when = low_port},
};

#define NR_KEPT (sizeof(kept_caps) / sizeof(kept_caps[0]))

static bool low_port(const struct config *cfg)
{
	const char *colon = strrchr(cfg->web_listen_address, ':');
	long port = colon ? strtol(colon + 1, NULL, 10) : 0;

	return port > 0 && port < 1024;
}

static bool kept(const struct config *cfg, cap_value_t cap)
{
	for (size_t i = 0; i < NR_KEPT; i++)
		if (kept_caps[i].cap == cap)
			return !kept_caps[i].when || kept_caps[i].when(cfg);
	return false;
}

static bool has(cap_t caps, cap_value_t cap, cap_flag_t set)
{
	cap_flag_value_t v = CAP_CLEAR;

	return !cap_get_flag(caps, cap, set, &v) && v == CAP_SET;
}

int privs__check(void)
{
	cap_t caps = cap_get_proc();
	int missing = 0;

	if (!caps) {
		pr_warn("cannot read capabilities: %s\n", strerror(errno));
		return 0;
	}
	for (size_t i = 0; i < NR_KEPT; i++) {
		const struct kept_cap *k = &kept_caps[i];
		/* Before CAP_BPF and CAP_PERFMON existed, CAP_SYS_ADMIN covered both. */
		bool admin = has(caps, CAP_SYS_ADMIN, CAP_EFFECTIVE);

		if (k->when || has(caps, k->cap, CAP_EFFECTIVE) ||
		    (admin && (k->cap == CAP_BPF || k->cap == CAP_PERFMON)))
			continue;
		if (k->required) {
			fprintf(stderr,
				"autoprof: missing capability %s, needed %s; run as root or "
				"grant it (setcap "
				"cap_bpf,cap_perfmon,cap_sys_ptrace,cap_sys_admin+ep)\n",
				k->name, k->why);
			missing++;
		} else {
			pr_warn("missing capability %s, needed %s: some processes may not be "
				"profiled whole\n",
				k->name, k->why);
		}
	}
	cap_free(caps);
	return missing ? -EPERM : 0;
}

/* The bounding set limits what an exec could ever regain; dropping needs cap_setpcap. */
static int drop_bound(const struct config *cfg, cap_t caps)
{
	bool can = has(caps, CAP_SETPCAP, CAP_EFFECTIVE);

	for (cap_value_t c = 0; c <= (cap_value_t)cap_max_bits() - 1; c++) {
		if (kept(cfg, c) || cap_get_bound(c) != 1)
			continue;
		if (!can) {
			pr_debug("cannot drop capability %d from the bounding set without "
				 "cap_setpcap\n",
				 c);
			return 0;
		}
		if (cap_drop_bound(c)) {
			pr_err("dropping capability %d from the bounding set: %s\n", c,
			       strerror(errno));
			return -errno;
		}
	}
	return 0;
}

int privs__drop(const struct config *cfg)
{
	cap_t cur = cap_get_proc(), want = cap_init();
	char names[512] = "";
	size_t len = 0;
	int err = -ENOMEM;

	if (!cur || !want)
		goto out;
	err = drop_bound(cfg, cur);
	if (err)
		goto out;
	/* Only what is held: without root, the kept set is what we were given of it. */
	for (size_t i = 0; i < NR_KEPT; i++) {
		const struct kept_cap *k = &kept_caps[i];

		if (!kept(cfg, k->cap) || !has(cur, k->cap, CAP_PERMITTED))
			continue;
		if (cap_set_flag(want, CAP_PERMITTED, 1, &k->cap, CAP_SET) ||
		    cap_set_flag(want, CAP_EFFECTIVE, 1, &k->cap, CAP_SET))
			goto out_errno;
		len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s", len ? "," : "",
					k->name);
		if (len >= sizeof(names))
			len = sizeof(names) - 1;
	}
	/* Inheritable stays empty (cap_init); ambient must be cleared first: it is a subset. */
	if (CAP_AMBIENT_SUPPORTED() && cap_reset_ambient())
		goto out_errno;
	if (cap_set_proc(want))
		goto out_errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		goto out_errno;
	pr_info("keeping capabilities %s; no_new_privs set\n", len ? names : "(none)");
	err = 0;
	goto out;

out_errno:
	err = -errno;
	pr_err("dropping capabilities: %s\n", strerror(errno));
out:
	cap_free(cur);
	cap_free(want);
	return err;
}
