/* docker_command.c - `execeval docker-command`: the `docker run` command
 * the Docker backend runs for one candidate, printed as one shell line.
 *
 * The task's own limits override the command line's, as in a run. The
 * job (the candidate and its tests) and the supervisor's seccomp program
 * are not part of the command: they go on its standard input, framed as
 * docs/sandbox.md ("Docker") says, so this prints what an operator audits
 * (every privilege and limit), not a command to paste with a file.
 */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "cli/cli.h"
#include "engine/evaluate.h"
#include "input/dataset.h"
#include "input/task.h"
#include "sandbox/docker_argv.h"

#define MAX_CANDIDATE (16u << 20)
#define COUNT(a)      (sizeof(a) / sizeof((a)[0]))

static const char usage_head[] = "usage: execeval docker-command --task FILE --candidate FILE [OPTIONS]\n"
                                 "  --task FILE          a task or a tasks file (as execeval run)\n"
                                 "  --task-id ID         the task of a tasks file (needed when it holds\n"
                                 "                       more than one)\n"
                                 "  --candidate FILE     the candidate program (read, sent on stdin)\n";
static const char usage_tail[] = "\n";

struct dc_args {
	const char *task_file, *task_id, *candidate;
	struct ee_eval_options opt;
	enum ee_extract_mode extract;
};

static int parse_args(int argc, char **argv, struct dc_args *a, struct ee_err *err)
{
	enum { O_TASK = 256, O_TASK_ID, O_CANDIDATE, O_HELP };
	static const struct option own[] = {
		{ "task", required_argument, NULL, O_TASK },
		{ "task-id", required_argument, NULL, O_TASK_ID },
		{ "candidate", required_argument, NULL, O_CANDIDATE },
		{ "help", no_argument, NULL, O_HELP },
		{ NULL, 0, NULL, 0 },
	};
	struct option longopts[EE_OPTIONS_MAX + COUNT(own)];
	struct ee_option_sink sink = { &a->opt, &a->extract };
	int c;

	ee_options_getopt(own, EE_FRONT_DOCKER, longopts, COUNT(longopts));
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case O_TASK: a->task_file = optarg; break;
		case O_TASK_ID: a->task_id = optarg; break;
		case O_CANDIDATE: a->candidate = optarg; break;
		case 'h':
		case O_HELP: cli_usage(usage_head, EE_FRONT_DOCKER, 23, usage_tail); exit(EXIT_PASS);
		default:
			if (ee_option_of_code(c)) {
				if (ee_option_set(ee_option_of_code(c), optarg, &sink, err) < 0)
					return -1;
				break;
			}
			return ee_fail(
			        err, EE_ERR_USAGE,
			        "unknown or incomplete option '%s' (see execeval docker-command --help)",
			        argv[optind - 1]);
		}
	}
	if (optind < argc)
		return ee_fail(err, EE_ERR_USAGE,
		               "unexpected argument '%s' (the candidate is --candidate FILE)", argv[optind]);
	if (!a->task_file || !a->candidate)
		return ee_fail(err, EE_ERR_USAGE, "give --task FILE and --candidate FILE");
	return 0;
}

/* A task file that is one JSON object over several lines; -1 keeps err
 * (the tasks file's message) when it is not one. */
static int one_object(const struct dc_args *a, struct ee_limits *lim, struct ee_err *err)
{
	json_t *obj = json_load_file(a->task_file, JSON_REJECT_DUPLICATES, NULL);
	struct ee_task t;
	int rc = -1;
	if (obj && json_is_object(obj) &&
	    ee_task_from_json(obj, cli_task_format(EE_FORMAT_AUTO, &a->opt), a->task_file, &t, err) == 0) {
		ee_eval_limits(&a->opt, &t, lim);
		ee_task_free(&t);
		rc = 0;
	}
	json_decref(obj);
	return rc;
}

/* The task's limits: the one task of the file, or --task-id's. */
static int task_limits(const struct dc_args *a, struct ee_limits *lim, struct ee_err *err)
{
	struct ee_dataset d;
	if (ee_dataset_load(a->task_file, cli_task_format(EE_FORMAT_AUTO, &a->opt), &d, err) < 0)
		return one_object(a, lim, err);
	struct ee_dataset_entry *e = a->task_id ? ee_dataset_find(&d, a->task_id)
	                             : d.n == 1 ? d.entries
	                                        : NULL;
	int rc = 0;
	if (!e && a->task_id)
		rc = ee_fail(err, EE_ERR_USAGE, "--task-id: no task '%.100s' in %.200s", a->task_id,
		             a->task_file);
	else if (!e)
		rc = ee_fail(err, EE_ERR_USAGE, "--task %.200s holds %zu tasks: pick one with --task-id ID",
		             a->task_file, d.n);
	else
		ee_eval_limits(&a->opt, &e->task, lim);
	ee_dataset_free(&d);
	return rc;
}

int cmd_docker_command(int argc, char **argv)
{
	struct dc_args a = { 0 };
	struct ee_err err = { 0 };
	struct ee_limits lim;
	char *program = NULL, name[32], *line = NULL;
	size_t len = 0;

	ee_limits_default(&a.opt.limits);
	ee_options_defaults(EE_FRONT_DOCKER, &(struct ee_option_sink){ &a.opt, &a.extract });
	a.opt.task_format = EE_FORMAT_AUTO;
	if (parse_args(argc, argv, &a, &err) < 0 || task_limits(&a, &lim, &err) < 0 ||
	    cli_read_file(a.candidate, MAX_CANDIDATE, &program, &len, &err) < 0)
		goto fail;
	free(program);
	if (ee_docker_name(name, sizeof(name)) < 0) {
		fprintf(stderr, "execeval docker-command: no randomness for the container's name\n");
		return EXIT_SANDBOX;
	}
	struct ee_docker_spec spec = {
		.docker = "docker", .image = a.opt.docker_image, .name = name, .limits = &lim, .cpus = 1
	};
	struct ee_docker_argv cmd;
	if (ee_docker_argv_build(&spec, &cmd, &err) < 0)
		goto fail;
	size_t need = ee_docker_argv_shell(&cmd, NULL, 0) + 1;
	line = malloc(need);
	if (!line) {
		fprintf(stderr, "execeval docker-command: out of memory\n");
		return EXIT_SANDBOX;
	}
	ee_docker_argv_shell(&cmd, line, need);
	puts(line);
	free(line);
	return EXIT_PASS;
fail:
	fprintf(stderr, "execeval docker-command: %s\n", err.msg);
	return err.code == EE_ERR_USAGE ? EXIT_USAGE : EXIT_SANDBOX;
}
