/* main.c - execeval's entry point: dispatch to a subcommand. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "sandbox/child.h"
#include "sandbox/gvisor.h"
#include "sandbox/worker.h"

static const char usage[] = "usage: execeval COMMAND [OPTIONS]\n"
                            "  run      evaluate one candidate, print one record\n"
                            "  eval     evaluate a data set: --tasks T.jsonl --samples S.jsonl\n"
                            "  merge    join shard result files: -o OUT RESULTS...\n"
                            "  metrics  recompute the summary from a results file\n"
                            "  compare  two runs' metrics and tasks; exit 1 on a regression\n"
                            "  history  the runs eval stored, with trends; history show ID\n"
                            "  report   a results file as one HTML page: RESULTS -o REPORT.html\n"
                            "  doctor   which isolation features this host offers\n"
                            "  docker-command  the docker run command of one candidate\n"
                            "  serve    the evaluator as an HTTP service: --listen HOST:PORT\n"
                            "  -h, --help   this list; COMMAND --help: that command's options\n"
                            "  --version\n";

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	ee_child_note_argv(argv);
	const char *cmd = argv[1];
	if (strcmp(cmd, "__worker") == 0 && argc == 4)
		ee_zygote_main(argv[2], argv[3]); /* a warm worker, started by execeval itself */
	if (strcmp(cmd, "__gvisor-relay") == 0)
		ee_gvisor_relay_main(argc, argv); /* inside a gVisor container (gvisor.h) */
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
		printf("execeval %s\n", EE_VERSION);
		return 0;
	}
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		fputs(usage, stdout);
		return 0;
	}
	if (strcmp(cmd, "run") == 0)
		return cmd_run(argc - 1, argv + 1);
	if (strcmp(cmd, "merge") == 0)
		return cmd_merge(argc - 1, argv + 1);
	if (strcmp(cmd, "eval") == 0)
		return cmd_eval(argc - 1, argv + 1);
	if (strcmp(cmd, "history") == 0)
		return cmd_history(argc - 1, argv + 1);
	if (strcmp(cmd, "doctor") == 0)
		return cmd_doctor(argc - 1, argv + 1);
	if (strcmp(cmd, "docker-command") == 0)
		return cmd_docker_command(argc - 1, argv + 1);
	if (strcmp(cmd, "metrics") == 0)
		return cmd_metrics(argc - 1, argv + 1);
	if (strcmp(cmd, "compare") == 0)
		return cmd_compare(argc - 1, argv + 1);
	if (strcmp(cmd, "report") == 0)
		return cmd_report(argc - 1, argv + 1);
	if (strcmp(cmd, "serve") == 0)
		return cmd_serve(argc - 1, argv + 1);
	fprintf(stderr, "execeval: unknown command '%s'\n%s", cmd, usage);
	return EXIT_USAGE;
}
