/* doctor.c - `execeval doctor`: which isolation features this host offers,
 * and what execeval does without each. Exit 0 when candidates can run with
 * the default options, 3 when they cannot (the message says how to fix it;
 * without a memory cgroup the live check runs as --weak-limits would). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "engine/engine.h"
#include "base/err.h"
#include "harness/harness.h"
#include "sandbox/sandbox.h"
#include "sandbox/worker.h"

static void line(const char *feature, int ok, const char *yes, const char *no)
{
	printf("%-22s %-4s %s\n", feature, ok ? "yes" : "no", ok ? yes : no);
}

static void controller(const char *name, const struct ee_cg_controller *c, const char *fallback)
{
	char what[PATH_MAX + 64];
	if (c->version && c->writable)
		snprintf(what, sizeof(what), "cgroup v%d at %.4000s", c->version, c->dir);
	else if (c->why[0])
		snprintf(what, sizeof(what), "unusable: %s; %s", c->why, fallback);
	else if (c->version)
		snprintf(what, sizeof(what), "cgroup v%d at %.4000s is not writable: %s", c->version, c->dir,
		         fallback);
	else
		snprintf(what, sizeof(what), "no %s controller: %s", name, fallback);
	printf("%-22s %-4s %s\n", name, c->version && c->writable ? "yes" : "no", what);
}

/* As root the sandbox needs five capabilities (host.c): one line per
 * missing one, since a container runtime or pod spec grants them one by
 * one. Unprivileged, the user namespace gives the sandbox its own. */
static void capabilities(const struct ee_host *h)
{
	int missing = 0;

	if (!h->is_root)
		return;
	for (int i = 0; i < EE_HOST_N_CAPS; i++) {
		const struct ee_cap_need *c = &ee_host_caps[i];
		char name[32], what[256];
		if (h->cap_eff >> c->cap & 1)
			continue;
		snprintf(name, sizeof(name), "CAP_%s", c->name);
		snprintf(what, sizeof(what), "missing, needed for %s: execeval refuses to run (exit 3)",
		         c->used_for);
		line(name, 0, "", what);
		missing++;
	}
	if (!missing)
		line("capabilities", 1, "SYS_ADMIN, SETUID, SETGID, SETPCAP and KILL, all the sandbox needs",
		     "");
}

/* The proof that matters: one trivial candidate through the real sandbox,
 * cold or from a warm worker. */
static int live_check(int isolation, int weak_limits, struct ee_err *err)
{
	struct ee_eval_options o = { 0 };
	enum ee_extract_mode extract;
	struct ee_engine_config cfg = { .opt = &o, .workers = 1 };
	struct ee_engine *eng = NULL;
	double ms;
	int rc = -1;

	ee_options_defaults(EE_FRONT_EVAL, &(struct ee_option_sink){ &o, &extract });
	o.isolation = isolation;
	o.weak_limits = weak_limits;
	if (ee_engine_open(&cfg, &eng, err) < 0 || ee_engine_check(eng, &o, &ms, err) < 0)
		goto out;
	if (isolation == EE_ISOLATION_WARM)
		printf("%-22s %-4s a trivial candidate passed, forked from a warm worker (%.1f ms)\n",
		       "live check, warm", "yes", ms);
	else
		printf("%-22s %-4s a trivial candidate passed in the sandbox (%.1f ms, %s)\n", "live check",
		       "yes", ms,
		       ee_engine_harness(eng)->pyc ? "harness from its pyc" : "harness from source");
	rc = 0;
out:
	ee_engine_close(eng);
	return rc;
}

/* Whether a cgroup2 mount has favordynmods: moving a process between
 * cgroups then skips an RCU grace period (milliseconds per sandbox). */
static int favordynmods(void)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	int found = 0;

	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, " - cgroup2 ") && strstr(line, "favordynmods");
	if (f)
		fclose(f);
	return found;
}

static const char usage[] =
        "usage: execeval doctor [--backend native|gvisor|docker]\n"
        "  which isolation features this host offers, what execeval does without each, and\n"
        "  a live check of one trivial candidate; exit 0 when candidates can run with the\n"
        "  default options, 3 when they cannot (each line says how to fix it)\n"
        "  --backend docker     also 3 when that backend cannot start here (no docker)\n";

int cmd_doctor(int argc, char **argv)
{
	struct ee_host h;
	struct ee_err err = { 0 };

	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		fputs(usage, stdout);
		return EXIT_PASS;
	}
	int need_docker = argc == 3 && strcmp(argv[1], "--backend") == 0 && strcmp(argv[2], "docker") == 0;
	if (argc > 1 && !need_docker &&
	    !(argc == 3 && strcmp(argv[1], "--backend") == 0 &&
	      (strcmp(argv[2], "native") == 0 || strcmp(argv[2], "gvisor") == 0))) {
		fprintf(stderr, "execeval doctor: takes only --backend native|gvisor|docker\n%s", usage);
		return EXIT_USAGE;
	}
	if (ee_host_probe(&h, &err) < 0) {
		fprintf(stderr, "execeval doctor: %s\n", err.msg);
		return EXIT_SANDBOX;
	}
	printf("execeval %s on this host:\n", EE_VERSION);
	line("running as root", h.is_root, "candidates run as uids of their own, no user namespace needed",
	     geteuid() == 0 ? "root of a user namespace only: a user namespace of the sandbox's own "
	                      "maps its 65534 to your uid"
	                    : "a user namespace maps the sandbox's 65534 to your uid");
	capabilities(&h);
	line("user namespaces", h.userns, "available",
	     h.is_root ? "unavailable (not needed as root)"
	               : "unavailable: execeval cannot run unprivileged");
	line("pid/mount/net/ipc/uts", 1, "new namespaces per candidate (always required)", "");
	line("seccomp filter", h.seccomp, "allow-list of system calls", "missing: execeval refuses to run");
	int weak = !ee_host_has_memory_cgroup(&h);
	controller("memory", &h.memory,
	           "execeval refuses to run without --weak-limits (with it: RLIMIT_AS per process, "
	           "memfd_create refused, /tmp and file size x open files within --memory)");
	controller("pids", &h.pids,
	           h.is_root ? "falls back to RLIMIT_NPROC for the sandbox's own uid"
	                     : "falls back to RLIMIT_NPROC, counted per user namespace (kernel >= 5.14)");
	controller("cpu", &h.cpu,
	           "no CPU share per sandbox: a candidate's processes (setsid, many of them) can starve "
	           "a concurrent one; its timeout then says \"starved\"");
	/* On v1 the sandbox joins its cgroups through `tasks`, without the lock. */
	if (h.memory.version == EE_CG_V2 || h.pids.version == EE_CG_V2)
		line("cgroup favordynmods", favordynmods(), "cgroup moves skip an RCU grace period",
		     "each sandbox's cgroup move waits for an RCU grace period (often 5-15 ms); as root, "
		     "mount -o remount,favordynmods <the cgroup2 mount> removes that wait (kernel >= 6.0)");
	line("python", access(h.python, X_OK) == 0, h.python,
	     "/usr/bin/python3 missing: apt-get install python3");
	struct ee_err why = { 0 };
	int warm = ee_pool_supported(&h, &why) == 0;
	line("warm isolation", warm, "eval forks each candidate from a warm worker (--isolation warm)",
	     why.msg);
	doctor_gvisor(h.is_root, weak);
	if (!doctor_docker(h.is_root) && need_docker) {
		printf("\nexeceval cannot run candidates here with --backend docker (see the docker "
		       "lines)\n");
		return EXIT_SANDBOX;
	}
	if (ee_host_usable(&h, &err) < 0 || live_check(EE_ISOLATION_COLD, weak, &err) < 0) {
		printf("\nexeceval cannot run candidates here: %s\n", err.msg);
		return EXIT_SANDBOX;
	}
	if (warm && live_check(EE_ISOLATION_WARM, weak, &err) < 0) {
		printf("\nexeceval runs candidates here, but only cold (--isolation cold): %s\n", err.msg);
		return EXIT_SANDBOX;
	}
	if (weak) {
		printf("\nexeceval runs candidates here only with --weak-limits: without a writable "
		       "memory cgroup (see the memory line) --memory cannot bound /tmp and memfd "
		       "pages\n");
		return EXIT_SANDBOX;
	}
	printf("\nexeceval can run candidates here.\n");
	return 0;
}
