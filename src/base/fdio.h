/* fdio.h - whole reads and writes on a blocking descriptor.
 *
 * For the sandbox's own processes (the gVisor launcher and relay), which
 * speak fixed-size messages and frames over pipes: a short read or write is
 * retried, EINTR too; anything else ends the exchange.
 */
#ifndef EE_FDIO_H
#define EE_FDIO_H

#include <stddef.h>

/* Writes all n bytes of p to fd: 0, or -1 (an error, or fd took nothing). */
int ee_write_all(int fd, const void *p, size_t n);

/* Reads exactly n bytes into p: 0, or -1 (an error, or end of file first). */
int ee_read_all(int fd, void *p, size_t n);

#endif
