/* sample.c - reading a sample (a model's answer to one task) from JSON
 * (task.h): its task_id, index, model, exactly one text field, and every
 * other field kept as extra for the record.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/jsonfield.h"
#include "input/task.h"
#include "input/task_int.h"

static const char *const source_names[] = { "completion", "generation", "code" };
/* Sample fields with a meaning; every other field goes to extra. */
static const char *const sample_known[] = { "task_id",    "sample", "model",   "completion",
	                                    "generation", "code",   "solution" };
/* The fields a sample's text may come from, and the source each one means:
 * "solution" is EvalPlus's name for a complete program. */
static const char *const source_fields[] = { "completion", "generation", "code", "solution" };
static const int source_of[] = { EE_SAMPLE_COMPLETION, EE_SAMPLE_GENERATION, EE_SAMPLE_CODE, EE_SAMPLE_CODE };

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* LONG_MAX without <limits.h>. */
#define LONG_MAXIMUM ((long)((unsigned long)-1 / 2))

const char *ee_sample_source_name(int source)
{
	return ee_task_name_of(source_names, COUNT(source_names), source);
}

static int parse_index(const struct ee_jf *c, const json_t *obj, long *ret)
{
	json_int_t i = -1;

	if (ee_jf_int(c, obj, "sample", 0, LONG_MAXIMUM, "an integer >= 0", &i) < 0)
		return -1;
	*ret = (long)i;
	return 0;
}

/* "a", "a and b", "a, b and c": the source fields found, for the message. */
static const char *found_list(const int *found, size_t n, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && len < size; i++) {
		const char *sep = i == 0 ? "" : i + 1 == n ? " and " : ", ";
		len += (size_t)snprintf(buf + len, size - len, "%s%s", sep, source_fields[found[i]]);
	}
	return buf;
}

/* With no source field, an unknown key that is a near miss of one
 * (`completon`) is named: a typo, not a sample without text. */
static int name_a_typo(const struct ee_jf *c, const json_t *obj, const char *names)
{
	const char *key;
	json_t *v;
	char shown[96];

	json_object_foreach ((json_t *)obj, key, v) {
		size_t i = 0;
		while (i < COUNT(sample_known) && strcmp(key, sample_known[i]) != 0)
			i++;
		const char *near = i < COUNT(sample_known)
		                           ? NULL
		                           : ee_nearest_name(key, source_fields, COUNT(source_fields));
		if (near)
			return ee_jf_fail(c, ee_jf_key_name(key, shown, sizeof(shown)),
			                  "did you mean '%s'? (a sample has exactly one of %s)", near, names);
	}
	return 0;
}

/* Exactly one of completion, generation, code, solution, and a string. */
static int parse_source(const struct ee_jf *c, const json_t *obj, struct ee_sample *s)
{
	int found[COUNT(source_fields)];
	size_t n = 0;
	const char *text = NULL;
	char names[64], list[80];

	for (size_t i = 0; i < COUNT(source_fields); i++) {
		const json_t *v = json_object_get(obj, source_fields[i]);
		if (!v)
			continue;
		if (ee_jf_str_check(c, source_fields[i], v, &text) < 0)
			return -1;
		found[n++] = (int)i;
	}
	ee_jf_join_names(source_fields, COUNT(source_fields), names, sizeof(names));
	if (n == 0 && name_a_typo(c, obj, names) < 0)
		return -1;
	if (n != 1)
		return ee_jf_fail(c, names, "expected exactly one of these, found %s",
		                  n ? found_list(found, n, list, sizeof(list)) : "none");
	s->source = source_of[found[0]];
	return ee_jf_strdup(c, text, &s->text);
}

static int sample_extra(const struct ee_jf *c, const json_t *obj, json_t **ret)
{
	*ret = json_deep_copy(obj);
	if (!*ret)
		return ee_jf_oom(c);
	for (size_t i = 0; i < COUNT(sample_known); i++)
		json_object_del(*ret, sample_known[i]);
	return 0;
}

static int parse_sample(const struct ee_jf *c, const json_t *obj, struct ee_sample *s)
{
	if (ee_task_check_object(c, obj) < 0)
		return -1;
	if (ee_jf_id(c, obj, "task_id", &s->task_id) < 0 || parse_index(c, obj, &s->index) < 0 ||
	    ee_jf_str(c, obj, "model", 0, NULL, &s->model) < 0 || parse_source(c, obj, s) < 0)
		return -1;
	return sample_extra(c, obj, &s->extra);
}

int ee_sample_from_json(const json_t *obj, const char *where, struct ee_sample *ret, struct ee_err *err)
{
	struct ee_jf c = ee_task_ctx(where, err);
	struct ee_sample s = { .index = -1 };

	memset(ret, 0, sizeof(*ret));
	if (parse_sample(&c, obj, &s) < 0) {
		ee_sample_free(&s);
		return -1;
	}
	*ret = s;
	return 0;
}

void ee_sample_free(struct ee_sample *s)
{
	if (!s)
		return;
	free(s->task_id);
	free(s->model);
	free(s->text);
	json_decref(s->extra);
	memset(s, 0, sizeof(*s));
}
