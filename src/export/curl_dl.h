/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_EXPORT_CURL_DL_H
#define AUTOPROF_EXPORT_CURL_DL_H

#include <curl/curl.h>
#include <time.h>

/*
 * libcurl, opened when the first OTLP pusher starts rather than linked: its tree (OpenSSL,
 * Kerberos, LDAP, SSH, RTMP...) is ~3 MiB of resident pages in every agent, and only agents
 * that push OTLP use it. The functions autoprof calls, by the names libcurl exports.
 */
struct curl_dl {
	CURLcode (*global_init)(long flags);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *curl, CURLoption option, ...);
	CURLcode (*easy_perform)(CURL *curl);
	CURLcode (*easy_getinfo)(CURL *curl, CURLINFO info, ...);
	const char *(*easy_strerror)(CURLcode code);
	void (*easy_cleanup)(CURL *curl);
	struct curl_slist *(*slist_append)(struct curl_slist *list, const char *string);
	void (*slist_free_all)(struct curl_slist *list);
	time_t (*getdate)(const char *p, const time_t *unused);
};

/*
 * The library, opened and globally initialized once per process (and never closed: its TLS
 * state outlives any one pusher). 0 and *out (owned by this module), or -ELIBACC when
 * libcurl.so.4 cannot be loaded or lacks a function (logged once, with dlerror's reason), or
 * -ENOMEM when curl_global_init fails.
 */
int curl_dl__get(const struct curl_dl **out);

#endif
