/* test_strmap.c - the string-keyed hash map (strmap.h). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "base/strmap.h"

#include "leakcheck.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

Test(strmap, empty_map_finds_nothing)
{
	struct ee_strmap m;
	size_t pos = 0;

	ee_strmap_init(&m);
	cr_expect_null(ee_strmap_get(&m, "x"));
	cr_expect_null(ee_strmap_get(&m, ""));
	cr_expect_null(ee_strmap_next(&m, &pos));
	ee_strmap_free(&m);
	ee_strmap_free(&m); /* twice: the first left it empty */
	no_leaks();
}

Test(strmap, zeroed_map_works_without_init)
{
	struct ee_strmap m = { 0 };

	cr_assert_not_null(ee_strmap_put(&m, "a", 1, NULL));
	cr_expect_eq(*ee_strmap_get(&m, "a"), 1);
	ee_strmap_free(&m);
	no_leaks();
}

struct put_case {
	const char *key;
	size_t value;
	int want_added;
	size_t want_value; /* the value held after the put */
};

Test(strmap, put_keeps_the_first_value)
{
	static const struct put_case cases[] = {
		{ "a", 1, 1, 1 }, { "b", 2, 1, 2 },  { "a", 9, 0, 1 }, { "", 3, 1, 3 },
		{ "", 4, 0, 3 },  { "ab", 5, 1, 5 }, { "b", 0, 0, 2 }, { "\xc3\xa9", 6, 1, 6 },
	};
	struct ee_strmap m;

	ee_strmap_init(&m);
	for (size_t i = 0; i < COUNT(cases); i++) {
		int added = -1;
		size_t *v = ee_strmap_put(&m, cases[i].key, cases[i].value, &added);
		cr_assert_not_null(v);
		cr_expect_eq(added, cases[i].want_added, "case %zu '%s'", i, cases[i].key);
		cr_expect_eq(*v, cases[i].want_value, "case %zu '%s'", i, cases[i].key);
	}
	cr_expect_eq(m.len, 5);
	cr_expect_null(ee_strmap_get(&m, "c"));
	cr_expect_null(ee_strmap_get(&m, "a "));
	ee_strmap_free(&m);
	no_leaks();
}

Test(strmap, keys_are_copied)
{
	struct ee_strmap m;
	char key[8] = "task";

	ee_strmap_init(&m);
	cr_assert_not_null(ee_strmap_put(&m, key, 7, NULL));
	strcpy(key, "xxxx");
	cr_expect_null(ee_strmap_get(&m, "xxxx"));
	cr_assert_not_null(ee_strmap_get(&m, "task"));
	cr_expect_eq(*ee_strmap_get(&m, "task"), 7);
	ee_strmap_free(&m);
	no_leaks();
}

Test(strmap, grows_and_keeps_every_key)
{
	enum { N = 20000 };
	struct ee_strmap m;
	char key[32];

	ee_strmap_init(&m);
	for (size_t i = 0; i < N; i++) {
		snprintf(key, sizeof(key), "task/%zu", i);
		size_t *v = ee_strmap_put(&m, key, i, NULL);
		cr_assert_not_null(v);
		(*v)++; /* values are writable in place */
	}
	cr_expect_eq(m.len, N);
	cr_expect_geq(m.cap, 2 * (size_t)N, "load factor above 1/2: cap %zu", m.cap);
	for (size_t i = 0; i < N; i++) {
		snprintf(key, sizeof(key), "task/%zu", i);
		size_t *v = ee_strmap_get(&m, key);
		cr_assert_not_null(v, "%s lost", key);
		cr_expect_eq(*v, i + 1);
	}
	ee_strmap_free(&m);
	no_leaks();
}

Test(strmap, iteration_visits_each_key_once)
{
	static const char *const keys[] = { "x", "y", "z", "", "xy", "yx" };
	struct ee_strmap m;
	const struct ee_strmap_slot *sl;
	size_t pos = 0, seen = 0, mask = 0;

	ee_strmap_init(&m);
	for (size_t i = 0; i < COUNT(keys); i++)
		cr_assert_not_null(ee_strmap_put(&m, keys[i], i, NULL));
	while ((sl = ee_strmap_next(&m, &pos))) {
		cr_assert_lt(sl->value, COUNT(keys));
		cr_expect_str_eq(sl->key, keys[sl->value]);
		cr_expect_eq(mask & (1u << sl->value), 0, "'%s' twice", sl->key);
		mask |= 1u << sl->value;
		seen++;
	}
	cr_expect_eq(seen, COUNT(keys));
	cr_expect_null(ee_strmap_next(&m, &pos), "the end stays the end");
	ee_strmap_free(&m);
	no_leaks();
}

Test(strmap, two_maps_hash_differently)
{
	/* Keyed per map: the same keys land in different slot orders, almost
	 * surely, over a few tries (a fixed hash would give the same order). */
	int differ = 0;

	for (int attempt = 0; attempt < 4 && !differ; attempt++) {
		struct ee_strmap a, b;
		ee_strmap_init(&a);
		ee_strmap_init(&b);
		char key[16];
		for (int i = 0; i < 64; i++) {
			snprintf(key, sizeof(key), "k%d", i);
			cr_assert_not_null(ee_strmap_put(&a, key, (size_t)i, NULL));
			cr_assert_not_null(ee_strmap_put(&b, key, (size_t)i, NULL));
		}
		size_t pa = 0, pb = 0;
		const struct ee_strmap_slot *sa, *sb;
		while ((sa = ee_strmap_next(&a, &pa)) && (sb = ee_strmap_next(&b, &pb)))
			if (sa->value != sb->value)
				differ = 1;
		ee_strmap_free(&a);
		ee_strmap_free(&b);
	}
	cr_expect(differ, "slot order identical across maps: the hash is not keyed");
	no_leaks();
}
