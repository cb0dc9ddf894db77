/* extract.c - finding the program in a model's free-form generation.
 *
 * Three steps, each one bounded pass: reasoning is cut out into a copy of
 * the text; the copy's lines are scanned once for fenced blocks, keeping
 * the last of each kind; the chosen block is copied out with its fence's
 * indentation removed. A fence opens at a line indented by at most 3 spaces
 * with three or more backticks or tildes; its info string (the rest of the
 * line) names the language by its first word. The body runs to the first
 * line made only of at least as many of the same fence character (indented
 * by at most 3 spaces, trailing whitespace allowed), or to the end of the
 * text. As in CommonMark, a line such as "```python" inside an open block is
 * body, not a close, and a backtick "fence" whose info string holds a
 * backtick is inline code, not a fence. Blocks in other languages are
 * skipped whole, so fences inside them cannot open anything.
 */
#include "input/extract.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

#define MAX_FENCE_INDENT 3

enum block_lang { LANG_PYTHON, LANG_UNTAGGED, LANG_OTHER };

struct block {
	enum block_lang lang;
	size_t indent;   /* spaces before the opener, removed from body lines */
	size_t body;     /* first byte of the body */
	size_t body_end; /* one past its last byte */
	size_t next;     /* where scanning resumes */
	int unclosed;
};

/* Text and its length, as the steps pass it along. */
struct span {
	const char *t;
	size_t len;
};

static const char *const python_tags[] = { "python", "py", "python3" };

static const char *const how_names[EE_HOW_COUNT] = {
	[EE_HOW_ENTRY_POINT] = "entry-point",
	[EE_HOW_TAGGED] = "tagged",
	[EE_HOW_FENCED] = "fenced",
	[EE_HOW_BEGIN_DONE] = "begin-done",
	[EE_HOW_WHOLE_TEXT] = "whole-text",
	[EE_HOW_NO_BLOCK] = "no-block",
	[EE_HOW_NONE] = "none",
	[EE_HOW_COMPLETION] = "completion",
	[EE_HOW_CODE] = "code",
};

static const char think_open[] = "<think>", think_close[] = "</think>";
static const char begin_mark[] = "[BEGIN]", done_mark[] = "[DONE]";

const struct ee_option_choice ee_extract_modes[EE_EXTRACT_MODES] = {
	{ "auto", EE_EXTRACT_AUTO },
	{ "fenced", EE_EXTRACT_FENCED },
	{ "none", EE_EXTRACT_NONE },
};

int ee_extract_mode_parse(const char *s, enum ee_extract_mode *ret)
{
	int mode;

	if (ee_choice_find(ee_extract_modes, EE_EXTRACT_MODES, s, &mode) < 0)
		return -1;
	*ret = (enum ee_extract_mode)mode;
	return 0;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static int is_ident(char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (unsigned char)c >= 0x80;
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* Index of needle in t[from..len), or len. */
static size_t find(const char *t, size_t len, size_t from, const char *needle)
{
	size_t n = strlen(needle);
	if (from >= len)
		return len;
	const char *p = memmem(t + from, len - from, needle, n);
	return p ? (size_t)(p - t) : len;
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

static size_t skip_blanks(const char *t, size_t pos, size_t eol)
{
	while (pos < eol && (t[pos] == ' ' || t[pos] == '\t'))
		pos++;
	return pos;
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

/* Spaces (at most MAX_FENCE_INDENT) a fence line may start with; more is
 * no fence: returns MAX_FENCE_INDENT + 1. */
static size_t fence_indent(const char *t, size_t pos, size_t eol)
{
	size_t n = run_of(t, pos, eol, ' ');
	return n > MAX_FENCE_INDENT ? MAX_FENCE_INDENT + 1 : n;
}

/* Whether the line t[pos..eol) opens a fence; sets its character, width and
 * indentation. */
static int is_opener(const char *t, size_t pos, size_t eol, char *ch, size_t *width, size_t *indent)
{
	size_t in = fence_indent(t, pos, eol);
	if (in > MAX_FENCE_INDENT)
		return 0;
	pos += in;
	if (pos >= eol || (t[pos] != '`' && t[pos] != '~'))
		return 0;
	size_t n = run_of(t, pos, eol, t[pos]);
	if (n < 3)
		return 0;
	if (t[pos] == '`' && memchr(t + pos + n, '`', eol - pos - n))
		return 0; /* ```inline code``` on one line */
	*ch = t[pos];
	*width = n;
	*indent = in;
	return 1;
}

/* Whether the line t[pos..eol) closes a fence of width runs of ch. */
static int is_closer(const char *t, size_t pos, size_t eol, char ch, size_t width)
{
	size_t in = fence_indent(t, pos, eol);
	if (in > MAX_FENCE_INDENT)
		return 0;
	pos += in;
	size_t n = run_of(t, pos, eol, ch);
	if (n < width)
		return 0;
	for (size_t i = pos + n; i < eol; i++)
		if (!is_blank(t[i]))
			return 0;
	return 1;
}

/* Fills b with the block whose opening line starts at pos. */
static void read_block(struct span s, size_t pos, char ch, size_t width, size_t indent, struct block *b)
{
	size_t eol = line_end(s.t, s.len, pos);

	b->lang = classify(s.t, pos + indent + width, eol);
	b->indent = indent;
	b->body = next_line(s.len, eol);
	b->unclosed = 0;
	for (size_t line = b->body; line < s.len; line = next_line(s.len, eol)) {
		eol = line_end(s.t, s.len, line);
		if (is_closer(s.t, line, eol, ch, width)) {
			b->body_end = line;
			b->next = next_line(s.len, eol);
			return;
		}
	}
	b->body_end = s.len; /* unclosed: runs to the end */
	b->next = s.len;
	b->unclosed = 1;
}

/* Finds the first block opening at or after pos. Returns 1, or 0 if none. */
static int next_block(struct span s, size_t pos, struct block *b)
{
	while (pos < s.len) {
		size_t eol = line_end(s.t, s.len, pos);
		char ch;
		size_t width, indent;
		if (is_opener(s.t, pos, eol, &ch, &width, &indent)) {
			read_block(s, pos, ch, width, indent, b);
			return 1;
		}
		pos = next_line(s.len, eol);
	}
	return 0;
}

/* Where a body line's code starts: up to the fence's indentation removed. */
static size_t body_col0(const char *t, size_t line, size_t eol, size_t indent)
{
	size_t n = run_of(t, line, eol, ' ');
	return line + (n < indent ? n : indent);
}

/* If t[pos..eol) starts with the keyword kw and a blank, the position after
 * the blanks; else 0 (pos is never 0 past a keyword). */
static size_t keyword(const char *t, size_t pos, size_t eol, const char *kw)
{
	size_t n = strlen(kw);
	if (eol - pos <= n || memcmp(t + pos, kw, n) != 0 || (t[pos + n] != ' ' && t[pos + n] != '\t'))
		return 0;
	return skip_blanks(t, pos + n, eol);
}

/* If t[pos..eol) starts with the identifier name (whole), the position after
 * it; else 0. */
static size_t ident(const char *t, size_t pos, size_t eol, const char *name, size_t n)
{
	if (eol - pos < n || memcmp(t + pos, name, n) != 0 || (pos + n < eol && is_ident(t[pos + n])))
		return 0;
	return pos + n;
}

/* Whether the line t[p..eol), at column 0, defines name: "def name(",
 * "async def name(", "class name" or "name =". */
static int defines_on_line(const char *t, size_t p, size_t eol, const char *name, size_t n)
{
	size_t q = keyword(t, p, eol, "async");
	int is_async = q != 0;

	if (is_async)
		p = q;
	if ((q = keyword(t, p, eol, "def")) != 0) {
		q = ident(t, q, eol, name, n);
		q = q ? skip_blanks(t, q, eol) : eol;
		return q < eol && t[q] == '(';
	}
	if (is_async)
		return 0;
	if ((q = keyword(t, p, eol, "class")) != 0)
		return ident(t, q, eol, name, n) != 0;
	if ((q = ident(t, p, eol, name, n)) == 0)
		return 0;
	q = skip_blanks(t, q, eol);
	return q < eol && t[q] == '=' && (q + 1 == eol || t[q + 1] != '=');
}

/* Whether the body of b defines name at its top level. */
static int defines(struct span s, const struct block *b, const char *name)
{
	size_t n = strlen(name), eol;

	for (size_t line = b->body; line < b->body_end; line = next_line(s.len, eol)) {
		eol = line_end(s.t, s.len, line);
		if (eol > b->body_end)
			eol = b->body_end;
		if (defines_on_line(s.t, body_col0(s.t, line, eol, b->indent), eol, name, n))
			return 1;
	}
	return 0;
}

/* The last block defining entry, else the last python one, else the last
 * untagged one. Returns 1 and sets *how, or 0 if none. */
static int choose_block(struct span s, const char *entry, struct block *ret, enum ee_extract_how *how)
{
	struct block b, found[3];
	int have[3] = { 0, 0, 0 }; /* entry point, tagged, untagged */

	for (size_t pos = 0; next_block(s, pos, &b); pos = b.next) {
		if (b.lang == LANG_OTHER)
			continue;
		if (entry && entry[0] && defines(s, &b, entry)) {
			found[0] = b;
			have[0] = 1;
		}
		int k = b.lang == LANG_PYTHON ? 1 : 2;
		found[k] = b;
		have[k] = 1;
	}
	static const enum ee_extract_how hows[3] = { EE_HOW_ENTRY_POINT, EE_HOW_TAGGED, EE_HOW_FENCED };
	for (int k = 0; k < 3; k++) {
		if (have[k]) {
			*ret = found[k];
			*how = hows[k];
			return 1;
		}
	}
	return 0;
}

static int alloc_out(size_t n, char **ret, struct ee_err *err)
{
	if (n == (size_t)-1)
		return ee_fail(err, EE_ERR_USAGE, "extract: text too large");
	*ret = malloc(n + 1);
	if (!*ret)
		return ee_fail(err, EE_ERR_SANDBOX, "extract: out of memory (%zu bytes)", n + 1);
	return 0;
}

static int copy_out(const char *p, size_t n, char **ret, size_t *ret_len, struct ee_err *err)
{
	char *s = NULL;
	if (alloc_out(n, &s, err) < 0)
		return -1;
	if (n)
		memcpy(s, p, n);
	s[n] = '\0';
	*ret = s;
	*ret_len = n;
	return 0;
}

/* The body of b, each line with up to b->indent leading spaces removed. */
static int copy_block(struct span s, const struct block *b, char **ret, size_t *ret_len, struct ee_err *err)
{
	char *out = NULL;
	size_t n = 0, eol;

	if (alloc_out(b->body_end - b->body, &out, err) < 0)
		return -1;
	for (size_t line = b->body; line < b->body_end; line = next_line(s.len, eol)) {
		eol = line_end(s.t, s.len, line);
		size_t from = body_col0(s.t, line, eol, b->indent);
		size_t to = eol < b->body_end ? eol + 1 : b->body_end;
		memcpy(out + n, s.t + from, to - from);
		n += to - from;
	}
	out[n] = '\0';
	*ret = out;
	*ret_len = n;
	return 0;
}

/* A copy of text without its reasoning (extract.h, rule 1). */
static int strip_think(const char *text, size_t len, char **ret, size_t *ret_len, int *stripped,
                       struct ee_err *err)
{
	size_t pos = 0, n = 0, open = find(text, len, 0, think_open);
	size_t close = find(text, len, 0, think_close);
	char *out = NULL;

	if (alloc_out(len, &out, err) < 0)
		return -1;
	*stripped = 0;
	if (close < open) { /* "</think>" with no "<think>" before it */
		pos = close + sizeof(think_close) - 1;
		*stripped = 1;
	}
	while (pos < len) {
		open = find(text, len, pos, think_open);
		memcpy(out + n, text + pos, open - pos);
		n += open - pos;
		if (open == len)
			break;
		*stripped = 1;
		close = find(text, len, open + sizeof(think_open) - 1, think_close);
		pos = close == len ? len : close + sizeof(think_close) - 1;
	}
	out[n] = '\0';
	*ret = out;
	*ret_len = n;
	return 0;
}

/* The code MBPP's markers delimit: after the first [BEGIN] to the first
 * [DONE] after it (or the end: unclosed), or, with the [DONE] first (the
 * prompt ended with [BEGIN]), everything before it. Returns 1 if found. */
static int begin_done(struct span s, size_t *from, size_t *to, int *unclosed)
{
	size_t b = find(s.t, s.len, 0, begin_mark), d = find(s.t, s.len, 0, done_mark);

	*unclosed = 0;
	if (b == s.len && d == s.len)
		return 0;
	if (d < b) {
		*from = 0;
		*to = d;
		return 1;
	}
	size_t p = skip_blanks(s.t, b + sizeof(begin_mark) - 1, s.len);
	if (p < s.len && s.t[p] == '\r')
		p++;
	if (p < s.len && s.t[p] == '\n')
		p++;
	*from = p;
	*to = find(s.t, s.len, p, done_mark);
	*unclosed = *to == s.len;
	return 1;
}

/* Steps 2 to 4 on the text with its reasoning removed. */
static int extract_from(struct span s, enum ee_extract_mode mode, const char *entry, char **ret,
                        size_t *ret_len, struct ee_extract_info *info, struct ee_err *err)
{
	struct block b;
	size_t from, to;

	if (choose_block(s, entry, &b, &info->how)) {
		info->unclosed = b.unclosed;
		return copy_block(s, &b, ret, ret_len, err);
	}
	if (mode == EE_EXTRACT_FENCED) {
		info->how = EE_HOW_NO_BLOCK;
		return copy_out("", 0, ret, ret_len, err);
	}
	if (begin_done(s, &from, &to, &info->unclosed)) {
		info->how = EE_HOW_BEGIN_DONE;
		return copy_out(s.t + from, to - from, ret, ret_len, err);
	}
	info->how = EE_HOW_WHOLE_TEXT;
	return copy_out(s.t, s.len, ret, ret_len, err);
}

int ee_extract_code(const char *text, size_t len, enum ee_extract_mode mode, const char *entry_point,
                    char **ret, size_t *ret_len, struct ee_extract_info *info, struct ee_err *err)
{
	char *clean = NULL;
	size_t clean_len;
	struct ee_extract_info got = { .how = EE_HOW_NONE };

	if (!text && len > 0)
		return ee_fail(err, EE_ERR_USAGE, "extract: no text");
	if (!text)
		text = "";
	if (mode == EE_EXTRACT_NONE) {
		if (copy_out(text, len, ret, ret_len, err) < 0)
			return -1;
		*info = got;
		return 0;
	}
	if (strip_think(text, len, &clean, &clean_len, &got.think_stripped, err) < 0)
		return -1;
	int rc = extract_from((struct span){ clean, clean_len }, mode, entry_point, ret, ret_len, &got, err);
	free(clean);
	if (rc == 0)
		*info = got;
	return rc;
}

int ee_extract_found_block(const struct ee_extract_info *info)
{
	return info->how == EE_HOW_ENTRY_POINT || info->how == EE_HOW_TAGGED || info->how == EE_HOW_FENCED;
}

int ee_extract(const char *text, size_t len, enum ee_extract_mode mode, char **ret, size_t *ret_len,
               int *ret_found, struct ee_err *err)
{
	struct ee_extract_info info;

	if (ee_extract_code(text, len, mode, NULL, ret, ret_len, &info, err) < 0)
		return -1;
	*ret_found = ee_extract_found_block(&info);
	return 0;
}

void ee_extraction_name(const struct ee_extract_info *info, char *buf, size_t n)
{
	unsigned how = (unsigned)info->how;
	const char *name = how < EE_HOW_COUNT && how_names[how] ? how_names[how] : "unknown";

	if (n == 0)
		return;
	snprintf(buf, n, "%s%s%s%s", name, info->unclosed ? "+unclosed" : "",
	         info->think_stripped ? "+think-stripped" : "", info->imports ? "+imports" : "");
}
