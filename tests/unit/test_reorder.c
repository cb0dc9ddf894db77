/* test_reorder.c - records released in input order, bounded (reorder.h). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results/reorder.h"

#include "leakcheck.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* What the sink saw: each record's "n", in order. */
struct seen {
	long n[256];
	size_t len;
	size_t bytes;
};

static void sink(void *ctx, json_t *rec, const char *line, size_t len)
{
	struct seen *s = ctx;
	cr_assert_lt(s->len, COUNT(s->n));
	s->n[s->len++] = rec ? (long)json_integer_value(json_object_get(rec, "n")) : -1;
	s->bytes += line ? len : 0;
}

/* A record {"n": n} with its line, as eval encodes it (8 bytes for n < 10). */
static void put_n(struct ee_reorder *o, uint64_t ticket, long n)
{
	char *line = NULL;
	cr_assert_gt(asprintf(&line, "{\"n\":%ld}\n", n), 0);
	ee_reorder_put(o, ticket, json_pack("{s:I}", "n", (json_int_t)n), line, strlen(line));
}

static uint64_t take(struct ee_reorder *o)
{
	uint64_t t;
	cr_assert_eq(ee_reorder_ticket(o, &t), 0);
	return t;
}

struct order_case {
	const char *name;
	size_t n;
	int order[8];   /* the tickets in the order their records come back */
	int missing[8]; /* 1: put with no record (interrupted, sandbox error) */
	long want[8];   /* what the sink sees, in order */
	size_t want_len;
};

Test(reorder, releases_in_ticket_order_whatever_order_records_come_in)
{
	static const struct order_case cases[] = {
		{ "in order", 4, { 0, 1, 2, 3 }, { 0 }, { 0, 1, 2, 3 }, 4 },
		{ "reversed: the first is the slowest", 4, { 3, 2, 1, 0 }, { 0 }, { 0, 1, 2, 3 }, 4 },
		{ "interleaved", 5, { 1, 0, 3, 4, 2 }, { 0 }, { 0, 1, 2, 3, 4 }, 5 },
		{ "a gap lets its successors go", 4, { 2, 1, 0, 3 }, { 1, 0, 0, 0 }, { 1, 2, 3 }, 3 },
		{ "every one missing", 3, { 2, 0, 1 }, { 1, 1, 1 }, { 0 }, 0 },
	};
	for (size_t c = 0; c < COUNT(cases); c++) {
		const struct order_case *k = &cases[c];
		struct ee_reorder o;
		struct seen s = { 0 };
		ee_reorder_init(&o, 100, 1000, sink, &s);
		for (size_t i = 0; i < k->n; i++)
			cr_assert_eq(take(&o), i, "%s", k->name);
		for (size_t i = 0; i < k->n; i++) {
			int t = k->order[i];
			if (k->missing[t])
				ee_reorder_put(&o, (uint64_t)t, NULL, NULL, 0);
			else
				put_n(&o, (uint64_t)t, t);
		}
		cr_expect_eq(s.len, k->want_len, "%s: %zu released", k->name, s.len);
		for (size_t i = 0; i < k->want_len && i < s.len; i++)
			cr_expect_eq(s.n[i], k->want[i], "%s: [%zu] = %ld", k->name, i, s.n[i]);
		cr_expect_eq(s.bytes, 8 * k->want_len, "%s", k->name);
		cr_expect_eq(o.held, 0, "%s", k->name);
		cr_expect_eq(o.held_bytes, 0, "%s", k->name);
		ee_reorder_free(&o);
	}
	no_leaks();
}

struct bound_case {
	const char *name;
	size_t max_records, max_bytes;
	long full_after; /* records held behind the head (8 bytes each) when full */
};

Test(reorder, full_at_either_bound_until_the_head_comes)
{
	static const struct bound_case cases[] = {
		{ "max_records", 3, 1 << 20, 3 },
		{ "max_bytes: 24 of 20", 1000, 20, 3 },
		{ "zero bounds mean one, not unlimited", 0, 0, 1 },
	};
	for (size_t c = 0; c < COUNT(cases); c++) {
		const struct bound_case *k = &cases[c];
		struct ee_reorder o;
		struct seen s = { 0 };
		ee_reorder_init(&o, k->max_records, k->max_bytes, sink, &s);
		uint64_t head = take(&o);
		for (long i = 1; i <= k->full_after; i++) {
			cr_expect_not(ee_reorder_full(&o), "%s: after %ld held", k->name, i - 1);
			put_n(&o, take(&o), i);
		}
		cr_expect(ee_reorder_full(&o), "%s: %ld held", k->name, k->full_after);
		cr_expect_eq(s.len, 0, "%s: nothing before the head", k->name);
		put_n(&o, head, 0);
		cr_expect_not(ee_reorder_full(&o), "%s", k->name);
		cr_expect_eq(s.len, (size_t)k->full_after + 1, "%s", k->name);
		cr_expect_eq(s.n[0], 0, "%s", k->name);
		cr_expect_eq(s.n[s.len - 1], k->full_after, "%s", k->name);
		ee_reorder_free(&o);
	}
	no_leaks();
}

Test(reorder, a_waiting_record_is_kept_as_its_line_and_parsed_again)
{
	struct ee_reorder o;
	struct seen s = { 0 };

	ee_reorder_init(&o, 100, 1000, sink, &s);
	uint64_t head = take(&o);
	uint64_t behind = take(&o);
	/* Record and line disagree on purpose: what the sink sees says which
	 * one was kept. */
	ee_reorder_put(&o, behind, json_pack("{s:i}", "n", 1), strdup("{\"n\":7}\n"), 8);
	ee_reorder_put(&o, head, json_pack("{s:i}", "n", 4), strdup("{\"n\":9}\n"), 8);
	cr_assert_eq(s.len, 2);
	cr_expect_eq(s.n[0], 4, "the head went out at once, as given");
	cr_expect_eq(s.n[1], 7, "the one that waited was parsed from its line");
	ee_reorder_free(&o);
	no_leaks();
}

Test(reorder, flush_releases_what_is_held_and_drops_late_records)
{
	struct ee_reorder o;
	struct seen s = { 0 };

	ee_reorder_init(&o, 100, 1000, sink, &s);
	uint64_t first = take(&o);
	uint64_t second = take(&o);
	uint64_t third = take(&o);
	put_n(&o, third, 3);
	put_n(&o, second, 2);
	cr_expect_eq(s.len, 0);
	ee_reorder_flush(&o);
	cr_expect_eq(s.len, 2);
	cr_expect_eq(s.n[0], 2);
	cr_expect_eq(s.n[1], 3);
	put_n(&o, first, 1); /* after the flush: dropped, not released out of order */
	put_n(&o, third, 3); /* twice: dropped too */
	cr_expect_eq(s.len, 2);
	cr_expect_eq(take(&o), 3, "tickets go on after a flush");
	ee_reorder_free(&o);
	no_leaks();
}

Test(reorder, the_ring_grows_past_its_first_size_keeping_order)
{
	struct ee_reorder o;
	struct seen s = { 0 };
	enum { N = 200 };

	ee_reorder_init(&o, 1000, 1 << 20, sink, &s);
	for (int i = 0; i < N; i++)
		take(&o);
	for (int i = N - 1; i >= 0; i--)
		put_n(&o, (uint64_t)i, i);
	cr_assert_eq(s.len, N);
	for (int i = 0; i < N; i++)
		cr_expect_eq(s.n[i], i, "[%d]", i);
	ee_reorder_free(&o);
	no_leaks();
}

Test(reorder, free_drops_what_is_held_and_accepts_a_zeroed_buffer)
{
	struct ee_reorder o;
	struct ee_reorder zero = { 0 };
	struct seen s = { 0 };

	ee_reorder_init(&o, 100, 1000, sink, &s);
	take(&o);
	put_n(&o, take(&o), 1);
	ee_reorder_free(&o);
	cr_expect_eq(s.len, 0, "free hands nothing over");
	ee_reorder_free(&zero);
	ee_reorder_free(&o); /* twice: the first left it zeroed */
	no_leaks();
}
