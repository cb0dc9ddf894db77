/* test_record.c - the record shapes built without a sandbox (record.h):
 * their keys, in order, as results files have always had them. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "leakcheck.h"
#include "verdict/record.h"

static void expect_dump(json_t *rec, const char *want)
{
	cr_assert_not_null(rec);
	char *got = json_dumps(rec, JSON_COMPACT);
	cr_expect_str_eq(got, want);
	free(got);
	json_decref(rec);
}

/* The host failed, not the candidate: no reward, and a flag a trainer masks. */
Test(record, a_sandbox_error_names_the_task_and_why)
{
	expect_dump(ee_record_sandbox_error("t/1", "cannot clone"),
	            "{\"task_id\":\"t/1\",\"sandbox_error\":\"cannot clone\",\"reward\":null,"
	            "\"infra_error\":true,\"execeval_version\":\"" EE_VERSION "\"}");
	no_leaks();
}

/* eval's: the sample's key first, so the results file holds it in place. */
Test(record, a_samples_sandbox_error_carries_its_key)
{
	expect_dump(ee_record_sample_sandbox_error("t/1", 3, "m", "1/2", "cannot clone"),
	            "{\"task_id\":\"t/1\",\"sample\":3,\"model\":\"m\",\"shard\":\"1/2\","
	            "\"sandbox_error\":\"cannot clone\",\"reward\":null,\"infra_error\":true,"
	            "\"execeval_version\":\"" EE_VERSION "\"}");
	expect_dump(ee_record_sample_sandbox_error("t/1", -1, NULL, NULL, "x"),
	            "{\"task_id\":\"t/1\",\"sandbox_error\":\"x\",\"reward\":null,"
	            "\"infra_error\":true,\"execeval_version\":\"" EE_VERSION "\"}");
	no_leaks();
}

Test(record, an_invalid_sample_is_an_error_record_numbered_by_its_line)
{
	json_t *id = json_string("t/1");
	expect_dump(ee_record_invalid_sample(id, 7, "line 7: bad"),
	            "{\"task_id\":\"t/1\",\"sample\":-7,\"status\":\"error\",\"detail\":\"invalid sample\","
	            "\"score\":0.0,\"passed\":0,\"total\":0,\"reward\":-1,\"invalid\":true,\"line\":7,"
	            "\"message\":\"line 7: bad\"}");
	json_decref(id);
	no_leaks();
}

/* An unknown task's id is not copied (it must not become a task of its own);
 * a message that is not UTF-8 (cut inside a character) is left out. */
Test(record, an_invalid_sample_without_a_known_task_has_a_null_task_id)
{
	json_t *not_a_string = json_integer(3);
	expect_dump(ee_record_invalid_sample(NULL, 2, "x"),
	            "{\"task_id\":null,\"sample\":-2,\"status\":\"error\",\"detail\":\"invalid sample\","
	            "\"score\":0.0,\"passed\":0,\"total\":0,\"reward\":-1,\"invalid\":true,\"line\":2,"
	            "\"message\":\"x\"}");
	expect_dump(ee_record_invalid_sample(not_a_string, 2, "cut \xc3"),
	            "{\"task_id\":null,\"sample\":-2,\"status\":\"error\",\"detail\":\"invalid sample\","
	            "\"score\":0.0,\"passed\":0,\"total\":0,\"reward\":-1,\"invalid\":true,\"line\":2}");
	json_decref(not_a_string);
	no_leaks();
}
