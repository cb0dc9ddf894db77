/* events_log.h - the sandbox lifecycle log (--events FILE; docs/events.md).
 *
 * One JSON object per line per sandbox event: "provisioned" (its sandbox
 * started), "violation" (one line per kind the candidate was refused, with
 * its class and count), "limit" (one per limit it hit), "torn_down" (its
 * record's status and wall time). Every line carries "event", "at" (UTC
 * ISO 8601, ms), "sandbox_id", "task", "sample" and "model" (null when
 * absent); besides, "breaker_tripped" (with "reason") and
 * "breaker_resumed" lines. The violation and limit lines are written when the sandbox ends,
 * from its record, with its finished_at as "at".
 *
 * The file is opened O_APPEND and each line is one write(2): processes (or
 * shards) appending to the same file never interleave inside a line. Lines
 * are not fsync'd; rotation is logrotate's (copytruncate, or a reopen on
 * restart).
 */
#ifndef EE_EVENTS_LOG_H
#define EE_EVENTS_LOG_H

#include <jansson.h>

struct ee_err;

struct ee_events_log {
	int fd;     /* -1: off */
	int failed; /* a write failed: warned once, then quiet */
};

/* path NULL: off (fd -1). */
int ee_events_log_open(struct ee_events_log *l, const char *path, struct ee_err *err);
void ee_events_log_close(struct ee_events_log *l);

/* A sandbox started (at now). */
void ee_events_log_provisioned(struct ee_events_log *l, const char *sandbox_id, const char *task, long sample,
                               const char *model);

/* A sandbox ended with record rec (its violations, limits, status). */
void ee_events_log_ended(struct ee_events_log *l, const json_t *rec);

/* The circuit breaker tripped ("breaker_tripped", with "reason") or was
 * resumed ("breaker_resumed"); no sandbox fields. */
void ee_events_log_tripped(struct ee_events_log *l, const char *reason);
void ee_events_log_resumed(struct ee_events_log *l);

#endif
