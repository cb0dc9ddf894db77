/* test_pickle_str.c - the single-string pickle reader (pickle_str.h):
 * what CPython's pickle.dumps(str) writes in protocols 2 to 5 is read in
 * place; any other opcode, a length that overruns, a frame that lies, or
 * bytes after STOP are refused with the offset. The byte strings were
 * written by pickle.dumps (protocol noted) or by hand. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "input/pickle_str.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define B(s)     (const unsigned char *)(s), sizeof(s) - 1

struct ok_case {
	const unsigned char *p;
	size_t n;
	const char *want;
};

static const struct ok_case oks[] = {
	{ B("\x80\x02\x58\x02\x00\x00\x00hiq\x00."), "hi" },                        /* protocol 2 */
	{ B("\x80\x03\x58\x02\x00\x00\x00hiq\x00."), "hi" },                        /* protocol 3 */
	{ B("\x80\x04\x95\x06\x00\x00\x00\x00\x00\x00\x00\x8c\x02hi\x94."), "hi" }, /* protocol 4 */
	{ B("\x80\x05\x95\x06\x00\x00\x00\x00\x00\x00\x00\x8c\x02hi\x94."), "hi" }, /* protocol 5 */
	{ B("\x80\x04\x95\x04\x00\x00\x00\x00\x00\x00\x00\x8c\x00\x94."), "" },     /* "" */
	{ B("\x80\x04\x95\x06\x00\x00\x00\x00\x00\x00\x00\x8c\x02\xc3\xa9\x94."), "\xc3\xa9" },
	{ B("\x80\x04\x8c\x02hi\x94."), "hi" },                             /* no frame */
	{ B("\x80\x04\x8d\x02\x00\x00\x00\x00\x00\x00\x00hi\x94."), "hi" }, /* BINUNICODE8 */
	{ B("\x80\x04\x8c\x02hi."), "hi" },                                 /* no memo */
};

Test(pickle_str, reads_what_cpython_writes_for_a_str)
{
	for (size_t i = 0; i < COUNT(oks); i++) {
		const unsigned char *s = NULL;
		size_t len = 0;
		char why[128];
		cr_expect_eq(ee_pickle_str(oks[i].p, oks[i].n, &s, &len, why, sizeof(why)), 0, "case %zu: %s",
		             i, why);
		cr_expect_eq(len, strlen(oks[i].want), "case %zu", i);
		cr_expect(s && memcmp(s, oks[i].want, len) == 0, "case %zu", i);
		cr_expect(s >= oks[i].p && s + len <= oks[i].p + oks[i].n, "case %zu: read in place", i);
	}
}

/* pickle.dumps("a" * 300, 4) is framed with BINUNICODE inside; "a" * 70000
 * (past the 64 KiB frame target) is not framed at all. */
Test(pickle_str, reads_long_strings_framed_or_not)
{
	static const size_t lens[] = { 300, 70000 };
	for (size_t k = 0; k < COUNT(lens); k++) {
		size_t n = lens[k], at = 0, framed = n < 65536;
		unsigned char *p = malloc(n + 32);
		const unsigned char *s;
		size_t len;
		char why[128];

		cr_assert_not_null(p);
		p[at++] = 0x80, p[at++] = 4;
		if (framed) {
			size_t frame = 1 + 4 + n + 2;
			p[at++] = 0x95;
			for (int b = 0; b < 8; b++)
				p[at++] = (unsigned char)(frame >> (8 * b));
		}
		p[at++] = 'X';
		for (int b = 0; b < 4; b++)
			p[at++] = (unsigned char)(n >> (8 * b));
		memset(p + at, 'a', n);
		at += n;
		p[at++] = 0x94, p[at++] = '.';
		cr_expect_eq(ee_pickle_str(p, at, &s, &len, why, sizeof(why)), 0, "%zu: %s", n, why);
		cr_expect_eq(len, n);
		free(p);
	}
}

struct bad_case {
	const unsigned char *p;
	size_t n;
	const char *why; /* a part of the reason */
};

static const struct bad_case bads[] = {
	{ B(""), "byte 0 (the end): expected PROTO" },
	{ B("Vhi\np0\n."), "byte 0 (0x56): expected PROTO" }, /* protocol 0 */
	{ B("\x80\x01X\x02\x00\x00\x00hi."), "byte 1 (0x01): protocol not in 2..5" },
	{ B("\x80\x06\x8c\x02hi."), "protocol not in 2..5" },
	{ B("\x80\x04K\x05."), "byte 2 (0x4b): only a single string" }, /* an int */
	{ B("\x80\x04\x95\x08\x00\x00\x00\x00\x00\x00\x00]\x94\x8c\x01"
	    "a\x94"
	    "a."),
	  "byte 11 (0x5d): only a single string" },
	{ B("\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00"
	    "C\x01"
	    "a\x94."),
	  "only a single string" }, /* bytes */
	{ B("\x80\x04\x8c\x01"
	    "a\x94\x85\x94."),
	  "byte 6 (0x85): expected STOP" },                                 /* ("a",) */
	{ B("\x80\x04\x8c\x05posix\x8c\x06system\x93."), "expected STOP" }, /* a global */
	{ B("\x80\x02"
	    "cos\nsystem\n."),
	  "byte 2 (0x63): only a single string" }, /* GLOBAL */
	{ B("\x80\x04\x8c\x02hi\x94.."), "byte 8 (0x2e): bytes after STOP" },
	{ B("\x80\x04\x8c\x02hi\x94"), "byte 7 (the end): expected STOP" },
	{ B("\x80\x04\x8c\x09hi\x94."), "string longer than the pickle" },
	{ B("\x80\x04X\x02\x00"), "truncated length" },
	{ B("\x80\x04X\xff\xff\xff\xffhi\x94."), "string longer than the pickle" },
	{ B("\x80\x04\x8d\xff\xff\xff\xff\xff\xff\xff\xffhi\x94."), "string longer than the pickle" },
	{ B("\x80\x04\x95\x07\x00\x00\x00\x00\x00\x00\x00\x8c\x02hi\x94."), "byte 2 (0x95): frame length" },
	{ B("\x80\x04\x95\x06\x00\x00"), "truncated length" },
	{ B("\x80\x03\x8c\x02hi."), "only a single string" }, /* SHORT_BINUNICODE is protocol 4 */
	{ B("\x80\x02\x95\x06\x00\x00\x00\x00\x00\x00\x00X\x02\x00\x00\x00hi."), "only a single string" },
	{ B("\x80\x02X\x02\x00\x00\x00hi\x94."), "expected STOP" }, /* MEMOIZE is protocol 4 */
	{ B("\x80\x04\x8c\x02hiq\x00."), "expected STOP" },         /* BINPUT is protocol 2-3 */
	{ B("\x80\x02X\x02\x00\x00\x00hiq"), "truncated BINPUT" },
};

Test(pickle_str, refuses_every_other_opcode_and_every_bad_length)
{
	for (size_t i = 0; i < COUNT(bads); i++) {
		const unsigned char *s;
		size_t len;
		char why[128];
		cr_expect_eq(ee_pickle_str(bads[i].p, bads[i].n, &s, &len, why, sizeof(why)), -1, "case %zu",
		             i);
		cr_expect(strstr(why, bads[i].why) != NULL, "case %zu: '%s' lacks '%s'", i, why, bads[i].why);
	}
}
