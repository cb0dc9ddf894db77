/* test_netstring.c - incremental netstring decoding (netstring.h).
 *
 * Every stream in the table is decoded under many chunkings (every fixed
 * chunk size, every two-piece split), draining frames after each feed as
 * the supervisor does; the outcome must never depend on the chunking. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "base/err.h"
#include "protocol/netstring.h"

#define S(x) x, sizeof(x) - 1
#define BIG  ((size_t)1 << 20)

struct ns_case {
	const char *name;
	const char *in;
	size_t in_len;
	size_t max_frame;
	size_t max_total;
	const char *frames; /* payloads, each followed by '|' */
	size_t frames_len;
	const char *error; /* substring of the failure, NULL for success */
};

static const struct ns_case cases[] = {
	{ "empty stream", S(""), 16, BIG, S(""), NULL },
	{ "one frame", S("5:hello,"), 16, BIG, S("hello|"), NULL },
	{ "zero length", S("0:,"), 16, BIG, S("|"), NULL },
	{ "several in one chunk", S("1:a,2:bc,0:,3:def,"), 16, BIG, S("a|bc||def|"), NULL },
	{ "payload holds ':' and ','", S("4:a,:,,"), 16, BIG, S("a,:,|"), NULL },
	{ "payload holds NUL", S("3:a\0b,"), 16, BIG, S("a\0b|"), NULL },
	{ "exactly max_frame", S("5:hello,"), 5, BIG, S("hello|"), NULL },
	{ "two-digit length", S("10:0123456789,"), 10, BIG, S("0123456789|"), NULL },
	{ "exactly max_total", S("1:a,1:b,1:c,"), 16, 12, S("a|b|c|"), NULL },
	{ "leading zero", S("01:a,"), 16, BIG, S(""), "leading zero" },
	{ "double zero", S("00:,"), 16, BIG, S(""), "leading zero" },
	{ "non-digit first", S("a:b,"), 16, BIG, S(""), "byte 0x61" },
	{ "non-digit after digit", S("1x:a,"), 16, BIG, S(""), "byte 0x78" },
	{ "negative length", S("-1:a,"), 16, BIG, S(""), "byte 0x2d" },
	{ "leading space", S(" 1:a,"), 16, BIG, S(""), "byte 0x20" },
	{ "high byte", S("\xff"), 16, BIG, S(""), "byte 0xff" },
	{ "empty length", S(":a,"), 16, BIG, S(""), "empty length" },
	{ "missing comma", S("1:ab"), 16, BIG, S(""), "missing ','" },
	{ "semicolon for comma", S("1:a;1:b,"), 16, BIG, S(""), "missing ','" },
	{ "over max_frame", S("6:abcdef,"), 5, BIG, S(""), "length over 5" },
	{ "zero max_frame", S("1:a,"), 0, BIG, S(""), "length over 0" },
	{ "length past size_t", S("99999999999999999999999999999:"), (size_t)-1, BIG, S(""), "length over" },
	{ "truncated payload", S("5:hel"), 16, BIG, S(""), "truncated frame" },
	{ "truncated header", S("5"), 16, BIG, S(""), "truncated frame" },
	{ "truncated before comma", S("5:hello"), 16, BIG, S(""), "truncated frame" },
	{ "good frame then junk", S("1:a,x"), 16, BIG, S("a|"), "byte 0x78" },
	{ "over max_total", S("1:a,1:b,1:c,"), 16, 11, S(""), "stream over 11" },
	{ "zero max_total", S("0:,"), 16, 0, S(""), "stream over 0" },
};

/* What one decoding produced. */
struct outcome {
	char frames[256];
	size_t frames_len;
	int failed;
	char msg[256];
};

static void drain(struct ee_ns_decoder *d, struct outcome *o)
{
	const char *p;
	size_t n;
	struct ee_err err = { 0 };
	int r;

	while ((r = ee_ns_next(d, &p, &n, &err)) == 1) {
		cr_assert_lt(o->frames_len + n + 1, sizeof(o->frames));
		cr_assert_eq(p[n], '\0', "payload NUL-terminated");
		memcpy(o->frames + o->frames_len, p, n);
		o->frames_len += n;
		o->frames[o->frames_len++] = '|';
	}
	if (r < 0 && !o->failed) {
		o->failed = 1;
		memcpy(o->msg, err.msg, sizeof(o->msg));
	}
}

/* Feeds tc->in in pieces of the given lengths (the last piece takes the
 * rest), draining after each, then finishes. */
static void decode(const struct ns_case *tc, const size_t *pieces, size_t npieces, struct outcome *o)
{
	struct ee_ns_decoder d;
	struct ee_err err = { 0 };
	size_t pos = 0;

	memset(o, 0, sizeof(*o));
	ee_ns_init(&d, tc->max_frame, tc->max_total);
	for (size_t i = 0; !o->failed && pos < tc->in_len; i++) {
		size_t n = i < npieces ? pieces[i] : tc->in_len - pos;
		if (n > tc->in_len - pos)
			n = tc->in_len - pos;
		if (ee_ns_feed(&d, tc->in + pos, n, &err) < 0) {
			o->failed = 1;
			memcpy(o->msg, err.msg, sizeof(o->msg));
		}
		pos += n;
		drain(&d, o);
	}
	if (!o->failed && ee_ns_finish(&d, &err) < 0) {
		o->failed = 1;
		memcpy(o->msg, err.msg, sizeof(o->msg));
	}
	ee_ns_free(&d);
}

static void check(const struct ns_case *tc, const struct outcome *o, const char *how)
{
	if (tc->error) {
		cr_expect(o->failed, "%s (%s): did not fail", tc->name, how);
		cr_expect_not_null(strstr(o->msg, tc->error), "%s (%s): failure '%s'", tc->name, how, o->msg);
		return;
	}
	cr_expect(!o->failed, "%s (%s): failed: %s", tc->name, how, o->msg);
	cr_expect(o->frames_len == tc->frames_len && memcmp(o->frames, tc->frames, tc->frames_len) == 0,
	          "%s (%s): frames '%.*s'", tc->name, how, (int)o->frames_len, o->frames);
}

Test(netstring, table_fed_whole)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct outcome o;
		decode(&cases[i], NULL, 0, &o);
		check(&cases[i], &o, "whole");
	}
}

Test(netstring, table_every_chunk_size)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct ns_case *tc = &cases[i];
		size_t pieces[64];
		for (size_t size = 1; size <= tc->in_len; size++) {
			for (size_t j = 0; j < 64; j++)
				pieces[j] = size;
			struct outcome o;
			char how[32];
			snprintf(how, sizeof(how), "chunks of %zu", size);
			decode(tc, pieces, 64, &o);
			check(tc, &o, how);
		}
	}
}

Test(netstring, table_every_split_point)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct ns_case *tc = &cases[i];
		for (size_t cut = 0; cut <= tc->in_len; cut++) {
			struct outcome o;
			char how[32];
			snprintf(how, sizeof(how), "split at %zu", cut);
			decode(tc, &cut, 1, &o);
			check(tc, &o, how);
		}
	}
}

Test(netstring, oversized_length_fails_before_payload)
{
	struct ee_ns_decoder d;
	struct ee_err err = { 0 };
	const char *p;
	size_t n;

	ee_ns_init(&d, 1024, BIG);
	cr_assert_eq(ee_ns_feed(&d, "102", 3, &err), 0);
	cr_expect_eq(ee_ns_next(&d, &p, &n, &err), 0, "102 may still be fine");
	cr_assert_eq(ee_ns_feed(&d, "5", 1, &err), 0);
	cr_expect_eq(ee_ns_next(&d, &p, &n, &err), -1, "1025 > 1024 with no payload yet");
	cr_expect_eq(err.code, EE_ERR_USAGE);
	ee_ns_free(&d);
}

Test(netstring, failure_is_sticky)
{
	struct ee_ns_decoder d;
	struct ee_err err = { 0 };
	const char *p;
	size_t n;

	ee_ns_init(&d, 16, BIG);
	cr_assert_eq(ee_ns_feed(&d, "x", 1, &err), 0);
	cr_assert_eq(ee_ns_next(&d, &p, &n, &err), -1);
	cr_expect_not_null(strstr(err.msg, "0x78"));

	memset(&err, 0, sizeof(err));
	cr_expect_eq(ee_ns_feed(&d, "1:a,", 4, &err), -1, "feed after failure");
	cr_expect_not_null(strstr(err.msg, "0x78"), "same reason: %s", err.msg);
	memset(&err, 0, sizeof(err));
	cr_expect_eq(ee_ns_next(&d, &p, &n, &err), -1, "next after failure");
	cr_expect_eq(err.code, EE_ERR_USAGE);
	memset(&err, 0, sizeof(err));
	cr_expect_eq(ee_ns_finish(&d, &err), -1, "finish after failure");
	cr_expect_not_null(strstr(err.msg, "0x78"));
	ee_ns_free(&d);
}

Test(netstring, feed_fails_past_max_total)
{
	struct ee_ns_decoder d;
	struct ee_err err = { 0 };

	ee_ns_init(&d, 16, 6);
	cr_assert_eq(ee_ns_feed(&d, "1:a,", 4, &err), 0);
	cr_expect_eq(ee_ns_feed(&d, "1:b,", 4, &err), -1);
	cr_expect_eq(err.code, EE_ERR_USAGE);
	cr_expect_not_null(strstr(err.msg, "stream over 6"), "%s", err.msg);
	ee_ns_free(&d);
}

Test(netstring, finish_fails_on_partial_frame)
{
	struct ee_ns_decoder d;
	struct ee_err err = { 0 };

	ee_ns_init(&d, 16, BIG);
	cr_expect_eq(ee_ns_finish(&d, &err), 0, "nothing fed");
	cr_assert_eq(ee_ns_feed(&d, "3:ab", 4, &err), 0);
	cr_expect_eq(ee_ns_finish(&d, &err), -1);
	cr_expect_not_null(strstr(err.msg, "truncated frame"), "%s", err.msg);
	ee_ns_free(&d);
}

Test(netstring, payloads_stay_valid_until_next_feed)
{
	struct ee_ns_decoder d;
	struct ee_err err = { 0 };
	const char *a, *b;
	size_t an, bn;

	ee_ns_init(&d, 16, BIG);
	cr_assert_eq(ee_ns_feed(&d, "3:one,3:two,", 12, &err), 0);
	cr_assert_eq(ee_ns_next(&d, &a, &an, &err), 1);
	cr_assert_eq(ee_ns_next(&d, &b, &bn, &err), 1);
	cr_expect_str_eq(a, "one");
	cr_expect_str_eq(b, "two");
	cr_expect_eq(ee_ns_next(&d, &a, &an, &err), 0);
	ee_ns_free(&d);
	ee_ns_free(&d); /* twice: a freed decoder is a valid argument */
}

Test(netstring, many_small_frames_buffer_compacts)
{
	/* 10,000 frames fed one at a time: the buffer never holds more than a
	 * frame plus what the current feed brought. */
	struct ee_ns_decoder d;
	struct ee_err err = { 0 };
	const char *p;
	size_t n;

	ee_ns_init(&d, 16, BIG);
	for (int i = 0; i < 10000; i++) {
		cr_assert_eq(ee_ns_feed(&d, "4:ping,", 7, &err), 0, "%s", err.msg);
		cr_assert_eq(ee_ns_next(&d, &p, &n, &err), 1);
		cr_assert_eq(n, 4);
		cr_assert_leq(d.buf.len, 7);
	}
	cr_expect_eq(ee_ns_finish(&d, &err), 0);
	ee_ns_free(&d);
}
