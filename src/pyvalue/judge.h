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
 * values. {"other": ...} equals nothing. With float_tol >= 0, a float on
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
 * non-NULL) receives a short reason, e.g. "line 2: expected '3', got '4'". */
bool ee_judge_io(const char *expected, size_t expected_len, const char *actual, size_t actual_len,
                 double float_tol, char *why, size_t why_len);

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
 * are one key); set and frozenset with either, as sets. "other" (subclasses,
 * Decimal, numpy scalars, ...) equals nothing: the one intended difference
 * from running the assert. No tolerance. On a mismatch why reads like an
 * assert's: "expected (4, 5), got [4, 5]". Both borrowed; a malformed value
 * is a mismatch. */
bool ee_judge_pyeq(const json_t *expected, const json_t *actual, char *why, size_t why_len);

struct ee_buf;
/* Appends to out a key that two hashable canonical values share exactly
 * when Python finds them equal (None, bool, int, float, str, tuples of
 * these). Returns 0, or -1 for anything else (unhashable, nan, "other",
 * malformed, deeper than 100) or when out is full. */
int ee_judge_pykey(const json_t *v, struct ee_buf *out);

#endif
