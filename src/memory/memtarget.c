// SPDX-License-Identifier: GPL-2.0-only
/* Memory targets: the API's and the config's forms, matching by executable name or cgroup. */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/json.h"
#include "memory/memtarget.h"

/*
 * The body's object nests one deep (one more: a wrong-typed value, refused with its key named)
 * and holds one member; the bound on members only keeps a huge body from being parsed at all.
 */
#define TARGET_MAX_DEPTH   2
#define TARGET_MAX_MEMBERS 64

/* v's text when it is a string of fewer than n bytes without control characters, else NULL. */
static const char *plain_string(const json_t *v, size_t n)
{
	const char *s = json_string_value(v);

	if (!s || json_string_length(v) >= n)
		return NULL;
	for (const char *c = s; *c; c++)
		if ((unsigned char)*c < 0x20)
			return NULL;
	return s;
}

int memtarget__parse(const char *body, struct memtarget_spec *out, char *why, size_t why_len)
{
	char detail[256] = "";
	const char *key, *s;
	json_t *root, *v;
	void *it;
	int err = -EINVAL;

	memset(out, 0, sizeof(*out));
	/* One key: a second one, repeated or not, is a malformed body. */
	root = json__parse_object(body, strlen(body), TARGET_MAX_DEPTH, TARGET_MAX_MEMBERS,
				  JSON_REJECT_DUPLICATES, detail, sizeof(detail));
	it = json_object_iter(root);
	if (!it)
		goto bad;
	key = json_object_iter_key(it);
	v = json_object_iter_value(it);
	if (!strcmp(key, "pid")) {
		json_int_t pid = json_is_integer(v) ? json_integer_value(v) : 0;

		if (pid < 1) {
			snprintf(why, why_len, "pid: want a positive whole number");
			goto out;
		}
		if (pid > 0x3fffffff) {
			snprintf(why, why_len, "pid: out of range");
			goto out;
		}
		out->pid = (uint32_t)pid;
	} else if (!strcmp(key, "cgroup")) {
		s = plain_string(v, sizeof(out->cgroup.dir));
		if (!s) {
			snprintf(why, why_len, "cgroup: want a string of 1 to %zu characters",
				 sizeof(out->cgroup.dir) - 1);
			goto out;
		}
		if (memcg__lookup(s, &out->cgroup, why, why_len))
			goto out;
		out->is_cgroup = true;
	} else if (!strcmp(key, "exe")) {
		s = plain_string(v, sizeof(out->pattern));
		if (!s) {
			snprintf(why, why_len, "exe: want a string of 1 to %zu characters",
				 sizeof(out->pattern) - 1);
			goto out;
		}
		if (!s[0] || strchr(s, '/')) {
			snprintf(why, why_len, "exe: want a glob on the executable name (no '/')");
			goto out;
		}
		strcpy(out->pattern, s);
	} else {
		snprintf(why, why_len,
			 "want {\"pid\": N}, {\"exe\": \"pattern\"} or {\"cgroup\": \"dir\"}, not "
			 "key \"%s\"",
			 key);
		goto out;
	}
	if (json_object_size(root) > 1)
		goto bad;
	err = 0;
	goto out;
bad:
	snprintf(why, why_len, "want a JSON object {\"pid\": N} or {\"exe\": \"pattern\"}%s%s",
		 detail[0] ? ": " : "", detail);
out:
	json_decref(root);
	return err;
}

bool memtarget__match(const char *pattern, const char *exe)
{
	return exe && exe[0] && !fnmatch(pattern, exe, 0);
}

int memtarget__parse_config(const char *entry, struct memtarget_spec *out, char *why,
			    size_t why_len)
{
	memset(out, 0, sizeof(*out));
	if (!strncmp(entry, "cgroup:", 7)) {
		if (memcg__lookup(entry + 7, &out->cgroup, why, why_len))
			return -EINVAL;
		out->is_cgroup = true;
		return 0;
	}
	if (!entry[0] || strchr(entry, '/') || strlen(entry) >= sizeof(out->pattern)) {
		snprintf(why, why_len, "\"%s\": want a glob on the executable name or cgroup:DIR",
			 entry);
		return -EINVAL;
	}
	snprintf(out->pattern, sizeof(out->pattern), "%s", entry);
	return 0;
}

/* ---- cgroups -------------------------------------------------------------------------------- */

/* Copies the next space-separated field of *s into out (n bytes); advances *s. */
static bool next_field(const char **s, char *out, size_t n)
{
	const char *p = *s;
	size_t len = 0;

	while (*p == ' ')
		p++;
	if (!*p || *p == '\n')
		return false;
	while (p[len] && p[len] != ' ' && p[len] != '\n')
		len++;
	if (len >= n)
		return false;
	memcpy(out, p, len);
	out[len] = '\0';
	*s = p + len;
	return true;
}

/* Whether path is prefix or below it, as directories. */
static bool path_under(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	if (n == 1 && prefix[0] == '/')
		return path[0] == '/';
	return !strncmp(path, prefix, n) && (path[n] == '\0' || path[n] == '/');
}

int memcg__resolve(const char *mountinfo, const char *dir, struct memcg *out, char *why,
		   size_t why_len)
{
	size_t best = 0, len = strlen(dir);
	const char *line = mountinfo;
	bool found = false;

	memset(out, 0, sizeof(*out));
	if (dir[0] != '/' || len >= sizeof(out->dir) || strstr(dir, "/..") || strstr(dir, "//")) {
		snprintf(why, why_len, "cgroup: want the absolute path of a cgroup directory");
		return -ENOENT;
	}
	snprintf(out->dir, sizeof(out->dir), "%s", dir);
	while (len > 1 && out->dir[len - 1] == '/')
		out->dir[--len] = '\0';
	for (; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		char f[6][256], fstype[32], source[256], opts[256];
		const char *p = line, *root, *rest;
		bool sep = false;
		size_t mlen;

		/* id parent maj:min root mount-point options [optional...] - fstype source opts */
		for (int i = 0; i < 6; i++)
			if (!next_field(&p, f[i], sizeof(f[i])))
				goto next;
		while (next_field(&p, fstype, sizeof(fstype)))
			if (!strcmp(fstype, "-")) {
				sep = true;
				break;
			}
		if (!sep || !next_field(&p, fstype, sizeof(fstype)) ||
		    !next_field(&p, source, sizeof(source)) || !next_field(&p, opts, sizeof(opts)))
			goto next;
		if (strcmp(fstype, "cgroup") && strcmp(fstype, "cgroup2"))
			goto next;
		mlen = strlen(f[4]);
		if (!path_under(out->dir, f[4]) || mlen < best)
			goto next;
		/* the mount's root inside the hierarchy, then the rest of dir */
		root = strcmp(f[3], "/") ? f[3] : "";
		rest = out->dir + (mlen == 1 ? 0 : mlen);
		if (strlen(root) + strlen(rest) >= sizeof(out->rel))
			goto next;
		best = mlen;
		found = true;
		out->v2 = !strcmp(fstype, "cgroup2");
		strcpy(out->controllers, out->v2 ? "" : opts);
		strcpy(out->rel, root);
		strcat(out->rel, rest);
		if (!out->rel[0])
			strcpy(out->rel, "/");
next:;
	}
	if (!found) {
		snprintf(why, why_len, "cgroup: %s is on no cgroup file system", out->dir);
		return -ENOENT;
	}
	return 0;
}

/* Whether every controller of a /proc/PID/cgroup line (comma-separated) is in the options. */
static bool controllers_in(const char *list, size_t n, const char *opts)
{
	const char *p = list, *end = list + n;

	if (!n)
		return false;
	while (p < end) {
		const char *comma = memchr(p, ',', end - p), *q;
		size_t len = (comma ? comma : end) - p;
		bool hit = false;

		for (q = opts; q && *q; q = strchr(q, ','), q = q ? q + 1 : NULL)
			if (!strncmp(q, p, len) && (q[len] == ',' || q[len] == '\0'))
				hit = true;
		if (!hit)
			return false;
		p += len + 1;
	}
	return true;
}

bool memcg__match(const struct memcg *cg, const char *proc_cgroup)
{
	const char *line;

	for (line = proc_cgroup; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		const char *c1 = strchr(line, ':'), *c2, *nl;
		char path[512];
		size_t len;

		if (!c1)
			continue;
		c2 = strchr(c1 + 1, ':');
		if (!c2)
			continue;
		nl = strchr(c2 + 1, '\n');
		len = nl ? (size_t)(nl - c2 - 1) : strlen(c2 + 1);
		if (len >= sizeof(path))
			continue;
		if (cg->v2 ? !(c1 - line == 1 && line[0] == '0' && c2 == c1 + 1) :
			     !controllers_in(c1 + 1, c2 - c1 - 1, cg->controllers))
			continue;
		memcpy(path, c2 + 1, len);
		path[len] = '\0';
		return path_under(path, cg->rel);
	}
	return false;
}

int memcg__lookup(const char *dir, struct memcg *out, char *why, size_t why_len)
{
	char *text = NULL;
	size_t cap = 0, len = 0;
	struct stat st;
	FILE *f;
	int err;

	if (dir[0] != '/' || stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		snprintf(why, why_len, "cgroup: %s is not a directory", dir);
		return -ENOENT;
	}
	f = fopen("/proc/self/mountinfo", "r");
	if (!f) {
		snprintf(why, why_len, "cgroup: cannot read /proc/self/mountinfo");
		return -ENOENT;
	}
	for (;;) {
		size_t got;

		if (len + 4096 + 1 > cap) {
			char *t = realloc(text, cap = cap ? cap * 2 : 16384);

			if (!t)
				break;
			text = t;
		}
		got = fread(text + len, 1, cap - len - 1, f);
		if (!got)
			break;
		len += got;
	}
	fclose(f);
	if (!text) {
		snprintf(why, why_len, "cgroup: out of memory");
		return -ENOENT;
	}
	text[len] = '\0';
	err = memcg__resolve(text, dir, out, why, why_len);
	free(text);
	return err;
}
