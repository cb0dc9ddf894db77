/* test_stats.c - the text of serve's GET /metrics (stats.h). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/stats.h"

static unsigned long long value_of(const char *text, const char *series)
{
	char key[200];
	snprintf(key, sizeof(key), "\n%s ", series);
	const char *p = strstr(text, key);
	cr_assert_not_null(p, "no series %s", series);
	return strtoull(p + strlen(key), NULL, 10);
}

Test(stats, render)
{
	struct ee_serve_stats s;
	struct ee_serve_gauges g = { .queue_depth = 3,
		                     .queue_capacity = 8,
		                     .running = 2,
		                     .workers = 2,
		                     .healthy = 0,
		                     .starts_failing = 4,
		                     .start_failures = 9,
		                     .worker_replacements = 5 };
	size_t len;

	memset(&s, 0, sizeof(s));
	ee_stats_answer(&s, ee_endpoint_of("/v1/run"), 200);
	ee_stats_answer(&s, ee_endpoint_of("/v1/run"), 200);
	ee_stats_answer(&s, ee_endpoint_of("/evil\"path"), 404);
	ee_stats_answer(&s, ee_endpoint_of("/v1/batch"), 418);
	ee_stats_record(&s, "pass");
	ee_stats_record(&s, "timeout");
	ee_stats_record(&s, NULL);
	ee_stats_record(&s, "bogus");
	ee_stats_observe(&s.request_s[EE_EP_RUN], 0.003);
	ee_stats_observe(&s.request_s[EE_EP_RUN], 0.7);
	ee_stats_observe(&s.request_s[EE_EP_RUN], 500);
	char *text = ee_stats_render(&s, &g, &len);
	cr_assert_not_null(text);
	cr_expect_eq(strlen(text), len);
	cr_expect_eq(value_of(text, "execeval_http_requests_total{endpoint=\"/v1/run\",code=\"200\"}"), 2);
	cr_expect_eq(value_of(text, "execeval_http_requests_total{endpoint=\"other\",code=\"404\"}"), 1);
	cr_expect_eq(value_of(text, "execeval_http_requests_total{endpoint=\"/v1/batch\",code=\"other\"}"),
	             1);
	cr_expect_null(strstr(text, "evil"), "a path became a label");
	cr_expect_eq(value_of(text, "execeval_evaluations_total{status=\"pass\"}"), 1);
	cr_expect_eq(value_of(text, "execeval_evaluations_total{status=\"timeout\"}"), 1);
	cr_expect_eq(value_of(text, "execeval_evaluations_total{status=\"error\"}"), 0);
	cr_expect_eq(value_of(text, "execeval_sandbox_failures_total"), 1);
	cr_expect_eq(value_of(text, "execeval_queue_depth"), 3);
	cr_expect_eq(value_of(text, "execeval_evaluations_running"), 2);
	const char *h = "execeval_request_duration_seconds_bucket{endpoint=\"/v1/run\",le=";
	char key[160];
	snprintf(key, sizeof(key), "%s\"0.005\"}", h);
	cr_expect_eq(value_of(text, key), 1);
	snprintf(key, sizeof(key), "%s\"1\"}", h);
	cr_expect_eq(value_of(text, key), 2);
	snprintf(key, sizeof(key), "%s\"120\"}", h);
	cr_expect_eq(value_of(text, key), 2);
	snprintf(key, sizeof(key), "%s\"+Inf\"}", h);
	cr_expect_eq(value_of(text, key), 3);
	cr_expect_eq(value_of(text, "execeval_request_duration_seconds_count{endpoint=\"/v1/run\"}"), 3);
	cr_expect_eq(value_of(text, "execeval_evaluation_duration_seconds_count"), 0);
	cr_expect_eq(value_of(text, "execeval_healthy"), 0);
	cr_expect_eq(value_of(text, "execeval_sandbox_start_failures_in_a_row"), 4);
	cr_expect_eq(value_of(text, "execeval_sandbox_start_failures_total"), 9);
	cr_expect_eq(value_of(text, "execeval_worker_replacements_total"), 5);
	cr_expect(strstr(text, "# TYPE execeval_worker_replacements_total counter\n"));
	cr_expect(strstr(text, "# TYPE execeval_healthy gauge\n"));
	free(text);
}
