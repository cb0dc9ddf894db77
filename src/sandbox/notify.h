/* notify.h - the refused system calls, seen by the supervisor.
 *
 * Compiled with EE_SECCOMP_NOTIFY (seccomp.h), the filter's default action
 * is SECCOMP_RET_USER_NOTIF rather than ERRNO(EPERM): a call outside the
 * allow-list stops its thread until the supervisor answers. The sandbox
 * loads the filter with a listener (ee_seccomp_load returns it) and passes
 * the listener over the control socket (ee_notify_send) before anything of
 * the candidate runs; the supervisor watches it on the loop and answers
 * every notification EPERM, which is what the filter answered itself
 * before, counting it by name (ee_notify_answer). Allowed calls never reach
 * the supervisor: an honest candidate pays nothing, but for the calls that
 * write the file system by path when the filter watches them
 * (EE_SECCOMP_WATCH_WRITES), which continue after a round trip. The listener never
 * reaches the candidate (the sandbox closes its copy at once), so nothing
 * in the sandbox can answer "continue" to its own call.
 */
#ifndef EE_NOTIFY_H
#define EE_NOTIFY_H

#include <stddef.h>

/* Refused calls one sandbox gets answered (and counted) by the supervisor;
 * past it, the kernel answers ENOSYS, and the tally says "uncounted". */
#define EE_NOTIFY_MAX 10000

/* The pace of one sandbox's notifications, refused calls and watched
 * writes alike. Each costs the supervisor's one loop 8-20 us outside every
 * cgroup and clock (20 when each wakes the loop alone), so EE_NOTIFY_BURST
 * are answered at once (more than any honest program was seen to make),
 * then EE_NOTIFY_RATE a second: about 2% of a core per sandbox, whatever
 * the candidate does. Past that the listener leaves the loop until
 * EE_NOTIFY_QUANTUM are due (one wake-up per 10 ms, not one per call):
 * the calling threads wait in the kernel, on the candidate's wall clock,
 * and the supervisor spends nothing meanwhile (docs/threat-model.md,
 * "Writes outside /tmp"). */
#define EE_NOTIFY_RATE    1000
#define EE_NOTIFY_BURST   2000
#define EE_NOTIFY_QUANTUM 10

struct ee_tally;

/* In the sandbox: sends msg (n bytes) with listener attached on sock. */
int ee_notify_send(int sock, const void *msg, size_t n, int listener);

/* In the supervisor: reads one message of up to n bytes from sock into msg;
 * a descriptor attached to it goes to *fd (else -1), close-on-exec. As
 * read(2) otherwise. */
long ee_notify_recv(int sock, void *msg, size_t n, int *fd);

/* The kind a write outside /tmp is counted as (write_watch.h). */
#define EE_WRITE_OUTSIDE_TMP "write_outside_tmp"

/* The listener is readable: takes one notification. A refused call is
 * answered EPERM and its name added to t (a clone asking for namespaces
 * counts as "clone_namespace"): 0. A writing call (write_watch.h) is let
 * continue, counted as EE_WRITE_OUTSIDE_TMP when its path lies outside
 * /tmp: 1. 0 too when nothing was pending; -1 when the listener is
 * finished (no task left). */
int ee_notify_answer(int listener, struct ee_tally *t);
/* As ee_notify_answer, for a notification received already (copy.c's
 * helper, which answers the listener while a session is forked); t NULL:
 * not counted. */
struct seccomp_notif;
int ee_notify_respond(int listener, const struct seccomp_notif *req, struct ee_tally *t);

#endif
