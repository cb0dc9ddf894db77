/* violations.h - what a candidate tried and was refused (docs/record.md,
 * "violations"; docs/threat-model.md, "Tripwires").
 *
 * The record's "violations" object counts, by kind: every system call the
 * seccomp filter refused, by name (sandbox/notify.h; "clone_namespace" for a
 * clone asking for namespaces), "denied_import" (imports the harness
 * refused), "write_outside_tmp" (writes by path outside /tmp, which the
 * read-only mounts refused: sandbox/write_watch.h), and the limits hit:
 * "memory_limit", "pids_limit", "output_limit", "time_limit",
 * "call_rate_limit" (its notifications waited for their pace: notify.h). Absent when
 * empty.
 *
 * Each kind has a class; the escape class (network, ptrace, mount,
 * namespaces, privilege, kernel) is what the circuit breaker counts
 * (engine/breaker.h): attempts on the boundary itself, which an honest
 * program does not make.
 */
#ifndef EE_VIOLATIONS_H
#define EE_VIOLATIONS_H

#include <jansson.h>

struct ee_sandbox_outcome;
struct ee_stream;

/* The "violations" object of a record (owned by the caller), or NULL when
 * there is nothing to count (or out of memory: *oom set). */
json_t *ee_violations_json(const struct ee_sandbox_outcome *out, const struct ee_stream *s, int *oom);

/* The class of a kind: "network", "ptrace", "mount", "namespaces",
 * "privilege", "kernel" (the escape class), or "filesystem", "import",
 * "limit", "other". */
const char *ee_violation_class(const char *kind);
int ee_violation_is_escape(const char *kind);

/* How many of a record's violations (its "violations" object, or NULL) are
 * of the escape class. */
long ee_violations_escape_count(const json_t *violations);

#endif
