/* violations.c - what a candidate tried and was refused (violations.h). */
#include "verdict/violations.h"

#include <string.h>

#include "input/task.h"
#include "sandbox/sandbox.h"
#include "verdict/events.h"

struct kind_class {
	const char *kind;
	const char *class_name;
};

/* Refused system calls by class; anything unlisted is "other" (a call the
 * allow-list leaves out for side channels or plain hygiene, like mincore). */
static const struct kind_class classes[] = {
	/* only AF_UNIX is allowed: any other family is a network attempt */
	{ "socket", "network" },
	{ "socketpair", "network" },
	{ "ptrace", "ptrace" },
	{ "process_vm_readv", "ptrace" },
	{ "process_vm_writev", "ptrace" },
	{ "pidfd_getfd", "ptrace" },
	{ "kcmp", "ptrace" },
	{ "mount", "mount" },
	{ "umount2", "mount" },
	{ "pivot_root", "mount" },
	{ "chroot", "mount" },
	{ "fsopen", "mount" },
	{ "fsconfig", "mount" },
	{ "fsmount", "mount" },
	{ "fspick", "mount" },
	{ "move_mount", "mount" },
	{ "open_tree", "mount" },
	{ "mount_setattr", "mount" },
	{ "unshare", "namespaces" },
	{ "setns", "namespaces" },
	{ "clone_namespace", "namespaces" },
	{ "setuid", "privilege" },
	{ "setgid", "privilege" },
	{ "setreuid", "privilege" },
	{ "setregid", "privilege" },
	{ "setresuid", "privilege" },
	{ "setresgid", "privilege" },
	{ "setfsuid", "privilege" },
	{ "setfsgid", "privilege" },
	{ "setgroups", "privilege" },
	{ "capset", "privilege" },
	{ "bpf", "kernel" },
	{ "perf_event_open", "kernel" },
	{ "userfaultfd", "kernel" },
	{ "io_uring_setup", "kernel" },
	{ "io_uring_enter", "kernel" },
	{ "io_uring_register", "kernel" },
	{ "keyctl", "kernel" },
	{ "add_key", "kernel" },
	{ "request_key", "kernel" },
	{ "init_module", "kernel" },
	{ "finit_module", "kernel" },
	{ "delete_module", "kernel" },
	{ "kexec_load", "kernel" },
	{ "kexec_file_load", "kernel" },
	{ "reboot", "kernel" },
	{ "swapon", "kernel" },
	{ "swapoff", "kernel" },
	{ "iopl", "kernel" },
	{ "ioperm", "kernel" },
	{ "modify_ldt", "kernel" },
	{ "open_by_handle_at", "kernel" },
	{ "name_to_handle_at", "kernel" },
	{ "personality", "kernel" },
	{ "syslog", "kernel" },
	{ "acct", "kernel" },
	{ "quotactl", "kernel" },
	{ "settimeofday", "kernel" },
	{ "clock_settime", "kernel" },
	{ "clock_adjtime", "kernel" },
	{ "adjtimex", "kernel" },
	{ "sethostname", "kernel" },
	{ "setdomainname", "kernel" },
	{ "vhangup", "kernel" },
	{ "fanotify_init", "kernel" },
	{ "lookup_dcookie", "kernel" },
	{ "uselib", "kernel" },
	{ "mknod", "kernel" },
	{ "mknodat", "kernel" },
	/* a refused ioctl request: TIOCSTI and device controls */
	{ "ioctl", "kernel" },
	/* a write by path outside /tmp (sandbox/write_watch.h): the mount refused it */
	{ "write_outside_tmp", "filesystem" },
	{ "denied_import", "import" },
	{ "memory_limit", "limit" },
	{ "pids_limit", "limit" },
	{ "output_limit", "limit" },
	{ "time_limit", "limit" },
	{ "call_rate_limit", "limit" },
};

const char *ee_violation_class(const char *kind)
{
	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		if (strcmp(classes[i].kind, kind) == 0)
			return classes[i].class_name;
	return "other";
}

int ee_violation_is_escape(const char *kind)
{
	const char *c = ee_violation_class(kind);
	return strcmp(c, "import") != 0 && strcmp(c, "limit") != 0 && strcmp(c, "other") != 0 &&
	       strcmp(c, "filesystem") != 0;
}

long ee_violations_escape_count(const json_t *violations)
{
	const char *kind;
	json_t *n;
	long total = 0;

	if (!json_is_object(violations))
		return 0;
	json_object_foreach ((json_t *)violations, kind, n)
		if (ee_violation_is_escape(kind) && json_is_integer(n))
			total += (long)json_integer_value(n);
	return total;
}

static void count(int *oom, json_t *o, const char *kind, json_int_t n)
{
	if (n <= 0)
		return;
	json_t *had = json_object_get(o, kind);
	json_int_t before = had ? json_integer_value(had) : 0;
	if (json_object_set_new(o, kind, json_integer(before + n)) < 0)
		*oom = 1;
}

json_t *ee_violations_json(const struct ee_sandbox_outcome *out, const struct ee_stream *s, int *oom)
{
	json_t *o = json_object();
	if (!o) {
		*oom = 1;
		return NULL;
	}
	for (unsigned i = 0; i < out->refused.n; i++)
		count(oom, o, out->refused.v[i].name, (json_int_t)out->refused.v[i].count);
	json_int_t denied = s->phases.import_denied ? 1 : 0;
	for (size_t i = 0; s->tests.results && i < s->task->n_tests; i++)
		denied += s->tests.results[i].denied ? 1 : 0;
	count(oom, o, "denied_import", denied);
	count(oom, o, "memory_limit", out->cg.oom_kills > 0 || s->memory_error);
	count(oom, o, "pids_limit", out->cg.pids_max_hits > 0);
	count(oom, o, "output_limit", out->end == EE_END_OUTPUT_OVERFLOW || out->output_truncated);
	count(oom, o, "time_limit", out->end == EE_END_TIMEOUT);
	count(oom, o, "call_rate_limit", out->paced);
	if (json_object_size(o) == 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}
