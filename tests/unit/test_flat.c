/* test_flat.c - the checker of streamed values (protocol/flat.h): every
 * valid text is whole in any cut, every broken one is refused in any cut,
 * handles only where allowed, and the bound holds. The texts are the
 * harness's (canonical.py _flat), written by hand. */
#include <criterion/criterion.h>
#include <string.h>

#include "base/err.h"
#include "protocol/flat.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

struct flat_case {
	const char *text;
	size_t values; /* whole values; 0: refused (or not whole) */
	int handles;
};

static const struct flat_case cases[] = {
	{ "N", 1, 0 },
	{ "NTF", 3, 0 },
	{ "i-12;", 1, 0 },
	{ "i0;i1;", 2, 0 },
	{ "f1.5;fnan;f-inf;f1e+300;", 4, 0 },
	{ "c1.0,-2.5;", 1, 0 },
	{ "s0:", 1, 0 },
	{ "s5:a;b:c", 1, 0 },
	{ "s3:\xc3\xa9\xe2\x98\x83\xf0\x9f\x98\x80", 1, 0 }, /* three characters, 9 bytes */
	{ "l0;t0;S0;Z0;d0;", 5, 0 },
	{ "l2;Nl1;l0;", 1, 0 },
	{ "d2;i1;s1:xi2;t2;NT", 1, 0 },
	{ "d2;i1;s1:xt2;NT", 0, 0 }, /* a key without its value */
	{ "I3;1,-2,30;", 1, 0 },
	{ "l2;I1;5;N", 1, 0 },
	{ "yint;oMy Class;", 2, 0 },
	{ "b;b00ff;", 2, 0 },
	{ "h3;", 1, 1 },
	{ "l1;h0;", 1, 1 },
	/* refused */
	{ "h3;", 0, 0 },
	{ "Q", 0, 0 },
	{ "i;", 0, 0 },
	{ "i-;", 0, 0 },
	{ "i1-2;", 0, 0 },
	{ "i1_0;", 0, 0 },
	{ "i+1;", 0, 0 },
	{ "f;", 0, 0 },
	{ "c1.0;", 0, 0 },
	{ "c1.0,2.0,3.0;", 0, 0 },
	{ "s:", 0, 0 },
	{ "s2:a", 0, 0 },    /* cut short */
	{ "s1:\xa9", 0, 0 }, /* a stray continuation byte */
	{ "s1:\xc3", 0, 0 }, /* a character cut */
	{ "l2;N", 0, 0 },    /* an item missing */
	{ "l;", 0, 0 },
	{ "lx;", 0, 0 },
	{ "I0;;", 0, 0 },
	{ "I2;1;", 0, 0 },
	{ "I1;1,2;", 0, 0 },
	{ "I2;1,,2;", 0, 0 },
	{ "I1;-;", 0, 0 },
	{ "y;", 0, 0 },
	{ "b0;", 0, 0 },
	{ "bAB;", 0, 0 },
	{ "oA\x01;", 0, 0 },
	{ "l99999999999999;N", 0, 0 }, /* claims more than the bound could hold */
	{ "l1234567890123;", 0, 0 },   /* a count of 13 digits */
	{ "\0", 0, 0 },
};

/* Feeds text cut at `cut` (0: whole); returns the whole values, or 0. */
static size_t run(const struct flat_case *c, size_t n, size_t cut)
{
	struct ee_flat f;
	struct ee_err err = { 0 };

	ee_flat_init(&f, c->handles);
	if (cut &&
	    (ee_flat_feed(&f, c->text, cut, &err) < 0 || ee_flat_feed(&f, c->text + cut, n - cut, &err) < 0))
		return 0;
	if (!cut && ee_flat_feed(&f, c->text, n, &err) < 0)
		return 0;
	return ee_flat_whole(&f) ? f.values : 0;
}

Test(flat, every_case_in_every_cut)
{
	for (size_t i = 0; i < COUNT(cases); i++) {
		const struct flat_case *c = &cases[i];
		size_t n = strlen(c->text) ? strlen(c->text) : 1; /* "\0": one NUL byte */
		for (size_t cut = 0; cut < n; cut++)
			cr_expect_eq(run(c, n, cut), c->values, "case %zu (%s), cut at %zu", i, c->text, cut);
	}
}

Test(flat, a_refused_text_says_why)
{
	struct ee_flat f;
	struct ee_err err = { 0 };

	ee_flat_init(&f, 0);
	cr_expect_eq(ee_flat_feed(&f, "l1;h0;", 6, &err), -1);
	cr_expect(strstr(err.msg, "a streamed value: an unknown tag"), "%s", err.msg);
}

Test(flat, the_bound_holds_across_parts)
{
	static char part[1 << 16];
	struct ee_flat f;
	struct ee_err err = { 0 };
	int refused = 0;

	memset(part, 'N', sizeof(part));
	ee_flat_init(&f, 0);
	for (size_t sent = 0; sent <= EE_FLAT_MAX_BYTES && !refused; sent += sizeof(part))
		refused = ee_flat_feed(&f, part, sizeof(part), &err) < 0;
	cr_expect(refused, "past EE_FLAT_MAX_BYTES");
	cr_expect(strstr(err.msg, "past its bound"), "%s", err.msg);
	cr_expect_eq(f.bytes, EE_FLAT_MAX_BYTES);
}

Test(flat, init_starts_again)
{
	struct ee_flat f;
	struct ee_err err = { 0 };

	ee_flat_init(&f, 0);
	cr_assert_eq(ee_flat_feed(&f, "l2;N", 4, &err), 0);
	cr_expect_not(ee_flat_whole(&f));
	ee_flat_init(&f, 0);
	cr_expect(ee_flat_whole(&f));
	cr_expect_eq(f.values, 0);
}
