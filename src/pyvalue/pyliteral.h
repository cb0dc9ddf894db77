/* pyliteral.h - Python literals read in C (pyliteral.c), the literal-assert
 * shape (pyassert.c) and the check-program shape (pyprogram.c).
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
 *
 * The check-program shape (ee_pyprogram_convert) extends this to a whole
 * `program` test such as HumanEval's `{test}\ncheck({entry_point})`:
 *
 *     METADATA = {'author': 'jt'}        top level: NAME = LITERAL, strings
 *     def check(candidate):              one def, one plain parameter
 *         """docstring"""                body: strings, `assert TRUE_LITERAL`
 *         assert candidate(1, 2) == 3    (no-ops), and the assert shape on
 *         assert candidate(0, 0) == 0    the parameter, in order
 *     check(add)                         last: the def called with a name
 *
 * Indentation is spaces only, every body statement at one indentation;
 * blank and comment-only lines anywhere. Anything else (decorators,
 * defaults, annotations, a second def, loops, imports, `global`, `;`,
 * `assert False`, a tab in indentation, a carriage return, statements after
 * the final call, a final call naming the def or a name the program
 * assigns, a body without a call) is not of the shape. At most
 * EE_PYPROG_MAX_CALLS asserts; the code and literal bounds above apply to
 * the whole program.
 */
#ifndef EE_PYLITERAL_H
#define EE_PYLITERAL_H

#include <stddef.h>
#include <jansson.h>

#define EE_PYLIT_MAX_DEPTH   50     /* well under the harness's 100 */
#define EE_PYLIT_MAX_NODES   10000  /* well under the harness's 100,000 */
#define EE_PYLIT_MAX_CODE    100000 /* bytes of a test's code */
#define EE_PYLIT_MAX_DIGITS  4300   /* sys.get_int_max_str_digits() default */
#define EE_PYPROG_MAX_CALLS  1000   /* asserts of one check program */
#define EE_PYPROG_MAX_INDENT 100    /* spaces of indentation */

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

/* A check program converted to supervisor-judged calls. Owns everything. */
struct ee_pyprogram {
	char *fn;      /* the name check() is called with (the entry point) */
	json_t *calls; /* in order: [{"args": [...], "kwargs": [[name, v], ...],
	                * "expected": v}, ...], canonical values, at least one */
};

/* Returns 1 and fills *ret when code has the check-program shape, 0 when
 * it has not (*ret zeroed), -1 when memory ran out. */
int ee_pyprogram_convert(const char *code, struct ee_pyprogram *ret);

/* Accepts a zeroed program. */
void ee_pyprogram_free(struct ee_pyprogram *p);

#endif
