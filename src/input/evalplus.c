/* evalplus.c - EvalPlus's HumanEval+ and MBPP+ rows, read as they are
 * (docs/formats.md, "EvalPlus's rows"): task_id, prompt, entry_point,
 * canonical_solution, base_input, plus_input, atol.
 *
 * As EvalPlus does, the expected outputs are not in the row: they come from
 * running the reference (prompt + canonical_solution; MBPP+'s prompt is a
 * string literal, so the same join is a program there too) on each input,
 * in a sandbox, before any candidate (engine/reference.c). So the row
 * becomes a task with no tests of its own and given inputs in t->gen: the
 * base inputs the canonical tier, the plus inputs the property tier, and
 * the summary's pass_at_k_canonical is EvalPlus's base pass@k beside
 * pass_at_k on base + plus. The tests compare as EvalPlus's do, with the
 * row's atol (pyvalue/judge.h, ee_judge_evalplus). The inputs are plain
 * JSON here and become canonical values (a JSON array is a list, an
 * object a dict).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonfield.h"
#include "input/task.h"
#include "input/task_int.h"

static const struct ee_jf_num_rule non_negative = { 0, 1, 0, "a number >= 0" };

/* {tag: inner}; inner is stolen, also on failure. */
static json_t *tagged(const char *tag, json_t *inner)
{
	json_t *o = inner ? json_object() : NULL;

	if (!o) {
		json_decref(inner);
		return NULL;
	}
	return json_object_set_new(o, tag, inner) < 0 ? (json_decref(o), NULL) : o;
}

/* A plain JSON value as a canonical one (docs/protocol.md), NULL when out
 * of memory or nested deeper than 100. */
static json_t *canonical(const json_t *v, int depth)
{
	char text[64];
	const char *key;
	json_t *x, *out, *items;
	size_t i;

	if (depth > 100)
		return NULL;
	switch (json_typeof(v)) {
	case JSON_NULL: return json_null();
	case JSON_TRUE: return json_true();
	case JSON_FALSE: return json_false();
	case JSON_STRING: return json_stringn(json_string_value(v), json_string_length(v));
	case JSON_INTEGER:
		snprintf(text, sizeof(text), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return tagged("int", json_string(text));
	case JSON_REAL:
		snprintf(text, sizeof(text), "%.17g", json_real_value(v));
		return tagged("float", json_string(text));
	case JSON_ARRAY:
		items = json_array();
		json_array_foreach (v, i, x)
			if (!items || json_array_append_new(items, canonical(x, depth + 1)) < 0) {
				json_decref(items);
				return NULL;
			}
		return tagged("list", items);
	case JSON_OBJECT:
		items = json_array();
		json_object_foreach ((json_t *)v, key, x) {
			out = json_array();
			/* the pair complete, or freed here; then appended (or freed by the append) */
			if (out && (json_array_append_new(out, json_string(key)) < 0 ||
			            json_array_append_new(out, canonical(x, depth + 1)) < 0)) {
				json_decref(out);
				out = NULL;
			}
			if (!items || !out || json_array_append_new(items, out) < 0) {
				if (!items)
					json_decref(out);
				json_decref(items);
				return NULL;
			}
		}
		return tagged("dict", items);
	}
	return NULL;
}

/* Appends each argument list of obj[key] (an array of arrays) to inputs. */
static int read_inputs(const struct ee_jf *c, const json_t *obj, const char *key, int required,
                       json_t *inputs)
{
	json_t *list, *args;
	size_t i;

	if (ee_jf_array(c, obj, key, required, "an array of argument arrays", &list) < 0)
		return -1;
	json_array_foreach (list, i, args) {
		char name[64];
		if (!json_is_array(args))
			return ee_jf_bad(c, ee_jf_elem(key, i, name, sizeof(name)), "an array of arguments",
			                 args);
		json_t *a = canonical(args, 0);
		json_t *items = json_incref(json_object_get(a, "list"));
		json_decref(a);
		if (!items || json_array_append_new(inputs, items) < 0)
			return ee_jf_oom(c);
	}
	return 0;
}

int ee_task_parse_evalplus(const struct ee_jf *c, const json_t *obj, unsigned opts, struct ee_task *t)
{
	char *solution = NULL;
	double atol = 0;

	(void)opts;
	struct ee_task_gen *g = calloc(1, sizeof(*g));
	if (!g)
		return ee_jf_oom(c);
	t->gen = g;
	g->tier = EE_TIER_PROPERTY;
	g->inputs = json_array();
	if (!g->inputs)
		return ee_jf_oom(c);
	if (ee_jf_str(c, obj, "prompt", 0, "", &t->prompt) < 0 ||
	    ee_jf_name(c, obj, "entry_point", &t->entry_point) < 0 ||
	    ee_jf_str(c, obj, "canonical_solution", 1, NULL, &solution) < 0 ||
	    read_inputs(c, obj, "base_input", 1, g->inputs) < 0)
		goto fail;
	g->n_base = json_array_size(g->inputs);
	if (read_inputs(c, obj, "plus_input", 0, g->inputs) < 0 ||
	    ee_jf_num(c, obj, "atol", &non_negative, &atol, NULL) < 0)
		goto fail;
	g->n = (unsigned)json_array_size(g->inputs);
	/* as given, 0 included: the rule (ee_judge_evalplus) gives floats
	 * EvalPlus's 1e-6 and keeps everything else exact, as EvalPlus does */
	g->float_tol = atol;
	if (g->n == 0) {
		ee_jf_fail(c, "base_input", "expected at least one input");
		goto fail;
	}
	if (asprintf(&g->reference, "%s%s", t->prompt, solution) < 0) {
		g->reference = NULL;
		ee_jf_oom(c);
		goto fail;
	}
	free(solution);
	return 0;
fail:
	free(solution);
	return -1;
}
