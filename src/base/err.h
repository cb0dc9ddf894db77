/* err.h - the error value every fallible library function fills.
 *
 * Fallible functions return 0 on success or a negative value on failure and
 * fill a caller-owned struct ee_err passed last. The struct is fixed-size and
 * heap-free, so it is safe to use in a cloned child before exec and can be
 * sent whole over a pipe to the supervisor.
 *
 * A candidate's crash or timeout is a *result* (a status in the record), never
 * an ee_err: ee_err is for "the sandbox or the input failed".
 */
#ifndef EE_ERR_H
#define EE_ERR_H

enum ee_err_code {
	EE_OK = 0,
	EE_ERR_USAGE = 2,   /* bad flag or malformed input: exit code 2 */
	EE_ERR_SANDBOX = 3, /* the host refused a needed feature: exit code 3 */
	EE_ERR_BREAKER = 4, /* the circuit breaker stopped the run: exit code 4 */
};

struct ee_err {
	int code;       /* enum ee_err_code */
	char msg[256];  /* one line, no trailing newline */
	char field[96]; /* the input field at fault as a path ("tests[2].kind"),
	                   "" when the error is not about one field */
};

/* Sets err (when non-NULL) and returns -1, so callers can `return ee_fail(...)`. */
int ee_fail(struct ee_err *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* As ee_fail, appending ": strerror(errno)" (errno read on entry). */
int ee_fail_errno(struct ee_err *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
