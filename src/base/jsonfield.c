/* jsonfield.c - checked getters over jansson values (see jsonfield.h).
 *
 * Theory of operation: a getter looks its key up, checks the value's type
 * and range and either stores it or calls ee_jf_fail with the field's name;
 * ee_jf_fail alone builds messages, joining the context's path and the
 * field ("tests[2]" + "kind") so no getter formats a path itself. Values
 * quoted in messages go through ee_jf_cut, which stops before a UTF-8
 * character that would not fit.
 */
#include "base/jsonfield.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/text.h"

/* ---- Context and messages ------------------------------------------------ */

struct ee_jf ee_jf_make(const char *where, struct ee_err *err)
{
	struct ee_jf c = { .where = where, .err = err };
	return c;
}

void ee_jf_join_path(char *dst, size_t size, const char *a, const char *b)
{
	char whole[512];
	int n = snprintf(whole, sizeof(whole), "%s%s%s", a, a[0] && b[0] ? "." : "", b);

	ee_jf_cut(dst, size, whole, n < 0 ? 0 : strlen(whole));
}

struct ee_jf ee_jf_sub(const struct ee_jf *c, const char *name)
{
	struct ee_jf sub = *c;

	ee_jf_join_path(sub.path, sizeof(sub.path), c->path, name);
	return sub;
}

int ee_jf_vfail(const struct ee_jf *c, const char *field, const char *fmt, va_list ap)
{
	char path[160], detail[400], msg[sizeof(c->err->msg)], whole[600];
	const char *shown;

	ee_jf_join_path(path, sizeof(path), c->path, field);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	shown = path[0] ? path : c->root;
	if (c->where && shown)
		snprintf(whole, sizeof(whole), "%s: %s: %s", c->where, shown, detail);
	else if (c->where || shown)
		snprintf(whole, sizeof(whole), "%s: %s", c->where ? c->where : shown, detail);
	else
		snprintf(whole, sizeof(whole), "%s", detail);
	/* ee_fail would cut at a byte; cut at a character first. */
	ee_jf_cut(msg, sizeof(msg), whole, strlen(whole));
	ee_fail(c->err, EE_ERR_USAGE, "%s", msg);
	if (c->err)
		ee_jf_cut(c->err->field, sizeof(c->err->field), path, strlen(path));
	return -1;
}

int ee_jf_fail(const struct ee_jf *c, const char *field, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ee_jf_vfail(c, field, fmt, ap);
	va_end(ap);
	return -1;
}

int ee_jf_oom(const struct ee_jf *c)
{
	if (!c->where)
		return ee_fail(c->err, EE_ERR_USAGE, "out of memory");
	return ee_fail(c->err, EE_ERR_USAGE, "%s: out of memory", c->where);
}

int ee_jf_bad(const struct ee_jf *c, const char *field, const char *expected, const json_t *got)
{
	char shown[EE_JF_SHOW_BYTES + 4];

	if (!got)
		return ee_jf_fail(c, field, "missing");
	return ee_jf_fail(c, field, "expected %s, got %s", expected, ee_jf_show(got, shown, sizeof(shown)));
}

/* ---- Pieces of messages ---------------------------------------------------- */

const char *ee_jf_type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "object";
	case JSON_ARRAY: return "array";
	case JSON_STRING: return "string";
	case JSON_INTEGER:
	case JSON_REAL: return "number";
	case JSON_TRUE:
	case JSON_FALSE: return "boolean";
	default: return "null";
	}
}

void ee_jf_cut(char *out, size_t size, const char *src, size_t n)
{
	size_t max = size - 1, len = 0;

	while (len < n) {
		size_t c = ee_utf8_char_len(src + len, n - len);
		if (c == 0)
			c = 1; /* not UTF-8 (jansson never hands us that): byte by byte */
		if (len + c > max)
			break;
		len += c;
	}
	memcpy(out, src, len);
	out[len] = '\0';
}

const char *ee_jf_show(const json_t *v, char *out, size_t size)
{
	char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);

	if (!text) {
		snprintf(out, size, "?");
		return out;
	}
	size_t n = strlen(text);
	ee_jf_cut(out, size - 3 < EE_JF_SHOW_BYTES + 1 ? size - 3 : EE_JF_SHOW_BYTES + 1, text, n);
	if (strlen(out) < n)
		strcat(out, "...");
	free(text);
	return out;
}

const char *ee_jf_quote(const char *s, char *buf, size_t size)
{
	size_t len = 0, i;

	buf[len++] = '"';
	for (i = 0; s[i] && (i < 40 || ((unsigned char)s[i] & 0xC0) == 0x80) && len + 8 < size; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '"' || ch == '\\')
			len += (size_t)snprintf(buf + len, size - len, "\\%c", ch);
		else if (ch < 0x20 || ch == 0x7f)
			len += (size_t)snprintf(buf + len, size - len, "\\x%02x", ch);
		else
			buf[len++] = (char)ch;
	}
	snprintf(buf + len, size - len, "%s\"", s[i] ? "..." : "");
	return buf;
}

const char *ee_jf_join_names(const char *const *names, size_t n, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "", names[i]);
	return buf;
}

const char *ee_jf_elem(const char *key, size_t i, char *buf, size_t size)
{
	snprintf(buf, size, "%s[%zu]", key, i);
	return buf;
}

/* ---- Unknown keys ----------------------------------------------------------
 * Tasks are trusted data: a misspelt key ("visiblity") would otherwise drop
 * what it meant to say without a word, so readers check every key, and the
 * message names the nearest known one. */

#define NAME_MAX_LEN 64

/* Levenshtein distance of a and b, case-insensitive; names longer than
 * NAME_MAX_LEN count as far from everything. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[NAME_MAX_LEN + 1];

	if (la > NAME_MAX_LEN || lb > NAME_MAX_LEN)
		return (size_t)-1;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			int same = (a[i - 1] | 0x20) == (b[j - 1] | 0x20);
			size_t best = diag + !same;
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

const char *ee_nearest_name(const char *key, const char *const *names, size_t n)
{
	size_t best = (size_t)-1, limit = strlen(key) / 3 > 2 ? strlen(key) / 3 : 2;
	const char *found = NULL;

	for (size_t i = 0; i < n; i++) {
		size_t d = edit_distance(key, names[i]);
		if (d < best) {
			best = d;
			found = names[i];
		}
	}
	return best <= limit ? found : NULL;
}

/* A key fit to print as a path element as it is. */
static int plain_name(const char *s)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-");
	return s[n] == '\0' && n > 0 && n <= 40;
}

const char *ee_jf_key_name(const char *key, char *buf, size_t size)
{
	return plain_name(key) ? key : ee_jf_quote(key, buf, size);
}

int ee_jf_known_keys(const struct ee_jf *c, const json_t *obj, const char *const *names, size_t n,
                     const char *what)
{
	const char *key;
	json_t *v;
	char list[200], shown[96];

	json_object_foreach ((json_t *)obj, key, v) {
		size_t i = 0;
		while (i < n && strcmp(key, names[i]) != 0)
			i++;
		if (i < n)
			continue;
		const char *near = ee_nearest_name(key, names, n);
		const char *name = ee_jf_key_name(key, shown, sizeof(shown));
		if (near)
			return ee_jf_fail(c, name, "unknown key in %s; did you mean '%s'?", what, near);
		return ee_jf_fail(c, name, "unknown key in %s; expected one of %s", what,
		                  ee_jf_join_names(names, n, list, sizeof(list)));
	}
	return 0;
}

/* ---- Getters --------------------------------------------------------------- */

int ee_jf_strdup(const struct ee_jf *c, const char *s, char **ret)
{
	*ret = strdup(s);
	return *ret ? 0 : ee_jf_oom(c);
}

int ee_jf_str_check(const struct ee_jf *c, const char *field, const json_t *v, const char **ret)
{
	if (!json_is_string(v))
		return ee_jf_fail(c, field, "expected a string, got %s", ee_jf_type_name(v));
	if (strlen(json_string_value(v)) != json_string_length(v))
		return ee_jf_fail(c, field, "expected a string without NUL bytes, got one with \\u0000");
	*ret = json_string_value(v);
	return 0;
}

int ee_jf_str(const struct ee_jf *c, const json_t *obj, const char *key, int required, const char *dflt,
              char **ret)
{
	const json_t *v = json_object_get(obj, key);
	const char *s;

	if (!v && required)
		return ee_jf_fail(c, key, "missing (expected a string)");
	if (!v)
		return dflt ? ee_jf_strdup(c, dflt, ret) : 0;
	if (ee_jf_str_check(c, key, v, &s) < 0)
		return -1;
	return ee_jf_strdup(c, s, ret);
}

int ee_jf_name(const struct ee_jf *c, const json_t *obj, const char *key, char **ret)
{
	if (ee_jf_str(c, obj, key, 1, NULL, ret) < 0)
		return -1;
	if (!**ret)
		return ee_jf_fail(c, key, "expected a name, got an empty string");
	return 0;
}

int ee_jf_id(const struct ee_jf *c, const json_t *obj, const char *key, char **ret)
{
	const json_t *v = json_object_get(obj, key);

	if (!v)
		return ee_jf_fail(c, key, "missing (expected a string or an integer)");
	if (json_is_string(v))
		return ee_jf_str(c, obj, key, 1, NULL, ret);
	if (!json_is_integer(v))
		return ee_jf_fail(c, key, "expected a string or an integer, got %s", ee_jf_type_name(v));
	if (asprintf(ret, "%" JSON_INTEGER_FORMAT, json_integer_value(v)) < 0) {
		*ret = NULL;
		return ee_jf_oom(c);
	}
	return 0;
}

int ee_jf_num(const struct ee_jf *c, const json_t *obj, const char *key, const struct ee_jf_num_rule *rule,
              double *ret, int *has)
{
	const json_t *v = json_object_get(obj, key);

	if (!v)
		return 0;
	if (!json_is_number(v))
		return ee_jf_fail(c, key, "expected %s, got %s", rule->what, ee_jf_type_name(v));
	double d = json_number_value(v);
	int ok = rule->min_ok ? d >= rule->min : d > rule->min;
	if (!ok || (rule->whole && floor(d) != d))
		return ee_jf_fail(c, key, "expected %s, got %g", rule->what, d);
	*ret = d;
	if (has)
		*has = 1;
	return 0;
}

int ee_jf_int(const struct ee_jf *c, const json_t *obj, const char *key, json_int_t min, json_int_t max,
              const char *what, json_int_t *ret)
{
	const json_t *v = json_object_get(obj, key);

	if (!v)
		return 0;
	if (!json_is_integer(v))
		return ee_jf_fail(c, key, "expected %s, got %s", what, ee_jf_type_name(v));
	json_int_t i = json_integer_value(v);
	if (i < min || i > max)
		return ee_jf_fail(c, key, "expected %s, got %" JSON_INTEGER_FORMAT, what, i);
	*ret = i;
	return 0;
}

int ee_jf_bool(const struct ee_jf *c, const json_t *obj, const char *key, int *ret)
{
	const json_t *v = json_object_get(obj, key);

	if (!v)
		return 0;
	if (!json_is_boolean(v))
		return ee_jf_fail(c, key, "expected a boolean, got %s", ee_jf_type_name(v));
	*ret = json_is_true(v);
	return 0;
}

int ee_jf_enum(const struct ee_jf *c, const json_t *obj, const char *key, const char *const *names, size_t n,
               int dflt, int *ret)
{
	const json_t *v = json_object_get(obj, key);
	char list[96], got[96];

	ee_jf_join_names(names, n, list, sizeof(list));
	if (!v && dflt < 0)
		return ee_jf_fail(c, key, "missing (expected one of %s)", list);
	if (!v) {
		*ret = dflt;
		return 0;
	}
	if (!json_is_string(v))
		return ee_jf_fail(c, key, "expected one of %s, got %s", list, ee_jf_type_name(v));
	for (size_t i = 0; i < n; i++) {
		if (strcmp(json_string_value(v), names[i]) == 0) {
			*ret = (int)i;
			return 0;
		}
	}
	return ee_jf_fail(c, key, "expected one of %s, got %s", list,
	                  ee_jf_quote(json_string_value(v), got, sizeof(got)));
}

int ee_jf_object(const struct ee_jf *c, const json_t *obj, const char *key, int required, json_t **ret)
{
	json_t *v = json_object_get(obj, key);

	*ret = v;
	if (!v && required)
		return ee_jf_fail(c, key, "missing (expected an object)");
	if (v && !json_is_object(v))
		return ee_jf_fail(c, key, "expected an object, got %s", ee_jf_type_name(v));
	return 0;
}

int ee_jf_array(const struct ee_jf *c, const json_t *obj, const char *key, int required, const char *what,
                json_t **ret)
{
	json_t *v = json_object_get(obj, key);

	*ret = v;
	if (!v && required)
		return ee_jf_fail(c, key, "missing (expected %s)", what);
	if (v && !json_is_array(v))
		return ee_jf_fail(c, key, "expected %s, got %s", what, ee_jf_type_name(v));
	if (v && required && json_array_size(v) == 0)
		return ee_jf_fail(c, key, "expected %s, got an empty array", what);
	return 0;
}

const char *ee_jf_error_text(const json_error_t *e, char buf[EE_JF_ERROR_TEXT])
{
	size_t o = 0;

	for (const unsigned char *p = (const unsigned char *)e->text; *p && o + 5 < EE_JF_ERROR_TEXT; p++) {
		if (*p == '\n')
			o += (size_t)snprintf(buf + o, EE_JF_ERROR_TEXT - o, "\\n");
		else if (*p < 0x20 || *p == 0x7f)
			o += (size_t)snprintf(buf + o, EE_JF_ERROR_TEXT - o, "\\x%02x", *p);
		else
			buf[o++] = (char)*p;
	}
	buf[o] = '\0';
	return buf;
}
