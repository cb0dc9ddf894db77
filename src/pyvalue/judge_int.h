/* judge_int.h - what the judge's modules share: the text of reasons, the
 * numbers and kinds of values both sides send, and the repr of strict
 * asserts. Not a public header: everyone else goes through judge.h.
 *
 *   judge_reason.c  printable, bounded reasons (quote, say)
 *   judge_value.c   decimal text, tolerance, numbers, canonical kinds
 *   judge_io.c      io text comparison              (ee_judge_io)
 *   judge_call.c    expected JSON vs canonical      (ee_judge_call)
 *   judge_pyeq.c    Python's == on canonical values (ee_judge_pyeq, _pykey)
 *   judge_evalplus.c EvalPlus's tolerance on top of it (ee_judge_evalplus)
 *   judge_repr.c    Python-style repr for pyeq's reasons
 */
#ifndef EE_JUDGE_INT_H
#define EE_JUDGE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#define MAX_DEPTH   100               /* beyond this a value is a mismatch */
#define QUOTE_BYTES 40                /* of a line or value shown in a reason */
#define TYPE_BYTES  16                /* of a type name */
#define QUOTED_LEN  (QUOTE_BYTES + 4) /* what judge_quote() writes: text, "...", NUL */
#define REPR_CAP    100               /* bytes of one value shown in a reason */

/* ---- reasons (judge_reason.c) ---- */

/* Control characters as Python writes them: a tab is \t, not a '?'. */
const char *judge_control_escape(unsigned char ch);
/* Writes at most max (<= QUOTE_BYTES) bytes of src[0..n) into dst as
 * printable UTF-8, cut between characters, with "..." when cut. */
void judge_quote(char dst[QUOTED_LEN], const char *src, size_t n, size_t max);
/* Drops a character that a cut left incomplete at the end of s. */
void judge_trim_partial_char(char *s);
/* Empties why (when the caller wants a reason); returns true, a match. */
bool judge_clear_reason(char *why, size_t why_len);
/* Writes the reason (when the caller wants one); returns false, the verdict
 * that always comes with a reason. */
__attribute__((format(printf, 3, 4))) bool judge_say(char *why, size_t why_len, const char *fmt, ...);

/* ---- numbers (judge_value.c) ---- */

/* A number from either side. An integer is kept as sign and digits. */
struct num {
	bool is_float;
	double f;        /* is_float */
	bool neg;        /* !is_float: true only for values below zero */
	const char *dig; /* !is_float: no leading zeros, NUL-terminated */
	size_t ndig;
	char store[400]; /* digits of an int64 or of an integral double */
};

/* Reads s[0..n) as a decimal number (strictly: no hex, inf or nan). */
bool judge_parse_decimal(const char *s, size_t n, double *ret);
/* |actual - expected| <= tol * max(1, |expected|), finite values only. */
bool judge_within(double actual, double expected, double tol);
/* Sets the integer from [+-]digits s[0..n), which must be NUL-terminated. */
bool judge_num_set_integer(struct num *x, const char *s, size_t n);
/* A jansson integer or real of the task. */
void judge_num_from_expected(struct num *x, const json_t *e);
/* {"int": "<decimal>"}: strictly [+-]digits. */
bool judge_num_from_int_text(struct num *x, const json_t *s);
/* {"float": "<repr>"}: a decimal, or Python's "nan", "inf", "-inf". */
bool judge_num_from_float_text(struct num *x, const json_t *s);
/* Python's == on numbers; with tol >= 0 within tolerance instead. */
bool judge_num_equal(const struct num *e, const struct num *a, double tol);
/* {"complex": [re, im]}: each part a float's text, as {"float"} holds it. */
bool judge_complex_of(const json_t *in, double *re, double *im);
/* Python's complex == number: the imaginary part 0 and the real part equal
 * to x as float == x is (exact against an int of any size). With tol >= 0
 * each part within tolerance instead (x's imaginary part is 0). */
bool judge_complex_equals_num(double re, double im, const struct num *x, double tol);
/* complex == complex: both parts ==, or each within tol >= 0. */
bool judge_complex_equal(double re1, double im1, double re2, double im2, double tol);

/* ---- canonical values (judge_value.c) ---- */

enum kind {
	K_NULL,
	K_BOOL,
	K_STR,
	K_INT,
	K_FLOAT,
	K_LIST,
	K_TUPLE,
	K_DICT,
	K_SET,
	K_FROZENSET,
	K_COMPLEX, /* {"complex": ["<re>", "<im>"]} */
	K_TYPE,    /* {"type": "<name>"}: a builtin type, equal only to itself */
	K_OTHER,
	K_BAD
};

/* The kind of canonical value a; *inner is the tagged payload. */
enum kind judge_kind_of(const json_t *a, const json_t **inner);

/* ---- repr (judge_repr.c) ---- */

/* The repr of v into dst, cut between characters with "..." when longer
 * than REPR_CAP bytes. */
void judge_show_repr(char *dst, size_t size, const json_t *v);

#endif
