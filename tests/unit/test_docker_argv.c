/* test_docker_argv.c - the Docker backend's `docker run` command
 * (docker_argv.h), argument by argument: every privilege dropped, every
 * limit passed, nothing of the host mounted, the image checked. */
#include <criterion/criterion.h>
#include <string.h>

#include "base/err.h"
#include "base/resource_limits.h"
#include "sandbox/docker_argv.h"

static struct ee_limits limits(void)
{
	struct ee_limits l;
	ee_limits_default(&l);
	l.memory_mb = 512;
	l.procs = 64;
	l.tmp_mb = 32;
	l.open_files = 256;
	l.file_mb = 16;
	return l;
}

static void build(const char *image, struct ee_docker_argv *a)
{
	struct ee_limits l = limits();
	struct ee_docker_spec s = { .docker = "docker",
		                    .image = image,
		                    .name = "execeval-0123456789abcdef",
		                    .limits = &l,
		                    .cpus = 1 };
	struct ee_err err = { 0 };
	cr_assert_eq(ee_docker_argv_build(&s, a, &err), 0, "%s", err.msg);
}

Test(docker_argv, every_argument_in_order)
{
	static const char *const want[] = {
		"docker",
		"run",
		"--rm",
		"-i",
		"--name",
		"execeval-0123456789abcdef",
		"--pull",
		"never",
		"--network",
		"none",
		"--read-only",
		"--tmpfs",
		"/tmp:rw,noexec,nosuid,nodev,size=32m,mode=1777",
		"--shm-size",
		"32m",
		"--user",
		"65534:65534",
		"--cap-drop",
		"ALL",
		"--security-opt",
		"no-new-privileges",
		"--pids-limit",
		"64",
		"--memory",
		"512m",
		"--memory-swap",
		"512m",
		"--cpus",
		"1",
		"--ulimit",
		"nofile=256:256",
		"--ulimit",
		"fsize=16777216:16777216",
		"--log-driver",
		"none",
		"--entrypoint",
		"/usr/local/bin/execeval",
		"execeval:latest",
		"__gvisor-relay",
		"/usr/bin/python3",
		"640",
	};
	struct ee_docker_argv a;
	build(NULL, &a);
	size_t n = sizeof(want) / sizeof(want[0]);
	cr_assert_eq((size_t)a.argc, n, "argc %d", a.argc);
	for (size_t i = 0; i < n; i++)
		cr_expect_str_eq(a.argv[i], want[i], "argument %zu", i);
	cr_assert_null(a.argv[a.argc]);
}

Test(docker_argv, no_swap_the_memory_limit_twice)
{
	struct ee_docker_argv a;
	build(NULL, &a);
	const char *mem = NULL, *swap = NULL;
	for (int i = 0; i + 1 < a.argc; i++) {
		if (strcmp(a.argv[i], "--memory") == 0)
			mem = a.argv[i + 1];
		if (strcmp(a.argv[i], "--memory-swap") == 0)
			swap = a.argv[i + 1];
	}
	cr_assert(mem && swap);
	cr_assert_str_eq(mem, swap);
}

Test(docker_argv, nothing_of_the_host_and_no_privilege)
{
	static const char *const never[] = { "-v",         "--volume", "--mount", "--privileged",
		                             "--cap-add",  "--device", "--pid",   "--ipc",
		                             "--userns",   "--net",    "-e",      "--env",
		                             "--env-file", "-t",       "--tty",   "host" };
	struct ee_docker_argv a;
	build(NULL, &a);
	for (int i = 0; i < a.argc; i++)
		for (size_t j = 0; j < sizeof(never) / sizeof(never[0]); j++)
			cr_expect_str_neq(a.argv[i], never[j], "argument %d", i);
}

Test(docker_argv, the_image_is_the_one_given)
{
	struct ee_docker_argv a;
	build("registry.example/eval/execeval:1.2@sha256:ab", &a);
	cr_assert_str_eq(a.argv[a.argc - 4], "registry.example/eval/execeval:1.2@sha256:ab");
}

Test(docker_argv, an_image_that_could_be_an_option_or_two_words_is_refused)
{
	static const char *const bad[] = { "--privileged", "-v", "a b", "x;rm", "", "a$(id)" };
	struct ee_limits l = limits();
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ee_docker_spec s = {
			.docker = "docker", .image = bad[i], .name = "n", .limits = &l, .cpus = 1
		};
		struct ee_docker_argv a;
		struct ee_err err = { 0 };
		cr_expect_eq(ee_docker_argv_build(&s, &a, &err), -1, "image '%s'", bad[i]);
		cr_expect_eq(err.code, EE_ERR_USAGE);
	}
}

Test(docker_argv, the_name_is_random_and_docker_safe)
{
	char a[32], b[32];
	cr_assert_eq(ee_docker_name(a, sizeof(a)), 0);
	cr_assert_eq(ee_docker_name(b, sizeof(b)), 0);
	cr_assert_eq(strlen(a), strlen("execeval-") + 16);
	cr_assert_eq(strncmp(a, "execeval-", 9), 0);
	cr_assert_str_neq(a, b);
	cr_assert_eq(ee_docker_name(a, 16), -1);
}

Test(docker_argv, the_shell_line_quotes_what_needs_it)
{
	struct ee_docker_argv a = { 0 };
	char line[256];
	a.argv[0] = "docker";
	a.argv[1] = "it's";
	a.argv[2] = "a b";
	a.argv[3] = "";
	a.argc = 4;
	size_t n = ee_docker_argv_shell(&a, line, sizeof(line));
	cr_assert_str_eq(line, "docker 'it'\\''s' 'a b' ''");
	cr_assert_eq(n, strlen(line));
	cr_assert_eq(ee_docker_argv_shell(&a, line, 4), n);
	cr_assert_str_eq(line, "doc");
}
