/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_WEBCONFIG_H
#define AUTOPROF_WEBCONFIG_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The web configuration file of --web.config.file, in the Prometheus exporter-toolkit format:
 * tls_server_config, http_server_config.headers and basic_auth_users. Parsed once at start; read-only afterwards, so HTTP threads share it.
 */
struct webconfig;

enum webconfig_client_auth {
	WEBCONFIG_NO_CLIENT_CERT,
	WEBCONFIG_REQUEST_CLIENT_CERT,
	WEBCONFIG_REQUIRE_ANY_CLIENT_CERT,
	WEBCONFIG_VERIFY_CLIENT_CERT_IF_GIVEN,
	WEBCONFIG_REQUIRE_AND_VERIFY_CLIENT_CERT,
};

struct webconfig_tls {
	/* File names as written (relative ones resolved against the file's directory by load). */
	char *cert_file, *key_file, *client_ca_file;
	/* Their contents, NUL-terminated; filled by webconfig__load, NULL after parse alone. */
	char *cert_pem, *key_pem, *client_ca_pem;
	enum webconfig_client_auth client_auth;
	/* A GnuTLS priority string limiting the protocol to min_version..max_version. */
	char priorities[96];
};

struct webconfig_header {
	char *name, *value;
};

/*
 * Parses the YAML text buf[0..len) (no NUL needed); reads no file. *out is owned by the caller
 * (webconfig__free). 0, or -EINVAL with "LINE: KEY: reason" in why (-ENOMEM: out of memory).
 */
int webconfig__parse(const char *buf, size_t len, struct webconfig **out, char *why, size_t n);
/*
 * Reads and parses path, then reads the certificate, key and CA files it names (relative to
 * the directory of path) and checks them with GnuTLS. 0, or negative errno with
 * "PATH:LINE: KEY: reason" or "PATH: reason" in why.
 */
int webconfig__load(const char *path, struct webconfig **out, char *why, size_t n);
void webconfig__free(struct webconfig *wc); /* accepts NULL */

/* NULL without tls_server_config. Owned by wc. */
const struct webconfig_tls *webconfig__tls(const struct webconfig *wc);
/* The extra response headers; *out is owned by wc. */
size_t webconfig__headers(const struct webconfig *wc, const struct webconfig_header **out);
/* True when basic_auth_users has at least one user: every request must authenticate. */
bool webconfig__auth_required(const struct webconfig *wc);
/*
 * True when user and password match a bcrypt hash of basic_auth_users. Safe from any thread;
 * bcrypt runs one at a time (a flood of guesses costs one CPU, not all), and a success is
 * remembered (as a SHA-256 digest) so a scraper does not pay bcrypt on every scrape.
 */
bool webconfig__authenticate(struct webconfig *wc, const char *user, const char *password);

#endif
