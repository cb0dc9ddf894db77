/* tmpdir.h - a private directory for one unit test's files: made before
 * each test (TestSuite's .init = tmpdir_make), removed after it
 * (.fini = tmpdir_remove); write_bytes and write_file put a file in it and
 * return its path (valid until the next call). */
#ifndef EE_TEST_TMPDIR_H
#define EE_TEST_TMPDIR_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TMPDIR_TEMPLATE "/tmp/ee-unit-XXXXXX"
static char dir[] = TMPDIR_TEMPLATE;

static inline void tmpdir_make(void)
{
	cr_assert_not_null(mkdtemp(dir));
}

static inline void tmpdir_remove(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
	strcpy(dir, TMPDIR_TEMPLATE);
}

static inline const char *write_bytes(const char *name, const void *data, size_t len)
{
	static char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(data, 1, len, f), len);
	fclose(f);
	return path;
}

static inline const char *write_file(const char *name, const char *content)
{
	return write_bytes(name, content, strlen(content));
}

#endif
