/* copy_int.h - what copy.c takes from copy_setup.c. Not a public header. */
#ifndef EE_SANDBOX_COPY_INT_H
#define EE_SANDBOX_COPY_INT_H

#include <stddef.h>
#include <sys/types.h>

struct ee_copy_plan;
struct ee_copy_target;
struct ee_err;

/* The copy's uid and gid maps (execeval's uid range onto itself), written
 * from the user namespace of state, its parent's, as the kernel asks. */
int copy_write_maps(pid_t state, pid_t copy, const struct ee_copy_target *t, struct ee_err *err);
/* The first n copies into their cgroups (one burst) and their mounts,
 * at once; each copy stopped meanwhile. */
int copy_setup_all(const struct ee_copy_plan *plan, size_t n, struct ee_err *err);
/* The session's pids.max raised by the plan's count: the old value, or -1
 * when there is none to raise; copy_restore_pids puts it back. */
long copy_raise_pids(const struct ee_copy_plan *plan);
void copy_restore_pids(const struct ee_copy_plan *plan, long old);

#endif
