/* err.c - filling struct ee_err (see err.h). Heap-free: safe after clone. */
#include "base/err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

__attribute__((format(printf, 3, 0))) static void fill(struct ee_err *err, int code, const char *fmt,
                                                       va_list ap)
{
	err->code = code;
	err->field[0] = '\0';
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
}

int ee_fail(struct ee_err *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		fill(err, code, fmt, ap);
		va_end(ap);
	}
	return -1;
}

int ee_fail_errno(struct ee_err *err, int code, const char *fmt, ...)
{
	int saved = errno;

	if (err) {
		va_list ap;
		va_start(ap, fmt);
		fill(err, code, fmt, ap);
		va_end(ap);
		size_t len = strlen(err->msg);
		snprintf(err->msg + len, sizeof(err->msg) - len, ": %s", strerror(saved));
	}
	errno = saved;
	return -1;
}
