/* pyliteral.h - Python literals read in C, and the literal-assert shape.
 *
 * --strict-asserts (docs/threat-model.md, "Strict asserts") moves an assert
 * test of exactly the shape
 *
 *     assert NAME(ARGS) == LITERAL        or    assert LITERAL == NAME(ARGS)
 *
 * out of the candidate's interpreter: the sandbox only calls NAME and
 * reports the canonical value of what it returned (docs/protocol.md), and
 * the supervisor compares it with LITERAL under Python's == (judge.h,
 * ee_judge_pyeq). The expected literal never enters the sandbox.
 *
 * The reader is deliberately narrow: whatever it is not sure Python would
 * read the same way is "not of the shape", and the test stays an ordinary
 * in-sandbox assert with its verdict unchanged. Accepted literals: None,
 * True, False; decimal ints (at most 4300 digits, Python's default limit
 * for int literals) and floats (1.5, .5, 1., 1e-3, 1e400 is inf), with an
 * optional sign; strings '...' "..." '''...''' """...""" with prefix r, u or
 * none and Python's escapes (\N{...}, unknown escapes, lone surrogates,
 * adjacent-string concatenation and a carriage return in the source are
 * refused); tuples ((), (x,), (x, y)), lists, dicts and sets (non-empty)
 * of those, with hashable keys and elements and no two keys or elements
 * equal in Python's sense; a parenthesised literal. Nesting is at most
 * EE_PYLIT_MAX_DEPTH, a literal at most EE_PYLIT_MAX_NODES values, a test's
 * code at most EE_PYLIT_MAX_CODE bytes.
 *
 * ARGS: positional literals then NAME=literal keywords (no repeats), an
 * optional trailing comma. An optional message (`, LITERAL`) is accepted and
 * ignored: it is only evaluated when the assert fails, and the supervisor's
 * message replaces it. Comments and blank lines may follow the statement;
 * nothing else may (a second statement keeps the test in the sandbox).
 *
 * Values come out in the canonical tagged form of docs/protocol.md
 * ({"int":"12"}, {"float":"0.5"}, {"tuple":[...]}, {"set":[...]}, ...),
 * newly allocated and owned by the caller.
 */
#ifndef EE_PYLITERAL_H
#define EE_PYLITERAL_H

#include <stddef.h>
#include <jansson.h>

#define EE_PYLIT_MAX_DEPTH  50     /* well under the harness's 100 */
#define EE_PYLIT_MAX_NODES  10000  /* well under the harness's 100,000 */
#define EE_PYLIT_MAX_CODE   100000 /* bytes of a test's code */
#define EE_PYLIT_MAX_DIGITS 4300   /* sys.get_int_max_str_digits() default */

/* An assert converted to a supervisor-judged call. Owns everything. */
struct ee_pycall {
	char *fn;         /* NAME */
	json_t *args;     /* array of canonical values */
	json_t *kwargs;   /* array of [name, canonical value] */
	json_t *expected; /* canonical value of LITERAL */
};

/* Reads s[0..n) as exactly one literal (surrounding blanks allowed).
 * Returns the canonical value, or NULL when s is not an accepted literal
 * (or memory ran out). */
json_t *ee_pyliteral_parse(const char *s, size_t n);

/* Returns 1 and fills *ret when code has the literal-assert shape, 0 when it
 * has not (*ret zeroed), -1 when memory ran out. */
int ee_pyassert_convert(const char *code, struct ee_pycall *ret);

/* Accepts a zeroed or half-built call. */
void ee_pycall_free(struct ee_pycall *c);

#endif
