/* jsonfield.h - reading fields of a parsed JSON document, with errors that
 * name where they are.
 *
 * Every reader of trusted-but-hand-written JSON (tasks, samples, API request
 * bodies, summaries, results records) checks its fields through these
 * getters, so every fault is reported the same way:
 *
 *     "<where>: <json path>: <message>"      e.g. "t.jsonl:3: tests[2].kind: ..."
 *
 * A struct ee_jf carries `where` ("file:line", or NULL for none), the path of
 * the object being read ("" at the top, "tests[2]", "limits") and the error
 * to fill; ee_jf_sub makes the context of a nested object. Each getter either
 * stores its result or fails through ee_jf_fail, which also sets err->field
 * to the full path. Values shown in messages are cut at EE_JF_SHOW_BYTES and
 * never inside a UTF-8 character. Nothing here allocates except the
 * getters that return a copy (ee_jf_str, ee_jf_id), whose result the caller
 * owns and frees. Borrowed (const char **) results live as long as the JSON.
 */
#ifndef EE_JSONFIELD_H
#define EE_JSONFIELD_H

#include <stdarg.h>
#include <stddef.h>
#include <jansson.h>

struct ee_err;

#define EE_JF_SHOW_BYTES 40 /* an offending value is shown up to this many bytes */

struct ee_jf {
	const char *where; /* "file:line", or NULL: the message starts at the path */
	const char *root;  /* what an empty path is called ("body"), or NULL */
	char path[96];     /* of the object read: "", "tests[2]", "runs[0].task" */
	struct ee_err *err;
};

/* A context at the top of a document (path ""). */
struct ee_jf ee_jf_make(const char *where, struct ee_err *err);

/* The context of the member `name` of c's object: path c.path + "." + name. */
struct ee_jf ee_jf_sub(const struct ee_jf *c, const char *name);

/* Fails with "<where>: <path>.<field>: <message>" (field may be ""); sets
 * err->field to the path. Always returns -1. */
int ee_jf_fail(const struct ee_jf *c, const char *field, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
int ee_jf_vfail(const struct ee_jf *c, const char *field, const char *fmt, va_list ap)
        __attribute__((format(printf, 3, 0)));

/* "<where>: out of memory". Returns -1. */
int ee_jf_oom(const struct ee_jf *c);

/* "<path>: missing" when got is NULL, else "<path>: expected <expected>, got
 * <got as compact JSON, cut>". Returns -1. */
int ee_jf_bad(const struct ee_jf *c, const char *field, const char *expected, const json_t *got);

/* ---- Pieces of messages ---------------------------------------------------- */

/* "object", "array", "string", "number", "boolean" or "null". */
const char *ee_jf_type_name(const json_t *v);

/* Copies what fits of src[0..n) into out[0..size) (size >= 1) with a NUL,
 * never cutting a UTF-8 character. */
void ee_jf_cut(char *out, size_t size, const char *src, size_t n);

/* v as compact JSON, cut to EE_JF_SHOW_BYTES with "..."; size >= SHOW+4. */
const char *ee_jf_show(const json_t *v, char *out, size_t size);

/* s as a short one-line quoted literal: control characters escaped, cut
 * after about 40 bytes (never inside a UTF-8 character) with "...". */
const char *ee_jf_quote(const char *s, char *buf, size_t size);
/* A key as a path element: itself when plain (letters, digits, _ and -, at
 * most 40), else quoted into buf (ee_jf_quote). */
const char *ee_jf_key_name(const char *key, char *buf, size_t size);

/* "a, b, c" into buf (cut to fit). */
const char *ee_jf_join_names(const char *const *names, size_t n, char *buf, size_t size);

/* a.b into dst (a or b may be empty); too long is cut, never overrun and
 * never inside a UTF-8 character. */
void ee_jf_join_path(char *dst, size_t size, const char *a, const char *b);

/* "key[i]" into buf: the path of an array element. */
const char *ee_jf_elem(const char *key, size_t i, char *buf, size_t size);

/* The name of names[0..n) nearest to key (case-insensitive edit distance),
 * or NULL when none is close enough to be what was meant (at most a third
 * of its letters changed, >= 2): for "did you mean" messages. */
const char *ee_nearest_name(const char *key, const char *const *names, size_t n);

/* Every key of obj is one of names, else fails naming the key and the
 * nearest known one; what: "a task", "an io test"... */
int ee_jf_known_keys(const struct ee_jf *c, const json_t *obj, const char *const *names, size_t n,
                     const char *what);

/* ---- Getters --------------------------------------------------------------- */

/* *ret = a copy of s, or fails with ee_jf_oom. */
int ee_jf_strdup(const struct ee_jf *c, const char *s, char **ret);

/* Borrows the text of string v (field names it); a NUL inside is refused. */
int ee_jf_str_check(const struct ee_jf *c, const char *field, const json_t *v, const char **ret);

/* A copy of the string obj[key]. Absent: fails when required, else *ret is
 * a copy of dflt, or left alone when dflt is NULL. */
int ee_jf_str(const struct ee_jf *c, const json_t *obj, const char *key, int required, const char *dflt,
              char **ret);

/* A required, non-empty string: a name that code will call. */
int ee_jf_name(const struct ee_jf *c, const json_t *obj, const char *key, char **ret);

/* An id: a string, or an integer turned into its decimal text. Required. */
int ee_jf_id(const struct ee_jf *c, const json_t *obj, const char *key, char **ret);

/* What a number must be; `what` names it in messages ("a number > 0"). */
struct ee_jf_num_rule {
	double min;
	int min_ok; /* min itself is allowed */
	int whole;  /* no fractional part */
	const char *what;
};

/* Optional number under rule. Absent: *ret (the caller's default) and *has
 * (may be NULL) are left alone; present: stored and *has = 1. */
int ee_jf_num(const struct ee_jf *c, const json_t *obj, const char *key, const struct ee_jf_num_rule *rule,
              double *ret, int *has);

/* Optional integer in [min, max], "expected <what>, got ..." otherwise.
 * Absent: *ret is left alone and 0 returned. */
int ee_jf_int(const struct ee_jf *c, const json_t *obj, const char *key, json_int_t min, json_int_t max,
              const char *what, json_int_t *ret);

/* Optional boolean. Absent: *ret is left alone. */
int ee_jf_bool(const struct ee_jf *c, const json_t *obj, const char *key, int *ret);

/* One of names[0..n), its index in *ret; dflt < 0 means required. */
int ee_jf_enum(const struct ee_jf *c, const json_t *obj, const char *key, const char *const *names, size_t n,
               int dflt, int *ret);

/* Borrows an object or array member; NULL in *ret when absent and not
 * required. A required array must not be empty. what: "a non-empty array". */
int ee_jf_object(const struct ee_jf *c, const json_t *obj, const char *key, int required, json_t **ret);
int ee_jf_array(const struct ee_jf *c, const json_t *obj, const char *key, int required, const char *what,
                json_t **ret);

/* jansson's error text, on one line: it quotes the input near the fault,
 * which may hold a newline or other control bytes (shown as \n, \xHH).
 * Fills buf and returns it; a message stays one line wherever it goes. */
#define EE_JF_ERROR_TEXT (JSON_ERROR_TEXT_LENGTH * 4)
const char *ee_jf_error_text(const json_error_t *e, char buf[EE_JF_ERROR_TEXT]);

#endif
