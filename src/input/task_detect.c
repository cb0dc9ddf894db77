/* task_detect.c - which format a task row is in, told by its fields: the
 * one place that knows what marks a format (--format, in the options
 * table, names them). The table below is read in order and the first match
 * wins, so a native task ("tests") stays native whatever else it carries.
 */
#include "input/task.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static int has(const json_t *obj, const char *key)
{
	return json_object_get(obj, key) != NULL;
}

/* obj[key] as an object: itself, or the object a JSON string of one holds
 * (a new reference either way; NULL when it is neither). */
static json_t *object_in(const json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	if (json_is_object(v))
		return json_incref(v);
	if (!json_is_string(v))
		return NULL;
	json_t *parsed = json_loadb(json_string_value(v), json_string_length(v), 0, NULL);
	if (json_is_object(parsed))
		return parsed;
	json_decref(parsed);
	return NULL;
}

/* verification_info (object or JSON string) has key: open-r1 and Prime
 * share the field and differ inside it. */
static int verification_has(const json_t *obj, const char *key)
{
	json_t *info = object_in(obj, "verification_info");
	int yes = info && has(info, key);

	json_decref(info);
	return yes;
}

static int is_native(const json_t *o)
{
	return has(o, "tests");
}
static int is_humaneval(const json_t *o)
{
	return has(o, "test") && has(o, "entry_point");
}
static int is_mbpp(const json_t *o)
{
	return has(o, "test_list");
}
static int is_evalplus(const json_t *o)
{
	return has(o, "base_input") && has(o, "canonical_solution");
}
static int is_verl(const json_t *o)
{
	return json_is_object(json_object_get(o, "reward_model"));
}
static int is_lcb(const json_t *o)
{
	return has(o, "public_test_cases") || has(o, "private_test_cases");
}
static int is_codecontests(const json_t *o)
{
	return has(o, "public_tests") || has(o, "private_tests") || has(o, "generated_tests");
}
static int is_apps(const json_t *o)
{
	return has(o, "input_output");
}
static int is_openr1(const json_t *o)
{
	return verification_has(o, "test_cases");
}
static int is_prime(const json_t *o)
{
	return verification_has(o, "test_case_inputs");
}

static const struct {
	int format;
	int (*matches)(const json_t *obj);
} detectors[] = {
	{ EE_FORMAT_NATIVE, is_native },
	{ EE_FORMAT_EVALPLUS, is_evalplus },
	{ EE_FORMAT_HUMANEVAL, is_humaneval },
	{ EE_FORMAT_MBPP, is_mbpp },
	{ EE_FORMAT_VERL, is_verl },
	{ EE_FORMAT_LCB, is_lcb },
	{ EE_FORMAT_CODECONTESTS, is_codecontests },
	{ EE_FORMAT_APPS, is_apps },
	{ EE_FORMAT_OPENR1, is_openr1 },
	{ EE_FORMAT_PRIME, is_prime },
};

int ee_task_detect(const json_t *obj)
{
	if (!json_is_object(obj))
		return -1;
	for (size_t i = 0; i < COUNT(detectors); i++)
		if (detectors[i].matches(obj))
			return detectors[i].format;
	return -1;
}
