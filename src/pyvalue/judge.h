/* judge.h - the supervisor's verdict on io and call tests.
 *
 * The expected values of io and call tests never enter the sandbox: the
 * harness reports what the program printed or what the function returned (in
 * the canonical form of docs/protocol.md) and these functions compare.
 *
 * io: both texts are split into lines (\n, with \r\n treated as \n); trailing
 * whitespace of each line and trailing empty lines are ignored. With
 * float_tol >= 0, whitespace-separated tokens that both parse as finite
 * decimal numbers compare equal when |a - b| <= float_tol * max(1, |b|);
 * other tokens compare exactly (so runs of blanks between tokens are equal).
 * float_tol < 0 (or NaN) means exact comparison of the normalised lines.
 *
 * call: Python's == restricted to JSON's types: null = None; true/false only
 * equal bools (bool is distinct from int here, unlike Python); numbers compare
 * by value across int and float (3 == 3.0), integers of any size exactly;
 * nan equals nothing; a string equals a str; an array equals a list or a tuple
 * element-wise; an object equals a dict with the same str keys and equal
 * values; a number equals a complex whose imaginary part is 0 and whose
 * real part it equals. {"type": ...} and {"other": ...} equal nothing. With float_tol >= 0, a float on
 * either side compares within tolerance (as for io). Values nested deeper
 * than 100 levels are a mismatch (the harness sends those as "other").
 *
 * why: a caller-owned buffer, always printable UTF-8 (untrusted text is cut
 * and control bytes shown as '?'); set to "" on a match.
 */
#ifndef EE_JUDGE_H
#define EE_JUDGE_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

/* Returns true when actual matches expected. On a mismatch, why (when
 * non-NULL) receives a short reason, e.g. "line 2: expected '3', got '4'".
 * The rule of the description above: ee_judge_io_by's "lines". */
bool ee_judge_io(const char *expected, size_t expected_len, const char *actual, size_t actual_len,
                 double float_tol, char *why, size_t why_len);

/* ---- io comparison rules (docs/compare.md) -------------------------------
 *
 * The rule an io test is judged by, chosen when its task is loaded. Only
 * ASCII blanks (space, \t, \r, \v, \f) and \n are whitespace: a no-break
 * space or any other Unicode space is part of a token. Text compares
 * byte for byte, with ci ASCII letters regardless of case.
 *   exact    the bytes
 *   rstrip   the bytes once trailing \n are dropped from both (verl)
 *   lines    the description above (the default: a zeroed struct)
 *   tokens   the whitespace-separated tokens of the whole text, so line
 *            breaks count as spaces
 *   numeric  tokens, where a float expected (a '.' or an exponent)
 *            equals a number when
 *            |actual - expected| <= max(abs_tol, rel_tol * |expected|);
 *            an integer expected (no '.', no exponent) equals only that
 *            integer, exactly, at any size; inf, nan and numbers past a
 *            double's range are text
 * float_tol (a test's, >= 0) makes numbers within it equal under lines and
 * tokens, as described above; exact, rstrip and numeric do not use it. */
enum ee_compare_rule { EE_CMP_LINES, EE_CMP_EXACT, EE_CMP_RSTRIP, EE_CMP_TOKENS, EE_CMP_NUMERIC };

struct ee_compare {
	int rule;       /* enum ee_compare_rule */
	int ci;         /* ASCII letters case-insensitively */
	double abs_tol; /* numeric: >= 0 */
	double rel_tol; /* numeric: >= 0 */
};

/* numeric's tolerances when its text names neither. */
#define EE_COMPARE_TOL 1e-6
/* The longest text of a rule, its terminator included. */
#define EE_COMPARE_TEXT_MAX 96

/* Reads "RULE[:MOD,...]": RULE one of the names above, MOD "ci", and for
 * numeric "abs=X" or "rel=X" (X a number >= 0; naming one sets the other
 * to 0, naming neither gives both EE_COMPARE_TOL), each at most once. -1
 * with why set (what was expected, what was found) when text is not one. */
int ee_compare_parse(const char *text, struct ee_compare *ret, char *why, size_t why_len);
/* The rule's canonical text ("tokens:ci", "numeric:abs=1e-06,rel=0"),
 * which ee_compare_parse reads back. */
void ee_compare_text(const struct ee_compare *c, char *buf, size_t size);
/* Whether c is the default rule (lines, case kept). */
bool ee_compare_is_default(const struct ee_compare *c);

/* ee_judge_io under rule c (NULL: lines). */
bool ee_judge_io_by(const struct ee_compare *c, const char *expected, size_t expected_len, const char *actual,
                    size_t actual_len, double float_tol, char *why, size_t why_len);

/* expected: plain JSON from the task. actual: the harness's canonical value.
 * Both borrowed. A malformed canonical value is a mismatch, never a crash. */
bool ee_judge_call(const json_t *expected, const json_t *actual, double float_tol, char *why, size_t why_len);

/* ---- strict asserts (--strict-asserts; pyliteral.h) ----------------------
 *
 * Python's == between two canonical values (docs/protocol.md): expected is
 * the canonical form of an assert's literal, actual the harness's report.
 * None; bool, int and float compare by value across types (True == 1 ==
 * 1.0, nan equals nothing); str exactly; list with list and tuple with
 * tuple element-wise (a list never equals a tuple); dict with dict
 * regardless of order, keys matched by Python's equality (1, 1.0 and True
 * are one key); set and frozenset with either, as sets; complex with
 * complex part by part and with a number when its imaginary part is 0
 * (1+0j == 1, and they are one key); a builtin type only with itself (by
 * name). "other" (subclasses,
 * Decimal, numpy scalars, ...) equals nothing: the one intended difference
 * from running the assert. No tolerance. On a mismatch why reads like an
 * assert's: "expected (4, 5), got [4, 5]". Both borrowed; a malformed value
 * is a mismatch. */
bool ee_judge_pyeq(const json_t *expected, const json_t *actual, char *why, size_t why_len);

/* ---- EvalPlus's comparison (EvalPlus's rows, generated tests) -----------
 *
 * What EvalPlus's unsafe_execute decides for one input (evalplus/eval/
 * __init__.py): a match when ee_judge_pyeq finds the two equal (so 24.0
 * passes for 24, True for 1). Else the tolerance applies only when atol
 * > 0, or when the expected value is a float or a non-empty list or tuple
 * of floats (atol then 1e-6); without it, a mismatch. With it, a match
 * only when actual has expected's type at the top (a bool is not an int,
 * a float not an int, a tuple not a list), the same shape, and numbers
 * throughout (bool, int within 64 bits, float, complex), each within
 * numpy's allclose: |a - e| <= atol + 1e-7 * |e|, or equal when not finite.
 * Inside a list a number's type is not checked (as numpy does not). atol
 * is the task's: EvalPlus's atol, generated_float_tol; 0 (or less, or
 * NaN) is EvalPlus's 0. On a mismatch why reads like ee_judge_pyeq's,
 * with the types when they differ: "expected 24, got 24.000009 (float,
 * not int)". Both borrowed; a malformed value is a mismatch. */
bool ee_judge_evalplus(const json_t *expected, const json_t *actual, double atol, char *why, size_t why_len);

struct ee_buf;
/* Appends to out a key that two hashable canonical values share exactly
 * when Python finds them equal (None, bool, int, float, complex, str,
 * builtin types, tuples of these). Returns 0, or -1 for anything else
 * (unhashable, nan (also in a complex), "other",
 * malformed, deeper than 100) or when out is full. */
int ee_judge_pykey(const json_t *v, struct ee_buf *out);

#endif
