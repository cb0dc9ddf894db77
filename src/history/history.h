/* history.h - the run history: one SQLite database, one row per `eval` run.
 *
 * Each run stores when it ran, its command line, the sha256 of its tasks and
 * samples files, the models seen, the limits, execeval's version and the
 * summary JSON (with its per-class figures); per-sample records stay in the
 * results JSONL. The schema (docs/history.md) is versioned in
 * meta.schema_version and upgraded in place by a table of migrations, one
 * per version step, all applied in one transaction. A database written by a
 * newer execeval (a higher version) is refused and never modified. The
 * database runs in WAL mode with a busy timeout, so evals finishing at the
 * same moment (even on one file) wait for each other instead of failing.
 *
 * Lifecycle: ee_history_open, then insert/list/get, then ee_history_close.
 * Ownership: the handle owns the SQLite connection. Strings handed to a
 * visitor are borrowed for the call only; insert copies what it is given.
 * Errors: struct ee_err (code EE_ERR_USAGE) whose message names the file.
 * SQL is static text with bound parameters only.
 */
#ifndef EE_HISTORY_H
#define EE_HISTORY_H

#include <stddef.h>

struct ee_err;
struct ee_history;

/* The schema version this execeval writes (and the newest it reads). */
#define EE_HISTORY_SCHEMA_VERSION 1

/* One run. insert ignores id; list and get fill every field. */
struct ee_history_run {
	long long id;
	const char *started_at, *finished_at; /* UTC ISO 8601, e.g. 2024-05-01T12:34:56Z */
	const char *command_line;             /* JSON array of the arguments */
	const char *tasks_path, *tasks_sha256;
	const char *samples_path, *samples_sha256;
	const char *models;           /* JSON array of the distinct model names */
	const char *limits;           /* JSON object */
	const char *execeval_version; /* e.g. 0.1.0 */
	const char *summary;          /* the summary JSON object */
};

enum {
	EE_HISTORY_CREATE = 1, /* create the file (0600) and its directories (0700) when absent */
};

/* Opens (with EE_HISTORY_CREATE: creates) the history at path and brings its
 * schema up to EE_HISTORY_SCHEMA_VERSION. Refused, the file untouched: not
 * an SQLite database, an SQLite database that is not a history (tables but
 * no meta table), a schema newer than this execeval's. */
int ee_history_open(const char *path, int flags, struct ee_history **ret, struct ee_err *err);

/* Accepts NULL. */
void ee_history_close(struct ee_history *h);

/* Stores run (every string required; models must be a JSON array, limits
 * and summary JSON objects, command_line a JSON array); *ret_id (when
 * non-NULL) gets the new run's id. */
int ee_history_insert(struct ee_history *h, const struct ee_history_run *run, long long *ret_id,
                      struct ee_err *err);

/* Which runs to list. Zero it for "every run". */
struct ee_history_query {
	const char *model;        /* NULL: any; else runs whose models include it */
	const char *task_class;   /* NULL: any; else runs whose summary has this class */
	const char *tasks_sha256; /* NULL: any data set; else that one, and before_id applies */
	long long before_id;      /* with tasks_sha256: only runs older than this id (0: all) */
	unsigned long limit;      /* 0: no limit */
};

/* Returns 0 to go on, -1 to stop (the list then returns -1 with err as set). */
typedef int (*ee_history_visit_fn)(void *ctx, const struct ee_history_run *run, struct ee_err *err);

/* Visits the runs matching q, newest first (by id). */
int ee_history_list(struct ee_history *h, const struct ee_history_query *q, ee_history_visit_fn visit,
                    void *ctx, struct ee_err *err);

/* Visits run id; returns 1 when it exists, 0 when not, -1 on error. */
int ee_history_get(struct ee_history *h, long long id, ee_history_visit_fn visit, void *ctx,
                   struct ee_err *err);

/* The schema version of the open history (after any migration). */
int ee_history_schema_version(struct ee_history *h);

/* The default history file: $XDG_DATA_HOME/execeval/history.db when
 * XDG_DATA_HOME is an absolute path, else $HOME/.local/share/execeval/history.db
 * when HOME is an absolute path. -1 when neither applies or buf is too small. */
int ee_history_default_path(const char *xdg_data_home, const char *home, char *buf, size_t size);

/* ee_history_open with another migration table: steps[i] is the SQL that
 * takes version i to i + 1, so the newest version is n_steps. The real table
 * is history.c's; tests pass a longer one to rehearse a future version's
 * upgrade of a database this version wrote. */
int ee_history_open_steps(const char *path, int flags, const char *const *steps, int n_steps,
                          struct ee_history **ret, struct ee_err *err);

#endif
