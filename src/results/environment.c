/* environment.c - the interpreter's packages as a fingerprint (environment.h).
 *
 * Each directory's entries ending in .dist-info or .egg-info become
 * "name==version" lines (the name lowercased, '-' and '.' as '_', as pip
 * normalises it; the version what follows the first '-', less any
 * "-pyX.Y" tag of an egg); the lines of all directories, sorted bytewise,
 * are hashed. The order of readdir(3) and of the directories cannot change
 * the fingerprint; a package installed, removed or upgraded does.
 */
#include "results/environment.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sha256.h"

#define LINE_MAX_BYTES 256

struct lines {
	char **v;
	size_t n, cap;
	int oom;
};

static int ends_with(const char *s, const char *suffix, size_t *ret_stem)
{
	size_t n = strlen(s), m = strlen(suffix);

	if (n <= m || strcmp(s + n - m, suffix) != 0)
		return 0;
	*ret_stem = n - m;
	return 1;
}

/* "NumPy-1.24.2" (stem of the entry) as "numpy==1.24.2" into out. */
static void package_line(const char *entry, size_t stem, char *out, size_t size)
{
	char name[120], version[120]; /* each cut: "name==version" fits LINE_MAX_BYTES */
	const char *dash = memchr(entry, '-', stem);
	size_t nl = dash ? (size_t)(dash - entry) : stem, vl = dash ? stem - nl - 1 : 0;

	nl = nl < sizeof(name) - 1 ? nl : sizeof(name) - 1;
	for (size_t i = 0; i < nl; i++) {
		char c = (char)tolower((unsigned char)entry[i]);
		name[i] = c == '-' || c == '.' ? '_' : c;
	}
	name[nl] = '\0';
	vl = vl < sizeof(version) - 1 ? vl : sizeof(version) - 1;
	memcpy(version, dash ? dash + 1 : "", vl);
	version[vl] = '\0';
	char *tag = strstr(version, "-py"); /* an egg's "-py3.11" */
	if (tag)
		*tag = '\0';
	snprintf(out, size, "%s==%s", name, version);
}

static void add_line(struct lines *l, const char *line)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		char **v = realloc(l->v, cap * sizeof(*v));
		if (!v) {
			l->oom = 1;
			return;
		}
		l->v = v;
		l->cap = cap;
	}
	if (!(l->v[l->n] = strdup(line)))
		l->oom = 1;
	else
		l->n++;
}

/* dir's packages into l; 1 when the directory exists, 0 when not. */
static int read_dir(const char *dir, struct lines *l)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t seen = 0, stem;
	char line[LINE_MAX_BYTES];

	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL && seen < EE_ENV_MAX_PACKAGES && !l->oom) {
		if (!ends_with(e->d_name, ".dist-info", &stem) && !ends_with(e->d_name, ".egg-info", &stem))
			continue;
		package_line(e->d_name, stem, line, sizeof(line));
		add_line(l, line);
		seen++;
	}
	closedir(d);
	return 1;
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

json_t *ee_env_packages_in(const char *const *dirs, size_t n)
{
	struct lines l = { 0 };
	struct ee_sha256 c;
	uint8_t digest[EE_SHA256_LEN];
	char hex[EE_SHA256_HEX];
	json_t *found = json_array(), *out = NULL;

	for (size_t i = 0; found && i < n; i++)
		if (read_dir(dirs[i], &l) && json_array_append_new(found, json_string(dirs[i])) < 0)
			l.oom = 1;
	if (found && !l.oom) {
		if (l.n > 1) /* l.v is NULL with none: qsort wants an array */
			qsort(l.v, l.n, sizeof(*l.v), cmp_line);
		ee_sha256_init(&c);
		for (size_t i = 0; i < l.n; i++) {
			ee_sha256_update(&c, l.v[i], strlen(l.v[i]));
			ee_sha256_update(&c, "\n", 1);
		}
		ee_sha256_final(&c, digest);
		ee_sha256_hex(digest, hex);
		out = json_pack("{s:s, s:I, s:O}", "sha256", hex, "count", (json_int_t)l.n, "dirs", found);
	}
	for (size_t i = 0; i < l.n; i++)
		free(l.v[i]);
	free(l.v);
	json_decref(found);
	return out;
}

json_t *ee_env_packages(const char *python_version)
{
	unsigned major, minor;
	char a[64], b[64];

	if (!python_version || sscanf(python_version, "%3u.%3u", &major, &minor) != 2)
		return json_null();
	snprintf(a, sizeof(a), "/usr/local/lib/python%u.%u/dist-packages", major, minor);
	snprintf(b, sizeof(b), "/usr/lib/python%u.%u/dist-packages", major, minor);
	const char *const dirs[] = { a, "/usr/lib/python3/dist-packages", b };
	return ee_env_packages_in(dirs, sizeof(dirs) / sizeof(dirs[0]));
}

int ee_env_differs(const json_t *was, const json_t *now, char *out, size_t size)
{
	const char *vw = json_string_value(json_object_get(json_object_get(was, "interpreter"), "version"));
	const char *vn = json_string_value(json_object_get(json_object_get(now, "interpreter"), "version"));
	const json_t *pw = json_object_get(was, "packages"), *pn = json_object_get(now, "packages");
	const char *hw = json_string_value(json_object_get(pw, "sha256"));
	const char *hn = json_string_value(json_object_get(pn, "sha256"));
	int python = vw && vn && strcmp(vw, vn) != 0, packages = hw && hn && strcmp(hw, hn) != 0;
	int len = 0;

	out[0] = '\0';
	if (python)
		len = snprintf(out, size, "python %.20s -> %.20s", vw, vn);
	if (packages && len >= 0 && (size_t)len < size)
		snprintf(out + len, size - (size_t)len, "%spackages %lld -> %lld (fingerprint %.8s -> %.8s)",
		         python ? ", " : "", (long long)json_integer_value(json_object_get(pw, "count")),
		         (long long)json_integer_value(json_object_get(pn, "count")), hw, hn);
	return python || packages;
}
