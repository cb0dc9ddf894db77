/* lines.c - bounded, checked line reading (see lines.h). */
#include "input/lines.h"

#include <stdio.h>
#include <string.h>

#include "base/err.h"
#include "base/jsonfield.h"
#include "base/text.h"

#define BOM "\xEF\xBB\xBF"

/* A line the caller may skip: err says why, reading goes on after it. */
#define BAD_LINE(...) (ee_fail(err, EE_ERR_USAGE, __VA_ARGS__), -2)

int ee_lines_open(struct ee_lines *l, const char *path, size_t cap, struct ee_err *err)
{
	memset(l, 0, sizeof(*l));
	ee_buf_init(&l->line, cap);
	return ee_input_open(&l->in, path, err);
}

/* Appends the rest of the current line (up to a newline) from the input:
 * 1 when something was read, 0 at the end, -1 on failure (in->why says
 * it). Past the cap the rest of the line is read and dropped. */
static int read_rest(struct ee_lines *l, int *too_long, struct ee_err *err)
{
	struct ee_input *in = &l->in;
	int got = 0, rc;

	while ((rc = ee_input_fill(in, err)) > 0) {
		const unsigned char *start = in->data + in->pos;
		const unsigned char *nl = memchr(start, '\n', in->len - in->pos);
		size_t take = nl ? (size_t)(nl - start) : in->len - in->pos;
		if (!*too_long && l->line.len + take > l->line.cap) {
			*too_long = 1; /* keep reading: the next line starts after its newline */
		} else if (!*too_long && ee_buf_append(&l->line, start, take) < 0) {
			snprintf(in->why, sizeof(in->why), "out of memory");
			return -1;
		}
		in->pos += take + (nl != NULL);
		l->offset += take + (nl != NULL);
		got = 1;
		if (nl) {
			l->had_newline = 1;
			break;
		}
	}
	return rc < 0 ? -1 : got;
}

int ee_lines_next(struct ee_lines *l, struct ee_err *err)
{
	int too_long = 0;
	size_t bom = 0;

	ee_buf_reset(&l->line);
	l->had_newline = 0;
	l->line_offset = l->offset;
	int rc = read_rest(l, &too_long, err);
	if (rc < 0)
		return ee_fail(err, EE_ERR_USAGE, "%.300s:%lu: %s", l->in.name, l->line_no + 1, l->in.why);
	if (rc == 0)
		return 0;
	l->line_no++;
	if (too_long && l->line.cap % (1u << 20) == 0)
		return BAD_LINE("%.300s:%lu: line longer than %zu MiB", l->in.name, l->line_no,
		                l->line.cap >> 20);
	if (too_long)
		return BAD_LINE("%.300s:%lu: line longer than %zu bytes", l->in.name, l->line_no,
		                l->line.cap);
	if (ee_buf_append(&l->line, "", 0) < 0) /* data is never NULL */
		return ee_fail(err, EE_ERR_USAGE, "%.300s:%lu: out of memory", l->in.name, l->line_no);
	if (l->line_no == 1 && l->line.len >= 3 && memcmp(l->line.data, BOM, 3) == 0) {
		ee_buf_consume(&l->line, 3);
		bom = 3;
	}
	long bad = ee_utf8_first_bad(l->line.data, l->line.len);
	if (bad >= 0)
		return BAD_LINE("%.300s:%lu: byte offset %llu: not UTF-8 (byte 0x%02x); JSON text must be "
		                "UTF-8",
		                l->in.name, l->line_no,
		                (unsigned long long)(l->line_offset + bom + (size_t)bad),
		                (unsigned char)l->line.data[bad]);
	return 1;
}

int ee_lines_json_error(const struct ee_lines *l, const char *what, const json_error_t *jerr,
                        struct ee_err *err)
{
	const char *text = l->line.data + strspn(l->line.data, " \t\r");
	char jtext[EE_JF_ERROR_TEXT], quoted[200];

	if (*text == '{' || *text == '[')
		return ee_fail(err, EE_ERR_USAGE, "%s:%lu: column %d: %s", l->in.name, l->line_no,
		               jerr->column, ee_jf_error_text(jerr, jtext));
	return ee_fail(err, EE_ERR_USAGE,
	               "%s:%lu: not JSON: a %s file is JSON Lines, one JSON object per line "
	               "(docs/formats.md); this line starts %s%s",
	               l->in.name, l->line_no, what, ee_jf_quote(text, quoted, sizeof(quoted)),
	               strpbrk(text, ",\t") ? " (a CSV file?)" : "");
}

int ee_lines_blank(const struct ee_lines *l)
{
	return strspn(l->line.data, " \t\r") == l->line.len;
}

void ee_lines_close(struct ee_lines *l)
{
	ee_input_close(&l->in);
	ee_buf_free(&l->line);
}

int ee_lines_slurp(struct ee_lines *l, struct ee_buf *text, struct ee_err *err)
{
	int rc = 1;
	while (rc == 1) {
		if (text->len + l->line.len + (size_t)l->had_newline > text->cap)
			return ee_fail(err, EE_ERR_USAGE, "%.300s:%lu: larger than %zu bytes", l->in.name,
			               l->line_no, text->cap);
		if (ee_buf_append(text, l->line.data, l->line.len) < 0 ||
		    ee_buf_append(text, "\n", (size_t)l->had_newline) < 0)
			return ee_fail(err, EE_ERR_USAGE, "%.300s:%lu: out of memory", l->in.name,
			               l->line_no);
		rc = ee_lines_next(l, err);
	}
	return rc == 0 ? 0 : -1;
}
