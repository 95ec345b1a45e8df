/*
 * common/recfmt.h: record format 2's varints, zigzag and frame walker, which
 * the library's writer and the command's reader share (docs/record-format.md).
 */
#include "unit.h"

#include <check.h>
#include <stdint.h>
#include <string.h>

#include "recfmt.h"
#include "symtab.h"

static const uint64_t values[] = {
	0, 1, 127, 128, 255, 16383, 16384, (1ull << 32) - 1, 1ull << 32, (1ull << 63) - 1, 1ull << 63, UINT64_MAX,
};

START_TEST(test_varint_round_trip)
{
	uint8_t b[16];
	size_t n = spy_rec_put_uv(b, values[_i]), pos = 0;
	uint64_t v = 0;

	ck_assert_uint_ge(n, 1);
	ck_assert_uint_le(n, 10);
	ck_assert(spy_rec_get_uv(b, n, &pos, &v));
	ck_assert_uint_eq(pos, n);
	ck_assert_uint_eq(v, values[_i]);
	/* Cut anywhere before its last byte, it does not read. */
	for (size_t cut = 0; cut < n; cut++) {
		pos = 0;
		ck_assert(!spy_rec_get_uv(b, cut, &pos, &v));
	}
}
END_TEST

/* Seven bits a byte: the documented lengths. */
START_TEST(test_varint_lengths)
{
	uint8_t b[16];

	ck_assert_uint_eq(spy_rec_put_uv(b, 127), 1);
	ck_assert_uint_eq(spy_rec_put_uv(b, 128), 2);
	ck_assert(b[0] == 0x80 && b[1] == 0x01);
	ck_assert_uint_eq(spy_rec_put_uv(b, UINT64_MAX), 10);
}
END_TEST

/* Eleven bytes of continuation are damage, not a number. */
START_TEST(test_varint_too_long)
{
	uint8_t b[12];
	size_t pos = 0;
	uint64_t v;

	memset(b, 0x80, sizeof(b));
	b[11] = 0x01;
	ck_assert(!spy_rec_get_uv(b, sizeof(b), &pos, &v));
}
END_TEST

static const int64_t signed_values[] = { 0, -1, 1, -2, 2, INT32_MIN, INT32_MAX, INT64_MIN, INT64_MAX };

START_TEST(test_zigzag)
{
	ck_assert_int_eq(spy_rec_unzigzag(spy_rec_zigzag(signed_values[_i])), signed_values[_i]);
	/* 0, -1, 1, -2, 2 become 0, 1, 2, 3, 4. */
	if (_i < 5)
		ck_assert_uint_eq(spy_rec_zigzag(signed_values[_i]), (uint64_t)_i);
}
END_TEST

START_TEST(test_frame_walk)
{
	uint8_t d[64];
	size_t n, len = 0;

	/* A JSON frame, a call frame of 3 bytes, then a call frame cut short. */
	memcpy(d, "{\"event\":\"x\"}\n", 14);
	len = 14;
	d[len++] = SPY_REC_CALL;
	d[len++] = 3;
	d[len++] = 1;
	d[len++] = 2;
	d[len++] = 3;
	d[len++] = SPY_REC_TEXT;
	d[len++] = 5;
	d[len++] = 'a';
	ck_assert_int_eq(spy_rec_frame(d, len, 0, &n), SPY_REC_WHOLE);
	ck_assert_uint_eq(n, 14);
	ck_assert_int_eq(spy_rec_frame(d, len, 14, &n), SPY_REC_WHOLE);
	ck_assert_uint_eq(n, 5);
	ck_assert_int_eq(spy_rec_frame(d, len, 19, &n), SPY_REC_CUT);
	ck_assert_uint_eq(n, 3);
}
END_TEST

START_TEST(test_frame_damage)
{
	uint8_t d[] = { 0x7f, 'x', 'y', '\n', '{', '}', '\n' };
	uint8_t big[16] = { SPY_REC_CALL };
	size_t n;

	/* Not a tag: up to the newline. */
	ck_assert_int_eq(spy_rec_frame(d, sizeof(d), 0, &n), SPY_REC_DAMAGED);
	ck_assert_uint_eq(n, 4);
	ck_assert_int_eq(spy_rec_frame(d, sizeof(d), 4, &n), SPY_REC_WHOLE);
	/* A length past the largest frame is damage, whatever follows. */
	spy_rec_put_uv(big + 1, (uint64_t)SPY_REC_FRAME_MAX + 1);
	ck_assert_int_eq(spy_rec_frame(big, sizeof(big), 0, &n), SPY_REC_DAMAGED);
}
END_TEST

/* A GNU build-id note among others, as ld writes them (symtab.c reads them from files and from memory). */
START_TEST(test_build_id_note)
{
	static const unsigned char notes[] = {
		/* an ABI tag note first: namesz 4, descsz 16, type 1, "GNU\0", 16 bytes */
		4, 0, 0, 0, 16, 0, 0, 0, 1, 0, 0, 0, 'G', 'N', 'U', 0,
		0, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0,
		/* the build-id: namesz 4, descsz 6 (padded to 8), type 3 */
		4, 0, 0, 0, 6, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0,
		0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0, 0,
	};
	unsigned char out[64], small[4];
	unsigned char huge[12] = { 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0x7f, 3, 0, 0, 0 };

	ck_assert_uint_eq(spy_note_build_id(notes, sizeof(notes), out, sizeof(out)), 6);
	ck_assert(memcmp(out, "\xde\xad\xbe\xef\x01\x02", 6) == 0);
	/* Cut inside the build-id, too small a buffer, a size past the end: none. */
	ck_assert_uint_eq(spy_note_build_id(notes, sizeof(notes) - 4, out, sizeof(out)), 0);
	ck_assert_uint_eq(spy_note_build_id(notes, sizeof(notes), small, sizeof(small)), 0);
	ck_assert_uint_eq(spy_note_build_id(huge, sizeof(huge), out, sizeof(out)), 0);
	ck_assert_uint_eq(spy_note_build_id(notes, 5, out, sizeof(out)), 0);
}
END_TEST

UNIT_SUITE(recfmt)
{
	Suite *s = suite_create("recfmt");
	TCase *tc = unit_tcase(s, "varints");

	tcase_add_loop_test(tc, test_varint_round_trip, 0, UNIT_COUNT(values));
	tcase_add_test(tc, test_varint_lengths);
	tcase_add_test(tc, test_varint_too_long);
	tcase_add_loop_test(tc, test_zigzag, 0, UNIT_COUNT(signed_values));
	tc = unit_tcase(s, "frames");
	tcase_add_test(tc, test_frame_walk);
	tcase_add_test(tc, test_frame_damage);
	tc = unit_tcase(s, "build-id");
	tcase_add_test(tc, test_build_id_note);
	return s;
}
