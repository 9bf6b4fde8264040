/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_DAEMON_PRIVS_H
#define AUTOPROF_DAEMON_PRIVS_H

#include <stdbool.h>

#include "config/config.h"

/*
 * autoprof's capabilities: the few it needs at run time (the table in privs.c says which and
 * why), checked before anything is loaded and kept alone afterwards.
 */

/* Says which required capability is missing (stderr) before anything is loaded: -EPERM. */
int privs__check(void);
/*
 * Drops every capability not in the kept set from the effective, permitted, inheritable,
 * ambient and bounding sets, then sets no_new_privs. Capabilities are a thread's: call it
 * while the process has one thread, so that every thread started later inherits the drop.
 * What is not held is skipped (run without root, there is less to drop): 0, or a negative
 * errno when a drop that was possible failed.
 */
int privs__drop(const struct config *cfg);

#endif
