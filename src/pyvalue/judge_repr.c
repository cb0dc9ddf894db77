/* judge_repr.c - Python-style repr of a canonical value, for the reasons of
 * strict asserts (see judge_int.h, judge_show_repr).
 */
#include "pyvalue/judge_int.h"

#include <stdio.h>
#include <string.h>

#include "base/buf.h"

static void put(struct ee_buf *b, const char *s, size_t n)
{
	ee_buf_append_some(b, s, n);
}

static void puts_(struct ee_buf *b, const char *s)
{
	put(b, s, strlen(s));
}

static void repr_str(struct ee_buf *b, const char *s, size_t n)
{
	char esc[8];

	put(b, "'", 1);
	for (size_t i = 0; i < n && b->len < b->cap; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '\\' || ch == '\'') {
			esc[0] = '\\';
			esc[1] = (char)ch;
			put(b, esc, 2);
		} else if (ch < 0x20 || ch == 0x7f) {
			const char *c = judge_control_escape(ch);
			if (c[1])
				puts_(b, c);
			else {
				snprintf(esc, sizeof(esc), "\\x%02x", ch);
				puts_(b, esc);
			}
		} else {
			put(b, s + i, 1);
		}
	}
	put(b, "'", 1);
}

static void repr(struct ee_buf *b, const json_t *v, int depth);

/* A part of a complex as Python's repr writes it: the float's repr without
 * a ".0" that only marks it a float ("1.0" -> "1", "1e+16" stays). */
static void put_part(struct ee_buf *b, const json_t *text)
{
	char q[QUOTED_LEN];
	size_t n = json_string_length(text);
	const char *s = json_string_value(text);

	if (n > 2 && memcmp(s + n - 2, ".0", 2) == 0 && !memchr(s, 'e', n))
		n -= 2;
	judge_quote(q, s, n, QUOTE_BYTES);
	puts_(b, q);
}

/* complex's repr: "1j" when the real part is +0, else "(1-2j)". */
static void repr_complex(struct ee_buf *b, const json_t *in)
{
	double re, im;
	const json_t *r = json_array_get(in, 0), *i = json_array_get(in, 1);

	if (!judge_complex_of(in, &re, &im))
		return puts_(b, "<malformed canonical value>");
	if (re == 0.0 && json_string_value(r)[0] != '-') {
		put_part(b, i);
		return puts_(b, "j");
	}
	puts_(b, "(");
	put_part(b, r);
	if (json_string_value(i)[0] != '-')
		puts_(b, "+");
	put_part(b, i);
	puts_(b, "j)");
}

static void repr_items(struct ee_buf *b, const json_t *items, bool pairs, int depth)
{
	for (size_t i = 0; i < json_array_size(items) && b->len < b->cap; i++) {
		const json_t *item = json_array_get(items, i);
		if (i)
			puts_(b, ", ");
		if (pairs && json_is_array(item) && json_array_size(item) == 2) {
			repr(b, json_array_get(item, 0), depth + 1);
			puts_(b, ": ");
			repr(b, json_array_get(item, 1), depth + 1);
		} else {
			repr(b, item, depth + 1);
		}
	}
}

static void repr(struct ee_buf *b, const json_t *v, int depth)
{
	const json_t *in;
	enum kind k = judge_kind_of(v, &in);
	char q[QUOTED_LEN];
	size_t n = in && json_is_array(in) ? json_array_size(in) : 0;

	if (depth > MAX_DEPTH || b->len >= b->cap)
		return puts_(b, "...");
	switch (k) {
	case K_NULL: return puts_(b, "None");
	case K_BOOL: return puts_(b, json_is_true(v) ? "True" : "False");
	case K_STR: return repr_str(b, json_string_value(v), json_string_length(v));
	case K_INT:
	case K_FLOAT:
		judge_quote(q, json_string_value(in), json_string_length(in), QUOTE_BYTES);
		return puts_(b, q);
	case K_LIST:
		puts_(b, "[");
		repr_items(b, in, false, depth);
		return puts_(b, "]");
	case K_TUPLE:
		puts_(b, "(");
		repr_items(b, in, false, depth);
		return puts_(b, n == 1 ? ",)" : ")");
	case K_DICT:
		puts_(b, "{");
		repr_items(b, in, true, depth);
		return puts_(b, "}");
	case K_SET:
	case K_FROZENSET:
		if (n == 0)
			return puts_(b, k == K_SET ? "set()" : "frozenset()");
		puts_(b, k == K_SET ? "{" : "frozenset({");
		repr_items(b, in, false, depth);
		return puts_(b, k == K_SET ? "}" : "})");
	case K_COMPLEX: return repr_complex(b, in);
	case K_TYPE:
		judge_quote(q, json_string_value(in), json_string_length(in), TYPE_BYTES);
		puts_(b, "<class '");
		puts_(b, q);
		return puts_(b, "'>");
	case K_OTHER:
		judge_quote(q, json_string_value(in), json_string_length(in), TYPE_BYTES);
		puts_(b, "<unsupported type '");
		puts_(b, q);
		return puts_(b, "'>");
	case K_BAD: return puts_(b, "<malformed canonical value>");
	}
}

/* The repr into dst, cut between characters with "..." when too long. */
void judge_show_repr(char *dst, size_t size, const json_t *v)
{
	struct ee_buf b;

	ee_buf_init(&b, REPR_CAP);
	repr(&b, v, 0);
	if (b.oom) { /* a part left out would read as the value */
		snprintf(dst, size, "<out of memory>");
		return ee_buf_free(&b);
	}
	bool cut = b.len >= b.cap;
	snprintf(dst, size, "%.*s", (int)b.len, b.data ? b.data : "");
	if (cut) {
		judge_trim_partial_char(dst);
		strncat(dst, "...", size - strlen(dst) - 1);
	}
	ee_buf_free(&b);
}
