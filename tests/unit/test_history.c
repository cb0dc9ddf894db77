/* test_history.c - the run history (history.h): creating, storing, listing
 * and filtering runs; schema migrations (a history an older version wrote
 * opens and keeps its runs; a newer one is refused untouched; a failed
 * upgrade changes nothing); files that are not histories; two writers. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <ftw.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/err.h"
#include "history/history.h"

#include "leakcheck.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ---- fixtures ------------------------------------------------------------- */

static char dir[64];

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void make_dir(void)
{
	snprintf(dir, sizeof(dir), "/tmp/ee-history-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void)
{
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

TestSuite(history, .init = make_dir, .fini = remove_dir);

static const char *in_dir(const char *name)
{
	static char path[4][256];
	static int next;
	char *p = path[next++ % 4];
	snprintf(p, 256, "%s/%s", dir, name);
	return p;
}

/* Runs raw SQL on a file, as another program (or an older execeval) would. */
static void raw_sql(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	char *msg = NULL;

	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, &msg), SQLITE_OK, "%s", msg ? msg : "");
	sqlite3_close(db);
}

static long long raw_count(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	long long n = -1;

	cr_assert_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return n;
}

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0;

	*len = 0;
	cr_assert_not_null(f, "%s", path);
	for (int c; (c = fgetc(f)) != EOF;) {
		if (*len == cap) {
			cap = cap ? 2 * cap : 4096;
			buf = realloc(buf, cap);
			cr_assert_not_null(buf);
		}
		buf[(*len)++] = (char)c;
	}
	fclose(f);
	return buf;
}

/* The v1 schema as execeval 0.1 wrote it (the shape shared with compare
 * and report), for fixtures written with raw SQL. */
#define V1_SCHEMA                                                                                            \
	"CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"                                      \
	"CREATE TABLE runs(id INTEGER PRIMARY KEY, started_at TEXT NOT NULL, finished_at TEXT NOT NULL,"     \
	" command_line TEXT NOT NULL, tasks_path TEXT NOT NULL, tasks_sha256 TEXT NOT NULL,"                 \
	" samples_path TEXT NOT NULL, samples_sha256 TEXT NOT NULL, models TEXT NOT NULL,"                   \
	" limits TEXT NOT NULL, execeval_version TEXT NOT NULL, summary TEXT NOT NULL);"                     \
	"CREATE INDEX runs_tasks_sha256 ON runs(tasks_sha256);"

#define V1_RUN(id, models, summary)                                                                          \
	"INSERT INTO runs VALUES (" #id ", '2024-01-0" #id "T10:00:00Z', '2024-01-0" #id "T10:05:00Z',"      \
	" '[\"execeval\",\"eval\"]', '/data/tasks.jsonl', 'aaaa', '/data/s" #id ".jsonl', 'bbbb', '" models  \
	"', '{}', '0.1.0', '" summary "');"

static const char v1_fixture[] = V1_SCHEMA "INSERT INTO meta VALUES ('schema_version', '1');" V1_RUN(
        1, "[\"m-old\"]", "{\"pass_at_k\":{\"1\":0.25},\"classes\":{\"math\":{}}}")
        V1_RUN(2, "[\"m-old\",\"m-new\"]", "{\"pass_at_k\":{\"1\":0.5},\"classes\":{}}");

/* A run with the given models, class names (a summary's classes) and data set. */
struct run_spec {
	const char *models;
	const char *summary;
	const char *tasks_sha256;
};

static const struct run_spec specs[] = {
	{ "[\"gpt-a\"]", "{\"pass_at_k\":{\"1\":0.1},\"classes\":{\"math\":{},\"strings\":{}}}", "d1" },
	{ "[\"gpt-b\"]", "{\"pass_at_k\":{\"1\":0.2},\"classes\":{\"math\":{}}}", "d2" },
	{ "[\"gpt-a\",\"gpt-b\"]", "{\"pass_at_k\":{\"1\":0.3},\"classes\":{\"io\":{}}}", "d1" },
	{ "[\"gpt-a\"]", "{\"pass_at_k\":{\"1\":0.4},\"classes\":{\"strings\":{}}}", "d1" },
	{ "[]", "{\"pass_at_k\":{\"1\":0.5}}", "d2" },
};

static struct ee_history_run make_run(const struct run_spec *s)
{
	return (struct ee_history_run){
		.started_at = "2024-05-01T12:00:00Z",
		.finished_at = "2024-05-01T12:01:00Z",
		.command_line = "[\"execeval\",\"eval\",\"--tasks\",\"t.jsonl\"]",
		.tasks_path = "/data/t.jsonl",
		.tasks_sha256 = s->tasks_sha256,
		.samples_path = "/data/s.jsonl",
		.samples_sha256 = "ffff",
		.models = s->models,
		.limits = "{\"timeout_s\":3.0}",
		.execeval_version = "0.1.0",
		.summary = s->summary,
	};
}

static struct ee_history *open_filled(const char *path)
{
	struct ee_history *h = NULL;
	struct ee_err err = { 0 };

	cr_assert_eq(ee_history_open(path, EE_HISTORY_CREATE, &h, &err), 0, "%s", err.msg);
	for (size_t i = 0; i < COUNT(specs); i++) {
		struct ee_history_run r = make_run(&specs[i]);
		long long id = 0;
		cr_assert_eq(ee_history_insert(h, &r, &id, &err), 0, "%s", err.msg);
		cr_assert_eq(id, (long long)i + 1);
	}
	return h;
}

/* Collects visited ids (and the first run's summary). */
struct seen {
	long long ids[64];
	int n;
	int stop_after; /* > 0: the visitor fails after this many */
	char summary[256];
	char models[128];
};

static int collect(void *ctx, const struct ee_history_run *r, struct ee_err *err)
{
	struct seen *s = ctx;
	if (s->n == 0) {
		snprintf(s->summary, sizeof(s->summary), "%s", r->summary);
		snprintf(s->models, sizeof(s->models), "%s", r->models);
	}
	s->ids[s->n++] = r->id;
	if (s->stop_after && s->n == s->stop_after)
		return ee_fail(err, EE_ERR_USAGE, "visitor stopped");
	return 0;
}

/* ---- creating ------------------------------------------------------------- */

Test(history, create_makes_private_directories_and_file)
{
	const char *path = in_dir("a/b/history.db");
	struct ee_history *h = NULL;
	struct ee_err err = { 0 };
	struct stat st;

	cr_assert_eq(ee_history_open(path, EE_HISTORY_CREATE, &h, &err), 0, "%s", err.msg);
	cr_expect_eq(ee_history_schema_version(h), EE_HISTORY_SCHEMA_VERSION);
	ee_history_close(h);
	cr_assert_eq(stat(path, &st), 0);
	cr_expect_eq(st.st_mode & 07777, 0600, "file mode %o", st.st_mode & 07777);
	cr_assert_eq(stat(in_dir("a/b"), &st), 0);
	cr_expect_eq(st.st_mode & 07777, 0700, "dir mode %o", st.st_mode & 07777);
	cr_assert_eq(stat(in_dir("a"), &st), 0);
	cr_expect_eq(st.st_mode & 07777, 0700, "dir mode %o", st.st_mode & 07777);
	cr_expect_eq(raw_count(path, "SELECT value FROM meta WHERE key = 'schema_version'"), 1);
	cr_expect_eq(raw_count(path, "SELECT count(*) FROM pragma_journal_mode WHERE journal_mode = 'wal'"),
	             1);
	/* The columns compare and report read. */
	cr_expect_eq(raw_count(path,
	                       "SELECT count(*) FROM pragma_table_info('runs') WHERE name IN ('id',"
	                       " 'started_at', 'finished_at', 'command_line', 'tasks_path', 'tasks_sha256',"
	                       " 'samples_path', 'samples_sha256', 'models', 'limits', 'execeval_version',"
	                       " 'summary')"),
	             12);
	ee_history_close(NULL);
	no_leaks();
}

Test(history, an_empty_file_becomes_a_history)
{
	const char *path = in_dir("empty.db");
	struct ee_history *h = NULL;
	struct ee_err err = { 0 };
	int fd = open(path, O_WRONLY | O_CREAT, 0644);

	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(ee_history_open(path, 0, &h, &err), 0, "%s", err.msg);
	cr_expect_eq(ee_history_schema_version(h), 1);
	ee_history_close(h);
	no_leaks();
}

Test(history, opening_a_missing_file_without_create_fails_and_creates_nothing)
{
	const char *path = in_dir("nope/history.db");
	struct ee_history *h = (struct ee_history *)1;
	struct ee_err err = { 0 };

	cr_expect_eq(ee_history_open(path, 0, &h, &err), -1);
	cr_expect_null(h);
	cr_expect(strstr(err.msg, path) != NULL, "%s", err.msg);
	cr_expect(strstr(err.msg, "no such file") != NULL, "%s", err.msg);
	cr_expect_neq(access(in_dir("nope"), F_OK), 0, "the directory was created");
	cr_expect_eq(ee_history_open("", EE_HISTORY_CREATE, &h, &err), -1);
	no_leaks();
}

Test(history, create_fails_where_a_directory_cannot_be_made)
{
	struct ee_history *h = NULL;
	struct ee_err err = { 0 };
	int fd = open(in_dir("file"), O_WRONLY | O_CREAT, 0600);

	cr_assert_geq(fd, 0);
	close(fd);
	cr_expect_eq(ee_history_open(in_dir("file/sub/history.db"), EE_HISTORY_CREATE, &h, &err), -1);
	cr_expect(strstr(err.msg, "file/sub") != NULL, "%s", err.msg);
	no_leaks();
}

/* ---- storing and listing ---------------------------------------------------- */

/* A query and the ids it should list, in order. */
struct list_case {
	struct ee_history_query q;
	long long want[8];
	int n;
};

static void expect_lists(struct ee_history *h, const struct list_case *cases, size_t n)
{
	struct ee_err err = { 0 };

	for (size_t i = 0; i < n; i++) {
		struct seen s = { 0 };
		cr_assert_eq(ee_history_list(h, &cases[i].q, collect, &s, &err), 0, "case %zu: %s", i,
		             err.msg);
		cr_expect_eq(s.n, cases[i].n, "case %zu: %d runs", i, s.n);
		for (int j = 0; j < s.n && j < cases[i].n; j++)
			cr_expect_eq(s.ids[j], cases[i].want[j], "case %zu, row %d: id %lld", i, j, s.ids[j]);
	}
}

Test(history, list_is_newest_first_and_filters)
{
	static const struct list_case cases[] = {
		{ { 0 }, { 5, 4, 3, 2, 1 }, 5 },
		{ { .limit = 2 }, { 5, 4 }, 2 },
		{ { .model = "gpt-a" }, { 4, 3, 1 }, 3 },
		{ { .model = "gpt-b" }, { 3, 2 }, 2 },
		{ { .model = "gpt" }, { 0 }, 0 },
		{ { .task_class = "math" }, { 2, 1 }, 2 },
		{ { .task_class = "strings" }, { 4, 1 }, 2 },
		{ { .task_class = "strings", .model = "gpt-a", .limit = 1 }, { 4 }, 1 },
		{ { .task_class = "nope" }, { 0 }, 0 },
		{ { .tasks_sha256 = "d1" }, { 4, 3, 1 }, 3 },
		{ { .tasks_sha256 = "d1", .before_id = 4, .limit = 1 }, { 3 }, 1 },
		{ { .tasks_sha256 = "d2", .before_id = 5 }, { 2 }, 1 },
		{ { .tasks_sha256 = "d1", .before_id = 1 }, { 0 }, 0 },
		{ { .tasks_sha256 = "d1", .task_class = "strings", .before_id = 4 }, { 1 }, 1 },
	};
	struct ee_history *h = open_filled(in_dir("h.db"));

	expect_lists(h, cases, COUNT(cases));
	ee_history_close(h);
	no_leaks();
}

/* A value another program stored malformed matches no filter, without an
 * error, and the limit counts the runs listed, not the rows read. */
Test(history, a_malformed_stored_value_matches_no_filter)
{
	static const char fixture[] = V1_SCHEMA "INSERT INTO meta VALUES ('schema_version', '1');" V1_RUN(
	        1, "[\"m\"]", "{\"classes\":{\"math\":{}}}") V1_RUN(2, "[\"m\"", "{\"classes\":{\"math\":")
	        V1_RUN(3, "not json", "{\"classes\":[}");
	const char *path = in_dir("bad.db");
	raw_sql(path, fixture);
	static const struct list_case cases[] = {
		{ { 0 }, { 3, 2, 1 }, 3 },
		{ { .model = "m" }, { 1 }, 1 },
		{ { .model = "m", .limit = 1 }, { 1 }, 1 },
		{ { .task_class = "math", .limit = 1 }, { 1 }, 1 },
		{ { .task_class = "math", .tasks_sha256 = "aaaa", .limit = 1 }, { 1 }, 1 },
	};
	struct ee_history *h = NULL;
	struct ee_err err = { 0 };

	cr_assert_eq(ee_history_open(path, 0, &h, &err), 0, "%s", err.msg);
	expect_lists(h, cases, COUNT(cases));
	ee_history_close(h);
	no_leaks();
}

Test(history, get_returns_the_stored_fields)
{
	struct ee_history *h = open_filled(in_dir("h.db"));
	struct ee_err err = { 0 };
	struct seen s = { 0 };

	cr_expect_eq(ee_history_get(h, 3, collect, &s, &err), 1, "%s", err.msg);
	cr_expect_eq(s.n, 1);
	cr_expect_str_eq(s.summary, specs[2].summary);
	cr_expect_str_eq(s.models, specs[2].models);
	cr_expect_eq(ee_history_get(h, 99, collect, &s, &err), 0, "no such run");
	cr_expect_eq(ee_history_get(h, -1, collect, &s, &err), 0);
	cr_expect_eq(s.n, 1);
	ee_history_close(h);
	no_leaks();
}

Test(history, a_visitor_can_stop_the_list)
{
	struct ee_history *h = open_filled(in_dir("h.db"));
	struct ee_history_query q = { 0 };
	struct ee_err err = { 0 };
	struct seen s = { .stop_after = 2 };

	cr_expect_eq(ee_history_list(h, &q, collect, &s, &err), -1);
	cr_expect_eq(s.n, 2);
	cr_expect_str_eq(err.msg, "visitor stopped");
	s.n = 0, s.stop_after = 1;
	cr_expect_eq(ee_history_get(h, 1, collect, &s, &err), -1);
	ee_history_close(h);
	no_leaks();
}

Test(history, insert_refuses_missing_fields_and_malformed_json)
{
	struct ee_history *h = open_filled(in_dir("h.db"));
	struct ee_err err = { 0 };
	struct ee_history_query q = { 0 };
	struct seen s = { 0 };
	struct ee_history_run bad[5];

	for (size_t i = 0; i < COUNT(bad); i++)
		bad[i] = make_run(&specs[0]);
	bad[0].summary = NULL;
	bad[1].models = "{\"not\":\"an array\"}";
	bad[2].summary = "[1, 2]";
	bad[3].limits = "{oops";
	bad[4].command_line = "\"execeval eval\"";
	for (size_t i = 0; i < COUNT(bad); i++) {
		memset(&err, 0, sizeof(err));
		cr_expect_eq(ee_history_insert(h, &bad[i], NULL, &err), -1, "case %zu", i);
		cr_expect(strstr(err.msg, dir) != NULL, "case %zu: %s", i, err.msg);
	}
	cr_assert_eq(ee_history_list(h, &q, collect, &s, &err), 0);
	cr_expect_eq(s.n, (int)COUNT(specs), "nothing stored");
	ee_history_close(h);
	no_leaks();
}

Test(history, strings_with_quotes_are_stored_as_given)
{
	struct ee_history *h = NULL;
	struct ee_err err = { 0 };
	const struct run_spec spec = { "[\"it's\", \"a \\\"model\\\"; DROP TABLE runs; --\"]",
		                       "{\"classes\":{\"o'brien\":{}}}", "x'y" };
	struct ee_history_run r = make_run(&spec);
	struct ee_history_query q = { .model = "a \"model\"; DROP TABLE runs; --", .task_class = "o'brien" };
	struct seen s = { 0 };

	cr_assert_eq(ee_history_open(in_dir("q.db"), EE_HISTORY_CREATE, &h, &err), 0, "%s", err.msg);
	cr_assert_eq(ee_history_insert(h, &r, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(ee_history_list(h, &q, collect, &s, &err), 0, "%s", err.msg);
	cr_expect_eq(s.n, 1);
	cr_expect_str_eq(s.models, spec.models);
	q = (struct ee_history_query){ .tasks_sha256 = "x'y" };
	s.n = 0;
	cr_assert_eq(ee_history_list(h, &q, collect, &s, &err), 0, "%s", err.msg);
	cr_expect_eq(s.n, 1);
	ee_history_close(h);
	no_leaks();
}

/* ---- migrations ----------------------------------------------------------- */

/* A future version 2, rehearsed: a column the v1 schema lacks, a new table. */
static const char *const steps_to_v2[] = {
	V1_SCHEMA,
	"ALTER TABLE runs ADD COLUMN note TEXT NOT NULL DEFAULT '';"
	"CREATE TABLE tags(run_id INTEGER NOT NULL REFERENCES runs(id), tag TEXT NOT NULL);",
};

Test(history, a_history_written_by_an_older_version_is_upgraded_with_its_runs)
{
	const char *path = in_dir("old.db");
	struct ee_history *h = NULL;
	struct ee_err err = { 0 };
	struct ee_history_query q = { 0 };
	struct seen s = { 0 };

	raw_sql(path, v1_fixture);
	cr_assert_eq(ee_history_open_steps(path, 0, steps_to_v2, 2, &h, &err), 0, "%s", err.msg);
	cr_expect_eq(ee_history_schema_version(h), 2);
	cr_assert_eq(ee_history_list(h, &q, collect, &s, &err), 0, "%s", err.msg);
	cr_expect_eq(s.n, 2);
	cr_expect_eq(s.ids[0], 2);
	cr_expect_str_eq(s.summary, "{\"pass_at_k\":{\"1\":0.5},\"classes\":{}}");
	q.model = "m-old";
	s.n = 0;
	cr_assert_eq(ee_history_list(h, &q, collect, &s, &err), 0, "%s", err.msg);
	cr_expect_eq(s.n, 2);
	/* The upgraded file still takes runs. */
	struct ee_history_run r = make_run(&specs[0]);
	cr_expect_eq(ee_history_insert(h, &r, NULL, &err), 0, "%s", err.msg);
	ee_history_close(h);
	cr_expect_eq(raw_count(path, "SELECT value FROM meta WHERE key = 'schema_version'"), 2);
	cr_expect_eq(raw_count(path, "SELECT count(*) FROM runs WHERE note = ''"), 3);
	cr_expect_eq(raw_count(path, "SELECT count(*) FROM tags"), 0);
	no_leaks();
}

Test(history, the_current_version_opens_a_v1_fixture_without_changes)
{
	const char *path = in_dir("v1.db");
	struct ee_history *h = NULL;
	struct ee_err err = { 0 };
	struct seen s = { 0 };

	raw_sql(path, v1_fixture);
	cr_assert_eq(ee_history_open(path, 0, &h, &err), 0, "%s", err.msg);
	cr_expect_eq(ee_history_schema_version(h), 1);
	cr_expect_eq(ee_history_get(h, 1, collect, &s, &err), 1, "%s", err.msg);
	cr_expect_str_eq(s.models, "[\"m-old\"]");
	ee_history_close(h);
	no_leaks();
}

Test(history, a_failed_upgrade_leaves_the_file_as_it_was)
{
	const char *path = in_dir("old.db");
	static const char *const broken[] = {
		V1_SCHEMA,
		"ALTER TABLE runs ADD COLUMN note TEXT; THIS IS NOT SQL;",
	};
	struct ee_history *h = NULL;
	struct ee_err err = { 0 };

	raw_sql(path, v1_fixture);
	cr_expect_eq(ee_history_open_steps(path, 0, broken, 2, &h, &err), -1);
	cr_expect_null(h);
	cr_expect(strstr(err.msg, "upgrading the schema from version 1") != NULL, "%s", err.msg);
	cr_expect(strstr(err.msg, path) != NULL, "%s", err.msg);
	cr_expect_eq(raw_count(path, "SELECT value FROM meta WHERE key = 'schema_version'"), 1);
	cr_expect_eq(raw_count(path, "SELECT count(*) FROM pragma_table_info('runs') WHERE name = 'note'"),
	             0);
	cr_expect_eq(raw_count(path, "SELECT count(*) FROM runs"), 2);
	no_leaks();
}

/* Files that must be refused, byte for byte untouched. */
struct refusal {
	const char *name;
	const char *sql;   /* raw SQL to build it, or NULL: bytes */
	const char *bytes; /* when sql is NULL */
	const char *want;  /* in the message */
};

static const struct refusal refusals[] = {
	{ "newer.db", V1_SCHEMA "INSERT INTO meta VALUES ('schema_version', '2');", NULL,
	  "schema version 2 is newer than this execeval's (1)" },
	{ "much-newer-wal.db",
	  "PRAGMA journal_mode=WAL;" V1_SCHEMA "INSERT INTO meta VALUES ('schema_version', '17');", NULL,
	  "schema version 17 is newer" },
	{ "not-history.db", "CREATE TABLE t(x); INSERT INTO t VALUES (1);", NULL, "not an execeval history" },
	{ "no-version.db", "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);", NULL,
	  "schema_version is missing" },
	{ "bad-version.db", V1_SCHEMA "INSERT INTO meta VALUES ('schema_version', '1x');", NULL,
	  "schema_version is missing or not a version number" },
	{ "text.db", NULL, "{\"not\": \"a database\"}\n", "not an SQLite database" },
	{ "zeros.db", NULL,
	  "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0",
	  "not an SQLite database" },
};

Test(history, files_that_are_not_this_versions_history_are_refused_untouched)
{
	for (size_t i = 0; i < COUNT(refusals); i++) {
		const struct refusal *c = &refusals[i];
		const char *path = in_dir(c->name);
		struct ee_history *h = NULL;
		struct ee_err err = { 0 };
		struct stat st0, st1;
		size_t len0, len1;

		if (c->sql) {
			raw_sql(path, c->sql);
		} else {
			FILE *f = fopen(path, "wb");
			cr_assert_not_null(f);
			fwrite(c->bytes, 1, strcmp(c->name, "zeros.db") == 0 ? 40 : strlen(c->bytes), f);
			fclose(f);
		}
		char *before = read_all(path, &len0);
		cr_assert_eq(stat(path, &st0), 0);
		usleep(10000);
		cr_expect_eq(ee_history_open(path, EE_HISTORY_CREATE, &h, &err), -1, "%s", c->name);
		cr_expect_null(h);
		cr_expect(strstr(err.msg, c->want) != NULL, "%s: %s", c->name, err.msg);
		cr_expect(strstr(err.msg, path) != NULL, "%s: %s", c->name, err.msg);
		char *after = read_all(path, &len1);
		cr_assert_eq(stat(path, &st1), 0);
		cr_expect(len0 == len1 && memcmp(before, after, len0) == 0, "%s was changed", c->name);
		cr_expect(st0.st_mtim.tv_sec == st1.st_mtim.tv_sec &&
		                  st0.st_mtim.tv_nsec == st1.st_mtim.tv_nsec,
		          "%s was written", c->name);
		free(before);
		free(after);
	}
	no_leaks();
}

/* ---- two writers ------------------------------------------------------------ */

#define WRITERS      4
#define RUNS_WRITTEN 40

/* A child process: opens (maybe creating) the history when the parent says
 * go, inserts its runs, each through a fresh connection half the time. */
static void writer(const char *path, int go_fd, int which)
{
	struct ee_history *h = NULL;
	struct ee_err err = { 0 };
	char c;
	struct run_spec spec = specs[which % COUNT(specs)];

	if (read(go_fd, &c, 1) != 1)
		_exit(10);
	for (int i = 0; i < RUNS_WRITTEN; i++) {
		struct ee_history_run r = make_run(&spec);
		if (!h && ee_history_open(path, EE_HISTORY_CREATE, &h, &err) < 0) {
			fprintf(stderr, "writer %d: %s\n", which, err.msg);
			_exit(11);
		}
		if (ee_history_insert(h, &r, NULL, &err) < 0) {
			fprintf(stderr, "writer %d: %s\n", which, err.msg);
			_exit(12);
		}
		if (i % 2) {
			ee_history_close(h);
			h = NULL;
		}
	}
	ee_history_close(h);
	_exit(0);
}

Test(history, writers_at_the_same_time_all_succeed)
{
	const char *path = in_dir("shared/history.db");
	pid_t pids[WRITERS];
	int go[2];

	cr_assert_eq(pipe(go), 0);
	for (int i = 0; i < WRITERS; i++) {
		pids[i] = fork();
		cr_assert_geq(pids[i], 0);
		if (pids[i] == 0) {
			close(go[1]);
			writer(path, go[0], i);
		}
	}
	close(go[0]);
	cr_assert_eq(write(go[1], "gggg", WRITERS), WRITERS); /* all start creating one new file at once */
	close(go[1]);
	for (int i = 0; i < WRITERS; i++) {
		int status = 0;
		cr_assert_eq(waitpid(pids[i], &status, 0), pids[i]);
		cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer %d: status %#x", i, status);
	}
	cr_expect_eq(raw_count(path, "SELECT count(*) FROM runs"), WRITERS * RUNS_WRITTEN);
	cr_expect_eq(raw_count(path, "SELECT count(DISTINCT id) FROM runs"), WRITERS * RUNS_WRITTEN);
	cr_expect_eq(raw_count(path, "SELECT value FROM meta WHERE key = 'schema_version'"), 1);
	no_leaks();
}

Test(history, two_connections_in_one_process_interleave)
{
	const char *path = in_dir("two.db");
	struct ee_history *a = NULL, *b = NULL;
	struct ee_err err = { 0 };
	struct ee_history_query q = { 0 };
	struct seen s = { 0 };
	long long ida = 0, idb = 0;

	cr_assert_eq(ee_history_open(path, EE_HISTORY_CREATE, &a, &err), 0, "%s", err.msg);
	cr_assert_eq(ee_history_open(path, EE_HISTORY_CREATE, &b, &err), 0, "%s", err.msg);
	for (int i = 0; i < 10; i++) {
		struct ee_history_run r = make_run(&specs[i % COUNT(specs)]);
		cr_assert_eq(ee_history_insert(i % 2 ? a : b, &r, i % 2 ? &ida : &idb, &err), 0, "%s",
		             err.msg);
	}
	cr_expect_eq(ida, 10);
	cr_expect_eq(idb, 9);
	cr_assert_eq(ee_history_list(a, &q, collect, &s, &err), 0, "%s", err.msg);
	cr_expect_eq(s.n, 10, "a sees b's runs too");
	ee_history_close(a);
	ee_history_close(b);
	no_leaks();
}

/* ---- the default file --------------------------------------------------------- */

Test(history, default_path_follows_xdg_then_home)
{
	static const struct {
		const char *xdg, *home, *want; /* want NULL: none */
	} cases[] = {
		{ "/x/data", "/home/u", "/x/data/execeval/history.db" },
		{ NULL, "/home/u", "/home/u/.local/share/execeval/history.db" },
		{ "", "/root", "/root/.local/share/execeval/history.db" },
		{ "relative/data", "/root",
		  "/root/.local/share/execeval/history.db" }, /* XDG: ignore relative */
		{ NULL, NULL, NULL },
		{ NULL, "", NULL },
		{ NULL, "home", NULL },
	};
	char buf[128];

	for (size_t i = 0; i < COUNT(cases); i++) {
		int rc = ee_history_default_path(cases[i].xdg, cases[i].home, buf, sizeof(buf));
		cr_expect_eq(rc, cases[i].want ? 0 : -1, "case %zu", i);
		if (cases[i].want && rc == 0)
			cr_expect_str_eq(buf, cases[i].want, "case %zu", i);
	}
	cr_expect_eq(ee_history_default_path("/a/very/long/data/home", NULL, buf, 20), -1, "too long");
	no_leaks();
}
