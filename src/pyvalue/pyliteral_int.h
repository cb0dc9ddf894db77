/* pyliteral_int.h - the reader that pyliteral.c (literals), pyassert.c (the
 * assert shape) and pyprogram.c (the check-program shape) share. Not a
 * public header: everyone else goes through pyliteral.h.
 *
 * A reader is a position over a byte range. Every pylit_read_* either
 * consumes what it accepts or returns NULL/false, in which case the caller
 * gives the whole conversion up; oom tells a refusal from a failed
 * allocation.
 */
#ifndef EE_PYLITERAL_INT_H
#define EE_PYLITERAL_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "pyvalue/pyliteral.h"

struct reader {
	const char *s;
	size_t n, pos;
	int depth;    /* containers open now */
	int brackets; /* brackets open now: newlines are blanks inside */
	size_t nodes; /* values read so far */
	bool oom;     /* an allocation failed: the input was not refused */
};

/* ---- the literal reader (pyliteral.c) ---- */

/* v, noting in r when an allocation did not give it. */
json_t *pylit_made(struct reader *r, json_t *v);
/* ok, noting in r when an allocation made it false. */
bool pylit_stored(struct reader *r, bool ok);
/* The byte ahead of pos, or -1 past the end. */
int pylit_peek(const struct reader *r, size_t ahead);
bool pylit_is_name_char(int ch);
/* From '#' to the end of the line (the newline stays). */
void pylit_skip_comment(struct reader *r);
/* Blanks as Python's tokenizer skips them (newlines too inside brackets). */
void pylit_skip_blanks(struct reader *r);
/* Blanks, then ch: consumed and true, or pos unchanged at ch and false. */
bool pylit_eat(struct reader *r, char ch);
/* An identifier of at most size - 1 bytes into buf. */
bool pylit_read_name(struct reader *r, char *buf, size_t size);
bool pylit_is_keyword(const char *name);
/* One literal: its canonical value, or NULL. */
json_t *pylit_read_value(struct reader *r);
/* Only blanks, comments and blank lines are left. */
bool pylit_at_statement_end(struct reader *r);

/* ---- parts of the assert shape (pyassert.c) ---- */

/* NAME(ARGS) into c->fn, c->args, c->kwargs. */
bool pylit_read_call(struct reader *r, struct ee_pycall *c);
/* "==" and not "===" */
bool pylit_read_eq(struct reader *r);
/* Does the text at pos start a call (a name that is not a literal)? */
bool pylit_call_first(const struct reader *r);
/* The keyword word at pos followed by a blank or a backslash: consumed. */
bool pylit_read_keyword_at(struct reader *r, const char *word);

#endif
