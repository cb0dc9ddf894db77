/* get_reward.c - OpenRLHF's POST /get_reward (see get_reward.h): samples
 * read into runs, records turned into rewards. */
#include "serve/get_reward.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/jsonfield.h"
#include "input/compose.h"
#include "input/task.h"
#include "serve/prescan.h"

#define JSON_FLAGS (JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(15))
#define COUNT(a)   (sizeof(a) / sizeof((a)[0]))

/* End-of-sequence tokens a decoded query may end with (the chat templates
 * of Qwen, GPT-2/Qwen base, Llama 2, Llama 3, Phi-3, DeepSeek-R1): left on
 * a response that is plain code, they would make it a syntax error.
 * DeepSeek's is in octal escapes, which end after three digits. */
static const char *const eos_tokens[] = {
	"<|im_end|>", "<|endoftext|>", "</s>",
	"<|eot_id|>", "<|end|>",       "<\357\275\234end\342\226\201of\342\226\201sentence\357\275\234>"
};

__attribute__((format(printf, 3, 4))) static int fail(struct ee_err *err, const char *field, const char *fmt,
                                                      ...)
{
	struct ee_jf c = ee_jf_make(NULL, err);
	va_list ap;

	c.root = "body";
	va_start(ap, fmt);
	ee_jf_vfail(&c, field, fmt, ap);
	va_end(ap);
	return -1;
}

/* body[key]: an array of n elements (n: the query's, or set from it). */
static int read_list(const json_t *root, const char *key, size_t *n, const json_t **ret, struct ee_err *err)
{
	const json_t *v = json_object_get(root, key);

	*ret = v;
	if (!v)
		return fail(err, key, "required (a list, one element per sample)");
	if (!json_is_array(v))
		return fail(err, key, "expected a list, got %s", ee_jf_type_name(v));
	if (*n == (size_t)-1)
		*n = json_array_size(v);
	else if (json_array_size(v) != *n)
		return fail(err, key, "%zu elements, but query has %zu (one per sample)", json_array_size(v),
		            *n);
	return 0;
}

/* An RL row names itself by its data set's id field (task.c reads it):
 * "task_id" must not hide it. */
static int own_id(const json_t *obj)
{
	static const char *const keys[] = { "problem_id", "name", "question_id" };
	int format = ee_task_detect(obj);

	if (format < EE_FORMAT_APPS || format >= EE_FORMAT_COUNT)
		return 0;
	for (size_t i = 0; i < COUNT(keys); i++)
		if (json_object_get(obj, keys[i]))
			return 1;
	return 0;
}

/* A bare ground truth, {"inputs": [...], "outputs": [...]} with perhaps
 * "fn_name": what an APPS/TACO row's input_output, an OpenRLHF data set's
 * input_output column and verl's reward_model.ground_truth hold. Read as
 * the APPS row that holds it (a new reference; obj's is taken): its tests
 * are io tests, or call tests of fn_name, judged by the supervisor. One
 * with another key and no task format of its own is refused naming it. */
static json_t *bare_ground_truth(json_t *obj, const char *path, struct ee_err *err)
{
	const char *key;
	json_t *value;

	if (!json_object_get(obj, "inputs") || !json_object_get(obj, "outputs"))
		return obj;
	json_object_foreach (obj, key, value) {
		if (strcmp(key, "inputs") == 0 || strcmp(key, "outputs") == 0 || strcmp(key, "fn_name") == 0)
			continue;
		if (ee_task_detect(obj) >= 0)
			return obj;
		char field[128];
		snprintf(field, sizeof(field), "%.48s.%.60s", path, key);
		fail(err, field, "unknown key of a ground truth (expected inputs, outputs and fn_name)");
		json_decref(obj);
		return NULL;
	}
	return json_pack("{s:o}", "input_output", obj);
}

/* The label as a task object (a new reference): itself, or the object its
 * JSON text holds, or the APPS row a bare ground truth is; one without a
 * task_id (and not an RL row, which names itself) gets its path as one. */
static json_t *label_object(const json_t *label, const char *path, struct ee_err *err)
{
	json_t *obj;

	if (json_is_string(label)) {
		obj = json_loadb(json_string_value(label), json_string_length(label), 0, NULL);
		if (!json_is_object(obj)) {
			json_decref(obj);
			fail(err, path,
			     "a label is a task: a JSON object or a string holding one (its tests)");
			return NULL;
		}
	} else if (json_is_object(label)) {
		obj = json_copy((json_t *)label);
	} else {
		fail(err, path, "expected a task (a JSON object or its text), got %s",
		     ee_jf_type_name(label));
		return NULL;
	}
	if (obj)
		obj = bare_ground_truth(obj, path, err);
	if (obj && !json_object_get(obj, "task_id") && !own_id(obj))
		json_object_set_new(obj, "task_id", json_string(path));
	return obj;
}

/* What the query says after its prompt (get_reward.h), its end tokens off. */
static void response_of(const json_t *query, const json_t *prompt, const char **ret, size_t *len)
{
	const char *q = json_string_value(query);
	size_t n = json_string_length(query);

	if (prompt && json_string_length(prompt) > 0) {
		const char *p = json_string_value(prompt);
		size_t plen = json_string_length(prompt);
		const char *at = memmem(q, n, p, plen);
		if (at) {
			n -= (size_t)(at - q) + plen;
			q = at + plen;
		}
	}
	for (int cut = 1; cut;) {
		cut = 0;
		while (n > 0 && (q[n - 1] == ' ' || q[n - 1] == '\n' || q[n - 1] == '\t' || q[n - 1] == '\r'))
			n--;
		for (size_t i = 0; i < COUNT(eos_tokens); i++) {
			size_t t = strlen(eos_tokens[i]);
			if (n >= t && memcmp(q + n - t, eos_tokens[i], t) == 0) {
				n -= t;
				cut = 1;
			}
		}
	}
	*ret = q;
	*len = n;
}

/* Sample i's task: the previous sample's when its label is the same (a
 * GRPO group), else its own. */
static int sample_task(const json_t *labels, size_t i, const struct ee_request_rules *rules,
                       struct ee_request *r, struct ee_err *err)
{
	const json_t *label = json_array_get(labels, i);
	struct ee_run *run = &r->runs[i];
	char path[48];

	if (i > 0 && json_equal((json_t *)label, json_array_get(labels, i - 1))) {
		struct ee_run *prev = &r->runs[i - 1];
		run->task = prev->task; /* a shallow copy: the first of the group owns it */
		run->shared_task = 1;
		return 0;
	}
	snprintf(path, sizeof(path), "labels[%zu]", i);
	json_t *obj = label_object(label, path, err);
	if (!obj)
		return -1;
	int rc = ee_request_read_task(obj, path, rules, &run->task, err);
	json_decref(obj);
	return rc;
}

static int read_sample(const json_t *query, const json_t *prompt, const json_t *labels, size_t i,
                       const struct ee_request_rules *rules, struct ee_request *r, struct ee_err *err)
{
	struct ee_run *run = &r->runs[i];
	struct ee_extract_info how;
	char path[48];
	const char *text;
	size_t len;
	int rc;

	run->sample = (long)i;
	run->gen = ee_request_gen_default(rules); /* OpenRLHF's body says nothing of them */
	if (!json_is_string(query))
		return fail(err, ee_jf_elem("query", i, path, sizeof(path)), "expected a string");
	if (prompt && !json_is_string(prompt))
		return fail(err, ee_jf_elem("prompts", i, path, sizeof(path)), "expected a string");
	if ((rc = sample_task(labels, i, rules, r, err)) < 0)
		return rc;
	r->tests += run->task.n_tests;
	if (r->tests > rules->max_request_tests) {
		fail(err, "labels",
		     "the samples carry more than this server's --max-request-tests (%zu) tests in all",
		     rules->max_request_tests);
		return -2;
	}
	response_of(query, prompt, &text, &len);
	if (ee_compose_generation(&run->task, text, len, rules->extract, &run->program, &how, err) < 0)
		return -1;
	run->no_code_block = how.how == EE_HOW_NO_BLOCK;
	ee_extraction_name(&how, run->extraction, sizeof(run->extraction));
	return 0;
}

static int read_body(const json_t *root, const struct ee_request_rules *rules, struct ee_request *r,
                     int *records, struct ee_err *err)
{
	size_t n = (size_t)-1;
	const json_t *query, *prompts = NULL, *labels;
	const json_t *v = json_object_get(root, "records");

	if (v && !json_is_boolean(v))
		return fail(err, "records", "expected true or false");
	*records = json_is_true(v);
	if (read_list(root, "query", &n, &query, err) < 0)
		return -1;
	if (n == 0)
		return fail(err, "query", "expected at least one sample");
	if (n > rules->max_runs) {
		fail(err, "query", "%zu samples, more than the queue holds (%zu)", n, rules->max_runs);
		return -2;
	}
	if (json_object_get(root, "prompts") && !json_is_null(json_object_get(root, "prompts")) &&
	    read_list(root, "prompts", &n, &prompts, err) < 0)
		return -1;
	if (read_list(root, "labels", &n, &labels, err) < 0)
		return -1;
	if (!(r->runs = calloc(n, sizeof(*r->runs))))
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	r->n_runs = n;
	for (size_t i = 0; i < n; i++) {
		int rc = read_sample(json_array_get(query, i), prompts ? json_array_get(prompts, i) : NULL,
		                     labels, i, rules, r, err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int ee_get_reward_parse(const char *body, size_t len, const struct ee_request_rules *rules,
                        struct ee_request *ret, int *records, struct ee_err *err)
{
	struct ee_request r = { 0 };
	struct ee_prescan pre;
	int rc;

	ee_prescan(body, len, &pre); /* its values only: this shape has no "task" */
	if (pre.values > rules->max_values) {
		fail(err, "", "more than %zu JSON values (this server's --max-body-values)",
		     rules->max_values);
		return -2;
	}
	json_t *root = ee_request_load(body, len, err);
	if (!root)
		return -1;
	rc = json_is_object(root) ? read_body(root, rules, &r, records, err)
	                          : fail(err, "", "the body must be a JSON object");
	json_decref(root);
	if (rc < 0) {
		ee_request_printable(err);
		ee_request_free(&r);
		return rc;
	}
	*ret = r;
	return 0;
}

/* ---- the answer ---------------------------------------------------------- */

/* extra_logs' lists, one number per sample, in this order. */
enum {
	LOG_PASS,
	LOG_ASSERTION_FAIL,
	LOG_SYNTAX_ERROR,
	LOG_TIMEOUT,
	LOG_ERROR,
	LOG_INFRA,
	LOG_PASSED,
	LOG_TOTAL,
	/* Tests by who judged them (the record's judged_by): a trainer sees
	 * at once when any was judged in the candidate's own interpreter
	 * (sandbox: --judge inline only), the one forgeable kind. */
	LOG_BY_SUPERVISOR,
	LOG_BY_JUDGE,
	LOG_BY_SANDBOX,
	LOG_COUNT
};
static const char *const log_names[LOG_COUNT] = { "pass",
	                                          "assertion_fail",
	                                          "syntax_error",
	                                          "timeout",
	                                          "error",
	                                          "infra_error",
	                                          "passed",
	                                          "total",
	                                          "judged_by_supervisor",
	                                          "judged_by_judge",
	                                          "judged_by_sandbox" };

static double number(const json_t *v)
{
	double x = json_is_number(v) ? json_number_value(v) : 0.0;
	return isfinite(x) ? x : 0.0;
}

/* Appends record rec's reward, score and logs. */
static int add_sample(const json_t *rec, json_t *rewards, json_t *scores, json_t *const *logs)
{
	const char *status = json_string_value(json_object_get(rec, "status"));
	int infra = json_is_true(json_object_get(rec, "infra_error")) || !status;
	double row[LOG_COUNT] = { 0 };

	for (int k = LOG_PASS; k <= LOG_ERROR; k++)
		row[k] = status && strcmp(status, log_names[k]) == 0;
	row[LOG_INFRA] = infra;
	row[LOG_PASSED] = number(json_object_get(rec, "passed"));
	row[LOG_TOTAL] = number(json_object_get(rec, "total"));
	size_t i;
	const json_t *test;
	json_array_foreach (json_object_get(rec, "tests"), i, test) {
		const char *by = json_string_value(json_object_get(test, "judged_by"));
		for (int k = LOG_BY_SUPERVISOR; by && k <= LOG_BY_SANDBOX; k++)
			row[k] += strcmp(by, log_names[k] + strlen("judged_by_")) == 0;
	}
	/* An unjudged sample is 0.0, flagged in infra_error (get_reward.h). */
	if (json_array_append_new(rewards, json_real(infra ? 0.0 : number(json_object_get(rec, "reward")))) <
	            0 ||
	    json_array_append_new(scores, json_real(infra ? 0.0 : number(json_object_get(rec, "score")))) < 0)
		return -1;
	for (int k = 0; k < LOG_COUNT; k++)
		if (json_array_append_new(logs[k], json_integer((json_int_t)row[k])) < 0)
			return -1;
	return 0;
}

char *ee_get_reward_answer(char *const *texts, const size_t *lens, size_t n, int records, size_t *len)
{
	json_t *rewards = json_array(), *scores = json_array(), *extra = json_object();
	json_t *all = records ? json_array() : NULL;
	json_t *logs[LOG_COUNT];
	json_t *answer =
	        json_pack("{s:o, s:o, s:o}", "rewards", rewards, "scores", scores, "extra_logs", extra);
	char *text = NULL;
	int ok = answer && (!records || (all && json_object_set_new(answer, "records", all) == 0));

	for (int k = 0; k < LOG_COUNT; k++) {
		logs[k] = json_array();
		if (json_object_set_new(extra, log_names[k], logs[k]) < 0) /* taken either way */
			ok = 0;
	}
	for (size_t i = 0; ok && i < n; i++) {
		json_t *rec = texts[i] ? json_loadb(texts[i], lens[i], 0, NULL) : NULL;
		ok = json_is_object(rec) && add_sample(rec, rewards, scores, logs) == 0 &&
		     (!records || json_array_append(all, rec) == 0);
		json_decref(rec);
	}
	if (ok)
		text = json_dumps(answer, JSON_FLAGS);
	json_decref(answer);
	*len = text ? strlen(text) : 0;
	return text;
}
