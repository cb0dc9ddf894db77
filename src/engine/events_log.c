/* events_log.c - the sandbox lifecycle log (events_log.h). */
#include "engine/events_log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "verdict/record.h"
#include "verdict/violations.h"

int ee_events_log_open(struct ee_events_log *l, const char *path, struct ee_err *err)
{
	l->fd = -1;
	l->failed = 0;
	if (!path)
		return 0;
	l->fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (l->fd < 0)
		return ee_fail_errno(err, EE_ERR_USAGE, "--events %s", path);
	return 0;
}

void ee_events_log_close(struct ee_events_log *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
}

/* One line, one write: O_APPEND makes it land whole after every other
 * writer's. Consumes o. */
static void emit(struct ee_events_log *l, json_t *o)
{
	char *text = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9)) : NULL;
	json_decref(o);
	if (!text)
		return;
	size_t n = strlen(text);
	char *line = realloc(text, n + 2);
	if (line) {
		text = line;
		text[n++] = '\n';
		ssize_t w;
		do
			w = write(l->fd, text, n);
		while (w < 0 && errno == EINTR);
		if (w != (ssize_t)n && !l->failed) {
			l->failed = 1;
			fprintf(stderr, "execeval: warning: --events: cannot write a line: %s\n",
			        w < 0 ? strerror(errno) : "short write");
		}
	}
	free(text);
}

static json_t *event(const char *name, const char *at, const json_t *id, const json_t *task,
                     const json_t *sample, const json_t *model)
{
	return json_pack("{s:s, s:s, s:O?, s:O?, s:O?, s:O?}", "event", name, "at", at, "sandbox_id", id,
	                 "task", task, "sample", sample, "model", model);
}

void ee_events_log_provisioned(struct ee_events_log *l, const char *sandbox_id, const char *task, long sample,
                               const char *model)
{
	char now[32];

	if (l->fd < 0)
		return;
	ee_iso_now(now);
	json_t *id = json_string(sandbox_id), *t = json_string(task);
	json_t *s = sample >= 0 ? json_integer(sample) : NULL, *m = model ? json_string(model) : NULL;
	emit(l, event("provisioned", now, id, t, s, m));
	json_decref(id);
	json_decref(t);
	json_decref(s);
	json_decref(m);
}

void ee_events_log_tripped(struct ee_events_log *l, const char *reason)
{
	char now[32];

	if (l->fd < 0)
		return;
	ee_iso_now(now);
	emit(l, json_pack("{s:s, s:s, s:s}", "event", "breaker_tripped", "at", now, "reason", reason));
}

void ee_events_log_resumed(struct ee_events_log *l)
{
	char now[32];

	if (l->fd < 0)
		return;
	ee_iso_now(now);
	emit(l, json_pack("{s:s, s:s}", "event", "breaker_resumed", "at", now));
}

void ee_events_log_ended(struct ee_events_log *l, const json_t *rec)
{
	char now[32];

	if (l->fd < 0 || !rec)
		return;
	const json_t *id = json_object_get(rec, "sandbox_id"), *task = json_object_get(rec, "task_id");
	const json_t *sample = json_object_get(rec, "sample"), *model = json_object_get(rec, "model");
	const char *at = json_string_value(json_object_get(rec, "finished_at"));
	if (!at) {
		ee_iso_now(now);
		at = now;
	}
	const char *kind;
	json_t *n;
	json_object_foreach ((json_t *)json_object_get(rec, "violations"), kind, n) {
		const char *class_name = ee_violation_class(kind);
		int limit = strcmp(class_name, "limit") == 0;
		json_t *o = event(limit ? "limit" : "violation", at, id, task, sample, model);
		if (o && json_object_set_new(o, "kind", json_string(kind)) == 0 &&
		    (limit || json_object_set_new(o, "class", json_string(class_name)) == 0))
			json_object_set(o, "count", n);
		emit(l, o);
	}
	json_t *o = event("torn_down", at, id, task, sample, model);
	if (o) {
		json_t *status = json_object_get(rec, "status");
		if (status)
			json_object_set(o, "status", status);
		else /* the host failed: no verdict */
			json_object_set_new(o, "status", json_string("sandbox_error"));
		json_t *wall = json_object_get(json_object_get(rec, "resources"), "wall_ms");
		if (wall)
			json_object_set(o, "wall_ms", wall);
	}
	emit(l, o);
}
