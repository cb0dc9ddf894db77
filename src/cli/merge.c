/* merge.c - `execeval merge -o OUT SHARD...`: join shard result files.
 *
 * Records are copied in input order; a (task_id, sample) pair seen before is
 * dropped (a shard re-run with --resume cannot duplicate a record, but a
 * file given twice could). A torn last line of an input is skipped with a
 * warning, as after a killed shard; any other invalid line is an error
 * naming file:line, and OUT is not left half-written (it is written to a
 * temporary file and renamed).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "err.h"
#include "outpath.h"
#include "results.h"

struct merge {
	struct ee_done_set seen;
	int fd;
	const char *tmp;
	unsigned long kept, dropped;
};

static int copy_record(void *ctx, const json_t *rec, const char *where, struct ee_err *err)
{
	struct merge *m = ctx;
	const char *id = json_string_value(json_object_get(rec, "task_id"));
	if (!id)
		id = ""; /* an invalid sample whose task was unknown */
	long sample = (long)json_integer_value(json_object_get(rec, "sample"));

	(void)where;
	if (ee_done_contains(&m->seen, id, sample)) {
		m->dropped++;
		return 0;
	}
	if (ee_done_insert(&m->seen, id, sample) < 0)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	m->kept++;
	return ee_results_append(m->fd, rec, m->tmp, err);
}

static const char usage[] = "usage: execeval merge -o OUT [--force] RESULTS...\n"
                            "  -o, --out FILE   the merged results file (written whole, then renamed)\n"
                            "  --force          write through an OUT that is a symbolic link\n";

/* No input is OUT, OUT is no symlink (unless force), its directory takes it. */
static int check_paths(const char *out, char **inputs, int n, int force, struct ee_err *err)
{
	struct ee_path_role in[64];
	const struct ee_path_role o = { "-o", out };

	for (int done = 0; done < n;) {
		int batch = n - done < 64 ? n - done : 64;
		for (int i = 0; i < batch; i++)
			in[i] = (struct ee_path_role){ "input", inputs[done + i] };
		if (ee_outputs_check(in, (size_t)batch, &o, 1, force, err) < 0)
			return -1;
		done += batch;
	}
	return 0;
}

int cmd_merge(int argc, char **argv)
{
	enum { O_FORCE = 256, O_HELP };
	static const struct option longopts[] = { { "out", required_argument, NULL, 'o' },
		                                  { "force", no_argument, NULL, O_FORCE },
		                                  { "help", no_argument, NULL, O_HELP },
		                                  { NULL, 0, NULL, 0 } };
	struct merge m = { .fd = -1 };
	struct ee_err err = { 0 };
	const char *out = NULL;
	char tmp[4096];
	int c, force = 0, code = EXIT_USAGE;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:", longopts, NULL)) != -1) {
		if (c == O_HELP) {
			fputs(usage, stdout);
			return EXIT_PASS;
		}
		if (c == O_FORCE) {
			force = 1;
			continue;
		}
		if (c != 'o') {
			fprintf(stderr, "execeval merge: %s", usage);
			return EXIT_USAGE;
		}
		out = optarg;
	}
	if (!out || optind >= argc) {
		fprintf(stderr, "execeval merge: %s", usage);
		return EXIT_USAGE;
	}
	if (check_paths(out, argv + optind, argc - optind, force, &err) < 0) {
		fprintf(stderr, "execeval merge: %s\n", err.msg);
		return EXIT_USAGE;
	}
	snprintf(tmp, sizeof(tmp), "%.4000s.tmp.%d", out, (int)getpid());
	m.tmp = tmp;
	m.fd = ee_results_open(tmp, 1, &err);
	if (m.fd < 0)
		goto out;
	for (int i = optind; i < argc; i++) {
		int torn = 0;
		if (ee_results_read(argv[i], copy_record, &m, &torn, &err) < 0)
			goto out;
		if (torn)
			fprintf(stderr, "execeval merge: %s: skipped a torn last line\n", argv[i]);
	}
	if (fsync(m.fd) < 0 || close(m.fd) < 0 || rename(tmp, out) < 0) {
		m.fd = -1;
		ee_fail_errno(&err, EE_ERR_USAGE, "%s", out);
		goto out;
	}
	m.fd = -1;
	fprintf(stderr, "execeval merge: %lu records to %s (%lu duplicates dropped)\n", m.kept, out,
	        m.dropped);
	code = EXIT_PASS;
out:
	if (code != EXIT_PASS) {
		fprintf(stderr, "execeval merge: %s\n", err.msg);
		if (m.fd >= 0)
			close(m.fd);
		unlink(tmp);
	}
	ee_done_free(&m.seen);
	return code;
}
