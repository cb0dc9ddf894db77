/* run-overhead - what the sandbox costs per candidate, against no sandbox.
 *
 * In one invocation (these machines are shared and noisy, so only ratios
 * measured side by side mean anything), N trivial candidates (a one-line
 * function and one assert) are evaluated one after another:
 *   baseline:  posix_spawn("/usr/bin/python3 -I -S file.py") and wait, no sandbox;
 *   execeval:  the library path of `execeval run` (job, sandbox, harness,
 *              event validation, verdict, record), full isolation.
 * Rounds alternate (baseline, execeval, baseline, ...) so drift in machine
 * load hits both. Prints per-candidate wall time and the ratio.
 *
 * usage: run-overhead [N (default 1000)] [ROUNDS (default 4)]
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine.h"
#include "engine/evaluate.h"
#include "options/options.h"
#include "base/loop.h"
#include "input/task.h"

extern char **environ;

static const char program[] = "def add(a, b):\n    return a + b\n";
static const char assertion[] = "assert add(1, 2) == 3";

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int baseline(const char *path, int n)
{
	char *argv[] = { "/usr/bin/python3", "-I", "-S", (char *)path, NULL };
	for (int i = 0; i < n; i++) {
		pid_t pid;
		int status;
		if (posix_spawn(&pid, argv[0], NULL, NULL, argv, environ) != 0)
			return -1;
		if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			return -1;
	}
	return 0;
}

struct tally {
	int pass, other;
};

static void count(void *ctx, json_t *rec)
{
	struct tally *t = ctx;
	const char *status = json_string_value(json_object_get(rec, "status"));
	if (status && strcmp(status, "pass") == 0)
		t->pass++;
	else
		t->other++;
	json_decref(rec);
}

static int sandboxed(struct ee_engine *eng, const struct ee_eval_options *o, const struct ee_task *task,
                     int n, struct tally *t)
{
	struct ee_err err;
	struct ee_candidate c = { .task = task, .program = program, .sample = -1 };
	for (int i = 0; i < n; i++) {
		if (ee_eval_start(eng, o, &c, count, t, &err) < 0 ||
		    ee_loop_run(ee_engine_loop(eng), &err) != 0) {
			fprintf(stderr, "run-overhead: %s\n", err.msg);
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	int rounds = argc > 2 ? atoi(argv[2]) : 4;
	struct ee_engine_config cfg;
	struct ee_engine *eng = NULL;
	struct ee_eval_options o;
	struct ee_task task;
	struct ee_err err;
	const char *asserts[] = { assertion };
	char path[] = "/tmp/execeval-bench-XXXXXX.py";

	if (n <= 0 || rounds <= 0 || n % rounds) {
		fprintf(stderr, "usage: run-overhead [N] [ROUNDS], N a multiple of ROUNDS\n");
		return 2;
	}
	enum ee_extract_mode extract;
	ee_options_defaults(EE_FRONT_RUN, &(struct ee_option_sink){ &o, &extract });
	o.isolation = EE_ISOLATION_COLD;
	cfg = (struct ee_engine_config){ .opt = &o, .workers = 1 };
	if (ee_engine_open(&cfg, &eng, &err) < 0 || ee_task_from_asserts(asserts, 1, &task, &err) < 0) {
		fprintf(stderr, "run-overhead: %s\n", err.msg);
		return 3;
	}

	int fd = mkstemps(path, 3);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f || fprintf(f, "%s%s\n", program, assertion) < 0 || fclose(f) != 0) {
		perror("run-overhead: temporary file");
		return 3;
	}
	double t_base = 0, t_box = 0;
	struct tally tally = { 0, 0 };
	for (int r = 0; r < rounds; r++) {
		double t0 = now_s();
		if (baseline(path, n / rounds) < 0) {
			fprintf(stderr, "run-overhead: the baseline failed\n");
			return 3;
		}
		double t1 = now_s();
		if (sandboxed(eng, &o, &task, n / rounds, &tally) < 0)
			return 3;
		t_box += now_s() - t1;
		t_base += t1 - t0;
	}
	unlink(path);
	printf("run-overhead: %d trivial candidates, sequential, %d alternating rounds\n", n, rounds);
	printf("  baseline  python3 -I -S file.py (no sandbox): %7.2f ms/candidate  %7.1f/s\n",
	       t_base * 1e3 / n, n / t_base);
	printf("  execeval  run, full isolation:                %7.2f ms/candidate  %7.1f/s\n",
	       t_box * 1e3 / n, n / t_box);
	printf("  ratio execeval/baseline: %.2fx   (records: %d pass, %d other)\n", t_box / t_base,
	       tally.pass, tally.other);
	ee_task_free(&task);
	ee_engine_close(eng);
	return tally.other ? 1 : 0;
}
