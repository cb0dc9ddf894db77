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
 *
 * Shards: a record of `eval --shard I/N` says "shard": "I/N". Every shard
 * of the run must come from exactly one input, with one N throughout: a
 * shard missing (a job that never ran) is an error unless --partial (a
 * warning), a shard in two inputs (a retried job's file beside the first)
 * is an error. Records without a shard merge as before.
 *
 * OUT gets a run file (OUT.run.json, eval_run.c) when every input has one
 * and they agree but for the shard: the merged file is then that whole run
 * (shard null), which compare and `eval --resume` recognise. Otherwise OUT
 * has none (a stale one is removed), with a warning when the inputs ran on
 * different tasks files.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "base/err.h"
#include "results/outpath.h"
#include "results/results.h"
#include "base/strmap.h"

/* Where a key was first seen and what its record was. */
struct first_seen {
	uint64_t hash; /* of the record's canonical text */
	char where[128];
};

#define SHOWN_MISSING 5 /* missing shards named */

/* The shards seen so far: one N, and each I's input. */
struct shards {
	uintmax_t n;            /* 0: no record had a shard yet */
	char n_where[128];      /* the record that set n */
	struct ee_strmap owner; /* decimal I -> index of its input in argv */
};

struct merge {
	struct ee_strmap seen; /* key -> index in first */
	struct first_seen *first;
	size_t n, cap;
	int fd;          /* the temporary file (owned by the caller's struct ee_atomic) */
	const char *tmp; /* its name, for messages */
	unsigned long kept, dropped;
	char **inputs; /* argv's inputs, by index */
	size_t input;  /* the one being read */
	struct shards shards;
	json_t *run;     /* the first input's run file, shard cleared; NULL: none */
	int run_differs; /* an input had no run file, or another one */
};

static void merge_free(struct merge *m)
{
	ee_strmap_free(&m->seen);
	ee_strmap_free(&m->shards.owner);
	json_decref(m->run);
	free(m->first);
}

/* ---- the run file ------------------------------------------------------- */

/* Compares input's run file with the first input's (first: keeps it). */
static int note_run_file(struct merge *m, int first, struct ee_err *err)
{
	const char *input = m->inputs[m->input];
	json_t *run;

	if (cli_run_read(input, &run, err) < 0)
		return -1;
	if (run)
		json_object_set_new(json_object_get(run, "options"), "shard", json_null());
	if (first) {
		m->run = run;
		m->run_differs = !run;
		return 0;
	}
	const json_t *a = json_object_get(m->run, "tasks_sha256"), *b = json_object_get(run, "tasks_sha256");
	if (a && b && !json_equal(a, b) && !m->run_differs)
		fprintf(stderr,
		        "execeval merge: warning: %s and %s ran on different tasks files (tasks sha256 "
		        "%.16s... and %.16s...)\n",
		        m->inputs[m->input - 1], input, json_string_value(a), json_string_value(b));
	if (!run || !m->run || !json_equal(run, m->run))
		m->run_differs = 1;
	json_decref(run);
	return 0;
}

/* OUT.run.json when the inputs agree; else no stale one beside OUT. */
static void write_run_file(const struct merge *m, const char *out, int force)
{
	char path[4096];
	struct ee_err err = { 0 };

	if (m->run && !m->run_differs) {
		if (cli_run_write(out, m->run, force, &err) < 0)
			fprintf(stderr, "execeval merge: warning: %s\n", err.msg);
		return;
	}
	cli_run_file_path(out, path, sizeof(path));
	if (unlink(path) < 0 && errno != ENOENT)
		fprintf(stderr, "execeval merge: warning: %s: %s\n", path, strerror(errno));
}

/* ---- shards ------------------------------------------------------------- */

/* "I/N" with 0 <= I < N, decimal digits only. */
static int parse_shard(const char *s, uintmax_t *ret_i, uintmax_t *ret_n)
{
	char *end;

	if (!s || !(s[0] >= '0' && s[0] <= '9'))
		return -1;
	*ret_i = strtoumax(s, &end, 10);
	if (*end != '/' || !(end[1] >= '0' && end[1] <= '9'))
		return -1;
	*ret_n = strtoumax(end + 1, &end, 10);
	return *end || *ret_i >= *ret_n || *ret_n == UINTMAX_MAX ? -1 : 0;
}

/* Notes the record's shard, if it has one: one N, each I from one input. */
static int note_shard(struct merge *m, const json_t *rec, const char *where, struct ee_err *err)
{
	const json_t *v = json_object_get(rec, "shard");
	struct shards *sh = &m->shards;
	uintmax_t i, n;
	char key[32];
	int added;

	if (!v)
		return 0;
	if (parse_shard(json_string_value(v), &i, &n) < 0) {
		char *got = json_dumps(v, JSON_ENCODE_ANY);
		ee_fail(err, EE_ERR_USAGE, "%.160s: shard: expected \"I/N\" with 0 <= I < N, got %.40s",
		        where, got ? got : "?");
		free(got);
		return -1;
	}
	if (!sh->n) {
		sh->n = n;
		snprintf(sh->n_where, sizeof(sh->n_where), "%s", where);
	} else if (n != sh->n) {
		return ee_fail(
		        err, EE_ERR_USAGE,
		        "%.100s: shard %ju/%ju, but %.100s has N = %ju: shards of two different splits",
		        where, i, n, sh->n_where, sh->n);
	}
	snprintf(key, sizeof(key), "%ju", i);
	size_t *owner = ee_strmap_put(&sh->owner, key, m->input, &added);
	if (!owner)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	if (!added && *owner != m->input)
		return ee_fail(err, EE_ERR_USAGE, "shard %ju/%ju appears in %.100s and %.100s", i, n,
		               m->inputs[*owner], m->inputs[m->input]);
	return 0;
}

/* After the last input: every shard of 0..N-1 there, or --partial. */
static int check_shards(const struct shards *sh, int partial, struct ee_err *err)
{
	char names[256] = "";
	size_t len = 0, shown = 0;
	char key[32];

	if (sh->n == 0 || sh->owner.len == sh->n)
		return 0;
	uintmax_t missing = sh->n - sh->owner.len;
	for (uintmax_t i = 0; i < sh->n && shown < SHOWN_MISSING && shown < missing; i++) {
		snprintf(key, sizeof(key), "%ju", i);
		if (ee_strmap_get(&sh->owner, key))
			continue;
		len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%ju/%ju", shown ? ", " : "", i,
		                        sh->n);
		shown++;
	}
	const char *more = missing > shown ? ", ..." : "";
	if (!partial)
		return ee_fail(err, EE_ERR_USAGE,
		               "shard%s %.150s%s missing (%ju of %ju; --partial merges the others)",
		               missing > 1 ? "s" : "", names, more, missing, sh->n);
	fprintf(stderr,
	        "execeval merge: warning: --partial: shard%s %s%s missing: %ju of %ju shards merged\n",
	        missing > 1 ? "s" : "", names, more, sh->n - missing, sh->n);
	return 0;
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
	if (note_shard(m, rec, where, err) < 0)
		return -1;
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

static const char usage[] =
        "usage: execeval merge -o OUT [--force] [--partial] RESULTS...\n"
        "  -o, --out FILE   the merged results file (written whole, then renamed)\n"
        "  --partial        merge the shards given even when some of the run's are missing\n"
        "                   (a warning; without it: exit 2)\n"
        "  --force          write through an OUT that is a symbolic link\n"
        "Records of eval --shard I/N must cover every shard 0..N-1 exactly once. OUT.run.json\n"
        "(the whole run's) is written when the inputs' run files agree but for the shard.\n";

/* No input is OUT or its run file, neither is a symlink (unless force), the
 * directory takes them. */
static int check_paths(const char *out, char **inputs, int n, int force, struct ee_err *err)
{
	struct ee_path_role in[64];
	char run_file[4096];
	cli_run_file_path(out, run_file, sizeof(run_file));
	const struct ee_path_role o[] = { { "-o", out }, { "-o (its run file)", run_file } };

	for (int done = 0; done < n;) {
		int batch = n - done < 64 ? n - done : 64;
		for (int i = 0; i < batch; i++)
			in[i] = (struct ee_path_role){ "results file", inputs[done + i] };
		if (ee_outputs_check(in, (size_t)batch, o, 2, force, err) < 0)
			return -1;
		done += batch;
	}
	return 0;
}

int cmd_merge(int argc, char **argv)
{
	enum { O_FORCE = 256, O_PARTIAL, O_HELP };
	static const struct option longopts[] = { { "out", required_argument, NULL, 'o' },
		                                  { "force", no_argument, NULL, O_FORCE },
		                                  { "partial", no_argument, NULL, O_PARTIAL },
		                                  { "help", no_argument, NULL, O_HELP },
		                                  { NULL, 0, NULL, 0 } };
	struct merge m = { .fd = -1 };
	struct ee_err err = { 0 };
	const char *out = NULL;
	struct ee_atomic tmp = { .fd = -1 };
	int c, force = 0, partial = 0, code = EXIT_USAGE;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
		if (c == O_HELP || c == 'h') {
			fputs(usage, stdout);
			return EXIT_PASS;
		}
		if (c == O_FORCE || c == O_PARTIAL) {
			force |= c == O_FORCE;
			partial |= c == O_PARTIAL;
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
	m.inputs = argv;
	for (int i = optind; i < argc; i++) {
		int torn = 0;
		m.input = (size_t)i;
		if (note_run_file(&m, i == optind, &err) < 0)
			goto out;
		if (ee_results_read(argv[i], copy_record, &m, &torn, &err) < 0)
			goto out;
		if (torn)
			fprintf(stderr, "execeval merge: %s: skipped a torn last line\n", argv[i]);
	}
	if (check_shards(&m.shards, partial, &err) < 0 || ee_atomic_commit(&tmp, &err) < 0)
		goto out;
	write_run_file(&m, out, force);
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
