/* memfd.h - bytes handed to a sandbox as a sealed memfd.
 *
 * The job, the harness's pyc and a warm worker's configuration go in as
 * memfds sealed against any change (shrink, grow, write, more seals): what
 * the supervisor wrote is what the other side reads, whoever holds the fd.
 */
#ifndef EE_MEMFD_H
#define EE_MEMFD_H

#include <stddef.h>

struct ee_err;

/* A close-on-exec memfd holding data, sealed, its offset at 0; or -1 (err
 * names `name`). */
int ee_memfd_sealed(const char *name, const void *data, size_t len, struct ee_err *err);

#endif
