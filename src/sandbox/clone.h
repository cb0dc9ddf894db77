/* clone.h - the clone flags the sandbox uses that older libc headers lack.
 *
 * The kernels execeval supports (5.2+) have them; only the headers may not,
 * so the values are the kernel's ABI, defined once here. */
#ifndef EE_SANDBOX_CLONE_H
#define EE_SANDBOX_CLONE_H

#include <sched.h>

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000 /* include/uapi/linux/sched.h, since 5.2 */
#endif

#endif
