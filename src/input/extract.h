/* extract.h - the program inside a model's free-form generation.
 *
 * Rules (docs/contract.md, Extraction; docs/record.md, `extraction`):
 *   1. Reasoning is removed first: every <think>...</think>, an unclosed
 *      <think> to the end of the text, and everything before a </think> that
 *      no <think> opened (chat templates that put <think> in the prompt).
 *   2. Among fenced blocks: the last python or untagged one that defines the
 *      entry point at its top level (a line "def NAME(", "async def NAME(",
 *      "class NAME" or "NAME =" at column 0); else the last block tagged
 *      python, py or python3 (case-insensitive); else the last untagged one.
 *   3. Else (AUTO only) the code between MBPP's [BEGIN] and [DONE].
 *   4. Else (AUTO only) the whole text, reasoning removed.
 * A fence opens at a line indented by at most 3 spaces with three or more
 * backticks or tildes and closes at a line (indented by at most 3 spaces) made
 * of at least as many of the same character, trailing whitespace allowed: as
 * in CommonMark, a line like "```python" inside a block is body, not a close.
 * An unclosed fence runs to the end of the text. Up to the opener's
 * indentation of spaces is removed from each body line (CommonMark). The tag
 * is the first word of the rest of the opening line; blocks tagged with
 * another language are skipped whole.
 *
 * Modes: AUTO as above; FENCED takes only a fenced block (no block: empty
 * program, how EE_HOW_NO_BLOCK); NONE takes the text as is.
 *
 * Bounded: one pass over the lines per step, no recursion, output no longer
 * than the input.
 */
#ifndef EE_EXTRACT_H
#define EE_EXTRACT_H

#include <stddef.h>

#include "base/choice.h"

struct ee_err;

enum ee_extract_mode { EE_EXTRACT_AUTO, EE_EXTRACT_FENCED, EE_EXTRACT_NONE };

/* The modes' names ("auto", "fenced", "none"): the only list of them,
 * which --extract and a request's "extract" take (options.c). */
#define EE_EXTRACT_MODES 3
extern const struct ee_option_choice ee_extract_modes[EE_EXTRACT_MODES];

/* How the program was found: the first word of the record's "extraction". */
enum ee_extract_how {
	EE_HOW_ENTRY_POINT, /* the fenced block that defines the entry point */
	EE_HOW_TAGGED,      /* the last python-tagged block */
	EE_HOW_FENCED,      /* the last untagged block */
	EE_HOW_BEGIN_DONE,  /* MBPP's [BEGIN] ... [DONE] */
	EE_HOW_WHOLE_TEXT,  /* no block: the whole text */
	EE_HOW_NO_BLOCK,    /* FENCED and no block: empty program */
	EE_HOW_NONE,        /* --extract none: the text as is */
	EE_HOW_COMPLETION,  /* prompt + completion (compose.h) */
	EE_HOW_CODE,        /* a complete program (compose.h) */
	EE_HOW_COUNT
};

struct ee_extract_info {
	enum ee_extract_how how;
	int unclosed;       /* the chosen block or [BEGIN] was never closed */
	int think_stripped; /* reasoning was removed before looking */
	int imports;        /* prompt import lines prepended (compose.h) */
};

/* Parses one of ee_extract_modes. Returns 0, or -1 (*ret left alone). */
int ee_extract_mode_parse(const char *s, enum ee_extract_mode *ret);

/* Extracts the program from text[0..len) (rules above). entry_point may be
 * NULL or "" (no preference). On success *ret is a malloc'd, NUL-terminated
 * string owned by the caller, *ret_len its length (at most len), and *info
 * says how it was found (imports 0). Fails only on allocation failure and on
 * text == NULL with len > 0. */
int ee_extract_code(const char *text, size_t len, enum ee_extract_mode mode, const char *entry_point,
                    char **ret, size_t *ret_len, struct ee_extract_info *info, struct ee_err *err);

/* ee_extract_code without an entry point; *ret_found is 1 when a fenced block
 * was used. */
int ee_extract(const char *text, size_t len, enum ee_extract_mode mode, char **ret, size_t *ret_len,
               int *ret_found, struct ee_err *err);

/* Whether info names a fenced block (entry-point, tagged, fenced). */
int ee_extract_found_block(const struct ee_extract_info *info);

/* The record's "extraction": the how's name, then "+unclosed",
 * "+think-stripped", "+imports" in that order when they apply. Always
 * NUL-terminated; n >= EE_EXTRACTION_NAME_MAX suffices. */
#define EE_EXTRACTION_NAME_MAX 64
void ee_extraction_name(const struct ee_extract_info *info, char *buf, size_t n);

#endif
