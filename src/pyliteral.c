/* pyliteral.c - reading Python literals and the literal-assert shape (see
 * pyliteral.h).
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
#include "pyliteral.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "judge.h"
#include "text.h"

#define STR_CAP     (1u << 20) /* bytes of one decoded string */
#define FLOAT_CHARS 64         /* of a float literal's text */

struct reader {
	const char *s;
	size_t n, pos;
	int depth;    /* containers open now */
	int brackets; /* brackets open now: newlines are blanks inside */
	size_t nodes; /* values read so far */
	bool oom;     /* an allocation failed: the input was not refused */
};

static const char *const keywords[] = {
	"False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
	"class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
	"from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
	"or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield",
};

static json_t *read_value(struct reader *r);

/* v, noting in r when an allocation did not give it. */
static json_t *made(struct reader *r, json_t *v)
{
	if (!v)
		r->oom = true;
	return v;
}

/* ok, noting in r when an allocation made it false. */
static bool stored(struct reader *r, bool ok)
{
	if (!ok)
		r->oom = true;
	return ok;
}

/* ---- characters ------------------------------------------------------- */

static int peek(const struct reader *r, size_t ahead)
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
static bool is_name_char(int ch)
{
	return is_name_start(ch) || is_digit(ch) || ch >= 0x80;
}

static void skip_comment(struct reader *r)
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
	if (peek(r, 0) != '\\')
		return 0;
	size_t width = peek(r, 1) == '\n' ? 2 : peek(r, 1) == '\r' ? (peek(r, 2) == '\n' ? 3 : 2) : 0;
	if (width == 0)
		return 0;
	size_t at = width;
	while (peek(r, at) == ' ' || peek(r, at) == '\t' || peek(r, at) == '\f')
		at++;
	int next = peek(r, at);
	return next < 0 || next == '\n' || next == '\r' || next == '#' || next == '\\' ? 0 : width;
}

/* Skips blanks; newlines and comments only inside brackets. */
static void skip_blanks(struct reader *r)
{
	for (;;) {
		int ch = peek(r, 0);
		size_t continuation = continuation_at(r);
		if (ch == ' ' || ch == '\t' || ch == '\f')
			r->pos++;
		else if (continuation > 0)
			r->pos += continuation;
		else if ((ch == '\n' || ch == '\r') && r->brackets > 0)
			r->pos++;
		else if (ch == '#' && r->brackets > 0)
			skip_comment(r);
		else
			return;
	}
}

static bool eat(struct reader *r, char ch)
{
	skip_blanks(r);
	if (peek(r, 0) != (unsigned char)ch)
		return false;
	r->pos++;
	return true;
}

/* Reads a name into buf (NUL-terminated); false when there is none or it
 * does not fit. Does not skip blanks first. */
static bool read_name(struct reader *r, char *buf, size_t size)
{
	size_t start = r->pos;

	if (!is_name_start(peek(r, 0)))
		return false;
	while (is_name_char(peek(r, 0)))
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

static bool is_keyword(const char *name)
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
	if (!stored(r, text != NULL))
		return NULL;
	size_t o = 0;
	if (neg && !zero)
		text[o++] = '-';
	memcpy(text + o, digits, n);
	text[o + n] = '\0';
	json_t *v = made(r, json_pack("{s:s}", "int", text));
	free(text);
	return v;
}

/* [sign] decimal int or float, sign already consumed into neg. */
static json_t *read_number(struct reader *r, bool neg)
{
	size_t start = r->pos, ndig = digits_at(r, r->pos);
	bool is_float = false;

	r->pos += ndig;
	if (peek(r, 0) == '.') {
		is_float = true;
		r->pos++;
		size_t frac = digits_at(r, r->pos);
		if (ndig == 0 && frac == 0)
			return NULL;
		r->pos += frac;
	} else if (ndig == 0) {
		return NULL;
	}
	if (peek(r, 0) == 'e' || peek(r, 0) == 'E') {
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
	if (is_name_char(peek(r, 0)) || peek(r, 0) == '.')
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
	return made(r, json_pack("{s:s}", "float", shown));
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
		int v = hex_value(peek(r, 0));
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
	int ch = peek(r, 0);
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
		for (int i = 0; i < 2 && peek(r, 0) >= '0' && peek(r, 0) <= '7'; i++)
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
		int ch = peek(r, 0);
		if (ch < 0 || ch == '\r' || ch == 0 || (ch == '\n' && !triple))
			goto out; /* unterminated, or a byte we do not judge */
		if (ch == (unsigned char)quote &&
		    (!triple || (peek(r, 1) == (unsigned char)quote && peek(r, 2) == (unsigned char)quote))) {
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
			int next = peek(r, 1);
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
	v = made(r, json_stringn(b.data ? b.data : "", b.len));
out:
	r->oom = r->oom || b.oom;
	ee_buf_free(&b);
	return v;
}

/* At a quote, after an optional prefix already consumed. */
static json_t *read_string(struct reader *r, bool raw)
{
	char quote = r->s[r->pos];
	bool triple = peek(r, 1) == (unsigned char)quote && peek(r, 2) == (unsigned char)quote;

	r->pos += triple ? 3 : 1;
	if (!count_node(r))
		return NULL;
	json_t *v = read_string_body(r, quote, triple, raw);
	if (!v)
		return NULL;
	/* 'a' 'b' is one string in Python; we do not join them. */
	skip_blanks(r);
	int ch = peek(r, 0);
	if (ch == '\'' || ch == '"' || is_name_char(ch)) {
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
		ok = stored(r, json_object_setn_new_nocheck(seen, key.data, key.len, json_null()) == 0);
	r->oom = r->oom || key.oom;
	ee_buf_free(&key);
	return ok;
}

/* {tag: items}; consumes items, also on failure (json_pack's "o" may not). */
static json_t *tagged(struct reader *r, const char *tag, json_t *items)
{
	if (!items)
		return NULL;
	json_t *v = made(r, json_object());
	if (v && !stored(r, json_object_set_new(v, tag, items) == 0)) {
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
	json_t *items = made(r, json_array());
	if (!stored(r, items && json_array_append_new(items, v) == 0)) {
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
	json_t *items = made(r, json_array());

	if (!items || (first && !stored(r, json_array_append_new(items, first) == 0))) {
		if (!items)
			json_decref(first); /* consumed, as on every other path */
		json_decref(items);
		return NULL;
	}
	for (bool need_comma = false;; need_comma = true) {
		if (eat(r, close))
			return items;
		if (need_comma && !eat(r, ','))
			break;
		if (need_comma && eat(r, close))
			return items;
		json_t *v = read_value(r);
		if (!v)
			break;
		if (!stored(r, json_array_append_new(items, v) == 0) || (seen && !distinct(r, seen, v)))
			break;
	}
	json_decref(items);
	return NULL;
}

/* After "(": (), (x), (x,), (x, y, ...). */
static json_t *read_paren(struct reader *r)
{
	if (eat(r, ')'))
		return tagged(r, "tuple", made(r, json_array()));
	json_t *first = read_value(r);
	if (!first)
		return NULL;
	if (eat(r, ')'))
		return first; /* parentheses, not a tuple */
	if (!eat(r, ',')) {
		json_decref(first);
		return NULL;
	}
	return tagged(r, "tuple", read_items(r, ')', first, NULL));
}

/* A [key, value] pair; consumes both references, even on failure. */
static json_t *make_pair(struct reader *r, json_t *key, json_t *val)
{
	json_t *pair = made(r, json_array());

	if (!pair || !stored(r, json_array_append(pair, key) == 0 && json_array_append(pair, val) == 0)) {
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
	json_t *pairs = made(r, json_array());

	if (!pairs) {
		json_decref(key);
		return NULL;
	}
	for (;;) {
		json_t *val = read_value(r);
		if (!val) {
			json_decref(key);
			break;
		}
		if (!stored(r, json_array_append_new(pairs, make_pair(r, key, val)) == 0))
			break;
		if (eat(r, '}'))
			return tagged(r, "dict", pairs);
		if (!eat(r, ','))
			break;
		if (eat(r, '}'))
			return tagged(r, "dict", pairs);
		key = read_value(r);
		if (!key || !distinct(r, seen, key) || !eat(r, ':')) {
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
	if (eat(r, '}'))
		return tagged(r, "dict", made(r, json_array()));
	json_t *seen = made(r, json_object()), *v = NULL, *first = read_value(r);
	if (!seen || !first || !distinct(r, seen, first)) {
		json_decref(first);
		goto out;
	}
	if (eat(r, ':')) {
		v = read_dict_rest(r, first, seen);
		goto out;
	}
	if (eat(r, '}')) {
		v = tagged(r, "set", one_item(r, first));
		goto out;
	}
	if (!eat(r, ',')) {
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

	if (!read_name(r, name, sizeof(name)))
		return NULL;
	int q = peek(r, 0);
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

static json_t *read_value(struct reader *r)
{
	skip_blanks(r);
	int ch = peek(r, 0);

	if (ch == '-' || ch == '+') {
		r->pos++;
		skip_blanks(r);
		if (!is_digit(peek(r, 0)) && peek(r, 0) != '.')
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
static bool at_statement_end(struct reader *r)
{
	for (;;) {
		skip_blanks(r);
		int ch = peek(r, 0);
		if (ch < 0)
			return true;
		if (ch == '#')
			skip_comment(r);
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
	json_t *v = read_value(&r);
	if (v && !at_statement_end(&r)) {
		json_decref(v);
		v = NULL;
	}
	return v;
}

/* ---- the assert shape ------------------------------------------------- */

void ee_pycall_free(struct ee_pycall *c)
{
	if (!c)
		return;
	free(c->fn);
	json_decref(c->args);
	json_decref(c->kwargs);
	json_decref(c->expected);
	memset(c, 0, sizeof(*c));
}

/* A keyword argument "name=" ahead? Leaves pos alone when not. */
static bool read_keyword(struct reader *r, char *name, size_t size)
{
	size_t save = r->pos;

	skip_blanks(r);
	if (read_name(r, name, size) && !is_keyword(name)) {
		skip_blanks(r);
		if (peek(r, 0) == '=' && peek(r, 1) != '=') {
			r->pos++;
			return true;
		}
	}
	r->pos = save;
	return false;
}

/* ARGS ")" after the "(": positional literals, then name=literal. */
static bool read_args(struct reader *r, struct ee_pycall *c)
{
	char name[128];

	for (bool need_comma = false;; need_comma = true) {
		if (eat(r, ')'))
			return true;
		if (need_comma && !eat(r, ','))
			return false;
		if (need_comma && eat(r, ')'))
			return true;
		bool kw = read_keyword(r, name, sizeof(name));
		if (!kw && json_array_size(c->kwargs) > 0)
			return false; /* positional after keyword: a SyntaxError */
		json_t *v = read_value(r);
		if (!v)
			return false;
		if (!kw) {
			if (!stored(r, json_array_append_new(c->args, v) == 0))
				return false;
			continue;
		}
		for (size_t i = 0; i < json_array_size(c->kwargs); i++) {
			if (strcmp(json_string_value(json_array_get(json_array_get(c->kwargs, i), 0)),
			           name) == 0) {
				json_decref(v);
				return false; /* repeated keyword: a SyntaxError */
			}
		}
		if (!stored(r, json_array_append_new(c->kwargs, json_pack("[so]", name, v)) == 0))
			return false;
	}
}

/* NAME(ARGS) */
static bool read_call(struct reader *r, struct ee_pycall *c)
{
	char name[128];

	skip_blanks(r);
	if (!read_name(r, name, sizeof(name)) || is_keyword(name) || !eat(r, '('))
		return false;
	c->fn = strdup(name);
	if (!stored(r, c->fn != NULL))
		return false;
	r->brackets++;
	bool ok = read_args(r, c);
	r->brackets--;
	return ok;
}

/* "==" and not "===" */
static bool read_eq(struct reader *r)
{
	skip_blanks(r);
	if (peek(r, 0) != '=' || peek(r, 1) != '=' || peek(r, 2) == '=')
		return false;
	r->pos += 2;
	return true;
}

/* Does the text at pos start a call (a name that is not a literal)? */
static bool call_first(const struct reader *r)
{
	struct reader probe = *r;
	char name[128];

	skip_blanks(&probe);
	if (!read_name(&probe, name, sizeof(name)))
		return false;
	int q = peek(&probe, 0);
	if ((q == '\'' || q == '"') && strlen(name) <= 2)
		return false; /* a string prefix */
	return strcmp(name, "True") != 0 && strcmp(name, "False") != 0 && strcmp(name, "None") != 0;
}

/* The keyword `word` at pos, followed by a blank or a backslash
 * continuation (not a longer name, not a parenthesis): consumed. */
static bool read_keyword_at(struct reader *r, const char *word)
{
	size_t len = strlen(word);

	if (r->n - r->pos <= len || memcmp(r->s + r->pos, word, len) != 0)
		return false;
	int ch = peek(r, len);
	if (ch != ' ' && ch != '\t' && ch != '\\')
		return false;
	r->pos += len;
	return true;
}

static bool read_shape(struct reader *r, struct ee_pycall *c)
{
	if (!read_keyword_at(r, "assert"))
		return false;
	if (call_first(r)) {
		if (!read_call(r, c) || !read_eq(r))
			return false;
		c->expected = read_value(r);
	} else {
		c->expected = read_value(r);
		if (!c->expected || !read_eq(r) || !read_call(r, c))
			return false;
	}
	if (!c->expected)
		return false;
	skip_blanks(r);
	if (peek(r, 0) == ',') { /* the message: a literal, ignored */
		r->pos++;
		json_t *msg = read_value(r);
		if (!msg)
			return false;
		json_decref(msg);
	}
	return at_statement_end(r);
}

int ee_pyassert_convert(const char *code, struct ee_pycall *ret)
{
	struct reader r = { .s = code, .n = code ? strlen(code) : 0 };
	struct ee_pycall c = { 0 };

	memset(ret, 0, sizeof(*ret));
	if (!code || r.n > EE_PYLIT_MAX_CODE)
		return 0;
	c.args = json_array();
	c.kwargs = json_array();
	if (!c.args || !c.kwargs) {
		ee_pycall_free(&c);
		return -1;
	}
	if (!read_shape(&r, &c)) {
		ee_pycall_free(&c);
		return r.oom ? -1 : 0;
	}
	*ret = c;
	return 1;
}

/* ---- the check-program shape ------------------------------------------
 *
 * Read line by line as Python's tokenizer would see it: a logical line
 * starts at a physical line's indentation (spaces only here: a tab or form
 * feed in indentation is refused, so no tab-width rule is involved), blank
 * and comment-only lines do not count, and the reader above consumes the
 * newlines inside brackets and triple-quoted strings. */

/* Python's truth value of a canonical literal. */
static bool truthy(const json_t *v)
{
	if (json_is_null(v))
		return false;
	if (json_is_boolean(v))
		return json_is_true(v);
	if (json_is_string(v))
		return json_string_length(v) > 0;
	const char *text = json_string_value(json_object_get(v, "int"));
	if (text)
		return strcmp(text, "0") != 0;
	text = json_string_value(json_object_get(v, "float"));
	if (text)
		return strtod(text, NULL) != 0; /* nan is true, as in Python */
	const char *key = json_object_iter_key(json_object_iter((json_t *)v));
	return key && json_array_size(json_object_get(v, key)) > 0;
}

/* The end of a logical line: blanks, an optional comment, then a newline
 * (consumed) or the end of the text. */
static bool at_line_end(struct reader *r)
{
	skip_blanks(r);
	if (peek(r, 0) == '#')
		skip_comment(r);
	if (peek(r, 0) < 0)
		return true;
	if (peek(r, 0) != '\n')
		return false;
	r->pos++;
	return true;
}

/* Skips blank and comment-only lines; returns the indentation (in spaces)
 * of the next logical line with pos at its first character, 0 at the end
 * of the text, -1 when its indentation holds anything but spaces or it
 * starts with a backslash continuation. */
static int next_line(struct reader *r)
{
	for (;;) {
		int width = 0;
		bool other = false;
		while (peek(r, 0) == ' ' || peek(r, 0) == '\t' || peek(r, 0) == '\f') {
			other = other || peek(r, 0) != ' ';
			width++;
			r->pos++;
		}
		int ch = peek(r, 0);
		if (ch == '#') {
			skip_comment(r);
			ch = peek(r, 0);
		}
		if (ch < 0)
			return 0;
		if (ch == '\n') {
			r->pos++;
			continue;
		}
		return other || ch == '\\' || width > EE_PYPROG_MAX_INDENT ? -1 : width;
	}
}

struct program {
	char def_name[128]; /* check */
	char param[128];    /* candidate */
	char fn[128];       /* the name check() is called with */
	json_t *assigned;   /* names bound at the top level (object used as a set) */
	json_t *calls;      /* [{"args", "kwargs", "expected"}, ...] */
};

/* One statement of check's body: a string (a docstring, or any string
 * expression), `assert LITERAL` with a true literal (a no-op), or the
 * assert shape on the parameter; each with an optional literal message. */
static bool read_body_statement(struct reader *r, struct program *p)
{
	int ch = peek(r, 0);

	if (ch == '\'' || ch == '"' ||
	    ((ch == 'r' || ch == 'R' || ch == 'u' || ch == 'U') &&
	     (peek(r, 1) == '\'' || peek(r, 1) == '"'))) {
		json_t *v = read_value(r);
		bool ok = json_is_string(v);
		json_decref(v);
		return ok && at_line_end(r);
	}
	if (!read_keyword_at(r, "assert"))
		return false;
	struct ee_pycall c = { .args = made(r, json_array()), .kwargs = made(r, json_array()) };
	bool ok = false, is_call = false;
	if (!c.args || !c.kwargs)
		goto out;
	if (call_first(r)) {
		if (!read_call(r, &c) || !read_eq(r))
			goto out;
		c.expected = read_value(r);
		is_call = true;
	} else {
		c.expected = read_value(r);
		if (!c.expected)
			goto out;
		skip_blanks(r);
		if (peek(r, 0) == '=') {
			if (!read_eq(r) || !read_call(r, &c))
				goto out;
			is_call = true;
		} else if (!truthy(c.expected)) {
			goto out; /* `assert False`, `assert 0`: always fails; left alone */
		}
	}
	if (!c.expected || (is_call && strcmp(c.fn, p->param) != 0))
		goto out;
	skip_blanks(r);
	if (peek(r, 0) == ',') { /* the message: a literal, ignored */
		r->pos++;
		json_t *msg = read_value(r);
		if (!msg)
			goto out;
		json_decref(msg);
	}
	if (!at_line_end(r))
		goto out;
	ok = true;
	if (is_call) {
		if (json_array_size(p->calls) >= EE_PYPROG_MAX_CALLS)
			ok = false;
		else
			ok = stored(r,
			            json_array_append_new(p->calls, json_pack("{s:O, s:O, s:O}", "args",
			                                                      c.args, "kwargs", c.kwargs,
			                                                      "expected", c.expected)) == 0);
	}
out:
	ee_pycall_free(&c);
	return ok;
}

/* "def NAME(PARAM):" then its body, every statement at one indentation. */
static bool read_def(struct reader *r, struct program *p)
{
	if (p->def_name[0] || !read_keyword_at(r, "def"))
		return false;
	skip_blanks(r);
	if (!read_name(r, p->def_name, sizeof(p->def_name)) || is_keyword(p->def_name) || !eat(r, '('))
		return false;
	r->brackets++;
	skip_blanks(r);
	bool ok = read_name(r, p->param, sizeof(p->param)) && !is_keyword(p->param) && eat(r, ')');
	r->brackets--;
	if (!ok || !eat(r, ':') || !at_line_end(r))
		return false;
	int indent = next_line(r);
	if (indent <= 0)
		return false; /* no body, or a body we do not read */
	for (;;) {
		if (!read_body_statement(r, p))
			return false;
		size_t line = r->pos;
		int next = next_line(r);
		if (next < 0 || (next > 0 && next != indent))
			return false; /* Python: an indentation error, or a nested block */
		if (next == 0) {
			r->pos = line; /* the top level goes on (or the text ends) */
			return true;
		}
	}
}

/* One top-level statement: NAME = LITERAL, a string, the def, or the final
 * call NAME(NAME) (which must end the program). Returns 1 for the final
 * call, 0 for another statement, -1 when not of the shape. */
static int read_top_statement(struct reader *r, struct program *p)
{
	char name[128];
	int ch = peek(r, 0);

	if (ch == '\'' || ch == '"') {
		json_t *v = read_value(r);
		bool ok = json_is_string(v);
		json_decref(v);
		return ok && at_line_end(r) ? 0 : -1;
	}
	if (strncmp(r->s + r->pos, "def", 3) == 0 && !is_name_char(peek(r, 3)))
		return read_def(r, p) ? 0 : -1;
	if (!read_name(r, name, sizeof(name)) || is_keyword(name))
		return -1;
	skip_blanks(r);
	if (peek(r, 0) == '=' && peek(r, 1) != '=') {
		r->pos++;
		json_t *v = read_value(r);
		bool ok = v && at_line_end(r) &&
		          stored(r, json_object_set_new(p->assigned, name, json_null()) == 0);
		json_decref(v);
		return ok ? 0 : -1;
	}
	if (!p->def_name[0] || strcmp(name, p->def_name) != 0 || !eat(r, '('))
		return -1;
	r->brackets++;
	skip_blanks(r);
	bool ok = read_name(r, p->fn, sizeof(p->fn)) && !is_keyword(p->fn) && eat(r, ')');
	r->brackets--;
	return ok && at_statement_end(r) ? 1 : -1;
}

static bool read_program(struct reader *r, struct program *p)
{
	for (;;) {
		int indent = next_line(r);
		if (indent != 0 || peek(r, 0) < 0)
			return false; /* indented, or the end before the final call */
		int rc = read_top_statement(r, p);
		if (rc < 0)
			return false;
		if (rc == 1)
			break;
	}
	/* The call must reach the candidate's function: not the def itself,
	 * nor a name the program rebinds, and at least one call must be left. */
	return strcmp(p->fn, p->def_name) != 0 && !json_object_get(p->assigned, p->fn) &&
	       !json_object_get(p->assigned, p->def_name) && json_array_size(p->calls) > 0;
}

int ee_pyprogram_convert(const char *code, struct ee_pyprogram *ret)
{
	struct reader r = { .s = code, .n = code ? strlen(code) : 0 };
	struct program p = { .assigned = json_object(), .calls = json_array() };
	int rc = 0;

	memset(ret, 0, sizeof(*ret));
	if (!p.assigned || !p.calls) {
		rc = -1;
		goto out;
	}
	if (!code || r.n > EE_PYLIT_MAX_CODE || memchr(code, '\r', r.n) || !read_program(&r, &p)) {
		rc = r.oom ? -1 : 0;
		goto out;
	}
	ret->fn = strdup(p.fn);
	if (!ret->fn) {
		rc = -1;
		goto out;
	}
	ret->calls = p.calls;
	p.calls = NULL;
	rc = 1;
out:
	json_decref(p.assigned);
	json_decref(p.calls);
	return rc;
}

void ee_pyprogram_free(struct ee_pyprogram *p)
{
	if (!p)
		return;
	free(p->fn);
	json_decref(p->calls);
	memset(p, 0, sizeof(*p));
}
