/* merge.c - `execeval merge -o OUT SHARD...`: join shard result files.
 *
 * Records are copied in input order. A (task_id, sample) key seen before is
 * dropped when the record is an exact copy of the first (a file given
 * twice), with a count on stderr; a different record of the same key (the
 * sample evaluated twice, by two runs) is an error naming both places: which
 * one counts is not merge's to guess. A torn last line of an input is
 * skipped with a warning, as after a killed shard; any other invalid line is
 * an error naming file:line, and OUT is not left half-written (it is written
 * to a temporary file and renamed).
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "err.h"
#include "outpath.h"
#include "results.h"
#include "strmap.h"

/* Where a key was first seen and what its record was. */
struct first_seen {
	uint64_t hash; /* of the record's canonical text */
	char where[128];
};

struct merge {
	struct ee_strmap seen; /* key -> index in first */
	struct first_seen *first;
	size_t n, cap;
	int fd;          /* the temporary file (owned by the caller's struct ee_atomic) */
	const char *tmp; /* its name, for messages */
	unsigned long kept, dropped;
};

static void merge_free(struct merge *m)
{
	ee_strmap_free(&m->seen);
	free(m->first);
}

/* FNV-1a of the record with sorted keys: equal records, equal hashes. */
static int record_hash(const json_t *rec, uint64_t *ret)
{
	char *text = json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
	uint64_t h = 1469598103934665603ull;
	if (!text)
		return -1;
	for (const char *p = text; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	free(text);
	*ret = h;
	return 0;
}

static int grow(struct merge *m)
{
	if (m->n < m->cap)
		return 0;
	size_t cap = m->cap ? m->cap * 2 : 1024;
	struct first_seen *p = realloc(m->first, cap * sizeof(*p));
	if (!p)
		return -1;
	m->first = p;
	m->cap = cap;
	return 0;
}

static int copy_record(void *ctx, const json_t *rec, const char *where, struct ee_err *err)
{
	struct merge *m = ctx;
	const char *id = json_string_value(json_object_get(rec, "task_id"));
	long sample = (long)json_integer_value(json_object_get(rec, "sample"));
	char key[4096];
	uint64_t h;
	int added;

	if (!id)
		id = ""; /* an invalid sample whose task was unknown */
	snprintf(key, sizeof(key), "%s\x1f%ld", id, sample);
	if (record_hash(rec, &h) < 0 || grow(m) < 0)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	size_t *at = ee_strmap_put(&m->seen, key, m->n, &added);
	if (!at)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	if (!added) {
		const struct first_seen *f = &m->first[*at];
		if (f->hash != h)
			return ee_fail(err, EE_ERR_USAGE,
			               "%.100s: task_id '%.60s' sample %ld differs from its record at %.100s "
			               "(evaluated twice?)",
			               where, id, sample, f->where);
		m->dropped++;
		return 0;
	}
	m->first[m->n].hash = h;
	snprintf(m->first[m->n].where, sizeof(m->first[m->n].where), "%s", where);
	m->n++;
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
	struct ee_atomic tmp = { .fd = -1 };
	int c, force = 0, code = EXIT_USAGE;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
		if (c == O_HELP || c == 'h') {
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
	if (ee_atomic_begin(&tmp, out, force, &err) < 0)
		goto out;
	m.fd = tmp.fd;
	m.tmp = tmp.tmp;
	for (int i = optind; i < argc; i++) {
		int torn = 0;
		if (ee_results_read(argv[i], copy_record, &m, &torn, &err) < 0)
			goto out;
		if (torn)
			fprintf(stderr, "execeval merge: %s: skipped a torn last line\n", argv[i]);
	}
	if (ee_atomic_commit(&tmp, &err) < 0)
		goto out;
	fprintf(stderr, "execeval merge: %lu records to %s (%lu exact duplicates dropped)\n", m.kept, out,
	        m.dropped);
	code = EXIT_PASS;
out:
	if (code != EXIT_PASS) {
		fprintf(stderr, "execeval merge: %s\n", err.msg);
		ee_atomic_abort(&tmp);
	}
	merge_free(&m);
	return code;
}
