/* lines.h - reading a data file line by line, bounded and checked.
 *
 * Data files (tasks, samples, results) come from users and crashed runs: a
 * line may be huge, torn or not text. Every line goes through here: read
 * once from an ee_input (so gzip and pipes work), capped, its UTF-8 checked
 * (JSON text is UTF-8; a bad byte is named by its offset in the file, the
 * decompressed content for a .gz), and a byte-order mark at the start of
 * the file dropped (editors on Windows write one).
 *
 * Lifecycle: ee_lines_open, ee_lines_next until it returns 0 or -1,
 * ee_lines_close (accepts a zeroed or failed reader).
 */
#ifndef EE_LINES_H
#define EE_LINES_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "input/input.h"

struct ee_err;

struct ee_lines {
	struct ee_input in;
	struct ee_buf line;    /* the current line, without its newline, NUL-terminated */
	unsigned long line_no; /* of the current line, from 1 */
	uint64_t line_offset;  /* content offset of its first byte */
	uint64_t offset;       /* content offset of the next byte to read */
	int had_newline;       /* the current line was terminated (a torn last line is not) */
};

/* Opens path ("-": standard input) with lines of at most cap bytes. */
int ee_lines_open(struct ee_lines *l, const char *path, size_t cap, struct ee_err *err);

/* Reads the next line into l->line: 1; 0 at the end; -1 when the input
 * failed (read error, corrupt or truncated gzip; err names file:line); -2
 * when this line is unusable (longer than cap, its rest skipped, or not
 * UTF-8; err names file:line and, for UTF-8, the byte offset): the next
 * call reads the line after it. */
int ee_lines_next(struct ee_lines *l, struct ee_err *err);

void ee_lines_close(struct ee_lines *l);

/* Appends the current line and every line after it, each with its newline,
 * to text (a whole JSON document: an array of tasks, a summary): 0; -1 when
 * a line is unusable or text would pass its cap (err names the file). */
int ee_lines_slurp(struct ee_lines *l, struct ee_buf *text, struct ee_err *err);

/* The error of the current line, which a JSON parser refused (jerr): its
 * message, with the column, when the line opens an object or an array (a
 * JSON line with a defect); else a message naming file and line, saying
 * that a `what` file ("tasks", "samples") is JSON Lines and how the line
 * starts, with "(a CSV file?)" when it has a comma or a tab: a parser's
 * "'[' or '{' expected" tells a CSV file's user nothing. Returns -1. */
int ee_lines_json_error(const struct ee_lines *l, const char *what, const json_error_t *jerr,
                        struct ee_err *err);

/* 1 when the line holds only spaces, tabs and carriage returns. */
int ee_lines_blank(const struct ee_lines *l);

#endif
