/* extract.h - the program inside a model's free-form generation.
 *
 * Rules (CONTRACT.md, Extraction): the first fenced block tagged python, py or
 * python3 (case-insensitive); else the first untagged fenced block (``` or
 * ~~~); else the whole text. A fence opens at the start of a line with three
 * or more backticks or tildes and closes at a line made of at least as many
 * of the same character (trailing whitespace allowed: as in CommonMark, a
 * line like "```python" inside a block is body, not a close); an unclosed
 * fence runs to the end of the text. The tag is the first word of the rest of
 * the opening line. Blocks tagged with another language are skipped.
 *
 * Modes: AUTO as above; FENCED takes only a fenced block (no block: empty
 * program, *ret_found = 0); NONE takes the text as is.
 */
#ifndef EE_EXTRACT_H
#define EE_EXTRACT_H

#include <stddef.h>

struct ee_err;

enum ee_extract_mode { EE_EXTRACT_AUTO, EE_EXTRACT_FENCED, EE_EXTRACT_NONE };

/* Parses "auto" | "fenced" | "none". Returns 0 or -1. */
int ee_extract_mode_parse(const char *s, enum ee_extract_mode *ret);

/* Extracts the program from text[0..len). On success *ret is a malloc'd,
 * NUL-terminated copy owned by the caller, *ret_len its length, and
 * *ret_found is 1 when a fenced block was used (0: the whole text, or nothing
 * under FENCED). Fails only on allocation failure and on text == NULL with
 * len > 0. */
int ee_extract(const char *text, size_t len, enum ee_extract_mode mode, char **ret, size_t *ret_len,
               int *ret_found, struct ee_err *err);

#endif
