/* compose.c - the program of one sample (see compose.h). */
#include "input/compose.h"

#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "input/task.h"

static const char *const stop_sequences[] = { "\nclass", "\ndef", "\n#", "\nif", "\nprint", NULL };

static const char future_prefix[] = "from __future__ import";

static size_t stop_at(const char *text)
{
	size_t cut = strlen(text);
	for (size_t i = 0; stop_sequences[i]; i++) {
		const char *p = strstr(text, stop_sequences[i]);
		if (p && (size_t)(p - text) < cut)
			cut = (size_t)(p - text);
	}
	return cut;
}

static char *concat(const char *a, const char *b, size_t blen)
{
	size_t alen = strlen(a);
	char *p = malloc(alen + blen + 1);
	if (p) {
		memcpy(p, a, alen);
		memcpy(p + alen, b, blen);
		p[alen + blen] = '\0';
	}
	return p;
}

static int is_name_char(char c)
{
	return c == '_' || c == '.' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9');
}

/* Length of line[0..n) without trailing blanks and '\r'. */
static size_t trimmed(const char *line, size_t n)
{
	while (n > 0 && (line[n - 1] == ' ' || line[n - 1] == '\t' || line[n - 1] == '\r'))
		n--;
	return n;
}

/* Whether line[0..n) is a one-line top-level import: "import X..." or
 * "from X import Y...", without an open parenthesis or a continuation. */
static int is_import_line(const char *line, size_t n)
{
	size_t i;

	if (n == 0 || line[n - 1] == '\\' || (memchr(line, '(', n) && !memchr(line, ')', n)))
		return 0;
	if (n > 7 && memcmp(line, "import ", 7) == 0)
		return is_name_char(line[7]);
	if (n <= 5 || memcmp(line, "from ", 5) != 0)
		return 0;
	for (i = 5; i < n && is_name_char(line[i]); i++)
		;
	return i > 5 && n - i > 8 && memcmp(line + i, " import ", 8) == 0;
}

/* Whether text holds line[0..n) as a whole line (trailing blanks aside). */
static int has_line(const char *text, const char *line, size_t n)
{
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (trimmed(p, len) == n && memcmp(p, line, n) == 0)
			return 1;
		if (!nl)
			break;
		p = nl + 1;
	}
	return 0;
}

/* Where the prompt's imports go: after the program's leading
 * "from __future__" lines, which must stay first. */
static size_t insertion_point(const char *program)
{
	size_t at = 0;
	for (const char *p = program; *p;) {
		const char *nl = strchr(p, '\n');
		if (strncmp(p, future_prefix, sizeof(future_prefix) - 1) == 0)
			at = nl ? (size_t)(nl + 1 - program) : strlen(program);
		if (!nl)
			break;
		p = nl + 1;
	}
	return at;
}

/* Appends to out[*n] the prompt's import lines missing from program;
 * out NULL only counts. Returns the number of lines. */
static int missing_imports(const char *prompt, const char *program, char *out, size_t *n)
{
	int count = 0;
	for (const char *p = prompt; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = trimmed(p, nl ? (size_t)(nl - p) : strlen(p));
		if (is_import_line(p, len) && !has_line(program, p, len)) {
			if (out) {
				memcpy(out + *n, p, len);
				out[*n + len] = '\n';
			}
			*n += len + 1;
			count++;
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	return count;
}

/* Puts the prompt's missing import lines into *program (compose.h). */
static int add_prompt_imports(const struct ee_task *t, char **program, struct ee_extract_info *info,
                              struct ee_err *err)
{
	size_t n = 0;
	const char *prompt = t->prompt;

	if (t->format == EE_FORMAT_MBPP || !prompt || !prompt[0] || !(*program)[0])
		return 0;
	if (missing_imports(prompt, *program, NULL, &n) == 0)
		return 0;
	size_t at = insertion_point(*program), len = strlen(*program);
	char *out = malloc(len + n + 1);
	if (!out)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	memcpy(out, *program, at);
	n = at;
	info->imports = missing_imports(prompt, *program, out, &n);
	memcpy(out + n, *program + at, len - at + 1);
	free(*program);
	*program = out;
	return 0;
}

int ee_compose_generation(const struct ee_task *t, const char *text, size_t len, enum ee_extract_mode mode,
                          char **ret, struct ee_extract_info *info, struct ee_err *err)
{
	size_t n;

	*ret = NULL;
	if (ee_extract_code(text, len, mode, t->entry_point, ret, &n, info, err) < 0)
		return -1;
	if (mode != EE_EXTRACT_NONE && add_prompt_imports(t, ret, info, err) < 0) {
		free(*ret);
		*ret = NULL;
		return -1;
	}
	return 0;
}

int ee_compose_completion(const struct ee_task *t, const char *text, int stop, char **ret,
                          struct ee_extract_info *info, struct ee_err *err)
{
	size_t len = stop ? stop_at(text) : strlen(text);
	const char *prompt = t->format == EE_FORMAT_MBPP || !t->prompt ? "" : t->prompt;

	memset(info, 0, sizeof(*info));
	info->how = EE_HOW_COMPLETION;
	*ret = concat(prompt, text, len);
	return *ret ? 0 : ee_fail(err, EE_ERR_USAGE, "out of memory");
}

int ee_compose(const struct ee_task *t, const struct ee_sample *s, enum ee_extract_mode mode, int stop,
               char **ret, struct ee_extract_info *info, struct ee_err *err)
{
	*ret = NULL;
	memset(info, 0, sizeof(*info));
	if (s->source == EE_SAMPLE_GENERATION)
		return ee_compose_generation(t, s->text, strlen(s->text), mode, ret, info, err);
	if (s->source != EE_SAMPLE_CODE)
		return ee_compose_completion(t, s->text, stop, ret, info, err);
	info->how = EE_HOW_CODE;
	*ret = strdup(s->text);
	return *ret ? 0 : ee_fail(err, EE_ERR_USAGE, "out of memory");
}

int ee_compose_program(const struct ee_task *t, const struct ee_sample *s, enum ee_extract_mode mode,
                       int stop, char **ret, int *ret_no_block, struct ee_err *err)
{
	struct ee_extract_info info;
	int rc = ee_compose(t, s, mode, stop, ret, &info, err);
	*ret_no_block = rc == 0 && info.how == EE_HOW_NO_BLOCK;
	return rc;
}
