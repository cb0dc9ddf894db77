/* compose.c - the program of one sample (see compose.h). */
#include "compose.h"

#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "task.h"

static const char *const stop_sequences[] = { "\nclass", "\ndef", "\n#", "\nif", "\nprint", NULL };

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

int ee_compose_program(const struct ee_task *t, const struct ee_sample *s, enum ee_extract_mode mode,
                       int stop, char **ret, int *ret_no_block, struct ee_err *err)
{
	*ret_no_block = 0;
	*ret = NULL;
	if (s->source == EE_SAMPLE_GENERATION) {
		size_t len;
		int found;
		if (ee_extract(s->text, strlen(s->text), mode, ret, &len, &found, err) < 0)
			return -1;
		*ret_no_block = mode == EE_EXTRACT_FENCED && !found;
		return 0;
	}
	if (s->source == EE_SAMPLE_CODE) {
		*ret = strdup(s->text);
	} else {
		size_t len = stop ? stop_at(s->text) : strlen(s->text);
		const char *prompt = t->format == EE_FORMAT_MBPP || !t->prompt ? "" : t->prompt;
		*ret = concat(prompt, s->text, len);
	}
	return *ret ? 0 : ee_fail(err, EE_ERR_USAGE, "out of memory");
}
