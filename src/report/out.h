/* out.h - the report's text output: a capped buffer that escapes.
 *
 * The HTML page and its SVG charts are written into one ee_out. Every
 * string that comes from a results file (task ids, classes, models,
 * details, test messages, stderr: candidates write some of them) goes
 * through ee_out_text, which escapes it for HTML text and attribute values
 * alike (& < > " ' become entities) and replaces control characters, so no
 * such string can open a tag, an attribute or a script. ee_out_raw and
 * ee_out_fmt are for execeval's own markup and numbers only.
 *
 * Numbers: ee_out_num never prints nan or inf (a non-finite value prints
 * as 0), so no chart attribute can be malformed.
 *
 * Errors: the first append that would pass the cap (or finds memory
 * exhausted) marks the output failed; later appends do nothing, and
 * ee_out_failed says so once at the end, so writers need not check each
 * call. Ownership: the ee_out owns its buffer; ee_out_free releases it and
 * accepts a zeroed struct.
 */
#ifndef EE_REPORT_OUT_H
#define EE_REPORT_OUT_H

#include <stddef.h>

#include "base/buf.h"

struct ee_out {
	struct ee_buf buf;
	int failed; /* an append hit the cap or ran out of memory */
};

void ee_out_init(struct ee_out *o, size_t cap);
void ee_out_free(struct ee_out *o);
int ee_out_failed(const struct ee_out *o);

/* Trusted markup, as is. */
void ee_out_raw(struct ee_out *o, const char *s);
/* Trusted markup and numbers, printf-style; never pass an untrusted %s. */
void ee_out_fmt(struct ee_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* x with `decimals` digits after the point (0 to 6); non-finite prints 0. */
void ee_out_num(struct ee_out *o, double x, int decimals);

/* Untrusted text (NULL prints nothing), escaped. */
void ee_out_text(struct ee_out *o, const char *s);
/* The same, at most max_chars characters of s: longer text is cut at a
 * character boundary and ends with an ellipsis (U+2026). */
void ee_out_text_cut(struct ee_out *o, const char *s, size_t max_chars);

/* A copy of s (malloc'd, NULL when out of memory or s is NULL) of at most
 * max_chars characters: the first ones (from_end = 0) or the last ones
 * (from_end = 1), cut at character boundaries; *ret_cut (when non-NULL) is
 * set to whether anything was dropped. s must be valid UTF-8 (jansson's
 * strings are). */
char *ee_out_cut_copy(const char *s, size_t max_chars, int from_end, int *ret_cut);

#endif
