/* test_outpath.c - output checks by identity and whole-file writes (outpath.h). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "results/outpath.h"

#include "leakcheck.h"

static char dir[64];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/ee-outpath-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	cr_assert_eq(chdir(dir), 0);
	FILE *f = fopen("in.jsonl", "w");
	cr_assert_not_null(f);
	fputs("{}\n", f);
	fclose(f);
	cr_assert_eq(link("in.jsonl", "hard.jsonl"), 0);
	cr_assert_eq(symlink("in.jsonl", "link.jsonl"), 0);
	cr_assert_eq(symlink("new.jsonl", "dangling.jsonl"), 0);
	cr_assert_eq(mkdir("sub", 0755), 0);
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

struct check_case {
	const char *out, *out2; /* out2: a second output, or NULL */
	int force;
	int ok;
	const char *says; /* a part of the message when refused */
};

static const struct check_case cases[] = {
	{ "new.jsonl", NULL, 0, 1, NULL },
	{ "new.jsonl", "other.json", 0, 1, NULL },
	{ "in.jsonl", NULL, 0, 0, "is the input --samples in.jsonl" },
	{ "./in.jsonl", NULL, 0, 0, "is the input" },
	{ "hard.jsonl", NULL, 0, 0, "is the input" },
	{ "link.jsonl", NULL, 0, 0, "symbolic link" },
	{ "link.jsonl", NULL, 1, 0, "is the input" }, /* --force never lets an input go */
	{ "dangling.jsonl", NULL, 0, 0, "symbolic link" },
	{ "new.jsonl", "./new.jsonl", 0, 0, "are the same file" },
	{ "new.jsonl", "sub/../new.jsonl", 0, 0, "are the same file" },
	{ "sub", NULL, 0, 0, "is a directory" },
	{ "missing/r.jsonl", NULL, 0, 0, "directory missing" },
	{ "sub/", NULL, 0, 0, "is a directory" },
};

Test(outpath, outputs_are_compared_by_identity, .init = setup, .fini = teardown)
{
	const struct ee_path_role in[] = { { "--tasks", "nothere.jsonl" }, { "--samples", "in.jsonl" } };
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct check_case *c = &cases[i];
		struct ee_path_role out[2] = { { "-o", c->out }, { "--summary-json", c->out2 } };
		struct ee_err err = { 0 };
		int rc = ee_outputs_check(in, 2, out, c->out2 ? 2 : 1, c->force, &err);
		cr_expect_eq(rc, c->ok ? 0 : -1, "case %zu (%s): %s", i, c->out, err.msg);
		if (!c->ok)
			cr_expect_not_null(strstr(err.msg, c->says), "case %zu: '%s' lacks '%s'", i, err.msg,
			                   c->says);
	}
	no_leaks();
}

Test(outpath, output_open_does_not_follow_a_symlink_unless_forced, .init = setup, .fini = teardown)
{
	struct ee_err err = { 0 };
	cr_expect_eq(ee_output_open("link.jsonl", O_WRONLY | O_APPEND, 0, &err), -1);
	cr_expect_not_null(strstr(err.msg, "symbolic link"), "%s", err.msg);
	int fd = ee_output_open("link.jsonl", O_WRONLY | O_APPEND, 1, &err);
	cr_expect_geq(fd, 0, "%s", err.msg);
	close(fd);
}

Test(outpath, atomic_write_replaces_the_file_whole, .init = setup, .fini = teardown)
{
	struct ee_err err = { 0 };
	struct stat st;
	char buf[16] = { 0 };

	cr_assert_eq(ee_write_atomic("hard.jsonl", "new\n", 4, 0, &err), 0, "%s", err.msg);
	FILE *f = fopen("in.jsonl", "r"); /* the other name of the old file */
	cr_assert_not_null(f);
	cr_expect_eq(fread(buf, 1, sizeof(buf) - 1, f), 3);
	fclose(f);
	cr_expect_str_eq(buf, "{}\n");
	cr_expect_eq(stat("hard.jsonl", &st), 0);
	cr_expect_eq(st.st_size, 4);
	cr_expect_eq(ee_write_atomic("link.jsonl", "x", 1, 0, &err), -1);
	cr_expect_eq(ee_write_atomic("missing/x", "x", 1, 0, &err), -1);
	cr_expect_not_null(strstr(err.msg, "temporary file"), "%s", err.msg);
	/* with force, through the link: the link stays a link, its target changes */
	cr_expect_eq(ee_write_atomic("link.jsonl", "abc", 3, 1, &err), 0, "%s", err.msg);
	cr_expect_eq(lstat("link.jsonl", &st), 0);
	cr_expect(S_ISLNK(st.st_mode));
	cr_expect_eq(stat("in.jsonl", &st), 0);
	cr_expect_eq(st.st_size, 3);
	no_leaks();
}
