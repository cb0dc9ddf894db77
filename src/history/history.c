/* history.c - the run history in SQLite (see history.h).
 *
 * Opening runs in this order, so a file that is refused is never written:
 *   1. create the directories (0700) and the file (0600) when asked to
 *      (SQLite gives the -wal and -shm files the database file's mode);
 *   2. open it read-write, defensive, with a busy timeout;
 *   3. read the schema version without writing anything: 0 for an empty
 *      database, meta.schema_version otherwise; refuse a file that is not a
 *      database, a database without our meta table, a newer version;
 *   4. switch to WAL (persistent: a no-op once done);
 *   5. when the version is older, take the write lock (BEGIN IMMEDIATE),
 *      read the version again (another execeval may have upgraded it
 *      meanwhile) and apply the steps from there in the same transaction,
 *      with the new version number written by each step.
 * Each step is one static SQL text; a new schema version appends one.
 */
#include "history/history.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/err.h"

#define BUSY_TIMEOUT_MS 10000
#define MAX_VERSION     1000000

struct ee_history {
	sqlite3 *db;
	int version;
	char path[PATH_MAX];
};

/* ---- the schema ---------------------------------------------------------- */

/* Version 0 -> 1: the schema shared with compare and report. */
static const char step_0_to_1[] =
        "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);\n"
        "CREATE TABLE runs(id INTEGER PRIMARY KEY, started_at TEXT NOT NULL, finished_at TEXT NOT NULL,\n"
        "  command_line TEXT NOT NULL, tasks_path TEXT NOT NULL, tasks_sha256 TEXT NOT NULL,\n"
        "  samples_path TEXT NOT NULL, samples_sha256 TEXT NOT NULL, models TEXT NOT NULL,\n"
        "  limits TEXT NOT NULL, execeval_version TEXT NOT NULL, summary TEXT NOT NULL);\n"
        "CREATE INDEX runs_tasks_sha256 ON runs(tasks_sha256);\n";

static const char *const steps[EE_HISTORY_SCHEMA_VERSION] = { step_0_to_1 };

static const char sql_count_objects[] = "SELECT count(*) FROM sqlite_master";
static const char sql_has_meta[] =
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'";
static const char sql_get_version[] = "SELECT value FROM meta WHERE key = 'schema_version'";
static const char sql_set_version[] = "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?1)";

static const char sql_insert[] =
        "INSERT INTO runs(started_at, finished_at, command_line, tasks_path, tasks_sha256, samples_path,"
        " samples_sha256, models, limits, execeval_version, summary)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)";

#define RUN_COLUMNS                                                                                          \
	"SELECT id, started_at, finished_at, command_line, tasks_path, tasks_sha256, samples_path,"          \
	" samples_sha256, models, limits, execeval_version, summary"
/* ?1 model, ?2 task class, as two more columns: 1 when the run matches (or
 * there is no filter), 0 when it does not, NULL when json_valid() said 0.
 * That 0 is a malformed value (it matches nothing) or, in SQLite 3.40, a
 * parse that ran out of memory: the C side tells them apart (match_unparsed).
 * So rows are filtered, and the limit counted, in C. */
#define RUN_FILTERS                                                                                          \
	", CASE WHEN ?1 IS NULL THEN 1 WHEN json_valid(models) THEN EXISTS (SELECT 1 FROM"                   \
	" json_each(runs.models) WHERE json_each.value = ?1) END"                                            \
	", CASE WHEN ?2 IS NULL THEN 1 WHEN json_valid(summary) THEN EXISTS (SELECT 1 FROM"                  \
	" json_each(runs.summary, '$.classes') WHERE json_each.key = ?2) END"
#define MODEL_MATCH_COL 12
#define CLASS_MATCH_COL 13

static const char sql_list[] = RUN_COLUMNS RUN_FILTERS " FROM runs ORDER BY id DESC";
/* One data set's runs: the index on tasks_sha256 finds them. */
static const char sql_list_dataset[] =
        RUN_COLUMNS RUN_FILTERS " FROM runs WHERE tasks_sha256 = ?4 AND id < ?5 ORDER BY id DESC";
/* Raises "malformed JSON" for a malformed value, SQLITE_NOMEM when it runs
 * out of memory (json_type reports what json_valid does not). */
static const char sql_json_check[] = "SELECT json_type(?1)";
static const char sql_get[] = RUN_COLUMNS " FROM runs WHERE id = ?1";

/* ---- errors -------------------------------------------------------------- */

static int db_fail(const struct ee_history *h, const char *what, struct ee_err *err)
{
	int rc = sqlite3_errcode(h->db);

	if (rc == SQLITE_NOTADB)
		return ee_fail(err, EE_ERR_USAGE, "history %.160s: not an SQLite database (%s)", h->path,
		               sqlite3_errmsg(h->db));
	return ee_fail(err, EE_ERR_USAGE, "history %.160s: %s: %s", h->path, what, sqlite3_errmsg(h->db));
}

/* ---- opening ------------------------------------------------------------- */

/* mkdir -p of path's directory, new directories 0700. */
static int make_parents(const char *path, struct ee_err *err)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s", path);
	for (char *p = dir + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		if (mkdir(dir, 0700) < 0 && errno != EEXIST)
			return ee_fail_errno(err, EE_ERR_USAGE, "history %.160s: cannot create %.80s", path,
			                     dir);
		*p = '/';
	}
	return 0;
}

static int make_file(const char *path, struct ee_err *err)
{
	if (make_parents(path, err) < 0)
		return -1;
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return ee_fail_errno(err, EE_ERR_USAGE, "history %.160s", path);
	close(fd);
	return 0;
}

/* The single integer a query returns, or -1 with err set. */
static int query_int(struct ee_history *h, const char *sql, long long *ret, struct ee_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(h->db, sql, -1, &st, NULL);

	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		db_fail(h, "reading the schema", err);
		sqlite3_finalize(st);
		return -1;
	}
	*ret = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return 0;
}

static int parse_version(const unsigned char *s, int *ret)
{
	long v = 0;

	if (!s || !*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > MAX_VERSION)
			return -1;
		v = v * 10 + (*s - '0');
	}
	if (v > MAX_VERSION)
		return -1;
	*ret = (int)v;
	return 0;
}

/* The schema version, read without writing: 0 for an empty database. */
static int read_version(struct ee_history *h, int *ret, struct ee_err *err)
{
	long long objects, meta;
	sqlite3_stmt *st = NULL;

	if (query_int(h, sql_count_objects, &objects, err) < 0)
		return -1;
	if (objects == 0) {
		*ret = 0;
		return 0;
	}
	if (query_int(h, sql_has_meta, &meta, err) < 0)
		return -1;
	if (meta == 0)
		return ee_fail(
		        err, EE_ERR_USAGE,
		        "history %.160s: an SQLite database but not an execeval history (no meta table)",
		        h->path);
	int rc = sqlite3_prepare_v2(h->db, sql_get_version, -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		sqlite3_finalize(st);
		return db_fail(h, "reading the schema version", err);
	}
	const unsigned char *text = rc == SQLITE_ROW ? sqlite3_column_text(st, 0) : NULL;
	if (rc == SQLITE_ROW && !text && sqlite3_column_type(st, 0) != SQLITE_NULL) {
		sqlite3_finalize(st); /* not a missing version: memory ran out */
		return ee_fail(err, EE_ERR_USAGE, "history %.160s: reading the schema version: out of memory",
		               h->path);
	}
	rc = parse_version(text, ret);
	sqlite3_finalize(st);
	if (rc < 0)
		return ee_fail(err, EE_ERR_USAGE,
		               "history %.160s: meta.schema_version is missing or not a version number",
		               h->path);
	return 0;
}

static int refuse_newer(const struct ee_history *h, int version, int latest, struct ee_err *err)
{
	return ee_fail(err, EE_ERR_USAGE,
	               "history %.160s: schema version %d is newer than this execeval's (%d); use a newer "
	               "execeval (the file was not changed)",
	               h->path, version, latest);
}

static int set_version(struct ee_history *h, int version, struct ee_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(h->db, sql_set_version, -1, &st, NULL);

	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int(st, 1, version);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_fail(h, "writing the schema version", err);
}

/* Applies steps[from .. latest-1] in one transaction. */
static int migrate(struct ee_history *h, const char *const *table, int latest, struct ee_err *err)
{
	int version;

	if (sqlite3_exec(h->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return db_fail(h, "locking for the schema upgrade", err);
	if (read_version(h, &version, err) < 0)
		goto rollback;
	if (version > latest) {
		refuse_newer(h, version, latest, err);
		goto rollback;
	}
	for (; version < latest; version++) {
		char what[64];
		snprintf(what, sizeof(what), "upgrading the schema from version %d", version);
		if (sqlite3_exec(h->db, table[version], NULL, NULL, NULL) != SQLITE_OK) {
			db_fail(h, what, err);
			goto rollback;
		}
		if (set_version(h, version + 1, err) < 0)
			goto rollback;
	}
	if (sqlite3_exec(h->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		db_fail(h, "committing the schema upgrade", err);
		goto rollback;
	}
	h->version = latest;
	return 0;
rollback:
	sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL);
	return -1;
}

static int open_db(struct ee_history *h, struct ee_err *err)
{
	int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;

	if (sqlite3_open_v2(h->path, &h->db, flags, NULL) != SQLITE_OK)
		return db_fail(h, "cannot open", err);
	sqlite3_extended_result_codes(h->db, 1);
	/* The file may come from elsewhere: its schema's triggers and views get
	 * no functions with side effects, and no writes to the schema. */
	sqlite3_db_config(h->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_db_config(h->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	sqlite3_busy_timeout(h->db, BUSY_TIMEOUT_MS);
	return 0;
}

/* Switching a new file to WAL takes the exclusive lock, and SQLite answers
 * SQLITE_BUSY at once, without its busy handler, where waiting could
 * deadlock (several execevals opening one new history, each holding a
 * shared lock): measured 6 failures in 30 with four writers. Wait here
 * instead, as long as the busy timeout; once one has switched, the others'
 * PRAGMA is a no-op. */
static int use_wal(struct ee_history *h, struct ee_err *err)
{
	struct timespec pause = { 0, 1000000 };
	long waited_ms = 0;

	for (;;) {
		sqlite3_stmt *st = NULL;
		int rc = sqlite3_prepare_v2(h->db, "PRAGMA journal_mode=WAL", -1, &st, NULL);
		if (rc == SQLITE_OK)
			rc = sqlite3_step(st);
		sqlite3_finalize(st);
		if (rc == SQLITE_ROW)
			return 0;
		if ((rc & 0xff) != SQLITE_BUSY || waited_ms >= BUSY_TIMEOUT_MS)
			return db_fail(h, "switching to WAL", err);
		nanosleep(&pause, NULL);
		waited_ms += pause.tv_nsec / 1000000;
		if (pause.tv_nsec < 32000000)
			pause.tv_nsec *= 2;
	}
}

int ee_history_open_steps(const char *path, int flags, const char *const *table, int n_steps,
                          struct ee_history **ret, struct ee_err *err)
{
	struct ee_history *h;
	struct stat st;

	*ret = NULL;
	if (!path || !*path || strlen(path) >= PATH_MAX)
		return ee_fail(err, EE_ERR_USAGE, "history: no file name, or one longer than %d bytes",
		               PATH_MAX);
	if (flags & EE_HISTORY_CREATE) {
		if (make_file(path, err) < 0)
			return -1;
	} else if (stat(path, &st) < 0) {
		if (errno == ENOENT)
			return ee_fail(err, EE_ERR_USAGE,
			               "history %.160s: no such file (eval creates it when it stores a run)",
			               path);
		return ee_fail_errno(err, EE_ERR_USAGE, "history %.160s", path);
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return ee_fail(err, EE_ERR_USAGE, "history %.160s: out of memory", path);
	snprintf(h->path, sizeof(h->path), "%s", path);
	if (open_db(h, err) < 0 || read_version(h, &h->version, err) < 0)
		goto fail;
	if (h->version > n_steps) {
		refuse_newer(h, h->version, n_steps, err);
		goto fail;
	}
	if (use_wal(h, err) < 0 || (h->version < n_steps && migrate(h, table, n_steps, err) < 0))
		goto fail;
	*ret = h;
	return 0;
fail:
	ee_history_close(h);
	return -1;
}

int ee_history_open(const char *path, int flags, struct ee_history **ret, struct ee_err *err)
{
	return ee_history_open_steps(path, flags, steps, EE_HISTORY_SCHEMA_VERSION, ret, err);
}

void ee_history_close(struct ee_history *h)
{
	if (!h)
		return;
	sqlite3_close_v2(h->db);
	free(h);
}

int ee_history_schema_version(struct ee_history *h)
{
	return h->version;
}

/* ---- runs ---------------------------------------------------------------- */

/* text is JSON of the given type (JSON_ARRAY or JSON_OBJECT). */
static int is_json(const char *text, json_type type)
{
	json_t *v = json_loads(text, JSON_DECODE_ANY, NULL);
	int ok = v && json_typeof(v) == type;

	json_decref(v);
	return ok;
}

#define RUN_FIELDS 11

/* The run's text fields, in sql_insert's parameter order. */
static void run_fields(const struct ee_history_run *r, const char *out[RUN_FIELDS])
{
	const char *fields[RUN_FIELDS] = { r->started_at,       r->finished_at,  r->command_line,
		                           r->tasks_path,       r->tasks_sha256, r->samples_path,
		                           r->samples_sha256,   r->models,       r->limits,
		                           r->execeval_version, r->summary };
	memcpy(out, fields, sizeof(fields));
}

static int check_run(const struct ee_history *h, const struct ee_history_run *r,
                     const char *const fields[RUN_FIELDS], struct ee_err *err)
{
	for (size_t i = 0; i < RUN_FIELDS; i++)
		if (!fields[i])
			return ee_fail(err, EE_ERR_USAGE, "history %.160s: a run without field %zu", h->path,
			               i + 1);
	if (!is_json(r->command_line, JSON_ARRAY) || !is_json(r->models, JSON_ARRAY))
		return ee_fail(err, EE_ERR_USAGE,
		               "history %.160s: command_line and models must be JSON arrays", h->path);
	if (!is_json(r->limits, JSON_OBJECT) || !is_json(r->summary, JSON_OBJECT))
		return ee_fail(err, EE_ERR_USAGE, "history %.160s: limits and summary must be JSON objects",
		               h->path);
	return 0;
}

int ee_history_insert(struct ee_history *h, const struct ee_history_run *r, long long *ret_id,
                      struct ee_err *err)
{
	const char *values[RUN_FIELDS];
	sqlite3_stmt *st = NULL;

	run_fields(r, values);
	if (check_run(h, r, values, err) < 0)
		return -1;
	int rc = sqlite3_prepare_v2(h->db, sql_insert, -1, &st, NULL);
	for (int i = 0; rc == SQLITE_OK && i < RUN_FIELDS; i++)
		rc = sqlite3_bind_text(st, i + 1, values[i], -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_fail(h, "storing the run", err);
	if (ret_id)
		*ret_id = sqlite3_last_insert_rowid(h->db);
	return 0;
}

/* Column col as text. sqlite3_column_text's NULL is a column's NULL ("")
 * or memory that ran out: *oom = 1 (the row cannot be shown whole). */
static const char *text_at(sqlite3_stmt *st, int col, int *oom)
{
	const unsigned char *s = sqlite3_column_text(st, col);

	if (!s && sqlite3_column_type(st, col) != SQLITE_NULL)
		*oom = 1;
	return s ? (const char *)s : "";
}

/* The match of a row whose value (text) json_valid() said 0 of: 0 when the
 * value is malformed (it matches nothing), -1 when memory ran out. */
static int match_unparsed(const struct ee_history *h, const char *text, struct ee_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(h->db, sql_json_check, -1, &st, NULL);

	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc == SQLITE_ERROR) /* "malformed JSON" */
		return 0;
	/* out of memory now, or a value json_type parses: json_valid's 0 was memory */
	return ee_fail(err, EE_ERR_USAGE, "history %.160s: filtering runs: out of memory", h->path);
}

/* Whether st's row passes the list's filters (the columns MODEL_MATCH_COL
 * and CLASS_MATCH_COL, when st has them): 1, 0, or -1 with err set. */
static int row_matches(const struct ee_history *h, sqlite3_stmt *st, const struct ee_history_run *r,
                       struct ee_err *err)
{
	if (sqlite3_column_count(st) <= CLASS_MATCH_COL)
		return 1;
	for (int col = MODEL_MATCH_COL; col <= CLASS_MATCH_COL; col++) {
		if (sqlite3_column_type(st, col) == SQLITE_NULL)
			return match_unparsed(h, col == MODEL_MATCH_COL ? r->models : r->summary, err);
		if (sqlite3_column_int(st, col) == 0)
			return 0;
	}
	return 1;
}

/* Steps through st's rows, visiting each that matches, at most limit of
 * them (0: all); returns the rows visited or -1. */
static long visit_rows(struct ee_history *h, sqlite3_stmt *st, unsigned long limit, ee_history_visit_fn visit,
                       void *ctx, struct ee_err *err)
{
	unsigned long n = 0;
	int rc = SQLITE_DONE, oom = 0;

	while ((limit == 0 || n < limit) && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct ee_history_run r = {
			.id = sqlite3_column_int64(st, 0),
			.started_at = text_at(st, 1, &oom),
			.finished_at = text_at(st, 2, &oom),
			.command_line = text_at(st, 3, &oom),
			.tasks_path = text_at(st, 4, &oom),
			.tasks_sha256 = text_at(st, 5, &oom),
			.samples_path = text_at(st, 6, &oom),
			.samples_sha256 = text_at(st, 7, &oom),
			.models = text_at(st, 8, &oom),
			.limits = text_at(st, 9, &oom),
			.execeval_version = text_at(st, 10, &oom),
			.summary = text_at(st, 11, &oom),
		};
		if (oom)
			return ee_fail(err, EE_ERR_USAGE, "history %.160s: reading runs: out of memory",
			               h->path);
		int match = row_matches(h, st, &r, err);
		if (match < 0)
			return -1;
		if (match == 0)
			continue;
		n++;
		if (visit(ctx, &r, err) < 0)
			return -1;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return db_fail(h, "reading runs", err);
	return (long)n;
}

static int bind_opt_text(sqlite3_stmt *st, int i, const char *s)
{
	return s ? sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC) : sqlite3_bind_null(st, i);
}

int ee_history_list(struct ee_history *h, const struct ee_history_query *q, ee_history_visit_fn visit,
                    void *ctx, struct ee_err *err)
{
	sqlite3_stmt *st = NULL;
	const char *sql = q->tasks_sha256 ? sql_list_dataset : sql_list;
	int rc = sqlite3_prepare_v2(h->db, sql, -1, &st, NULL);

	if (rc == SQLITE_OK)
		rc = bind_opt_text(st, 1, q->model);
	if (rc == SQLITE_OK)
		rc = bind_opt_text(st, 2, q->task_class);
	if (rc == SQLITE_OK && q->tasks_sha256)
		rc = sqlite3_bind_text(st, 4, q->tasks_sha256, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK && q->tasks_sha256)
		rc = sqlite3_bind_int64(st, 5, q->before_id > 0 ? q->before_id : (sqlite3_int64)LLONG_MAX);
	if (rc != SQLITE_OK) {
		db_fail(h, "listing runs", err);
		sqlite3_finalize(st);
		return -1;
	}
	long n = visit_rows(h, st, q->limit, visit, ctx, err);
	sqlite3_finalize(st);
	return n < 0 ? -1 : 0;
}

int ee_history_get(struct ee_history *h, long long id, ee_history_visit_fn visit, void *ctx,
                   struct ee_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(h->db, sql_get, -1, &st, NULL);

	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 1, id);
	if (rc != SQLITE_OK) {
		db_fail(h, "reading a run", err);
		sqlite3_finalize(st);
		return -1;
	}
	long n = visit_rows(h, st, 0, visit, ctx, err);
	sqlite3_finalize(st);
	return n < 0 ? -1 : n > 0;
}

/* ---- the default file ---------------------------------------------------- */

int ee_history_default_path(const char *xdg_data_home, const char *home, char *buf, size_t size)
{
	int n;

	if (xdg_data_home && xdg_data_home[0] == '/')
		n = snprintf(buf, size, "%s/execeval/history.db", xdg_data_home);
	else if (home && home[0] == '/')
		n = snprintf(buf, size, "%s/.local/share/execeval/history.db", home);
	else
		return -1;
	return n > 0 && (size_t)n < size ? 0 : -1;
}
