/* test_uid.c - a host uid per sandbox, claimed by flock'ed files (uid.h).
 *
 * Two allocators over one claim directory stand for two execeval
 * processes (flock conflicts between open file descriptions, within one
 * process too): they never hold one id at once; ids the passwd or group
 * file names are skipped; a released id is idle and handed out again first,
 * and free for others once the allocator closes; a directory others could
 * write to is refused; a bad base is a usage error naming the variable. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "sandbox/uid.h"

#define BASE 0x7ee00000u

static char tmp[64], dir[96], passwd[96], group[96];

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	cr_assert(f);
	fputs(text, f);
	fclose(f);
}

static void make_tmp(void)
{
	char line[256];
	snprintf(tmp, sizeof(tmp), "/tmp/ee-uid-test.XXXXXX");
	cr_assert(mkdtemp(tmp));
	snprintf(dir, sizeof(dir), "%s/uids", tmp);
	snprintf(passwd, sizeof(passwd), "%s/passwd", tmp);
	snprintf(group, sizeof(group), "%s/group", tmp);
	snprintf(line, sizeof(line), "root:x:0:0:root:/root:/bin/sh\nx:x:%u:1::/:/bin/sh\nbad line\n", BASE);
	write_text(passwd, line);
	snprintf(line, sizeof(line), "root:x:0:\ny:x:%u:\n", BASE + 2);
	write_text(group, line);
}

static void remove_tmp(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	cr_expect_eq(system(cmd), 0);
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1;
}

TestSuite(uid, .init = make_tmp, .fini = remove_tmp);

Test(uid, two_allocators_never_hold_one_id_and_host_ids_are_skipped)
{
	struct ee_uids a, b;
	struct ee_uid x = EE_UID_NONE, y = EE_UID_NONE, z = EE_UID_NONE;
	struct ee_err err = { 0 };
	int before = open_fds();

	cr_assert_eq(ee_uids_open(&a, dir, BASE, passwd, group, &err), 0, "%s", err.msg);
	cr_assert_eq(ee_uids_open(&b, dir, BASE, passwd, group, &err), 0, "%s", err.msg);
	cr_assert_eq(ee_uids_claim(&a, &x, &err), 0, "%s", err.msg);
	cr_expect_eq(x.id, BASE + 1, "BASE is passwd's: got %u", x.id);
	cr_assert_eq(ee_uids_claim(&b, &y, &err), 0, "%s", err.msg);
	cr_expect_eq(y.id, BASE + 3, "BASE + 1 is a's, BASE + 2 group's: got %u", y.id);

	/* Released, x stays a's (idle) and comes back first. */
	ee_uids_release(&a, &x);
	cr_expect_eq(x.fd, -1);
	cr_assert_eq(ee_uids_claim(&b, &z, &err), 0, "%s", err.msg);
	cr_expect_eq(z.id, BASE + 4, "an idle id is still claimed: got %u", z.id);
	ee_uids_release(&b, &z);
	cr_assert_eq(ee_uids_claim(&a, &x, &err), 0, "%s", err.msg);
	cr_expect_eq(x.id, BASE + 1);
	ee_uids_release(&a, &x);

	/* Closed, a's ids are the host's again. */
	ee_uids_close(&a);
	ee_uids_release(&b, &y);
	ee_uids_close(&b);
	cr_assert_eq(ee_uids_open(&b, dir, BASE, passwd, group, &err), 0, "%s", err.msg);
	cr_assert_eq(ee_uids_claim(&b, &y, &err), 0, "%s", err.msg);
	cr_expect_eq(y.id, BASE + 1);
	ee_uids_release(NULL, &y); /* no allocator: closed */
	ee_uids_close(&b);
	cr_expect_eq(open_fds(), before, "no descriptor leaked");
}

Test(uid, missing_account_files_name_no_ids)
{
	struct ee_uids a;
	struct ee_uid x = EE_UID_NONE;
	struct ee_err err = { 0 };
	char none[128];

	snprintf(none, sizeof(none), "%s/none", tmp);
	cr_assert_eq(ee_uids_open(&a, dir, BASE, none, none, &err), 0, "%s", err.msg);
	cr_assert_eq(ee_uids_claim(&a, &x, &err), 0, "%s", err.msg);
	cr_expect_eq(x.id, BASE);
	ee_uids_release(&a, &x);
	ee_uids_close(&a);
}

Test(uid, a_directory_others_can_write_is_refused)
{
	struct ee_uids a;
	struct ee_err err = { 0 };

	cr_assert_eq(mkdir(dir, 0700), 0);
	cr_assert_eq(chmod(dir, 0777), 0);
	cr_expect_eq(ee_uids_open(&a, dir, BASE, passwd, group, &err), -1);
	cr_expect(strstr(err.msg, "writable only by it"), "%s", err.msg);
}

Test(uid, the_base_is_checked)
{
	unsigned base = 0;
	struct ee_err err = { 0 };

	cr_expect_eq(ee_uid_parse_base(NULL, &base, &err), 0);
	cr_expect_eq(base, EE_UID_BASE_DEFAULT);
	cr_expect_eq(ee_uid_parse_base("0x10000", &base, &err), 0);
	cr_expect_eq(base, 65536u);
	cr_expect_eq(ee_uid_parse_base("3000000000", &base, &err), 0 - 1);
	cr_expect_eq(err.code, EE_ERR_USAGE);
	cr_expect(strstr(err.msg, "EXECEVAL_UID_BASE=3000000000"), "%s", err.msg);
	const char *bad[] = { "1000", "65535", "0x7fff0001", "12abc", "-1" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(ee_uid_parse_base(bad[i], &base, &err), -1, "%s", bad[i]);
}
