/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_RUNTIME_HOTSPOT_H
#define AUTOPROF_RUNTIME_HOTSPOT_H

#include <stddef.h>
#include <stdint.h>

/*
 * A HotSpot JVM's own description of its structures: libjvm.so exports gHotSpotVMStructs (an
 * array of (type, field, offset) entries) and the layout of those entries (gHotSpotVMStructEntry*
 * Offset, ArrayStride), for its serviceability agent. They are read from the running JVM's
 * memory, so one reader serves every JDK release that keeps the tables, with no offsets of our
 * own. What is read: enough to name a Klass (a class's metadata) and a Method by their Symbols,
 * and to find the interpreter's code.
 */

struct map_entry;

struct hotspot_offsets {
	uint32_t klass_name;	/* Klass::_name, a Symbol* */
	uint32_t symbol_length; /* Symbol::_length, a u2 */
	uint32_t symbol_body;	/* Symbol::_body, the bytes (modified UTF-8, not terminated) */
	/* A Method's name: its ConstMethod, whose constant pool's class holds it and whose entry
	 * name_index (past the pool's own fields, pool_size bytes) is its name's Symbol. */
	uint32_t method_const;	/* Method::_constMethod */
	uint32_t const_pool;	/* ConstMethod::_constants */
	uint32_t name_index;	/* ConstMethod::_name_index, a u2 */
	uint32_t pool_holder;	/* ConstantPool::_pool_holder, an InstanceKlass* */
	uint32_t pool_length;	/* ConstantPool::_length, an int */
	uint32_t pool_size;	/* sizeof(ConstantPool) */
	/* The interpreter's code: a StubQueue, whose buffer and limit bound it. */
	uint64_t interp_code;	/* &AbstractInterpreter::_code (a static: an address) */
	uint32_t stubq_buffer;	/* StubQueue::_stub_buffer */
	uint32_t stubq_limit;	/* StubQueue::_buffer_limit, an int */
	bool methods;		/* all of the above were found: methods can be named */
};

/*
 * The offsets of the JVM whose memory is open at mem_fd (procmem__open), its libjvm.so open at
 * fd and mapped at e (one of its mappings). 0 (out->methods false when what names methods is
 * missing), -ENOENT when the file exports no tables or they lack what names a class, -EPROTO
 * when they are malformed, or a negative errno from reading.
 */
int hotspot__offsets(int mem_fd, int fd, const struct map_entry *e, struct hotspot_offsets *out);

/*
 * The Java name of the class whose Klass is at klass ("java.lang.String", "byte[]",
 * "com.example.Order[][]") into buf (n bytes, NUL-terminated, cut to fit). 0 or a negative
 * errno (-EIO: the class is not readable there, -EPROTO: its name is malformed).
 */
int hotspot__klass_name(int mem_fd, const struct hotspot_offsets *o, uint64_t klass, char *buf,
			size_t n);

/*
 * The name of the method whose Method is at method ("java.lang.String.hashCode") into buf (n
 * bytes, NUL-terminated, cut to fit). 0 or a negative errno (-ENOTSUP: the tables lack what
 * names methods; -EPROTO: what is read there is no method).
 */
int hotspot__method_name(int mem_fd, const struct hotspot_offsets *o, uint64_t method,
			 char *buf, size_t n);

/*
 * Where the JVM's interpreter code is, [*lo, *hi). 0, -EAGAIN while the JVM has not generated
 * it yet, -ENOTSUP when the tables lack what says, or a negative errno from reading.
 */
int hotspot__interpreter(int mem_fd, const struct hotspot_offsets *o, uint64_t *lo,
			 uint64_t *hi);

/*
 * A class name as the JVM spells it inside ("java/lang/String", "[B", "[[Ljava/lang/String;"),
 * len bytes at internal, in Java's spelling into buf (n bytes, NUL-terminated, cut to fit).
 * 0, or -EPROTO for an array descriptor that names no type.
 */
int hotspot__java_name(const char *internal, size_t len, char *buf, size_t n);

#endif
