/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_JVMATTACH_H
#define AUTOPROF_JVMATTACH_H

#include <stddef.h>

/*
 * The HotSpot attach API, spoken natively (no JDK on the host, any mount namespace): the JVM's
 * Unix socket /tmp/.java_pidNSPID, reached through /proc/PID/root; when it is not listening yet,
 * an .attach_pidNSPID file in its working directory (or its /tmp) and a SIGQUIT start it.
 * Blocking: call it from a thread that may wait (up to timeout_ms).
 */

/* The pid the process knows itself by (the last NSpid field), or pid when unknown. */
int jvmattach__nspid(int pid);

/*
 * Runs attach operation op ("jcmd", "printflag", ...) with one argument in JVM pid. out (may be
 * NULL) receives the reply's text after the status line, NUL-terminated, cut to out_size.
 * Returns 0 when the JVM reports success; -EPROTO when it reports a failure (out says why);
 * -EAGAIN when the JVM has no listener and does not handle SIGQUIT (starting up, or -Xrs: a
 * signal would kill it, so none is sent); -ECONNREFUSED when SIGQUIT was sent but no listener
 * came up in time (-XX:+DisableAttachMechanism: the JVM printed a thread dump instead);
 * -ETIMEDOUT when the operation did not answer in time; -ESRCH when it is gone; another
 * negative errno.
 */
int jvmattach__run(int pid, const char *op, const char *arg, char *out, size_t out_size,
		   int timeout_ms);

/*
 * A reply as jvmattach__run reads it (NUL-terminated): "STATUS\n" then the operation's text,
 * copied into out as above. 0, -EPROTO (a non-zero status) or -EBADMSG (no status line).
 */
int jvmattach__parse_reply(const char *reply, char *out, size_t out_size);

#endif
