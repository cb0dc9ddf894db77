/* test_environment.c - the packages' fingerprint (results/environment.h)
 * and how two environments differ; also ee_results_count, which eval's
 * refusal to overwrite a results file counts with. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/err.h"
#include "base/sha256.h"
#include "results/environment.h"
#include "results/results.h"

#include "leakcheck.h"
#include "tmpdir.h"

static const char *sub(const char *name)
{
	static char path[2][256];
	static int i;
	i ^= 1;
	snprintf(path[i], sizeof(path[i]), "%s/%s", dir, name);
	return path[i];
}

static void mk(const char *name)
{
	cr_assert_eq(mkdir(sub(name), 0755), 0, "%s", name);
}

static void sha_of(const char *text, char hex[EE_SHA256_HEX])
{
	struct ee_sha256 c;
	uint8_t d[EE_SHA256_LEN];
	ee_sha256_init(&c);
	ee_sha256_update(&c, text, strlen(text));
	ee_sha256_final(&c, d);
	ee_sha256_hex(d, hex);
}

Test(environment, packages_are_named_from_their_metadata_entries_sorted_over_every_dir, .init = tmpdir_make,
     .fini = tmpdir_remove)
{
	char a[256], b[256], hex[EE_SHA256_HEX];
	mk("a");
	mk("b");
	mk("a/NumPy-1.24.2.dist-info");
	mk("a/numpy"); /* the package itself: not metadata */
	mk("b/python_apt-2.6.0.egg-info");
	mk("b/six-1.16.0-py3.11.egg-info");
	mk("b/zope.interface-5.5.2.dist-info");
	snprintf(a, sizeof(a), "%s", sub("a"));
	snprintf(b, sizeof(b), "%s", sub("b"));
	const char *dirs[] = { b, "/nonexistent/dist-packages", a };
	json_t *p = ee_env_packages_in(dirs, 3);

	cr_assert_not_null(p);
	cr_expect_eq(json_integer_value(json_object_get(p, "count")), 4);
	sha_of("numpy==1.24.2\npython_apt==2.6.0\nsix==1.16.0\nzope_interface==5.5.2\n", hex);
	cr_expect_str_eq(json_string_value(json_object_get(p, "sha256")), hex, "sorted name==version lines");
	const json_t *found = json_object_get(p, "dirs");
	cr_expect_eq(json_array_size(found), 2, "only the directories that exist");
	/* the directories' order does not matter; a new package does */
	const char *swapped[] = { a, b };
	json_t *q = ee_env_packages_in(swapped, 2);
	cr_expect_str_eq(json_string_value(json_object_get(q, "sha256")), hex);
	mk("a/requests-2.28.1.dist-info");
	json_t *r = ee_env_packages_in(swapped, 2);
	cr_expect_str_neq(json_string_value(json_object_get(r, "sha256")), hex);
	json_decref(p);
	json_decref(q);
	json_decref(r);
	no_leaks();
}

Test(environment, an_unknown_version_has_no_fingerprint)
{
	json_t *p = ee_env_packages(NULL), *q = ee_env_packages("not a version");
	cr_expect(json_is_null(p) && json_is_null(q));
	json_decref(p);
	json_decref(q);
}

Test(environment, no_directory_is_no_package_and_the_empty_fingerprint)
{
	/* --packages stdlib, or a host with no dist-packages directory */
	json_t *p = ee_env_packages_in(NULL, 0);

	cr_assert_not_null(p);
	cr_expect_eq(json_integer_value(json_object_get(p, "count")), 0);
	cr_expect_eq(json_array_size(json_object_get(p, "dirs")), 0);
	cr_expect_str_eq(json_string_value(json_object_get(p, "sha256")),
	                 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	json_decref(p);
}

Test(environment, differences_name_the_interpreter_and_the_packages)
{
	json_t *a = json_pack("{s:{s:s}, s:{s:s, s:i}}", "interpreter", "version", "3.11.2", "packages",
	                      "sha256", "aaaaaaaaaaaa", "count", 3);
	json_t *b = json_pack("{s:{s:s}, s:{s:s, s:i}}", "interpreter", "version", "3.11.2", "packages",
	                      "sha256", "bbbbbbbbbbbb", "count", 4);
	json_t *c = json_pack("{s:{s:s}, s:n}", "interpreter", "version", "3.12.0", "packages");
	char what[256];

	cr_expect_eq(ee_env_differs(a, a, what, sizeof(what)), 0);
	cr_expect_eq(ee_env_differs(a, b, what, sizeof(what)), 1);
	cr_expect_str_eq(what, "packages 3 -> 4 (fingerprint aaaaaaaa -> bbbbbbbb)");
	cr_expect_eq(ee_env_differs(a, c, what, sizeof(what)), 1,
	             "the packages unknown: the version differs");
	cr_expect_str_eq(what, "python 3.11.2 -> 3.12.0");
	cr_expect_eq(ee_env_differs(NULL, b, what, sizeof(what)), 0, "unknown: no claim");
	json_decref(a);
	json_decref(b);
	json_decref(c);
}

Test(results_count, counts_lines_with_content_a_torn_last_one_too, .init = tmpdir_make, .fini = tmpdir_remove)
{
	unsigned long n = 7;
	struct ee_err err = { 0 };

	cr_expect_eq(ee_results_count(sub("absent.jsonl"), &n, &err), 0);
	cr_expect_eq(n, 0, "an absent file holds none");
	write_file("empty.jsonl", "");
	cr_expect_eq(ee_results_count(sub("empty.jsonl"), &n, &err), 0);
	cr_expect_eq(n, 0);
	write_file("r.jsonl", "{\"a\": 1}\n\n  \t\n{\"b\": 2}\n{\"torn");
	cr_expect_eq(ee_results_count(sub("r.jsonl"), &n, &err), 0);
	cr_expect_eq(n, 3, "blank lines are not records; a torn last line is someone's work");
	cr_expect_eq(ee_results_count(dir, &n, &err), -1, "a directory cannot be read");
	cr_expect(strstr(err.msg, dir) != NULL, "%s", err.msg);
}
