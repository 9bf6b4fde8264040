// SPDX-License-Identifier: GPL-2.0-only
/*
 * --web.config.file: the exporter-toolkit web configuration (TLS, basic auth, extra headers).
 * Parsing reads no file, so a fuzz harness can feed it any buffer; webconfig__load then reads
 * the files it names and lets GnuTLS check them, so a bad file stops autoprof at start (exit 2)
 * rather than at the first TLS handshake. Every cryptographic step is a library's: bcrypt is
 * libcrypt's crypt_r(), digests and certificates are GnuTLS's.
 */
#define pr_fmt(fmt) "webconfig: " fmt

#include <crypt.h>
#include <errno.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "http/webconfig.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
/* A web config is a few lines; certificates a few KiB. The caps bound a mistaken path. */
#define WEBCONFIG_FILE_MAX (64 * 1024)
#define PEM_FILE_MAX	   (1024 * 1024)
#define MAX_HEADERS	   32
#define MAX_USERS	   1024
#define BCRYPT_LEN	   60
#define AUTH_CACHE	   16
#define DIGEST_LEN	   32 /* SHA-256 */

struct webconfig_user {
	char *name, *hash;
};

struct webconfig {
	bool has_tls;
	struct webconfig_tls tls;
	size_t cert_line, key_line, ca_line; /* for errors found when the files are read */
	struct webconfig_header *headers;
	size_t nr_headers;
	struct webconfig_user *users;
	size_t nr_users;
	/* bcrypt, one at a time, and the digests of credentials that passed it. */
	pthread_mutex_t lock;
	struct crypt_data *crypt;
	unsigned char cache[AUTH_CACHE][DIGEST_LEN];
	size_t nr_cached;
};

static const char *const client_auth_names[] = {
	[WEBCONFIG_NO_CLIENT_CERT] = "NoClientCert",
	[WEBCONFIG_REQUEST_CLIENT_CERT] = "RequestClientCert",
	[WEBCONFIG_REQUIRE_ANY_CLIENT_CERT] = "RequireAnyClientCert",
	[WEBCONFIG_VERIFY_CLIENT_CERT_IF_GIVEN] = "VerifyClientCertIfGiven",
	[WEBCONFIG_REQUIRE_AND_VERIFY_CLIENT_CERT] = "RequireAndVerifyClientCert",
};

static const char *const tls_versions[][2] = {
	{ "TLS10", "VERS-TLS1.0" },
	{ "TLS11", "VERS-TLS1.1" },
	{ "TLS12", "VERS-TLS1.2" },
	{ "TLS13", "VERS-TLS1.3" },
};
#define TLS_DEFAULT_MIN 2 /* TLS12, as the exporter toolkit */

struct parse {
	yaml_document_t doc;
	struct webconfig *wc;
	char *why;
	size_t n;
	size_t min_version, max_version;
};

static int __attribute__((format(printf, 4, 5)))
fail(struct parse *p, const yaml_node_t *node, const char *key, const char *fmt, ...)
{
	size_t len;
	va_list ap;

	snprintf(p->why, p->n, "%zu: %s: ", node ? node->start_mark.line + 1 : 1, key);
	len = strlen(p->why);
	va_start(ap, fmt);
	vsnprintf(p->why + len, p->n - len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static const char *scalar(const yaml_node_t *node)
{
	return node && node->type == YAML_SCALAR_NODE ? (const char *)node->data.scalar.value : NULL;
}

/* "key:" with nothing after it: a section left empty. */
static bool is_null(const yaml_node_t *node)
{
	const char *v = scalar(node);

	return v && node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	       (!*v || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") ||
		!strcmp(v, "NULL"));
}

/* A non-empty string value of key, or -EINVAL. */
static int string_value(struct parse *p, const yaml_node_t *node, const char *key, char **out)
{
	const char *v = scalar(node);

	if (!v || is_null(node))
		return fail(p, node, key, "want a single value");
	if (*out)
		return fail(p, node, key, "duplicate key");
	*out = strdup(v);
	return *out ? 0 : -ENOMEM;
}

static int enum_value(struct parse *p, const yaml_node_t *node, const char *key,
		      const char *const *names, size_t stride, size_t nr, size_t *out)
{
	const char *v = scalar(node);
	char list[256] = "";

	for (size_t i = 0; v && i < nr; i++) {
		if (!strcmp(v, names[i * stride])) {
			*out = i;
			return 0;
		}
	}
	for (size_t i = 0; i < nr; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "",
			 names[i * stride]);
	return fail(p, node, key, "\"%s\" is not one of %s", v ? v : "(not a value)", list);
}

/* Calls fn for every key: value of a mapping (a null node is an empty mapping). */
typedef int (*pair_fn)(struct parse *p, const yaml_node_t *key, const char *name,
		       const yaml_node_t *value);

static int each_pair(struct parse *p, const yaml_node_t *map, const char *section, pair_fn fn)
{
	yaml_node_pair_t *pair;

	if (is_null(map))
		return 0;
	if (map->type != YAML_MAPPING_NODE)
		return fail(p, map, section, "want a mapping of keys");
	for (pair = map->data.mapping.pairs.start; pair < map->data.mapping.pairs.top; pair++) {
		const yaml_node_t *k = yaml_document_get_node(&p->doc, pair->key);
		const yaml_node_t *v = yaml_document_get_node(&p->doc, pair->value);
		const char *name = scalar(k);
		int err;

		if (!name)
			return fail(p, k, section, "keys must be plain names");
		err = fn(p, k, name, v);
		if (err)
			return err;
	}
	return 0;
}

static int tls_pair(struct parse *p, const yaml_node_t *k, const char *name, const yaml_node_t *v)
{
	struct webconfig *wc = p->wc;
	struct webconfig_tls *t = &wc->tls;
	char key[96];
	size_t i;
	int err;

	snprintf(key, sizeof(key), "tls_server_config.%s", name);
	if (!strcmp(name, "cert_file")) {
		wc->cert_line = k->start_mark.line + 1;
		return string_value(p, v, key, &t->cert_file);
	}
	if (!strcmp(name, "key_file")) {
		wc->key_line = k->start_mark.line + 1;
		return string_value(p, v, key, &t->key_file);
	}
	if (!strcmp(name, "client_ca_file")) {
		wc->ca_line = k->start_mark.line + 1;
		return string_value(p, v, key, &t->client_ca_file);
	}
	if (!strcmp(name, "client_auth_type")) {
		err = enum_value(p, v, key, client_auth_names, 1, ARRAY_SIZE(client_auth_names), &i);
		t->client_auth = (enum webconfig_client_auth)i;
		return err;
	}
	if (!strcmp(name, "min_version"))
		return enum_value(p, v, key, &tls_versions[0][0], 2, ARRAY_SIZE(tls_versions),
				  &p->min_version);
	if (!strcmp(name, "max_version"))
		return enum_value(p, v, key, &tls_versions[0][0], 2, ARRAY_SIZE(tls_versions),
				  &p->max_version);
	/* cipher_suites, curve_preferences, ...: a setting silently ignored would mislead. */
	return fail(p, k, key, "unknown key");
}

/* An HTTP header name is a token (RFC 9110); a value holds no control character. */
static bool header_ok(const char *name, const char *value)
{
	static const char tchar[] = "!#$%&'*+-.^_`|~";

	if (!*name)
		return false;
	for (const char *s = name; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      strchr(tchar, c)))
			return false;
	}
	for (const char *s = value; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return false;
	}
	return true;
}

static int header_pair(struct parse *p, const yaml_node_t *k, const char *name,
		       const yaml_node_t *v)
{
	struct webconfig *wc = p->wc;
	const char *value = scalar(v);
	struct webconfig_header *h;
	char key[128];

	snprintf(key, sizeof(key), "http_server_config.headers.%.80s", name);
	if (!value || is_null(v))
		return fail(p, v, key, "want a single value");
	if (!header_ok(name, value))
		return fail(p, k, key, "not a valid HTTP header name and value");
	for (size_t i = 0; i < wc->nr_headers; i++) {
		if (!strcasecmp(wc->headers[i].name, name))
			return fail(p, k, key, "duplicate header");
	}
	if (wc->nr_headers == MAX_HEADERS)
		return fail(p, k, key, "at most %d headers", MAX_HEADERS);
	h = realloc(wc->headers, (wc->nr_headers + 1) * sizeof(*h));
	if (!h)
		return -ENOMEM;
	wc->headers = h;
	h = &wc->headers[wc->nr_headers];
	h->name = strdup(name);
	h->value = strdup(value);
	wc->nr_headers++;
	return h->name && h->value ? 0 : -ENOMEM;
}

static int http_pair(struct parse *p, const yaml_node_t *k, const char *name,
		     const yaml_node_t *v)
{
	if (!strcmp(name, "headers"))
		return each_pair(p, v, "http_server_config.headers", header_pair);
	/* HTTP/2 is never spoken here; a fleet's file that sets it still loads. */
	char key[96];

	if (!strcmp(name, "http2")) {
		const char *b = scalar(v);

		if (!b || (strcmp(b, "true") && strcmp(b, "false")))
			return fail(p, v, "http_server_config.http2", "want true or false");
		return 0;
	}
	snprintf(key, sizeof(key), "http_server_config.%s", name);
	return fail(p, k, key, "unknown key");
}

/* $2a$, $2b$ or $2y$, a two-digit cost, 53 characters of salt and hash in bcrypt's base64. */
static bool is_bcrypt(const char *h)
{
	static const char b64[] = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

	if (strlen(h) != BCRYPT_LEN || h[0] != '$' || h[1] != '2' || !strchr("aby", h[2]) ||
	    h[3] != '$' || h[4] < '0' || h[4] > '3' || h[5] < '0' || h[5] > '9' || h[6] != '$')
		return false;
	for (const char *s = h + 7; *s; s++) {
		if (!strchr(b64, *s))
			return false;
	}
	return true;
}

static int user_pair(struct parse *p, const yaml_node_t *k, const char *name,
		     const yaml_node_t *v)
{
	struct webconfig *wc = p->wc;
	const char *hash = scalar(v);
	struct webconfig_user *u;
	char key[128];

	snprintf(key, sizeof(key), "basic_auth_users.%.80s", name);
	if (!*name || strchr(name, ':'))
		return fail(p, k, key, "a user name is not empty and has no ':'");
	if (!hash || is_null(v))
		return fail(p, v, key, "want a bcrypt hash");
	if (!is_bcrypt(hash))
		return fail(p, v, key,
			    "not a bcrypt hash ($2a$, $2b$ or $2y$, 60 characters); plain-text "
			    "passwords are not accepted (htpasswd -nBC 10 USER makes one)");
	for (size_t i = 0; i < wc->nr_users; i++) {
		if (!strcmp(wc->users[i].name, name))
			return fail(p, k, key, "duplicate user");
	}
	if (wc->nr_users == MAX_USERS)
		return fail(p, k, key, "at most %d users", MAX_USERS);
	u = realloc(wc->users, (wc->nr_users + 1) * sizeof(*u));
	if (!u)
		return -ENOMEM;
	wc->users = u;
	u = &wc->users[wc->nr_users];
	u->name = strdup(name);
	u->hash = strdup(hash);
	wc->nr_users++;
	return u->name && u->hash ? 0 : -ENOMEM;
}

static int top_pair(struct parse *p, const yaml_node_t *k, const char *name, const yaml_node_t *v)
{
	static const char *const sections[] = { "tls_server_config", "http_server_config",
						"basic_auth_users" };
	static const pair_fn fns[] = { tls_pair, http_pair, user_pair };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sections); i++) {
		if (!strcmp(name, sections[i]))
			break;
	}
	if (i == ARRAY_SIZE(sections))
		return fail(p, k, name, "unknown key (want tls_server_config, http_server_config or "
				       "basic_auth_users)");
	if (i == 0) {
		if (p->wc->has_tls)
			return fail(p, k, name, "duplicate key");
		p->wc->has_tls = !is_null(v);
	}
	return each_pair(p, v, name, fns[i]);
}

/* What the sections say together: the files TLS needs, and a CA only where it is used. */
static int check_tls(struct parse *p, const yaml_node_t *root)
{
	struct webconfig_tls *t = &p->wc->tls;
	const char *auth = client_auth_names[t->client_auth];
	bool verify = t->client_auth == WEBCONFIG_VERIFY_CLIENT_CERT_IF_GIVEN ||
		      t->client_auth == WEBCONFIG_REQUIRE_AND_VERIFY_CLIENT_CERT;

	if (!p->wc->has_tls)
		return 0;
	if (!t->cert_file)
		return fail(p, root, "tls_server_config.cert_file", "missing (needed for TLS)");
	if (!t->key_file)
		return fail(p, root, "tls_server_config.key_file", "missing (needed for TLS)");
	if (verify && !t->client_ca_file)
		return fail(p, root, "tls_server_config.client_ca_file",
			    "missing (client_auth_type %s verifies against it)", auth);
	if (!verify && t->client_ca_file)
		return fail(p, root, "tls_server_config.client_ca_file",
			    "set, but client_auth_type %s verifies no certificate", auth);
	if (p->min_version > p->max_version)
		return fail(p, root, "tls_server_config.min_version", "%s is above max_version %s",
			    tls_versions[p->min_version][0], tls_versions[p->max_version][0]);
	snprintf(t->priorities, sizeof(t->priorities), "NORMAL:-VERS-ALL");
	for (size_t v = p->min_version; v <= p->max_version; v++)
		snprintf(t->priorities + strlen(t->priorities),
			 sizeof(t->priorities) - strlen(t->priorities), ":+%s", tls_versions[v][1]);
	return 0;
}

static int parse_doc(struct parse *p)
{
	const yaml_node_t *root = yaml_document_get_root_node(&p->doc);
	int err;

	/* An empty file: nothing configured, plain HTTP as without the flag. */
	if (!root || is_null(root))
		return 0;
	if (root->type != YAML_MAPPING_NODE)
		return fail(p, root, "(top level)", "want a mapping of keys");
	err = each_pair(p, root, "(top level)", top_pair);
	return err ?: check_tls(p, root);
}

int webconfig__parse(const char *buf, size_t len, struct webconfig **out, char *why, size_t n)
{
	struct parse p = { .why = why, .n = n, .min_version = TLS_DEFAULT_MIN,
			   .max_version = ARRAY_SIZE(tls_versions) - 1 };
	yaml_parser_t parser;
	int err;

	*out = NULL;
	p.wc = calloc(1, sizeof(*p.wc));
	if (!p.wc)
		return -ENOMEM;
	pthread_mutex_init(&p.wc->lock, NULL);
	if (!yaml_parser_initialize(&parser)) {
		webconfig__free(p.wc);
		return -ENOMEM;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&parser, &p.doc)) {
		snprintf(why, n, "%zu: syntax error: %s", parser.problem_mark.line + 1,
			 parser.problem ? parser.problem : "invalid YAML");
		yaml_parser_delete(&parser);
		webconfig__free(p.wc);
		return -EINVAL;
	}
	err = parse_doc(&p);
	/* One document only: a second would be silently ignored. */
	if (!err && yaml_document_get_root_node(&p.doc)) {
		yaml_document_t next;

		if (!yaml_parser_load(&parser, &next)) {
			err = fail(&p, NULL, "(file)", "syntax error after the document");
		} else {
			if (yaml_document_get_root_node(&next))
				err = fail(&p, NULL, "(file)", "only one YAML document is allowed");
			yaml_document_delete(&next);
		}
	}
	yaml_document_delete(&p.doc);
	yaml_parser_delete(&parser);
	if (err == -ENOMEM)
		snprintf(why, n, "out of memory");
	if (err) {
		webconfig__free(p.wc);
		return err;
	}
	*out = p.wc;
	return 0;
}

/* The whole file, NUL-terminated, at most max bytes. */
static int read_file(const char *path, size_t max, char **text, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	size_t got;

	if (!f)
		return -errno;
	buf = malloc(max + 1);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	got = fread(buf, 1, max + 1, f);
	if (ferror(f) || got > max) {
		int err = ferror(f) ? -EIO : -EFBIG;

		fclose(f);
		free(buf);
		return err;
	}
	fclose(f);
	buf[got] = '\0';
	*text = buf;
	*len = got;
	return 0;
}

/* A relative name is taken from the directory of the web config file, as Prometheus does. */
static int resolve(const char *config, char **name)
{
	const char *slash = strrchr(config, '/');
	char *full;

	if (**name == '/' || !slash)
		return 0;
	if (asprintf(&full, "%.*s/%s", (int)(slash - config), config, *name) < 0)
		return -ENOMEM;
	free(*name);
	*name = full;
	return 0;
}

static int read_pem(const char *config, size_t line, const char *key, char **name, char **pem,
		    char *why, size_t n)
{
	size_t len;
	int err = resolve(config, name) ?: read_file(*name, PEM_FILE_MAX, pem, &len);

	if (err)
		snprintf(why, n, "%s:%zu: tls_server_config.%s: cannot read \"%s\": %s", config, line,
			 key, *name, err == -EFBIG ? "larger than 1MiB" : strerror(-err));
	return err;
}

/* GnuTLS loads what the server will load: a key that does not match fails here, not later. */
static int check_pem(struct webconfig *wc, const char *config, char *why, size_t n)
{
	struct webconfig_tls *t = &wc->tls;
	gnutls_certificate_credentials_t cred;
	gnutls_datum_t cert = { (unsigned char *)t->cert_pem, (unsigned int)strlen(t->cert_pem) };
	gnutls_datum_t key = { (unsigned char *)t->key_pem, (unsigned int)strlen(t->key_pem) };
	gnutls_priority_t prio;
	int ret;

	if (gnutls_certificate_allocate_credentials(&cred))
		return -ENOMEM;
	ret = gnutls_certificate_set_x509_key_mem(cred, &cert, &key, GNUTLS_X509_FMT_PEM);
	if (ret < 0) {
		snprintf(why, n, "%s:%zu: tls_server_config.key_file: %s with cert_file %s: %s",
			 config, wc->key_line, t->key_file, t->cert_file, gnutls_strerror(ret));
		goto out;
	}
	if (t->client_ca_pem) {
		gnutls_datum_t ca = { (unsigned char *)t->client_ca_pem,
				      (unsigned int)strlen(t->client_ca_pem) };

		ret = gnutls_certificate_set_x509_trust_mem(cred, &ca, GNUTLS_X509_FMT_PEM);
		if (ret <= 0) {
			snprintf(why, n, "%s:%zu: tls_server_config.client_ca_file: %s: %s", config,
				 wc->ca_line, t->client_ca_file,
				 ret < 0 ? gnutls_strerror(ret) : "no PEM certificate in it");
			ret = -1;
			goto out;
		}
	}
	ret = gnutls_priority_init(&prio, t->priorities, NULL);
	if (ret < 0) {
		snprintf(why, n, "%s: tls_server_config.min_version: this GnuTLS refuses \"%s\": %s",
			 config, t->priorities, gnutls_strerror(ret));
		goto out;
	}
	gnutls_priority_deinit(prio);
	ret = 0;
out:
	gnutls_certificate_free_credentials(cred);
	return ret ? -EINVAL : 0;
}

int webconfig__load(const char *path, struct webconfig **out, char *why, size_t n)
{
	char inner[384];
	struct webconfig *wc;
	char *text;
	size_t len;
	int err;

	*out = NULL;
	err = read_file(path, WEBCONFIG_FILE_MAX, &text, &len);
	if (err) {
		snprintf(why, n, "cannot read \"%s\": %s", path,
			 err == -EFBIG ? "larger than 64KiB" : strerror(-err));
		return err;
	}
	err = webconfig__parse(text, len, &wc, inner, sizeof(inner));
	free(text);
	if (err) {
		snprintf(why, n, "%s:%s", path, inner);
		return err;
	}
	if (wc->has_tls) {
		struct webconfig_tls *t = &wc->tls;

		err = read_pem(path, wc->cert_line, "cert_file", &t->cert_file, &t->cert_pem, why, n) ?:
		      read_pem(path, wc->key_line, "key_file", &t->key_file, &t->key_pem, why, n) ?:
		      (t->client_ca_file ? read_pem(path, wc->ca_line, "client_ca_file",
						    &t->client_ca_file, &t->client_ca_pem, why, n) :
					   0) ?:
		      check_pem(wc, path, why, n);
		if (err) {
			webconfig__free(wc);
			return err;
		}
	}
	if (wc->nr_users) {
		wc->crypt = calloc(1, sizeof(*wc->crypt));
		if (!wc->crypt) {
			webconfig__free(wc);
			return -ENOMEM;
		}
	}
	*out = wc;
	return 0;
}

void webconfig__free(struct webconfig *wc)
{
	if (!wc)
		return;
	free(wc->tls.cert_file);
	free(wc->tls.key_file);
	free(wc->tls.client_ca_file);
	free(wc->tls.cert_pem);
	if (wc->tls.key_pem) {
		explicit_bzero(wc->tls.key_pem, strlen(wc->tls.key_pem));
		free(wc->tls.key_pem);
	}
	free(wc->tls.client_ca_pem);
	for (size_t i = 0; i < wc->nr_headers; i++) {
		free(wc->headers[i].name);
		free(wc->headers[i].value);
	}
	free(wc->headers);
	for (size_t i = 0; i < wc->nr_users; i++) {
		free(wc->users[i].name);
		free(wc->users[i].hash);
	}
	free(wc->users);
	if (wc->crypt) {
		explicit_bzero(wc->crypt, sizeof(*wc->crypt));
		free(wc->crypt);
	}
	pthread_mutex_destroy(&wc->lock);
	free(wc);
}

const struct webconfig_tls *webconfig__tls(const struct webconfig *wc)
{
	return wc && wc->has_tls ? &wc->tls : NULL;
}

size_t webconfig__headers(const struct webconfig *wc, const struct webconfig_header **out)
{
	*out = wc ? wc->headers : NULL;
	return wc ? wc->nr_headers : 0;
}

bool webconfig__auth_required(const struct webconfig *wc)
{
	return wc && wc->nr_users;
}

/* Equal without an early exit, so the time taken says nothing of where they differ. */
static bool same_bytes(const void *a, const void *b, size_t len)
{
	const unsigned char *x = a, *y = b;
	unsigned char diff = 0;

	for (size_t i = 0; i < len; i++)
		diff |= x[i] ^ y[i];
	return !diff;
}

/* SHA-256 of user, password and hash, each with its length: what the cache remembers. */
static int credential_digest(const char *user, const char *password, const char *hash,
			     unsigned char *out)
{
	const char *parts[] = { user, password, hash };
	gnutls_hash_hd_t h;

	if (gnutls_hash_init(&h, GNUTLS_DIG_SHA256) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < ARRAY_SIZE(parts); i++) {
		uint64_t len = strlen(parts[i]);

		gnutls_hash(h, &len, sizeof(len));
		gnutls_hash(h, parts[i], len);
	}
	gnutls_hash_deinit(h, out);
	return 0;
}

bool webconfig__authenticate(struct webconfig *wc, const char *user, const char *password)
{
	unsigned char digest[DIGEST_LEN];
	const struct webconfig_user *u = NULL;
	const char *hash, *got;
	bool ok = false, cached = false;

	if (!wc || !wc->nr_users || !user || !password)
		return false;
	for (size_t i = 0; i < wc->nr_users; i++) {
		if (!strcmp(wc->users[i].name, user))
			u = &wc->users[i];
	}
	/* An unknown user still costs one bcrypt, so timing does not tell which users exist. */
	hash = u ? u->hash : wc->users[0].hash;
	if (credential_digest(user, password, hash, digest))
		return false;
	pthread_mutex_lock(&wc->lock);
	for (size_t i = 0; i < wc->nr_cached; i++)
		cached |= same_bytes(wc->cache[i], digest, DIGEST_LEN);
	if (cached) {
		ok = u != NULL;
	} else {
		got = crypt_r(password, hash, wc->crypt);
		ok = u && got && strlen(got) == BCRYPT_LEN && same_bytes(got, hash, BCRYPT_LEN);
		if (ok) {
			/* Oldest out first once full. */
			if (wc->nr_cached == AUTH_CACHE)
				memmove(wc->cache[0], wc->cache[1], (AUTH_CACHE - 1) * DIGEST_LEN);
			else
				wc->nr_cached++;
			memcpy(wc->cache[wc->nr_cached - 1], digest, DIGEST_LEN);
		}
	}
	pthread_mutex_unlock(&wc->lock);
	explicit_bzero(digest, sizeof(digest));
	return ok;
}
