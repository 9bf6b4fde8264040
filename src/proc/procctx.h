/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_PROC_PROCCTX_H
#define AUTOPROF_PROC_PROCCTX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opentelemetry/proto/processcontext/v1development/process_context.pb-c.h"

/*
 * The OpenTelemetry process context (OTEP 4719): a process publishes its resource (service.name,
 * ...) in a mapping named OTEL_CTX, a 32-byte header that points at a protobuf ProcessContext.
 * autoprof reads it from outside through /proc/PID/mem.
 */
typedef Opentelemetry__Proto__Processcontext__V1development__ProcessContext procctx_msg;

/* Payloads past this are not read: a resource is a few hundred bytes. */
#define PROCCTX_MAX_PAYLOAD (64 * 1024)

/* Whether a /proc/PID/maps path names an OTEL_CTX mapping (memfd, shared or private anon). */
bool procctx__is_mapping(const char *path);

/*
 * Copies the payload published in the OTEL_CTX mapping at addr of process pid into a malloc'd
 * buffer (*payload, *len; the caller frees it). *published_ns: the publication time of the copy.
 * When *published_ns is non-zero on entry and the header still carries it, nothing is copied and
 * 1 is returned (the caller's copy is current). Returns 0, 1, or a negative errno: -ESRCH the
 * process is gone, -EIO its memory is unreadable, -EBADMSG a bad header, -E2BIG a payload past
 * PROCCTX_MAX_PAYLOAD, -EAGAIN not published yet (a zero publication time: a fresh
 * mapping, or one being updated) or kept changing while it was copied.
 */
int procctx__read_payload(uint32_t pid, uint64_t addr, uint64_t *published_ns, void **payload,
			  size_t *len);

/* Decodes a payload; NULL when malformed. Free with procctx__free (accepts NULL). */
procctx_msg *procctx__decode(const void *payload, size_t len);
void procctx__free(procctx_msg *msg);

/* The string value of resource attribute key, or NULL (absent, or not a string). */
const char *procctx__resource_string(const procctx_msg *msg, const char *key);

/*
 * service.name from a payload into buf (truncated to size). Returns 0, -EBADMSG when the payload
 * is malformed, -ENODATA when it declares no service.name.
 */
int procctx__decode_service(const void *payload, size_t len, char *buf, size_t size);

#endif
