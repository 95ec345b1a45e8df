/*
 * Whether a frame's call frame address is its stack pointer plus a constant
 * at every instruction of its function: read from the function's FDE in
 * .eh_frame (and its CIE), as the unwinder would find it. stack.c keeps a
 * stack it has unwound only when every frame is so, because then the same
 * innermost stack pointer and the same return addresses in their slots mean
 * the same frames; a frame pointer, alloca or a realigned stack (CFA from
 * another register or an expression) could put an outer frame elsewhere
 * while stale return addresses of an earlier call still sit in the old
 * slots. Only x86-64's numbering (rsp 7, return address 16). Anything not
 * understood answers 0: the stack is then unwound every time, as before.
 */
#include "cfi.h"

#include <stddef.h>
#include <string.h>

#define REG_SP 7
#define REG_RA 16

struct rd {
	const unsigned char *p, *end;
	int bad;
};

static uint64_t
uleb(struct rd *r)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (r->p < r->end) {
		unsigned char b = *r->p++;

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return v;
	}
	r->bad = 1;
	return 0;
}

static int64_t
sleb(struct rd *r)
{
	int64_t v = 0;
	unsigned shift = 0;
	unsigned char b = 0;

	while (r->p < r->end) {
		b = *r->p++;
		if (shift < 64)
			v |= (int64_t)((uint64_t)(b & 0x7f) << shift);
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				v |= -((int64_t)1 << shift);
			return v;
		}
	}
	r->bad = 1;
	return 0;
}

static void
skip(struct rd *r, uint64_t n)
{
	if (n > (uint64_t)(r->end - r->p)) {
		r->bad = 1;
		r->p = r->end;
		return;
	}
	r->p += n;
}

/* Skips a pointer of DW_EH_PE encoding `enc` (its size is the low nibble's). */
static void
skip_encoded(struct rd *r, unsigned enc)
{
	if (enc == 0xff)	/* DW_EH_PE_omit */
		return;
	switch (enc & 0x0f) {
	case 0x00:	/* absptr */
	case 0x04:	/* udata8 */
	case 0x0c:	/* sdata8 */
		skip(r, 8);
		break;
	case 0x02:	/* udata2 */
	case 0x0a:	/* sdata2 */
		skip(r, 2);
		break;
	case 0x03:	/* udata4 */
	case 0x0b:	/* sdata4 */
		skip(r, 4);
		break;
	case 0x01:	/* uleb128 */
		uleb(r);
		break;
	case 0x09:	/* sleb128 */
		sleb(r);
		break;
	default:
		r->bad = 1;
	}
}

/* 1 when these CFA instructions keep the CFA at rsp + constant and the return address at CFA - 8. */
static int
plain_program(struct rd *r, unsigned fde_enc, int64_t data_align)
{
	while (r->p < r->end && !r->bad) {
		unsigned char op = *r->p++;
		uint64_t reg;

		switch (op >> 6) {
		case 1:		/* advance_loc */
		case 3:		/* restore */
			continue;
		case 2:		/* offset: register op & 0x3f at factored offset */
			if ((op & 0x3f) == REG_RA && (int64_t)uleb(r) * data_align != -8)
				return 0;
			else if ((op & 0x3f) != REG_RA)
				uleb(r);
			continue;
		}
		switch (op) {
		case 0x00:	/* nop */
		case 0x0a:	/* remember_state */
		case 0x0b:	/* restore_state */
			break;
		case 0x01:	/* set_loc */
			skip_encoded(r, fde_enc);
			break;
		case 0x02:	/* advance_loc1 */
			skip(r, 1);
			break;
		case 0x03:	/* advance_loc2 */
			skip(r, 2);
			break;
		case 0x04:	/* advance_loc4 */
			skip(r, 4);
			break;
		case 0x05:	/* offset_extended */
		case 0x2f:	/* GNU_negative_offset_extended */
			if (uleb(r) == REG_RA)
				return 0;
			uleb(r);
			break;
		case 0x11:	/* offset_extended_sf */
			if (uleb(r) == REG_RA)
				return 0;
			sleb(r);
			break;
		case 0x06:	/* restore_extended */
		case 0x08:	/* same_value */
		case 0x2e:	/* GNU_args_size */
		case 0x0e:	/* def_cfa_offset */
			uleb(r);
			break;
		case 0x13:	/* def_cfa_offset_sf */
			sleb(r);
			break;
		case 0x07:	/* undefined: the return address undefined ends the stack, any other is no matter */
			if (uleb(r) == REG_RA)
				return 0;
			break;
		case 0x09:	/* register: one register kept in another */
			if (uleb(r) == REG_RA)
				return 0;
			uleb(r);
			break;
		case 0x0c:	/* def_cfa */
			if (uleb(r) != REG_SP)
				return 0;
			uleb(r);
			break;
		case 0x12:	/* def_cfa_sf */
			if (uleb(r) != REG_SP)
				return 0;
			sleb(r);
			break;
		case 0x0d:	/* def_cfa_register */
			if (uleb(r) != REG_SP)
				return 0;
			break;
		case 0x10:	/* expression */
		case 0x16:	/* val_expression */
			reg = uleb(r);
			if (reg == REG_RA)
				return 0;
			skip(r, uleb(r));
			break;
		case 0x14:	/* val_offset */
			if (uleb(r) == REG_RA)
				return 0;
			uleb(r);
			break;
		case 0x15:	/* val_offset_sf */
			if (uleb(r) == REG_RA)
				return 0;
			sleb(r);
			break;
		default:	/* def_cfa_expression (0x0f), and whatever else: not plain */
			return 0;
		}
	}
	return !r->bad;
}

int
spy_cfi_plain(const void *fde)
{
	const unsigned char *f = fde, *cie, *aug;
	uint32_t len, cie_off, cie_len;
	unsigned fde_enc = 0;	/* absptr */
	int64_t data_align;
	int has_z = 0;
	struct rd r;

	if (!f)
		return 0;
	memcpy(&len, f, 4);
	memcpy(&cie_off, f + 4, 4);
	/* 64-bit DWARF, an empty entry, or a CIE where an FDE should be: not read. */
	if (len == 0 || len == 0xffffffffu || cie_off == 0 || len < 8)
		return 0;
	cie = f + 4 - cie_off;
	memcpy(&cie_len, cie, 4);
	if (cie_len == 0 || cie_len == 0xffffffffu || cie_len < 8)
		return 0;
	r.p = cie + 8;
	r.end = cie + 4 + cie_len;
	r.bad = 0;
	if (r.p >= r.end || (*r.p != 1 && *r.p != 3))
		return 0;
	r.p++;
	aug = r.p;
	while (r.p < r.end && *r.p)
		r.p++;
	if (r.p >= r.end)
		return 0;
	r.p++;
	/* "eh" carries a pointer this reader does not skip; nothing made since the 1990s writes it. */
	if (aug[0] == 'e')
		return 0;
	uleb(&r);		/* code alignment */
	data_align = sleb(&r);
	if (cie[8] == 1) {
		if (r.p >= r.end || *r.p++ != REG_RA)
			return 0;
	} else if (uleb(&r) != REG_RA) {
		return 0;
	}
	if (aug[0] == 'z') {
		uint64_t n = uleb(&r);
		const unsigned char *data_end;

		has_z = 1;
		if (r.bad || n > (uint64_t)(r.end - r.p))
			return 0;
		data_end = r.p + n;
		for (const unsigned char *c = aug + 1; *c; c++) {
			if (*c == 'R' && r.p < data_end) {
				fde_enc = *r.p++;
			} else if (*c == 'P' && r.p < data_end) {
				unsigned enc = *r.p++;

				skip_encoded(&r, enc & 0x7f);
			} else if (*c == 'L' && r.p < data_end) {
				r.p++;
			} else {
				/* 'S' (a signal frame), what this reader does not know, or data cut short. */
				return 0;
			}
		}
		if (r.bad || r.p > data_end)
			return 0;
		r.p = data_end;
	} else if (aug[0]) {
		return 0;
	}
	if (!plain_program(&r, fde_enc, data_align))
		return 0;
	/* The FDE: its CIE pointer, the range, its augmentation data, its instructions. */
	r.p = f + 8;
	r.end = f + 4 + len;
	r.bad = 0;
	skip_encoded(&r, fde_enc);
	skip_encoded(&r, fde_enc & 0x0f);
	if (has_z)
		skip(&r, uleb(&r));
	return !r.bad && plain_program(&r, fde_enc, data_align);
}
