/* formats_lcb.c - LiveCodeBench's rows (task.h, docs/formats.md):
 * public_test_cases and private_test_cases, each a JSON string of a list of
 * {"input", "output", "testtype": "stdin"|"functional"}; metadata.func_name
 * names the function of the functional ones, a method of Solution when
 * starter_code defines that class.
 *
 * private_test_cases is either such a JSON string or, as the data set
 * ships it, base64 of zlib of a pickled str holding it. That is decoded
 * here step by step, each bounded: strict base64, inflate up to
 * PRIVATE_CAP bytes, then pickle_str.h, which reads a single str and
 * nothing else (never Python's unpickler).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/cleanup.h"
#include "base/err.h"
#include "base/jsonfield.h"
#include "input/pickle_str.h"
#include "input/task.h"
#include "input/task_int.h"

/* The inflated private tests of one problem stay below this. */
#define PRIVATE_CAP ((size_t)512 << 20)
#define NAME_LEN    64

static const char *const testtype_names[] = { "stdin", "functional" };

/* Strict base64 (RFC 4648 alphabet, '=' padding only at the end, no
 * whitespace) of s[0..n) into a malloc'd *ret: 0, -1 not base64, -2 out
 * of memory. */
static int base64_decode(const char *s, size_t n, unsigned char **ret, size_t *ret_len)
{
	unsigned char *out;
	size_t len = 0;
	unsigned acc = 0, bits = 0, pad = 0;

	*ret = NULL;
	if (n % 4 != 0)
		return -1;
	if (!(out = malloc(n / 4 * 3 + 1)))
		return -2;
	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)s[i], v;
		if (c >= 'A' && c <= 'Z')
			v = c - 'A';
		else if (c >= 'a' && c <= 'z')
			v = c - 'a' + 26;
		else if (c >= '0' && c <= '9')
			v = c - '0' + 52;
		else if (c == '+' || c == '/')
			v = c == '+' ? 62 : 63;
		else if (c == '=' && i + 2 >= n && (i + 1 == n || s[i + 1] == '=')) {
			pad++;
			continue;
		} else {
			free(out);
			return -1;
		}
		if (pad) { /* a digit after padding */
			free(out);
			return -1;
		}
		acc = acc << 6 | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[len++] = (unsigned char)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	*ret = out;
	*ret_len = len;
	return 0;
}

/* zlib data in[0..n) inflated into a malloc'd *ret, up to PRIVATE_CAP. */
static int inflate_capped(const struct ee_jf *c, const char *field, const unsigned char *in, size_t n,
                          unsigned char **ret, size_t *ret_len)
{
	z_stream z;
	size_t alloc = n < PRIVATE_CAP / 8 ? n * 4 + 4096 : PRIVATE_CAP, len = 0;
	unsigned char *out = malloc(alloc);
	int zrc = Z_OK;

	*ret = NULL;
	memset(&z, 0, sizeof(z));
	if (!out || inflateInit(&z) != Z_OK) {
		free(out);
		return ee_jf_oom(c);
	}
	z.next_in = (unsigned char *)in;
	while (zrc != Z_STREAM_END) {
		if (len == alloc) {
			size_t grown = alloc * 2 > PRIVATE_CAP ? PRIVATE_CAP : alloc * 2;
			unsigned char *p = grown > alloc ? realloc(out, grown) : NULL;
			if (!p) {
				inflateEnd(&z);
				free(out);
				return grown > alloc ? ee_jf_oom(c)
				                     : ee_jf_fail(c, field, "inflates to more than %zu bytes",
				                                  PRIVATE_CAP);
			}
			out = p;
			alloc = grown;
		}
		/* avail_in is the whole input at first; uInt bounds each step. */
		if (z.avail_in == 0 && (size_t)(z.next_in - in) < n)
			z.avail_in = (uInt)(n - (size_t)(z.next_in - in) > UINT32_MAX
			                            ? UINT32_MAX
			                            : n - (size_t)(z.next_in - in));
		size_t room = alloc - len;
		z.next_out = out + len;
		z.avail_out = (uInt)(room > UINT32_MAX ? UINT32_MAX : room);
		zrc = inflate(&z, Z_NO_FLUSH);
		len = (size_t)(z.next_out - out);
		if (zrc == Z_BUF_ERROR && z.avail_in == 0 && (size_t)(z.next_in - in) == n)
			zrc = Z_DATA_ERROR; /* the input ended inside the stream */
		if (zrc != Z_OK && zrc != Z_STREAM_END && zrc != Z_BUF_ERROR) {
			inflateEnd(&z);
			free(out);
			return ee_jf_fail(c, field, "not zlib data (%s)",
			                  zrc == Z_MEM_ERROR ? "out of memory" : "corrupt");
		}
	}
	int trailing = (size_t)(z.next_in - in) != n;
	inflateEnd(&z);
	if (trailing) {
		free(out);
		return ee_jf_fail(c, field, "bytes after the zlib stream");
	}
	*ret = out;
	*ret_len = len;
	return 0;
}

/* base64(zlib(pickle(str))) in s[0..n) -> the JSON that str holds. */
static int decode_private(const struct ee_jf *c, const char *s, size_t n, json_t **ret)
{
	static const char field[] = "private_test_cases";
	ee_autofree unsigned char *packed = NULL;
	ee_autofree unsigned char *pickle = NULL;
	size_t packed_len = 0, pickle_len = 0, text_len = 0;
	const unsigned char *text;
	char why[128];

	int rc = base64_decode(s, n, &packed, &packed_len);

	if (rc == -2)
		return ee_jf_oom(c);
	if (rc < 0)
		return ee_jf_fail(c, field, "neither JSON nor base64 (of zlib of a pickled string)");
	if (inflate_capped(c, field, packed, packed_len, &pickle, &pickle_len) < 0)
		return -1;
	if (ee_pickle_str(pickle, pickle_len, &text, &text_len, why, sizeof(why)) < 0)
		return ee_jf_fail(c, field, "not a pickled string: %s", why);
	return ee_rl_parse_json(c, field, (const char *)text, text_len, ret);
}

/* obj[key]: the list of test cases (may be absent), a new reference. */
static int test_cases(const struct ee_jf *c, const json_t *obj, const char *key, json_t **ret)
{
	const json_t *v = json_object_get(obj, key);
	const char *s;
	json_t *parsed = NULL;

	*ret = NULL;
	if (!v || (json_is_string(v) && json_string_length(v) == 0))
		return 0;
	if (!json_is_string(v))
		parsed = json_incref((json_t *)v);
	else if (ee_jf_str_check(c, key, v, &s) < 0)
		return -1;
	else {
		/* As LiveCodeBench reads it: JSON first, else the packed form. */
		parsed = json_loadb(s, json_string_length(v), JSON_DECODE_ANY, NULL);
		if (!parsed && strcmp(key, "private_test_cases") == 0 &&
		    decode_private(c, s, json_string_length(v), &parsed) < 0)
			return -1;
		if (!parsed)
			return ee_rl_parse_json(c, key, s, json_string_length(v), &parsed);
	}
	if (!json_is_array(parsed)) {
		ee_jf_bad(c, key, "a list of test cases", parsed);
		json_decref(parsed);
		return -1;
	}
	*ret = parsed;
	return 0;
}

/* func_name from metadata (an object or a JSON string of one), or NULL. */
static int func_name(const struct ee_jf *c, const json_t *obj, char **ret)
{
	json_t *meta;
	struct ee_jf sub = ee_jf_sub(c, "metadata");
	int rc = 0;

	*ret = NULL;
	if (ee_rl_json_field(c, obj, "metadata", 0, &meta) < 0)
		return -1;
	if (meta && !json_is_object(meta))
		rc = ee_jf_bad(c, "metadata", "an object", meta);
	else if (meta && json_object_get(meta, "func_name"))
		rc = ee_jf_name(&sub, meta, "func_name", ret);
	json_decref(meta);
	return rc;
}

static int lcb_case(const struct ee_jf *parent, const char *key, const json_t *tc, size_t i, int hidden,
                    const char *fn, const char *method_of, struct ee_test *test)
{
	char name[NAME_LEN];
	struct ee_jf c = ee_jf_sub(parent, ee_jf_elem(key, i, name, sizeof(name)));
	const char *in, *out;
	int type;
	json_t *args, *want;

	if (!json_is_object(tc))
		return ee_jf_bad(parent, name, "an object", tc);
	if (ee_jf_enum(&c, tc, "testtype", testtype_names, 2, -1, &type) < 0)
		return -1;
	if (ee_rl_case_texts(&c, tc, &in, &out) < 0)
		return -1;
	if (type == 0)
		return ee_rl_io_test(&c, test, hidden, in, out);
	if (!fn)
		return ee_jf_fail(parent, "metadata.func_name", "missing (%s is functional)", name);
	if (ee_rl_json_lines(&c, "input", json_object_get(tc, "input"), &args) < 0)
		return -1;
	if (ee_rl_parse_json(&c, "output", out, strlen(out), &want) < 0) {
		json_decref(args);
		return -1;
	}
	return ee_rl_call_test(&c, test, hidden, fn, method_of, args, want);
}

int ee_task_parse_lcb(const struct ee_jf *c, const json_t *obj, unsigned opts, struct ee_task *t)
{
	json_t *pub = NULL, *priv = NULL;
	ee_autofree char *fn = NULL;
	const char *method_of = ee_rl_method_class(obj);
	size_t n = 0;
	int rc = -1;

	if (test_cases(c, obj, "public_test_cases", &pub) < 0 ||
	    test_cases(c, obj, "private_test_cases", &priv) < 0 || func_name(c, obj, &fn) < 0)
		goto out;
	if (json_array_size(pub) + json_array_size(priv) == 0) {
		ee_jf_fail(c, "public_test_cases",
		           "no tests (public_test_cases and private_test_cases are empty)");
		goto out;
	}
	if (ee_task_alloc_tests(c, t, json_array_size(pub) + json_array_size(priv)) < 0 ||
	    (fn && ee_rl_entry_point(c, t, fn, method_of) < 0))
		goto out;
	for (size_t i = 0; i < json_array_size(pub); i++)
		if (lcb_case(c, "public_test_cases", json_array_get(pub, i), i, 0, fn, method_of,
		             &t->tests[n++]) < 0)
			goto out;
	for (size_t i = 0; i < json_array_size(priv); i++)
		if (lcb_case(c, "private_test_cases", json_array_get(priv, i), i, 1, fn, method_of,
		             &t->tests[n++]) < 0)
			goto out;
	rc = 0;
out:
	json_decref(pub);
	json_decref(priv);
	return rc;
}
