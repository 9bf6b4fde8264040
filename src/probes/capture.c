// SPDX-License-Identifier: GPL-2.0-only
/*
 * Where a probe's captured variables are at each of its addresses: the variable found by name
 * in the scopes around the address (libdw), its DWARF location at that address (location lists
 * included) translated into what BPF can do at the probe (bpf/probes_abi.h: a register plus a
 * constant, then a few reads of user memory), the members asked for followed through structs
 * and pointers. A value the compiler keeps nowhere at that address is optimized out, never
 * guessed; what cannot be translated is refused with its reason.
 */
#define pr_fmt(fmt) "probes: " fmt

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes/probes_priv.h"

/* A value being located: regs[reg] + add, then reads (bpf/probes_abi.h); mem: the value
 * itself is at the address computed so far (its own read still to come). */
struct loc {
	enum probes_capture_kind kind;
	int reg;
	int64_t add;
	int32_t off[PROBES_MAX_READS];
	int nr_reads;
	bool mem;
	char where[96];
};

struct ctx {
	Dwarf *dw;
	Dwarf_CFI *cfi;
	uint64_t pc;
	bool at_entry; /* the function's entry: nothing of its body has run */
	bool local;    /* the variable is a local of a function or block */
	const char *expr;
	char *why;
	size_t why_len;
};

static int fail(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct ctx *c, const char *fmt, ...)
{
	int n = snprintf(c->why, c->why_len, "capture: \"%s\": ", c->expr);
	va_list ap;

	if (n < 0 || (size_t)n >= c->why_len)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(c->why + n, c->why_len - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static const char *const reg_names[PROBES_NR_REGS] = {
    "rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8",
    "r9",  "r10", "r11", "r12", "r13", "r14", "r15", "rip",
};

/* The frame base register and offset of subprogram fn at c->pc (DW_AT_frame_base; the CFA
 * from the call frame information, as GCC and clang describe it). */
static int frame_base(struct ctx *c, Dwarf_Die *fn, int *reg, int64_t *add)
{
	Dwarf_Attribute a;
	Dwarf_Op *ops;
	size_t n;

	if (!dwarf_attr_integrate(fn, DW_AT_frame_base, &a) ||
	    dwarf_getlocation_addr(&a, c->pc, &ops, &n, 1) != 1 || n != 1)
		return fail(c, "no frame base at this address");
	if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		*reg = ops[0].atom - DW_OP_breg0;
		*add = (int64_t)ops[0].number;
		return 0;
	}
	if (ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31) {
		*reg = ops[0].atom - DW_OP_reg0;
		*add = 0;
		return 0;
	}
	if (ops[0].atom == DW_OP_call_frame_cfa) {
		Dwarf_Frame *frame = NULL;
		Dwarf_Op *cfa;
		size_t ncfa;
		int err = 0;

		if (!c->cfi || dwarf_cfi_addrframe(c->cfi, c->pc, &frame) ||
		    dwarf_frame_cfa(frame, &cfa, &ncfa) || ncfa != 1)
			err = fail(c, "no call frame information at this address");
		else if (cfa[0].atom >= DW_OP_breg0 && cfa[0].atom <= DW_OP_breg31)
			*reg = cfa[0].atom - DW_OP_breg0, *add = (int64_t)cfa[0].number;
		else if (cfa[0].atom == DW_OP_bregx)
			*reg = (int)cfa[0].number, *add = (int64_t)cfa[0].number2;
		else
			err = fail(c, "a frame address BPF cannot compute here");
		free(frame);
		return err;
	}
	return fail(c, "a frame base BPF cannot compute (DW_OP 0x%x)", ops[0].atom);
}

/* The enclosing subprogram of scopes (an inlined body's frame is its caller's). */
static Dwarf_Die *subprogram(Dwarf_Die *scopes, int n)
{
	for (int i = 0; i < n; i++)
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram)
			return &scopes[i];
	return NULL;
}

static int type_of(Dwarf_Die *die, Dwarf_Die *type)
{
	Dwarf_Attribute a;

	if (!dwarf_attr_integrate(die, DW_AT_type, &a) || !dwarf_formref_die(&a, type))
		return -ENOENT;
	return dwarf_peel_type(type, type) ? -ENOENT : 0;
}

/* Whether the SysV ABI passes a value of type in one integer register. */
static bool integer_class(Dwarf_Die *type)
{
	Dwarf_Word enc = 0;
	Dwarf_Attribute a;
	int size = dwarf_bytesize(type);

	switch (dwarf_tag(type)) {
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
		return true;
	case DW_TAG_enumeration_type:
		return size > 0 && size <= 8;
	case DW_TAG_base_type:
		if (dwarf_formudata(dwarf_attr(type, DW_AT_encoding, &a), &enc))
			return false;
		return size > 0 && size <= 8 && enc != DW_ATE_float && enc != DW_ATE_complex_float;
	}
	return false;
}

/*
 * A parameter at the function's entry, where the ABI says it is: -O0 code describes it at its
 * stack slot, which the prologue has not written yet there.
 */
static int entry_param(struct ctx *c, Dwarf_Die *fn, Dwarf_Die *var, struct loc *l)
{
	static const int regs[6] = {5, 4, 1, 2, 8, 9}; /* rdi rsi rdx rcx r8 r9 */
	const void *want = var->addr;
	Dwarf_Die child, type;
	int i = 0;

	if (dwarf_child(fn, &child))
		return fail(c, "its function lists no parameters");
	do {
		if (dwarf_tag(&child) != DW_TAG_formal_parameter)
			continue;
		if (type_of(&child, &type) || !integer_class(&type))
			return fail(c, "a parameter after one not passed in a register: not known "
				       "at the entry");
		if (child.addr == want) {
			if (i >= 6)
				return fail(c, "parameter %d is on the stack at the entry", i + 1);
			*l = (struct loc){.kind = PROBES_CAP_READ, .reg = regs[i]};
			snprintf(l->where, sizeof(l->where), "%s (parameter %d at the entry)",
				 reg_names[regs[i]], i + 1);
			return 0;
		}
		i++;
	} while (!dwarf_siblingof(&child, &child));
	return fail(c, "not a parameter of the probed function");
}

static int add_read(struct ctx *c, struct loc *l, int64_t off)
{
	if (l->nr_reads == PROBES_MAX_READS)
		return fail(c, "more than %d reads of memory", PROBES_MAX_READS);
	if (off < INT32_MIN || off > INT32_MAX)
		return fail(c, "an offset out of range");
	l->off[l->nr_reads++] = (int32_t)off;
	return 0;
}

/* var's location at c->pc into l. */
static int locate(struct ctx *c, Dwarf_Die *scopes, int n, Dwarf_Die *var, int size, struct loc *l)
{
	Dwarf_Die *fn = subprogram(scopes, n);
	Dwarf_Attribute a;
	Dwarf_Op *ops;
	size_t nops;
	int64_t pending = 0;
	int r;

	memset(l, 0, sizeof(*l));
	if (!dwarf_attr_integrate(var, DW_AT_location, &a)) {
		Dwarf_Sword v;

		if (dwarf_attr_integrate(var, DW_AT_const_value, &a) && !dwarf_formsdata(&a, &v)) {
			*l = (struct loc){.kind = PROBES_CAP_CONST, .add = v};
			snprintf(l->where, sizeof(l->where), "a constant");
			return 0;
		}
		l->kind = PROBES_CAP_GONE;
		snprintf(l->where, sizeof(l->where), "optimized out");
		return 0;
	}
	r = dwarf_getlocation_addr(&a, c->pc, &ops, &nops, 1);
	if (r < 0)
		return fail(c, "its location cannot be read: %s", dwarf_errmsg(-1));
	if (c->at_entry && c->local && (r == 0 || !nops))
		return fail(c, "a local variable, not set yet at the function's entry: capture it "
			       "with a line probe (\"location\")");
	if (r == 0 || !nops) {
		l->kind = PROBES_CAP_GONE;
		snprintf(l->where, sizeof(l->where), "optimized out at this address");
		return 0;
	}
	/* Static storage is there all along; a local is set by the body, which has not run. */
	if (c->at_entry && c->local && ops[0].atom != DW_OP_addr)
		return fail(c, "a local variable, not set yet at the function's entry: capture it "
			       "with a line probe (\"location\")");
	l->kind = PROBES_CAP_READ;
	for (size_t i = 0; i < nops; i++) {
		const Dwarf_Op *op = &ops[i];
		unsigned int atom = op->atom;

		if (i == 0) {
			if (atom >= DW_OP_reg0 && atom <= DW_OP_reg31) {
				l->reg = (int)(atom - DW_OP_reg0);
			} else if (atom == DW_OP_regx) {
				l->reg = (int)op->number;
			} else if (atom >= DW_OP_breg0 && atom <= DW_OP_breg31) {
				l->reg = (int)(atom - DW_OP_breg0);
				l->add = (int64_t)op->number;
				l->mem = true;
			} else if (atom == DW_OP_bregx) {
				l->reg = (int)op->number;
				l->add = (int64_t)op->number2;
				l->mem = true;
			} else if (atom == DW_OP_fbreg) {
				if (!fn)
					return fail(c, "no enclosing function for its frame base");
				if (c->at_entry && dwarf_tag(var) == DW_TAG_formal_parameter)
					return entry_param(c, fn, var, l);
				r = frame_base(c, fn, &l->reg, &l->add);
				if (r)
					return r;
				l->add += (int64_t)op->number;
				l->mem = true;
			} else if (atom >= DW_OP_lit0 && atom <= DW_OP_lit31) {
				l->kind = PROBES_CAP_CONST;
				l->add = atom - DW_OP_lit0;
			} else if ((atom >= DW_OP_const1u && atom <= DW_OP_consts)) {
				l->kind = PROBES_CAP_CONST;
				l->add = (int64_t)op->number;
			} else if (atom == DW_OP_implicit_value) {
				uint64_t v = 0;

				memcpy(&v, (const void *)(uintptr_t)op->number2,
				       op->number < 8 ? op->number : 8);
				*l = (struct loc){.kind = PROBES_CAP_CONST, .add = (int64_t)v};
				break;
			} else if (atom == DW_OP_entry_value || atom == DW_OP_GNU_entry_value) {
				/* The value it had when the function was entered: kept nowhere now.
				 */
				l->kind = PROBES_CAP_GONE;
				snprintf(l->where, sizeof(l->where),
					 "optimized out (entry value only)");
				return 0;
			} else if (atom == DW_OP_addr) {
				/*
				 * Static storage, at its link-time address: the process maps the
				 * file wherever, but at the probe the instruction pointer is the
				 * probed address, whose link-time one is c->pc.
				 */
				l->reg = 16;
				l->add = (int64_t)(op->number - c->pc);
				l->mem = true;
				snprintf(l->where, sizeof(l->where), "static at 0x%llx",
					 (unsigned long long)op->number);
			} else {
				return fail(c, "a location BPF cannot compute (DW_OP 0x%x)", atom);
			}
			continue;
		}
		if (atom == DW_OP_stack_value) {
			if (l->kind == PROBES_CAP_CONST)
				break;
			if (l->nr_reads)
				return fail(c, "a computed value BPF cannot follow");
			l->mem = false;
		} else if (atom == DW_OP_plus_uconst) {
			if (l->nr_reads)
				pending += (int64_t)op->number;
			else
				l->add += (int64_t)op->number;
		} else if (atom == DW_OP_deref && l->mem) {
			r = add_read(c, l, pending);
			if (r)
				return r;
			pending = 0;
		} else if (atom == DW_OP_piece) {
			/* One piece holding the whole value is it; a split one is not read. */
			if ((int)op->number < size)
				return fail(c, "split in pieces at this address: not supported");
			break;
		} else {
			return fail(c, "a location BPF cannot compute (DW_OP 0x%x after the first)",
				    atom);
		}
	}
	if (l->kind == PROBES_CAP_CONST) {
		snprintf(l->where, sizeof(l->where), "a constant here");
		return 0;
	}
	if (l->reg < 0 || l->reg >= PROBES_NR_REGS)
		return fail(c, "in DWARF register %d, which a probe cannot read", l->reg);
	if (pending)
		return fail(c, "a computed address BPF cannot follow");
	if (l->where[0])
		return 0;
	snprintf(l->where, sizeof(l->where), l->mem ? "memory at %s%+lld" : "%s%+lld",
		 reg_names[l->reg], (long long)l->add);
	if (!l->mem && !l->add)
		snprintf(l->where, sizeof(l->where), "%s", reg_names[l->reg]);
	return 0;
}

/* The member called name of struct or union type (peeled), its offset and type. */
static int member(struct ctx *c, Dwarf_Die *type, const char *name, int64_t *off, Dwarf_Die *mt)
{
	Dwarf_Die child;
	Dwarf_Attribute a;
	Dwarf_Word w;
	int tag = dwarf_tag(type);

	if (tag != DW_TAG_structure_type && tag != DW_TAG_union_type && tag != DW_TAG_class_type)
		return fail(c, "\"%s\": not a member of a struct or union", name);
	if (dwarf_child(type, &child))
		return fail(c, "no member \"%s\"", name);
	do {
		const char *n = dwarf_diename(&child);

		if (dwarf_tag(&child) != DW_TAG_member || !n || strcmp(n, name))
			continue;
		if (dwarf_hasattr(&child, DW_AT_bit_size))
			return fail(c, "\"%s\" is a bit field: not supported", name);
		*off = 0;
		if (dwarf_attr_integrate(&child, DW_AT_data_member_location, &a)) {
			if (dwarf_formudata(&a, &w))
				return fail(c, "\"%s\" is at a computed offset", name);
			*off = (int64_t)w;
		}
		if (type_of(&child, mt))
			return fail(c, "\"%s\" has no type", name);
		return 0;
	} while (!dwarf_siblingof(&child, &child));
	return fail(c, "no member \"%s\"", name);
}

/* The type of the value finally read: size, sign, pointer. */
static int value_type(struct ctx *c, Dwarf_Die *type, struct capture_info *info)
{
	Dwarf_Attribute a;
	Dwarf_Word enc = 0;
	int size = dwarf_bytesize(type);
	const char *name = dwarf_diename(type);

	switch (dwarf_tag(type)) {
	case DW_TAG_pointer_type:
		info->size = 8;
		info->is_pointer = true;
		return 0;
	case DW_TAG_enumeration_type:
		if (size <= 0 || size > 8)
			break;
		info->size = (uint8_t)size;
		info->is_signed = true;
		return 0;
	case DW_TAG_base_type:
		dwarf_formudata(dwarf_attr(type, DW_AT_encoding, &a), &enc);
		if (enc == DW_ATE_float || enc == DW_ATE_complex_float || size <= 0 || size > 8)
			break;
		info->size = (uint8_t)size;
		info->is_signed = enc == DW_ATE_signed || enc == DW_ATE_signed_char;
		return 0;
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
	case DW_TAG_class_type:
		return fail(c,
			    "a %s: capture one of its members (.MEMBER, or ->MEMBER through a "
			    "pointer)",
			    dwarf_tag(type) == DW_TAG_union_type ? "union" : "struct");
	}
	return fail(c, "its type %s cannot be read (integers, enums and pointers can)",
		    name ? name : "(unnamed)");
}

/* One capture at one address. */
static int resolve_one(struct ctx *c, struct probes_capture *out, struct capture_info *info,
		       bool *found)
{
	char name[PROBE_CAPTURE_MAX], *s;
	Dwarf_Die cu, *scopes = NULL, var, type;
	struct loc l;
	int n, idx, err;

	*found = false;
	snprintf(name, sizeof(name), "%s", c->expr);
	s = name + strcspn(name, ".-");
	if (!dwarf_addrdie(c->dw, c->pc, &cu))
		return 0;
	n = dwarf_getscopes(&cu, c->pc, &scopes);
	if (n <= 0) {
		free(scopes);
		return 0;
	}
	{
		char saved = *s;

		*s = '\0';
		idx = dwarf_getscopevar(scopes, n, name, 0, NULL, 0, 0, &var);
		*s = saved;
	}
	if (idx < 0) {
		free(scopes);
		return 0;
	}
	*found = true;
	if (type_of(&var, &type)) {
		free(scopes);
		return fail(c, "the variable has no type");
	}
	/* A variable of a scope inside the CU: a local (or a function's static) */
	c->local = idx < n - 1 && dwarf_tag(&var) == DW_TAG_variable;
	err = locate(c, scopes, n, &var, dwarf_bytesize(&type), &l);
	free(scopes);
	if (err)
		return err;
	/* The members: ".m" inside the value read, "->m" through the pointer it is. */
	while (*s) {
		bool arrow = s[0] == '-';
		char *m = s + (arrow ? 2 : 1), *end = m + strcspn(m, ".-"), saved = *end;
		Dwarf_Die target;
		int64_t off;

		*end = '\0';
		if (arrow) {
			if (dwarf_tag(&type) != DW_TAG_pointer_type || type_of(&type, &target))
				return fail(
				    c, "\"->%s\" on a value that is not a pointer to a struct", m);
			err = member(c, &target, m, &off, &type);
			if (!err && l.kind == PROBES_CAP_READ) {
				if (l.mem) /* the pointer's own read first */
					err = add_read(c, &l, 0);
				if (!err)
					err = add_read(c, &l, off);
				l.mem = false;
			}
		} else {
			err = dwarf_tag(&type) == DW_TAG_pointer_type
				  ? fail(c, "\".%s\" on a pointer: write \"->%s\"", m, m)
				  : member(c, &type, m, &off, &target);
			if (!err && l.kind == PROBES_CAP_READ && !l.mem && !l.nr_reads)
				err = fail(c, "in a register here: \".%s\" cannot be read", m);
			if (!err && l.kind == PROBES_CAP_READ) {
				if (l.mem)
					l.add += off; /* the struct's address: its member's */
				else
					l.off[l.nr_reads - 1] += (int32_t)off;
			}
			type = target;
		}
		*end = saved;
		if (err)
			return err;
		if (l.kind == PROBES_CAP_CONST)
			return fail(c, "a constant: its members cannot be read");
		s = end;
	}
	err = value_type(c, &type, info);
	if (err)
		return err;
	if (l.kind == PROBES_CAP_READ && l.mem) {
		err = add_read(c, &l, 0);
		if (err)
			return err;
	}
	*out = (struct probes_capture){
	    .add = l.add,
	    .kind = (uint8_t)l.kind,
	    .reg = (uint8_t)l.reg,
	    .nr_reads = (uint8_t)l.nr_reads,
	    .size = info->size,
	};
	memcpy(out->off, l.off, sizeof(out->off));
	if (!info->where[0])
		snprintf(info->where, sizeof(info->where), "%s", l.where);
	return 0;
}

int probe__captures(struct probe *p, Elf *elf, char *why, size_t why_len)
{
	struct ctx c = {.why = why, .why_len = why_len};
	int err = 0;

	c.dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (!c.dw) {
		snprintf(why, why_len, "capture: %s has no DWARF (build it with -g)",
			 p->spec.binary);
		return -EINVAL;
	}
	c.cfi = dwarf_getcfi_elf(elf);
	memset(p->caps, 0, sizeof(p->caps));
	memset(p->cap_info, 0, sizeof(p->cap_info));
	for (uint32_t i = 0; !err && i < p->spec.nr_captures; i++) {
		bool any = false;

		c.expr = p->spec.capture[i];
		for (size_t site = 0; !err && site < p->nr_sites; site++) {
			bool found;

			c.pc = p->vaddrs[site];
			c.at_entry = p->kind == PROBES_KIND_CALL;
			err = resolve_one(&c, &p->caps[site].c[i], &p->cap_info[i], &found);
			any |= found;
			p->caps[site].nr = p->spec.nr_captures;
		}
		if (!err && !any)
			err = fail(&c, "no variable of that name in scope at the probe");
	}
	/* The CFI read from the ELF file is not the Dwarf handle's: ended on its own. */
	if (c.cfi)
		dwarf_cfi_end(c.cfi);
	dwarf_end(c.dw);
	return err;
}
