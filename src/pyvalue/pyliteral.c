/* pyliteral.c - reading Python literals (see pyliteral.h); the reader that
 * the assert shape (pyassert.c) and the check-program shape (pyprogram.c)
 * build on (pyliteral_int.h).
 *
 * A recursive-descent reader over a byte range with a position. Every
 * reader returns a new canonical value or NULL; NULL means "not something we
 * accept" and the whole conversion gives up, so a literal is either read the
 * way Python reads it or not at all. Depth and node counts are checked on the
 * way down, so hostile input (a fuzzer's) is bounded in time and stack.
 *
 * Whitespace follows Python's tokenizer: blanks, backslash-newline, and,
 * inside brackets, newlines and comments. A statement's end is a newline
 * outside brackets (or the end of the text).
 */
#include "pyvalue/pyliteral.h"
#include "pyvalue/pyliteral_int.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "pyvalue/judge.h"
#include "base/text.h"

#define STR_CAP     (1u << 20) /* bytes of one decoded string */
#define FLOAT_CHARS 64         /* of a float literal's text */

static const char *const keywords[] = {
	"False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
	"class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
	"from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
	"or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield",
};

/* v, noting in r when an allocation did not give it. */
json_t *pylit_made(struct reader *r, json_t *v)
{
	if (!v)
		r->oom = true;
	return v;
}

/* ok, noting in r when an allocation made it false. */
bool pylit_stored(struct reader *r, bool ok)
{
	if (!ok)
		r->oom = true;
	return ok;
}

/* ---- characters ------------------------------------------------------- */

int pylit_peek(const struct reader *r, size_t ahead)
{
	return r->pos + ahead < r->n ? (unsigned char)r->s[r->pos + ahead] : -1;
}

static bool is_digit(int ch)
{
	return ch >= '0' && ch <= '9';
}

static bool is_name_start(int ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
}

/* Non-ASCII bytes count too: they would make a longer (Unicode) name. */
bool pylit_is_name_char(int ch)
{
	return is_name_start(ch) || is_digit(ch) || ch >= 0x80;
}

void pylit_skip_comment(struct reader *r)
{
	while (r->pos < r->n && r->s[r->pos] != '\n' && r->s[r->pos] != '\r')
		r->pos++;
}

/* The width of a backslash continuation at pos, 0 when there is none or
 * Python might not read it as one: Python 3.11 refuses `\` + newline at the
 * end of the text but takes it before a blank line, so a continuation
 * counts only when the next line goes on with a token on it. */
static size_t continuation_at(const struct reader *r)
{
	if (pylit_peek(r, 0) != '\\')
		return 0;
	size_t width = pylit_peek(r, 1) == '\n'   ? 2
	               : pylit_peek(r, 1) == '\r' ? (pylit_peek(r, 2) == '\n' ? 3 : 2)
	                                          : 0;
	if (width == 0)
		return 0;
	size_t at = width;
	while (pylit_peek(r, at) == ' ' || pylit_peek(r, at) == '\t' || pylit_peek(r, at) == '\f')
		at++;
	int next = pylit_peek(r, at);
	return next < 0 || next == '\n' || next == '\r' || next == '#' || next == '\\' ? 0 : width;
}

/* Skips blanks; newlines and comments only inside brackets. */
void pylit_skip_blanks(struct reader *r)
{
	for (;;) {
		int ch = pylit_peek(r, 0);
		size_t continuation = continuation_at(r);
		if (ch == ' ' || ch == '\t' || ch == '\f')
			r->pos++;
		else if (continuation > 0)
			r->pos += continuation;
		else if ((ch == '\n' || ch == '\r') && r->brackets > 0)
			r->pos++;
		else if (ch == '#' && r->brackets > 0)
			pylit_skip_comment(r);
		else
			return;
	}
}

bool pylit_eat(struct reader *r, char ch)
{
	pylit_skip_blanks(r);
	if (pylit_peek(r, 0) != (unsigned char)ch)
		return false;
	r->pos++;
	return true;
}

/* Reads a name into buf (NUL-terminated); false when there is none or it
 * does not fit. Does not skip blanks first. */
bool pylit_read_name(struct reader *r, char *buf, size_t size)
{
	size_t start = r->pos;

	if (!is_name_start(pylit_peek(r, 0)))
		return false;
	while (pylit_is_name_char(pylit_peek(r, 0)))
		r->pos++;
	size_t len = r->pos - start;
	if (len >= size)
		return false;
	memcpy(buf, r->s + start, len);
	buf[len] = '\0';
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)buf[i] >= 0x80)
			return false;
	return true;
}

bool pylit_is_keyword(const char *name)
{
	for (size_t i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++)
		if (strcmp(name, keywords[i]) == 0)
			return true;
	return false;
}

static bool count_node(struct reader *r)
{
	return ++r->nodes <= EE_PYLIT_MAX_NODES;
}

/* ---- numbers ---------------------------------------------------------- */

static size_t digits_at(const struct reader *r, size_t at)
{
	size_t k = 0;
	while (at + k < r->n && is_digit((unsigned char)r->s[at + k]))
		k++;
	return k;
}

/* Python's repr of a double: the shortest digits that read back, in fixed
 * notation when the decimal exponent is in [-4, 16), else as 1e+16. */
static void float_text(char *dst, size_t size, double x)
{
	char sci[FLOAT_CHARS];
	int prec = 1;

	if (isinf(x)) {
		snprintf(dst, size, "%s", x < 0 ? "-inf" : "inf");
		return;
	}
	for (; prec < 17; prec++) {
		snprintf(sci, sizeof(sci), "%.*e", prec - 1, x);
		if (strtod(sci, NULL) == x)
			break;
	}
	snprintf(sci, sizeof(sci), "%.*e", prec - 1, x);
	int exp = atoi(strchr(sci, 'e') + 1);
	if (exp < -4 || exp >= 16) {
		snprintf(dst, size, "%s", sci);
		return;
	}
	int decimals = prec - 1 - exp;
	snprintf(dst, size, "%.*f", decimals > 0 ? decimals : 0, x);
	if (!strchr(dst, '.'))
		strncat(dst, ".0", size - strlen(dst) - 1);
}

static json_t *make_int(struct reader *r, bool neg, const char *digits, size_t n)
{
	while (n > 1 && digits[0] == '0') {
		digits++;
		n--;
	}
	bool zero = n == 1 && digits[0] == '0';
	char *text = malloc(n + 2);
	if (!pylit_stored(r, text != NULL))
		return NULL;
	size_t o = 0;
	if (neg && !zero)
		text[o++] = '-';
	memcpy(text + o, digits, n);
	text[o + n] = '\0';
	json_t *v = pylit_made(r, json_pack("{s:s}", "int", text));
	free(text);
	return v;
}

/* [sign] decimal int or float, sign already consumed into neg. */
static json_t *read_number(struct reader *r, bool neg)
{
	size_t start = r->pos, ndig = digits_at(r, r->pos);
	bool is_float = false;

	r->pos += ndig;
	if (pylit_peek(r, 0) == '.') {
		is_float = true;
		r->pos++;
		size_t frac = digits_at(r, r->pos);
		if (ndig == 0 && frac == 0)
			return NULL;
		r->pos += frac;
	} else if (ndig == 0) {
		return NULL;
	}
	if (pylit_peek(r, 0) == 'e' || pylit_peek(r, 0) == 'E') {
		size_t at = r->pos + 1;
		if (at < r->n && (r->s[at] == '+' || r->s[at] == '-'))
			at++;
		size_t exp = digits_at(r, at);
		if (exp == 0)
			return NULL;
		is_float = true;
		r->pos = at + exp;
	}
	/* 1j, 1_0, 0x1, 1.real, 1e5.x: not a plain decimal literal. */
	if (pylit_is_name_char(pylit_peek(r, 0)) || pylit_peek(r, 0) == '.')
		return NULL;
	if (!count_node(r))
		return NULL;
	const char *text = r->s + start;
	size_t len = r->pos - start;
	if (!is_float) {
		bool all_zero = true;
		for (size_t i = 0; i < len; i++)
			all_zero = all_zero && text[i] == '0';
		if ((len > 1 && text[0] == '0' && !all_zero) || len > EE_PYLIT_MAX_DIGITS)
			return NULL; /* 012 is a SyntaxError; past the limit too */
		return make_int(r, neg, text, len);
	}
	char buf[FLOAT_CHARS], shown[FLOAT_CHARS];
	if (len >= sizeof(buf))
		return NULL;
	memcpy(buf, text, len);
	buf[len] = '\0';
	double x = strtod(buf, NULL);
	float_text(shown, sizeof(shown), neg ? -x : x);
	return pylit_made(r, json_pack("{s:s}", "float", shown));
}

/* ---- strings ---------------------------------------------------------- */

static int put_utf8(struct ee_buf *b, unsigned long cp)
{
	unsigned char o[4];
	size_t n;

	if (cp < 0x80) {
		o[0] = (unsigned char)cp;
		n = 1;
	} else if (cp < 0x800) {
		o[0] = (unsigned char)(0xC0 | cp >> 6);
		o[1] = (unsigned char)(0x80 | (cp & 0x3F));
		n = 2;
	} else if (cp < 0x10000) {
		o[0] = (unsigned char)(0xE0 | cp >> 12);
		o[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
		o[2] = (unsigned char)(0x80 | (cp & 0x3F));
		n = 3;
	} else {
		o[0] = (unsigned char)(0xF0 | cp >> 18);
		o[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
		o[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
		o[3] = (unsigned char)(0x80 | (cp & 0x3F));
		n = 4;
	}
	return ee_buf_append(b, o, n);
}

static int hex_value(int ch)
{
	if (is_digit(ch))
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* \xhh, \uhhhh, \Uhhhhhhhh: exactly `count` hex digits after the letter. */
static int hex_escape(struct reader *r, int count, struct ee_buf *b)
{
	unsigned long cp = 0;

	for (int i = 0; i < count; i++) {
		int v = hex_value(pylit_peek(r, 0));
		if (v < 0)
			return -1;
		cp = cp * 16 + (unsigned long)v;
		r->pos++;
	}
	if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return -1; /* a SyntaxError, or a lone surrogate */
	return put_utf8(b, cp);
}

/* One escape after the backslash, in a non-raw string. */
static int escape(struct reader *r, struct ee_buf *b)
{
	static const char simple_in[] = "\\'\"abfnrtv";
	static const char simple_out[] = "\\'\"\a\b\f\n\r\t\v";
	int ch = pylit_peek(r, 0);
	const char *hit;

	if (ch < 0)
		return -1;
	r->pos++;
	if (ch == '\n')
		return 0; /* line continuation inside the string */
	if (ch != 0 && (hit = strchr(simple_in, ch)) != NULL)
		return ee_buf_append(b, &simple_out[hit - simple_in], 1);
	if (ch >= '0' && ch <= '7') {
		unsigned long cp = (unsigned long)(ch - '0');
		for (int i = 0; i < 2 && pylit_peek(r, 0) >= '0' && pylit_peek(r, 0) <= '7'; i++)
			cp = cp * 8 + (unsigned long)(r->s[r->pos++] - '0');
		return put_utf8(b, cp);
	}
	if (ch == 'x')
		return hex_escape(r, 2, b);
	if (ch == 'u')
		return hex_escape(r, 4, b);
	if (ch == 'U')
		return hex_escape(r, 8, b);
	return -1; /* \N{...} and unknown escapes (a warning in Python) */
}

/* The body after the opening quote(s), up to and past the closing ones. */
static json_t *read_string_body(struct reader *r, char quote, bool triple, bool raw)
{
	struct ee_buf b;
	json_t *v = NULL;

	ee_buf_init(&b, STR_CAP);
	for (;;) {
		int ch = pylit_peek(r, 0);
		if (ch < 0 || ch == '\r' || ch == 0 || (ch == '\n' && !triple))
			goto out; /* unterminated, or a byte we do not judge */
		if (ch == (unsigned char)quote && (!triple || (pylit_peek(r, 1) == (unsigned char)quote &&
		                                               pylit_peek(r, 2) == (unsigned char)quote))) {
			r->pos += triple ? 3 : 1;
			break;
		}
		if (ch == '\\' && !raw) {
			r->pos++;
			if (escape(r, &b) < 0)
				goto out;
			continue;
		}
		if (ch == '\\') { /* raw: the backslash stays and shields one character */
			int next = pylit_peek(r, 1);
			if (next < 0 || next == '\r' || next == 0 || next >= 0x80)
				goto out;
			if (ee_buf_append(&b, r->s + r->pos, 2) < 0)
				goto out;
			r->pos += 2;
			continue;
		}
		size_t len = ee_utf8_char_len(r->s + r->pos, r->n - r->pos);
		if (len == 0 || ee_buf_append(&b, r->s + r->pos, len) < 0)
			goto out;
		r->pos += len;
	}
	v = pylit_made(r, json_stringn(b.data ? b.data : "", b.len));
out:
	r->oom = r->oom || b.oom;
	ee_buf_free(&b);
	return v;
}

/* At a quote, after an optional prefix already consumed. */
static json_t *read_string(struct reader *r, bool raw)
{
	char quote = r->s[r->pos];
	bool triple = pylit_peek(r, 1) == (unsigned char)quote && pylit_peek(r, 2) == (unsigned char)quote;

	r->pos += triple ? 3 : 1;
	if (!count_node(r))
		return NULL;
	json_t *v = read_string_body(r, quote, triple, raw);
	if (!v)
		return NULL;
	/* 'a' 'b' is one string in Python; we do not join them. */
	pylit_skip_blanks(r);
	int ch = pylit_peek(r, 0);
	if (ch == '\'' || ch == '"' || pylit_is_name_char(ch)) {
		json_decref(v);
		return NULL;
	}
	return v;
}

/* ---- containers ------------------------------------------------------- */

/* Adds v's key to seen; false when unhashable or already there. */
static bool distinct(struct reader *r, json_t *seen, const json_t *v)
{
	struct ee_buf key;
	bool ok = false;

	ee_buf_init(&key, STR_CAP);
	if (ee_judge_pykey(v, &key) == 0 && !json_object_getn(seen, key.data, key.len))
		ok = pylit_stored(r, json_object_setn_new_nocheck(seen, key.data, key.len, json_null()) == 0);
	r->oom = r->oom || key.oom;
	ee_buf_free(&key);
	return ok;
}

/* {tag: items}; consumes items, also on failure (json_pack's "o" may not). */
static json_t *tagged(struct reader *r, const char *tag, json_t *items)
{
	if (!items)
		return NULL;
	json_t *v = pylit_made(r, json_object());
	if (v && !pylit_stored(r, json_object_set_new(v, tag, items) == 0)) {
		json_decref(v);
		return NULL;
	}
	if (!v)
		json_decref(items);
	return v;
}

/* [v]; consumes v, also on failure. */
static json_t *one_item(struct reader *r, json_t *v)
{
	json_t *items = pylit_made(r, json_array());
	if (!pylit_stored(r, items && json_array_append_new(items, v) == 0)) {
		if (!items)
			json_decref(v);
		json_decref(items);
		return NULL;
	}
	return items;
}

/* Items up to `close`, comma-separated, trailing comma allowed. first (may
 * be NULL) was read already and followed by a comma. */
static json_t *read_items(struct reader *r, char close, json_t *first, json_t *seen)
{
	json_t *items = pylit_made(r, json_array());

	if (!items || (first && !pylit_stored(r, json_array_append_new(items, first) == 0))) {
		if (!items)
			json_decref(first); /* consumed, as on every other path */
		json_decref(items);
		return NULL;
	}
	for (bool need_comma = false;; need_comma = true) {
		if (pylit_eat(r, close))
			return items;
		if (need_comma && !pylit_eat(r, ','))
			break;
		if (need_comma && pylit_eat(r, close))
			return items;
		json_t *v = pylit_read_value(r);
		if (!v)
			break;
		if (!pylit_stored(r, json_array_append_new(items, v) == 0) || (seen && !distinct(r, seen, v)))
			break;
	}
	json_decref(items);
	return NULL;
}

/* After "(": (), (x), (x,), (x, y, ...). */
static json_t *read_paren(struct reader *r)
{
	if (pylit_eat(r, ')'))
		return tagged(r, "tuple", pylit_made(r, json_array()));
	json_t *first = pylit_read_value(r);
	if (!first)
		return NULL;
	if (pylit_eat(r, ')'))
		return first; /* parentheses, not a tuple */
	if (!pylit_eat(r, ',')) {
		json_decref(first);
		return NULL;
	}
	return tagged(r, "tuple", read_items(r, ')', first, NULL));
}

/* A [key, value] pair; consumes both references, even on failure. */
static json_t *make_pair(struct reader *r, json_t *key, json_t *val)
{
	json_t *pair = pylit_made(r, json_array());

	if (!pair ||
	    !pylit_stored(r, json_array_append(pair, key) == 0 && json_array_append(pair, val) == 0)) {
		json_decref(pair);
		pair = NULL;
	}
	json_decref(key);
	json_decref(val);
	return pair;
}

/* After the first key and its ':': the values, then more pairs. */
static json_t *read_dict_rest(struct reader *r, json_t *key, json_t *seen)
{
	json_t *pairs = pylit_made(r, json_array());

	if (!pairs) {
		json_decref(key);
		return NULL;
	}
	for (;;) {
		json_t *val = pylit_read_value(r);
		if (!val) {
			json_decref(key);
			break;
		}
		if (!pylit_stored(r, json_array_append_new(pairs, make_pair(r, key, val)) == 0))
			break;
		if (pylit_eat(r, '}'))
			return tagged(r, "dict", pairs);
		if (!pylit_eat(r, ','))
			break;
		if (pylit_eat(r, '}'))
			return tagged(r, "dict", pairs);
		key = pylit_read_value(r);
		if (!key || !distinct(r, seen, key) || !pylit_eat(r, ':')) {
			json_decref(key);
			break;
		}
	}
	json_decref(pairs);
	return NULL;
}

/* After "{": {} (a dict), {k: v, ...}, {x, ...} (a set). */
static json_t *read_brace(struct reader *r)
{
	if (pylit_eat(r, '}'))
		return tagged(r, "dict", pylit_made(r, json_array()));
	json_t *seen = pylit_made(r, json_object()), *v = NULL, *first = pylit_read_value(r);
	if (!seen || !first || !distinct(r, seen, first)) {
		json_decref(first);
		goto out;
	}
	if (pylit_eat(r, ':')) {
		v = read_dict_rest(r, first, seen);
		goto out;
	}
	if (pylit_eat(r, '}')) {
		v = tagged(r, "set", one_item(r, first));
		goto out;
	}
	if (!pylit_eat(r, ',')) {
		json_decref(first);
		goto out;
	}
	v = tagged(r, "set", read_items(r, '}', first, seen));
out:
	json_decref(seen);
	return v;
}

static json_t *read_container(struct reader *r, char open)
{
	json_t *v;

	if (r->depth >= EE_PYLIT_MAX_DEPTH || !count_node(r))
		return NULL;
	r->depth++;
	r->brackets++;
	r->pos++;
	if (open == '(')
		v = read_paren(r);
	else if (open == '[')
		v = tagged(r, "list", read_items(r, ']', NULL, NULL));
	else
		v = read_brace(r);
	r->depth--;
	r->brackets--;
	return v;
}

/* ---- values ----------------------------------------------------------- */

/* A name: True/False/None, or a string prefix right before a quote. */
static json_t *read_word(struct reader *r)
{
	char name[8];

	if (!pylit_read_name(r, name, sizeof(name)))
		return NULL;
	int q = pylit_peek(r, 0);
	if (q == '\'' || q == '"') {
		if (strcmp(name, "r") == 0 || strcmp(name, "R") == 0)
			return read_string(r, true);
		if (strcmp(name, "u") == 0 || strcmp(name, "U") == 0)
			return read_string(r, false);
		return NULL; /* b'', f'', rb'', ...: not judged */
	}
	if (!count_node(r))
		return NULL;
	if (strcmp(name, "None") == 0)
		return json_null();
	if (strcmp(name, "True") == 0)
		return json_true();
	if (strcmp(name, "False") == 0)
		return json_false();
	return NULL;
}

json_t *pylit_read_value(struct reader *r)
{
	pylit_skip_blanks(r);
	int ch = pylit_peek(r, 0);

	if (ch == '-' || ch == '+') {
		r->pos++;
		pylit_skip_blanks(r);
		if (!is_digit(pylit_peek(r, 0)) && pylit_peek(r, 0) != '.')
			return NULL;
		return read_number(r, ch == '-');
	}
	if (is_digit(ch) || ch == '.')
		return read_number(r, false);
	if (ch == '\'' || ch == '"')
		return read_string(r, false);
	if (ch == '(' || ch == '[' || ch == '{')
		return read_container(r, (char)ch);
	if (is_name_start(ch))
		return read_word(r);
	return NULL;
}

/* Python tolerates the end of the text, blanks, comments and blank lines
 * after a statement; anything else is more code. */
bool pylit_at_statement_end(struct reader *r)
{
	for (;;) {
		pylit_skip_blanks(r);
		int ch = pylit_peek(r, 0);
		if (ch < 0)
			return true;
		if (ch == '#')
			pylit_skip_comment(r);
		else if (ch == '\n' || ch == '\r')
			r->pos++;
		else
			return false;
	}
}

json_t *ee_pyliteral_parse(const char *s, size_t n)
{
	struct reader r = { .s = s, .n = n };

	if (!s)
		return NULL;
	json_t *v = pylit_read_value(&r);
	if (v && !pylit_at_statement_end(&r)) {
		json_decref(v);
		v = NULL;
	}
	return v;
}
