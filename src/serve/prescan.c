/* prescan.c - counting a body's values and tests from its bytes (see prescan.h).
 *
 * A recursive descent for the few levels whose keys matter (the root, a
 * run, a task, a tests array: depth at most five) and an iterative skip,
 * counting values, for everything else, so no input can recurse deeply. */
#include "serve/prescan.h"

#include <stdio.h>
#include <string.h>

struct scan {
	const char *p, *end;
	struct ee_prescan *r;
};

static int peek(struct scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
	return s->p < s->end ? (unsigned char)*s->p : -1;
}

/* Past the string at s->p; *escaped set when it holds a backslash. */
static int skip_string(struct scan *s, int *escaped)
{
	for (s->p++; s->p < s->end; s->p++) {
		if (*s->p == '\\') {
			*escaped = 1;
			s->p++;
		} else if (*s->p == '"') {
			s->p++;
			return 0;
		}
	}
	return EE_PRESCAN_MALFORMED;
}

static int scalar_char(int c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' ||
	       c == '+' || c == '-';
}

/* Past one value of any shape, counting the values in it. */
static int skip_value(struct scan *s)
{
	size_t depth = 0;
	int escaped = 0;

	do {
		int c = peek(s);
		if (c == '"') {
			if (skip_string(s, &escaped) < 0)
				return EE_PRESCAN_MALFORMED;
			if (peek(s) == ':' && depth > 0)
				s->p++; /* it was a key */
			else
				s->r->values++;
		} else if (c == '{' || c == '[') {
			s->r->values++;
			depth++;
			s->p++;
		} else if ((c == '}' || c == ']' || c == ',') && depth > 0) {
			depth -= c != ',';
			s->p++;
		} else if (c >= 0 && scalar_char(c) && c != '.' && c != '+') {
			s->r->values++;
			while (s->p < s->end && scalar_char((unsigned char)*s->p))
				s->p++;
		} else {
			return EE_PRESCAN_MALFORMED;
		}
	} while (depth > 0);
	return 0;
}

typedef int (*member_fn)(struct scan *s, const char *key, size_t len, void *ctx);

static int key_is(const char *key, size_t len, const char *want)
{
	return strlen(want) == len && memcmp(key, want, len) == 0;
}

/* Walks the object at s->p (anything else is skipped), calling member with
 * s->p at each value, which member must consume. where: for an escaped key. */
static int walk_object(struct scan *s, member_fn member, void *ctx, const char *where)
{
	int escaped = 0;

	if (peek(s) != '{')
		return skip_value(s);
	s->r->values++;
	s->p++;
	if (peek(s) == '}') {
		s->p++;
		return 0;
	}
	for (;;) {
		if (peek(s) != '"')
			return EE_PRESCAN_MALFORMED;
		const char *key = s->p + 1;
		if (skip_string(s, &escaped) < 0)
			return EE_PRESCAN_MALFORMED;
		size_t len = (size_t)(s->p - 1 - key); /* before the blanks up to the colon */
		if (peek(s) != ':')
			return EE_PRESCAN_MALFORMED;
		if (escaped) {
			snprintf(s->r->escaped, sizeof(s->r->escaped), "%s", where[0] ? where : "body");
			return EE_PRESCAN_ESCAPED;
		}
		s->p++;
		int rc = member(s, key, len, ctx);
		if (rc < 0)
			return rc;
		int c = peek(s);
		s->p++;
		if (c == '}')
			return 0;
		if (c != ',')
			return EE_PRESCAN_MALFORMED;
	}
}

typedef int (*element_fn)(struct scan *s, void *ctx);

/* Walks the array at s->p (anything else is skipped), calling element with
 * s->p at each element, which element must consume. */
static int walk_array(struct scan *s, element_fn element, void *ctx)
{
	if (peek(s) != '[')
		return skip_value(s);
	s->r->values++;
	s->p++;
	if (peek(s) == ']') {
		s->p++;
		return 0;
	}
	for (;;) {
		int rc = element(s, ctx);
		if (rc < 0)
			return rc;
		int c = peek(s);
		s->p++;
		if (c == ']')
			return 0;
		if (c != ',')
			return EE_PRESCAN_MALFORMED;
	}
}

/* An element of a tests array: skipped, counted in *ctx. */
static int count_element(struct scan *s, void *ctx)
{
	size_t *n = ctx;

	(*n)++;
	return skip_value(s);
}

static int task_member(struct scan *s, const char *key, size_t len, void *ctx)
{
	size_t *n = ctx;

	if (key_is(key, len, "tests") || key_is(key, len, "test_list") ||
	    key_is(key, len, "challenge_test_list"))
		return walk_array(s, count_element, n);
	if (key_is(key, len, "test"))
		(*n)++;
	return skip_value(s);
}

struct run_ctx {
	const char *where;
	int has_task;
	size_t tests;
};

static int run_member(struct scan *s, const char *key, size_t len, void *ctx)
{
	struct run_ctx *run = ctx;

	if (!key_is(key, len, "task"))
		return skip_value(s);
	run->has_task = peek(s) == '{';
	return walk_object(s, task_member, &run->tests, run->where);
}

/* One element of "runs": its task's tests, and whether it has a task. */
static int run_element(struct scan *s, void *ctx)
{
	struct ee_prescan *r = s->r;
	char where[32];

	(void)ctx;
	snprintf(where, sizeof(where), "runs[%zu]", r->runs);
	struct run_ctx run = { where, 0, 0 };
	int rc = walk_object(s, run_member, &run, where);
	if (rc < 0)
		return rc;
	if (!run.has_task)
		r->runs_without_task++;
	r->own_tests += run.tests;
	if (run.tests > r->max_own) {
		r->max_own = run.tests;
		r->max_own_index = r->runs;
	}
	r->runs++;
	return 0;
}

static int root_member(struct scan *s, const char *key, size_t len, void *ctx)
{
	(void)ctx;
	if (key_is(key, len, "runs"))
		return walk_array(s, run_element, NULL);
	if (!key_is(key, len, "task"))
		return skip_value(s);
	s->r->has_task = peek(s) == '{';
	return walk_object(s, task_member, &s->r->task_tests, "task");
}

int ee_prescan(const char *body, size_t len, struct ee_prescan *ret)
{
	struct scan s = { body, body + len, ret };

	memset(ret, 0, sizeof(*ret));
	int rc = walk_object(&s, root_member, NULL, "");
	if (rc == 0 && peek(&s) >= 0)
		rc = EE_PRESCAN_MALFORMED; /* something after the body */
	return rc;
}
