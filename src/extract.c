/* extract.c - finding the program in a model's free-form generation.
 *
 * One pass over the lines. A fence opens at the start of a line with three
 * or more backticks or tildes; its info string (the rest of the line) names
 * the language by its first word. The block's body runs to the first line
 * made only of at least as many of the same fence character (trailing
 * whitespace allowed), or to the end of the text. As in CommonMark, a line
 * such as "```python" inside an open block is body, not a close, and a
 * backtick "fence" whose info string holds a backtick is inline code, not a
 * fence. Blocks in other languages are skipped whole, so fences inside them
 * cannot open anything.
 */
#include "extract.h"

#include <stdlib.h>
#include <string.h>

#include "err.h"

enum block_lang { LANG_PYTHON, LANG_UNTAGGED, LANG_OTHER };

struct block {
	enum block_lang lang;
	size_t body;     /* first byte of the body */
	size_t body_end; /* one past its last byte */
	size_t next;     /* where scanning resumes */
};

static const char *const python_tags[] = { "python", "py", "python3" };

int ee_extract_mode_parse(const char *s, enum ee_extract_mode *ret)
{
	static const struct {
		const char *name;
		enum ee_extract_mode mode;
	} modes[] = {
		{ "auto", EE_EXTRACT_AUTO },
		{ "fenced", EE_EXTRACT_FENCED },
		{ "none", EE_EXTRACT_NONE },
	};

	if (!s)
		return -1;
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (strcmp(s, modes[i].name) == 0) {
			*ret = modes[i].mode;
			return 0;
		}
	}
	return -1;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* Index of the '\n' ending the line at pos, or len. */
static size_t line_end(const char *t, size_t len, size_t pos)
{
	const char *nl = memchr(t + pos, '\n', len - pos);
	return nl ? (size_t)(nl - t) : len;
}

/* Start of the line after the one ending at eol. */
static size_t next_line(size_t len, size_t eol)
{
	return eol < len ? eol + 1 : len;
}

/* Length of the run of c at t[pos..eol). */
static size_t run_of(const char *t, size_t pos, size_t eol, char c)
{
	size_t n = 0;
	while (pos + n < eol && t[pos + n] == c)
		n++;
	return n;
}

static int word_is(const char *w, size_t n, const char *tag)
{
	if (strlen(tag) != n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (lower(w[i]) != tag[i])
			return 0;
	return 1;
}

/* The language named by the info string t[pos..eol). */
static enum block_lang classify(const char *t, size_t pos, size_t eol)
{
	while (pos < eol && is_blank(t[pos]))
		pos++;
	size_t n = 0;
	while (pos + n < eol && !is_blank(t[pos + n]))
		n++;
	if (n == 0)
		return LANG_UNTAGGED;
	for (size_t i = 0; i < sizeof(python_tags) / sizeof(python_tags[0]); i++)
		if (word_is(t + pos, n, python_tags[i]))
			return LANG_PYTHON;
	return LANG_OTHER;
}

/* Whether the line t[pos..eol) opens a fence; sets its character and width. */
static int is_opener(const char *t, size_t pos, size_t eol, char *ch, size_t *width)
{
	if (pos >= eol || (t[pos] != '`' && t[pos] != '~'))
		return 0;
	size_t n = run_of(t, pos, eol, t[pos]);
	if (n < 3)
		return 0;
	if (t[pos] == '`' && memchr(t + pos + n, '`', eol - pos - n))
		return 0; /* ```inline code``` on one line */
	*ch = t[pos];
	*width = n;
	return 1;
}

/* Whether the line t[pos..eol) closes a fence of width runs of ch. */
static int is_closer(const char *t, size_t pos, size_t eol, char ch, size_t width)
{
	size_t n = run_of(t, pos, eol, ch);
	if (n < width)
		return 0;
	for (size_t i = pos + n; i < eol; i++)
		if (!is_blank(t[i]))
			return 0;
	return 1;
}

/* Fills b with the block whose opening line starts at pos. */
static void read_block(const char *t, size_t len, size_t pos, char ch, size_t width, struct block *b)
{
	size_t eol = line_end(t, len, pos);

	b->lang = classify(t, pos + width, eol);
	b->body = next_line(len, eol);
	for (size_t line = b->body; line < len; line = next_line(len, eol)) {
		eol = line_end(t, len, line);
		if (is_closer(t, line, eol, ch, width)) {
			b->body_end = line;
			b->next = next_line(len, eol);
			return;
		}
	}
	b->body_end = len; /* unclosed: runs to the end */
	b->next = len;
}

/* Finds the first block opening at or after pos. Returns 1, or 0 if none. */
static int next_block(const char *t, size_t len, size_t pos, struct block *b)
{
	while (pos < len) {
		size_t eol = line_end(t, len, pos);
		char ch;
		size_t width;
		if (is_opener(t, pos, eol, &ch, &width)) {
			read_block(t, len, pos, ch, width, b);
			return 1;
		}
		pos = next_line(len, eol);
	}
	return 0;
}

/* The python block if any, else the first untagged one. Returns 1 if found. */
static int choose_block(const char *t, size_t len, struct block *ret)
{
	struct block b, untagged = { 0 };
	int have_untagged = 0;

	for (size_t pos = 0; next_block(t, len, pos, &b); pos = b.next) {
		if (b.lang == LANG_PYTHON) {
			*ret = b;
			return 1;
		}
		if (b.lang == LANG_UNTAGGED && !have_untagged) {
			untagged = b;
			have_untagged = 1;
		}
	}
	*ret = untagged;
	return have_untagged;
}

static int copy_out(const char *p, size_t n, char **ret, size_t *ret_len, struct ee_err *err)
{
	if (n == (size_t)-1)
		return ee_fail(err, EE_ERR_USAGE, "extract: text too large");
	char *s = malloc(n + 1);
	if (!s)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "extract: cannot allocate %zu bytes", n + 1);
	if (n)
		memcpy(s, p, n);
	s[n] = '\0';
	*ret = s;
	*ret_len = n;
	return 0;
}

int ee_extract(const char *text, size_t len, enum ee_extract_mode mode, char **ret, size_t *ret_len,
               int *ret_found, struct ee_err *err)
{
	struct block b;

	if (!text && len > 0)
		return ee_fail(err, EE_ERR_USAGE, "extract: no text");
	*ret_found = 0;
	if (mode == EE_EXTRACT_NONE)
		return copy_out(text, len, ret, ret_len, err);
	if (choose_block(text, len, &b)) {
		*ret_found = 1;
		return copy_out(text + b.body, b.body_end - b.body, ret, ret_len, err);
	}
	if (mode == EE_EXTRACT_FENCED)
		return copy_out("", 0, ret, ret_len, err);
	return copy_out(text, len, ret, ret_len, err);
}
