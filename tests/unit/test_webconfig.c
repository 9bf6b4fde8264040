/* DEPS: src/http/webconfig.c src/lib/log.c */
// SPDX-License-Identifier: GPL-2.0-only
#include <crypt.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "http/webconfig.h"
#include "lib/log.h"
#include "testlib.h"

/* bcrypt of "pw" at cost 4 (cheap for tests), made with crypt_r at start. */
static char hash_pw[128];

static int parse(const char *text, struct webconfig **wc, char *why, size_t n)
{
	return webconfig__parse(text, strlen(text), wc, why, n);
}

TEST(full_config)
{
	char text[1024], why[512] = "";
	const struct webconfig_header *h;
	const struct webconfig_tls *t;
	struct webconfig *wc = NULL;

	snprintf(text, sizeof(text),
		 "tls_server_config:\n"
		 "  cert_file: tls.crt\n"
		 "  key_file: /etc/tls.key\n"
		 "  client_auth_type: RequireAndVerifyClientCert\n"
		 "  client_ca_file: ca.crt\n"
		 "  min_version: TLS13\n"
		 "http_server_config:\n"
		 "  headers:\n"
		 "    X-Content-Type-Options: nosniff\n"
		 "    Strict-Transport-Security: max-age=31536000\n"
		 "basic_auth_users:\n"
		 "  scraper: %s\n", hash_pw);
	CHECK_EQ(parse(text, &wc, why, sizeof(why)), 0);
	CHECK_STR(why, "");
	t = webconfig__tls(wc);
	CHECK(t);
	CHECK_STR(t->cert_file, "tls.crt");
	CHECK_STR(t->key_file, "/etc/tls.key");
	CHECK_STR(t->client_ca_file, "ca.crt");
	CHECK_EQ(t->client_auth, WEBCONFIG_REQUIRE_AND_VERIFY_CLIENT_CERT);
	CHECK_STR(t->priorities, "NORMAL:-VERS-ALL:+VERS-TLS1.3");
	CHECK_EQ(webconfig__headers(wc, &h), 2);
	CHECK_STR(h[1].name, "Strict-Transport-Security");
	CHECK_STR(h[1].value, "max-age=31536000");
	CHECK(webconfig__auth_required(wc));
	webconfig__free(wc);
}

TEST(empty_is_plain_http)
{
	static const char *const texts[] = { "", "---\n", "basic_auth_users:\n",
					     "http_server_config:\n  headers:\n" };
	char why[256];

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct webconfig *wc = NULL;

		CHECK_EQ(parse(texts[i], &wc, why, sizeof(why)), 0);
		CHECK(!webconfig__tls(wc));
		CHECK(!webconfig__auth_required(wc));
		webconfig__free(wc);
	}
	webconfig__free(NULL);
}

/* Each error names the line and the key. */
TEST(errors_name_the_key)
{
	static const struct {
		const char *text, *why;
	} cases[] = {
		{ "tls_server_config:\n  cert_file: a\n  key_file: b\n  cipher_suites: [x]\n",
		  "4: tls_server_config.cipher_suites: unknown key" },
		{ "basic_auth:\n  a: b\n", "1: basic_auth: unknown key" },
		{ "basic_auth_users:\n  scraper: hunter2\n",
		  "2: basic_auth_users.scraper: not a bcrypt hash" },
		{ "basic_auth_users:\n  scraper: $2b$10$short\n",
		  "2: basic_auth_users.scraper: not a bcrypt hash" },
		{ "basic_auth_users:\n  scraper: [a]\n", "2: basic_auth_users.scraper: want a bcrypt" },
		{ "tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: Nope\n",
		  "4: tls_server_config.client_auth_type: \"Nope\" is not one of NoClientCert," },
		{ "tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS14\n",
		  "4: tls_server_config.min_version: \"TLS14\" is not one of TLS10, TLS11, TLS12, "
		  "TLS13" },
		{ "tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS13\n"
		  "  max_version: TLS12\n",
		  "1: tls_server_config.min_version: TLS13 is above max_version TLS12" },
		{ "tls_server_config:\n  cert_file: a\n", "1: tls_server_config.key_file: missing" },
		{ "tls_server_config:\n  key_file: a\n", "1: tls_server_config.cert_file: missing" },
		{ "tls_server_config:\n  cert_file: a\n  key_file: b\n"
		  "  client_auth_type: VerifyClientCertIfGiven\n",
		  "1: tls_server_config.client_ca_file: missing" },
		{ "tls_server_config:\n  cert_file: a\n  key_file: b\n  client_ca_file: c\n",
		  "1: tls_server_config.client_ca_file: set, but client_auth_type NoClientCert" },
		{ "tls_server_config:\n  cert_file: a\n  cert_file: b\n  key_file: b\n",
		  "3: tls_server_config.cert_file: duplicate key" },
		{ "http_server_config:\n  headers:\n    'Bad Name': x\n",
		  "3: http_server_config.headers.Bad Name: not a valid HTTP header" },
		{ "http_server_config:\n  headers:\n    X-A: \"a\\r\\nSet-Cookie: x\"\n",
		  "3: http_server_config.headers.X-A: not a valid HTTP header" },
		{ "http_server_config:\n  http2: maybe\n", "2: http_server_config.http2: want true" },
		{ "http_server_config:\n  timeout: 5s\n", "2: http_server_config.timeout: unknown key" },
		{ "- a\n- b\n", "1: (top level): want a mapping" },
		{ "a: [\n", "2: syntax error" },
		{ "basic_auth_users: {}\n---\nbasic_auth_users: {}\n",
		  "1: (file): only one YAML document" },
	};
	char why[512];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct webconfig *wc = (struct webconfig *)1;

		why[0] = '\0';
		if (parse(cases[i].text, &wc, why, sizeof(why)) != -EINVAL || wc ||
		    strncmp(why, cases[i].why, strlen(cases[i].why)))
			FAILF("case %zu: got \"%s\", want \"%s...\"", i, why, cases[i].why);
	}
}

TEST(authenticate)
{
	char text[512], why[256];
	struct webconfig *wc = NULL;

	snprintf(text, sizeof(text), "basic_auth_users:\n  scraper: %s\n  other: %s\n", hash_pw,
		 hash_pw);
	/* Through a file: load, not parse, makes the state bcrypt needs. */
	{
		char path[] = "/tmp/test_webconfig.XXXXXX";
		int fd = mkstemp(path);
		FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

		CHECK(f);
		fputs(text, f);
		fclose(f);
		CHECK_EQ(webconfig__load(path, &wc, why, sizeof(why)), 0);
		unlink(path);
	}
	CHECK(webconfig__authenticate(wc, "scraper", "pw"));
	/* Again, from the cache of successes. */
	CHECK(webconfig__authenticate(wc, "scraper", "pw"));
	CHECK(webconfig__authenticate(wc, "other", "pw"));
	CHECK(!webconfig__authenticate(wc, "scraper", "pw "));
	CHECK(!webconfig__authenticate(wc, "scraper", ""));
	CHECK(!webconfig__authenticate(wc, "nobody", "pw"));
	CHECK(!webconfig__authenticate(wc, "scraper", NULL));
	CHECK(!webconfig__authenticate(wc, NULL, "pw"));
	CHECK(!webconfig__authenticate(NULL, "scraper", "pw"));
	webconfig__free(wc);
}

TEST(load_errors)
{
	char why[512];
	struct webconfig *wc = NULL;

	CHECK_EQ(webconfig__load("/nonexistent/web.yml", &wc, why, sizeof(why)), -ENOENT);
	CHECK(strstr(why, "cannot read \"/nonexistent/web.yml\""));
	CHECK(!wc);
}

/* config/web-config.yml parses, and its sample password is the one its comment says. */
TEST(repo_sample)
{
	char text[8192], why[512] = "";
	struct webconfig *wc = NULL;
	FILE *f = fopen("config/web-config.yml", "r");
	size_t len;

	if (!f)
		SKIP("run from the repository root");
	len = fread(text, 1, sizeof(text), f);
	fclose(f);
	CHECK_EQ(webconfig__parse(text, len, &wc, why, sizeof(why)), 0);
	CHECK_STR(why, "");
	CHECK(webconfig__tls(wc) && webconfig__auth_required(wc));
	webconfig__free(wc);
}

int main(void)
{
	struct crypt_data cd = {};
	const char *h;

	log__set_level(LOG_ERROR);
	h = crypt_r("pw", "$2b$04$abcdefghijklmnopqrstuu", &cd);
	if (!h || strlen(h) != 60) {
		fprintf(stderr, "crypt_r has no bcrypt here\n");
		return 1;
	}
	snprintf(hash_pw, sizeof(hash_pw), "%s", h);
	RUN(full_config);
	RUN(empty_is_plain_http);
	RUN(errors_name_the_key);
	RUN(authenticate);
	RUN(load_errors);
	RUN(repo_sample);
	return test_summary();
}
