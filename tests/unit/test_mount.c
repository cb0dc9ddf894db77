/* test_mount.c - the mount plan (mount.h): what a sandbox sees of the host. */
#include <criterion/criterion.h>
#include <string.h>

#include "base/err.h"
#include "sandbox/mount.h"

static int starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

Test(mount, plan_binds_only_what_the_interpreter_needs)
{
	struct ee_mount_plan plan;
	struct ee_err err;
	int have_tmp = 0, have_proc = 0, have_dev = 0, devices = 0;

	cr_assert_eq(ee_mount_plan(64, &plan, &err), 0, "%s", err.msg);
	for (size_t i = 0; i < plan.n; i++) {
		const struct ee_mount_step *s = &plan.steps[i];
		cr_expect_neq(strcmp(s->target, "/"), 0, "the host root is never bound");
		static const char *const forbidden[] = { "/root", "/home", "/var", "/run", "/sys",
			                                 "/work", "/mnt",  "/srv", "/opt", NULL };
		for (size_t j = 0; forbidden[j]; j++)
			cr_expect(s->kind == EE_MNT_SYMLINK || (!starts_with(s->target, forbidden[j]) &&
			                                        !starts_with(s->arg, forbidden[j])),
			          "%s reaches %s", s->target, forbidden[j]);
		if (s->kind == EE_MNT_BIND_RO)
			cr_expect(starts_with(s->target, "/usr") || starts_with(s->target, "/lib") ||
			                  starts_with(s->target, "/bin") || starts_with(s->target, "/sbin") ||
			                  starts_with(s->target, "/etc/ld.so") ||
			                  !strcmp(s->target, "/etc/localtime") ||
			                  !strcmp(s->target, "/etc/alternatives"),
			          "unexpected bind %s", s->target);
		if (s->kind == EE_MNT_DEV) {
			devices++;
			cr_expect(!strcmp(s->target, "/dev/null") || !strcmp(s->target, "/dev/zero") ||
			                  !strcmp(s->target, "/dev/full") ||
			                  !strcmp(s->target, "/dev/random") ||
			                  !strcmp(s->target, "/dev/urandom"),
			          "unexpected device %s", s->target);
		}
		if (s->kind == EE_MNT_TMPFS && !strcmp(s->target, "/tmp")) {
			have_tmp = 1;
			cr_expect_str_eq(s->arg, "64");
		}
		have_dev |= s->kind == EE_MNT_TMPFS && !strcmp(s->target, "/dev");
		have_proc |= s->kind == EE_MNT_PROC && !strcmp(s->target, "/proc");
	}
	cr_expect(have_tmp && have_proc && have_dev);
	cr_expect_eq(devices, 5);
}

Test(mount, plan_has_a_step_for_usr)
{
	struct ee_mount_plan plan;
	struct ee_err err;
	int usr = 0;
	cr_assert_eq(ee_mount_plan(1, &plan, &err), 0, "%s", err.msg);
	for (size_t i = 0; i < plan.n; i++)
		usr |= plan.steps[i].kind == EE_MNT_BIND_RO && !strcmp(plan.steps[i].target, "/usr");
	cr_assert(usr);
}
