/* cleanup.h - ownership of locals in the syntax (HACKING.md, "Ownership
 * and cleanup").
 *
 * A local declared with one of these markers is released when it goes out
 * of scope, on every return path:
 *
 *     ee_autoclose int fd = open(...);      close(fd) unless fd < 0
 *     ee_autofree char *text = strdup(...); free(text)
 *     ee_autodecref json_t *v = json_...;   json_decref(v)
 *     ee_autobuf struct ee_buf b;           ee_buf_free(&b) (init it first)
 *
 * Success hands the resource on explicitly, leaving nothing behind for the
 * cleanup: `*ret = ee_take_ptr(&text);`, `sb->fd[k] = ee_take_fd(&fd);`.
 * The helpers preserve errno, so a failure's ee_fail_errno still sees the
 * cause. A cloned child that never returns runs none of them.
 */
#ifndef EE_CLEANUP_H
#define EE_CLEANUP_H

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <jansson.h>

#include "base/buf.h"

static inline void ee_closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

static inline void ee_freep(void *p)
{
	free(*(void **)p);
}

static inline void ee_decrefp(json_t **v)
{
	json_decref(*v);
}

#define ee_autoclose  __attribute__((cleanup(ee_closep)))
#define ee_autofree   __attribute__((cleanup(ee_freep)))
#define ee_autodecref __attribute__((cleanup(ee_decrefp)))
#define ee_autobuf    __attribute__((cleanup(ee_buf_free)))

/* The fd at *fd, which the caller now owns; *fd becomes -1. */
static inline int ee_take_fd(int *fd)
{
	int taken = *fd;
	*fd = -1;
	return taken;
}

/* The pointer at *pp (any object pointer's address), which the caller now
 * owns; *pp becomes NULL. */
static inline void *ee_take_ptr(void *pp)
{
	void *taken = *(void **)pp;
	*(void **)pp = NULL;
	return taken;
}

#endif
