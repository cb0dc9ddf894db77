/* test_summary_json.c - the summary's "environment" (summary.h, made by
 * summary_json.c). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "results/summary.h"

struct env_case {
	const char *name;
	const char *python; /* "HANG": a script that never answers */
	int warm, weak;
	const char *want_isolation;
	int want_version; /* 1: "3.x.y", 0: null */
};

static const struct env_case cases[] = {
	{ "the host's python, warm", "/usr/bin/python3", 1, 0, "warm", 1 },
	{ "cold with weak limits", "/usr/bin/python3", 0, 1, "cold", 1 },
	{ "missing interpreter", "/nonexistent/python3", 0, 0, "cold", 0 },
	{ "an interpreter that says nothing", "/bin/true", 1, 0, "warm", 0 },
	{ "an interpreter that hangs", "HANG", 0, 0, "cold", 0 },
};

static char *hanging_script(void)
{
	static char path[] = "/tmp/ee-hang-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "#!/bin/sh\nexec sleep 60\n", 24), 24);
	close(fd);
	chmod(path, 0700);
	return path;
}

Test(environment, table, .timeout = 30)
{
	struct utsname u;
	cr_assert_eq(uname(&u), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct env_case *tc = &cases[i];
		const char *python = strcmp(tc->python, "HANG") == 0 ? hanging_script() : tc->python;
		time_t t0 = time(NULL);
		json_t *env = ee_summary_environment(python, tc->warm, tc->weak);
		cr_assert_not_null(env, "%s", tc->name);
		cr_expect_leq(time(NULL) - t0, 7, "%s: bounded wait", tc->name);
		json_t *py = json_object_get(env, "interpreter");
		cr_expect_str_eq(json_string_value(json_object_get(env, "execeval_version")), EE_VERSION);
		cr_expect_str_eq(json_string_value(json_object_get(env, "isolation")), tc->want_isolation,
		                 "%s", tc->name);
		cr_expect_eq(json_is_true(json_object_get(env, "weak_limits")), tc->weak, "%s", tc->name);
		cr_expect_str_eq(json_string_value(json_object_get(env, "kernel")), u.release);
		cr_expect_str_eq(json_string_value(json_object_get(py, "path")), python, "%s", tc->name);
		const char *v = json_string_value(json_object_get(py, "version"));
		if (tc->want_version)
			cr_expect(v && strncmp(v, "3.", 2) == 0 && !strchr(v, '\n'), "%s: version %s",
			          tc->name, v ? v : "(null)");
		else
			cr_expect(json_is_null(json_object_get(py, "version")), "%s: version %s", tc->name,
			          v ? v : "(not null)");
		if (python != tc->python)
			unlink(python);
		json_decref(env);
	}
}

Test(environment, unknown_interpreter)
{
	json_t *env = ee_summary_environment(NULL, 0, 0);
	cr_assert_not_null(env);
	json_t *py = json_object_get(env, "interpreter");
	cr_expect(json_is_null(json_object_get(py, "path")));
	cr_expect(json_is_null(json_object_get(py, "version")));
	json_decref(env);
}
