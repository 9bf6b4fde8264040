/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_RUNTIME_JVMATTACH_H
#define AUTOPROF_RUNTIME_JVMATTACH_H

#include <stddef.h>

/*
 * The HotSpot attach API, spoken natively (no JDK on the host, any mount namespace): the JVM's
 * Unix socket /tmp/.java_pidNSPID; when it is not listening yet, an .attach_pidNSPID file in
 * its working directory (or its /tmp) and a SIGQUIT start it.
 *
 * The target's files are the target's user's to arrange (a symlink named .attach_pidNSPID, a
 * socket that accepts and never answers), so the file-system part runs in a short-lived child
 * that enters the target's mount namespace and root, takes the target's effective uid and gid
 * (no supplementary groups; no capabilities unless that is root), creates the trigger with
 * O_EXCL|O_NOFOLLOW, talks to the socket only when it is a socket the target's uid owns, and
 * signals through a pidfd (a recycled pid is never signalled; sent as the target's uid, it
 * needs no CAP_KILL). Every wait is bounded by timeout_ms; the child is
 * killed when it overruns. Nothing falls back to acting as root.
 * Blocking: call it from a thread that may wait (up to timeout_ms). It forks: the caller must
 * not rely on SIGCHLD being ignored (the child is reaped here).
 */

/* Why an attach ended, for /metrics (autoprof_jvm_attach_total{result=...}): one table. */
#define JVMATTACH_WHYS(X)                                                                          \
	X(OK, "ok")		      /* the JVM answered (its status may still be a failure) */   \
	X(SYMLINK, "symlink")	      /* the trigger or socket path is a symlink: refused */       \
	X(OWNER, "owner")	      /* socket or peer not the target's uid: refused */           \
	X(BUSY, "busy")		      /* a trigger is there already (another attach, or left) */   \
	X(TIMEOUT, "timeout")	      /* no answer in time (the child was killed, or gave up) */   \
	X(NS, "ns")		      /* its namespace, root or cwd could not be entered */        \
	X(IDS, "ids")		      /* its uid/gid could not be taken */                         \
	X(NO_LISTENER, "no_listener") /* no socket: -Xrs, starting, DisableAttachMechanism */      \
	X(GONE, "gone")		      /* the process exited */                                     \
	X(BAD_REPLY, "bad_reply")     /* an answer that is not "STATUS\n..." */                    \
	X(ERROR, "error")	      /* anything else (no writable cwd nor /tmp, fork failed) */

#define JVMATTACH_ENUM(e, s) JVMATTACH_##e,
enum jvmattach_why { JVMATTACH_WHYS(JVMATTACH_ENUM) JVMATTACH_NR };
#undef JVMATTACH_ENUM

/* The label value of why ("ok", "symlink"...); "error" when out of range. */
const char *jvmattach__why_name(enum jvmattach_why why);

/* The pid the process knows itself by (the last NSpid field), or pid when unknown. */
int jvmattach__nspid(int pid);

/*
 * Runs attach operation op ("jcmd", "printflag", ...) with one argument in JVM pid. out (may be
 * NULL) receives the reply's text after the status line, NUL-terminated, cut to out_size.
 * *why (may be NULL) says how it ended.
 * Returns 0 when the JVM reports success; -EPROTO when it reports a failure (out says why);
 * -EAGAIN when the JVM has no listener and does not handle SIGQUIT (starting up, or -Xrs: a
 * signal would kill it, so none is sent); -ECONNREFUSED when SIGQUIT was sent but no listener
 * came up in time (-XX:+DisableAttachMechanism: the JVM printed a thread dump instead);
 * -ETIMEDOUT when the operation did not answer in time; -ESRCH when it is gone; -ELOOP when a
 * path it would use is a symlink; -EPERM when the socket or the peer is not the target's uid's;
 * another negative errno. A trigger file there already (another attacher's) is not touched nor
 * signalled for: its listener is waited for (-ECONNREFUSED, why "busy", when none comes).
 */
int jvmattach__run(int pid, const char *op, const char *arg, char *out, size_t out_size,
		   int timeout_ms, enum jvmattach_why *why);

/*
 * A reply as jvmattach__run reads it (NUL-terminated): "STATUS\n" then the operation's text,
 * copied into out as above. 0, -EPROTO (a non-zero status) or -EBADMSG (no status line).
 */
int jvmattach__parse_reply(const char *reply, char *out, size_t out_size);

#endif
