/* test_summary_judged.c - the summary counts tests by who judged them
 * (the records' "judged_by": summary.h, docs/summary.md). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "results/summary.h"
#include "fixture_json.h"

static void add(struct ee_summary *s, const char *text)
{
	json_t *r = fix(text);
	struct ee_err err = { 0 };
	cr_assert_eq(ee_summary_add(s, r, "t", &err), 0, "%s", err.msg);
	json_decref(r);
}

static double count(const json_t *j, const char *who)
{
	return json_number_value(json_object_get(json_object_get(j, "judged_by"), who));
}

Test(summary_judged, tests_counted_by_judge_all_four_present)
{
	struct ee_summary *s = ee_summary_new();
	unsigned long k = 1;

	add(s, "{'task_id':'a','status':'pass','score':1,'tests':["
	       "{'status':'pass','judged_by':'supervisor'},{'status':'fail','judged_by':'sandbox'},"
	       "{'status':'pass','judged_by':'judge'},{'status':'pass','judged_by':'judge'}]}");
	/* older records (no key) and unknown names count nowhere */
	add(s, "{'task_id':'b','status':'pass','score':1,'tests':[{'status':'pass'},"
	       "{'status':'pass','judged_by':'someone'},{'status':'pass','judged_by':'candidate'}]}");
	json_t *j = ee_summary_json(s, &k, 1, 0.0);
	cr_assert_not_null(j);
	cr_expect_eq(json_object_size(json_object_get(j, "judged_by")), 4);
	cr_expect_eq(count(j, "supervisor"), 1);
	cr_expect_eq(count(j, "judge"), 2);
	cr_expect_eq(count(j, "candidate"), 1);
	cr_expect_eq(count(j, "sandbox"), 1);

	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	cr_assert_not_null(out);
	ee_summary_print(j, out);
	fclose(out);
	cr_expect(strstr(text, "tests judged by: supervisor 1 (20.0%) judge 2 (40.0%) candidate 1 (20.0%) "
	                       "sandbox 1 (20.0%)"),
	          "missing from:\n%s", text);
	free(text);
	json_decref(j);
	ee_summary_free(s);
}

Test(summary_judged, no_tests_no_line)
{
	struct ee_summary *s = ee_summary_new();
	unsigned long k = 1;

	add(s, "{'task_id':'a','status':'pass','score':1,'tests':[]}");
	json_t *j = ee_summary_json(s, &k, 1, 0.0);
	cr_expect_eq(count(j, "sandbox"), 0);
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	ee_summary_print(j, out);
	fclose(out);
	cr_expect_null(strstr(text, "judged by"), "%s", text);
	free(text);
	json_decref(j);
	ee_summary_free(s);
}
