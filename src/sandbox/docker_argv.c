/* docker_argv.c - the `docker run` command for one candidate (see
 * docker_argv.h). Every argument is a separate argv element: no shell
 * ever parses it, so no task, image or limit can add an argument.
 */
#include "sandbox/docker_argv.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "base/err.h"
#include "base/resource_limits.h"

/* Appends one formatted argument; -1 when out of room. */
__attribute__((format(printf, 2, 3))) static int add(struct ee_docker_argv *a, const char *fmt, ...)
{
	if (a->argc >= EE_DOCKER_ARGC_MAX || a->used >= sizeof(a->buf))
		return -1;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(a->buf + a->used, sizeof(a->buf) - a->used, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(a->buf) - a->used)
		return -1;
	a->argv[a->argc++] = a->buf + a->used;
	a->argv[a->argc] = NULL;
	a->used += (size_t)n + 1;
	return 0;
}

/* A Docker image reference's characters, not starting as an option would. */
static int image_ok(const char *s)
{
	if (!*s || *s == '-' || strlen(s) > 255)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      strchr("._/:@-", *s)))
			return 0;
	return 1;
}

int ee_docker_argv_build(const struct ee_docker_spec *s, struct ee_docker_argv *out, struct ee_err *err)
{
	const struct ee_limits *l = s->limits;
	const char *image = s->image ? s->image : EE_DOCKER_IMAGE_DEFAULT;

	memset(out, 0, sizeof(*out));
	if (!image_ok(image))
		return ee_fail(err, EE_ERR_USAGE,
		               "--image '%.100s': not an image name (letters, digits and ._/:@- only, "
		               "not starting with '-')",
		               image);
	/* In this order, so docs/sandbox.md and the stand-in read it alike. */
	int bad = add(out, "%s", s->docker) || add(out, "run") || add(out, "--rm") || add(out, "-i") ||
	          add(out, "--name") || add(out, "%s", s->name) || add(out, "--pull") || add(out, "never") ||
	          add(out, "--network") || add(out, "none") || add(out, "--read-only") ||
	          /* noexec: a candidate is Python source; a binary it drops in
	           * /tmp must not run (the native /tmp allows it: the seccomp
	           * filter is its fence there, here it is both). */
	          add(out, "--tmpfs") ||
	          add(out, "/tmp:rw,noexec,nosuid,nodev,size=%um,mode=1777", l->tmp_mb) ||
	          add(out, "--shm-size") || add(out, "%um", l->tmp_mb) || add(out, "--user") ||
	          add(out, "65534:65534") || add(out, "--cap-drop") || add(out, "ALL") ||
	          add(out, "--security-opt") || add(out, "no-new-privileges") || add(out, "--pids-limit") ||
	          add(out, "%u", l->procs) || add(out, "--memory") || add(out, "%um", l->memory_mb) ||
	          add(out, "--memory-swap") || add(out, "%um", l->memory_mb) || add(out, "--cpus") ||
	          add(out, "%g", s->cpus) || add(out, "--ulimit") ||
	          add(out, "nofile=%u:%u", l->open_files, l->open_files) || add(out, "--ulimit") ||
	          add(out, "fsize=%llu:%llu", (unsigned long long)l->file_mb << 20,
	              (unsigned long long)l->file_mb << 20) ||
	          add(out, "--log-driver") || add(out, "none") || add(out, "--entrypoint") ||
	          add(out, EE_DOCKER_EXECEVAL) || add(out, "%s", image) || add(out, "__gvisor-relay") ||
	          add(out, EE_DOCKER_PYTHON) || add(out, "%u", l->memory_mb + EE_DOCKER_AS_EXTRA_MB);
	if (bad)
		return ee_fail(err, EE_ERR_USAGE, "the docker command does not fit (a name too long?)");
	return 0;
}

int ee_docker_name(char *name, size_t size)
{
	unsigned char r[8];
	if (size < 32 || getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return -1;
	int n = snprintf(name, size, "execeval-");
	for (size_t i = 0; i < sizeof(r); i++)
		n += snprintf(name + n, size - (size_t)n, "%02x", r[i]);
	return 0;
}

/* Quoted only when a character is not one a shell leaves alone. */
static int plain_word(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      strchr("._/:@=,+%-", *s)))
			return 0;
	return 1;
}

size_t ee_docker_argv_shell(const struct ee_docker_argv *a, char *buf, size_t size)
{
	size_t n = 0;
#define PUT(c)                                                                                               \
	do {                                                                                                 \
		if (n + 1 < size)                                                                            \
			buf[n] = (c);                                                                        \
		n++;                                                                                         \
	} while (0)
	for (int i = 0; i < a->argc; i++) {
		const char *s = a->argv[i];
		if (i)
			PUT(' ');
		if (plain_word(s)) {
			for (; *s; s++)
				PUT(*s);
			continue;
		}
		PUT('\'');
		for (; *s; s++) {
			if (*s == '\'') { /* ' closes, \' is the quote, ' reopens */
				PUT('\'');
				PUT('\\');
				PUT('\'');
			}
			PUT(*s);
		}
		PUT('\'');
	}
#undef PUT
	if (size)
		buf[n < size ? n : size - 1] = '\0';
	return n;
}
