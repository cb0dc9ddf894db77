/* test_resource_limits.c - the limits (resource_limits.h): clamped, their
 * defaults, and what --weak-limits fits inside --memory. */
#include <criterion/criterion.h>
#include <math.h>

#include "base/resource_limits.h"

Test(limits, are_clamped_and_nan_is_the_default)
{
	struct ee_limits l;
	ee_limits_default(&l);
	cr_expect(l.timeout_s == 3.0 && l.memory_mb == 512 && l.procs == 64 && l.output_cap == 262144);
	l.timeout_s = 0;
	l.memory_mb = 1;
	l.procs = 0;
	l.output_cap = 0;
	ee_limits_clamp(&l);
	cr_expect(l.timeout_s == 0.1 && l.memory_mb == 16 && l.procs == 2 && l.output_cap == 1024);
	l.timeout_s = NAN;
	ee_limits_clamp(&l);
	cr_expect(l.timeout_s == 3.0);
	l.timeout_s = 1e9;
	ee_limits_clamp(&l);
	cr_expect(l.timeout_s == 30.0);
}

Test(limits, weak_fits_tmp_and_file_size_x_open_files_inside_memory)
{
	static const struct {
		unsigned memory, tmp, files, file_mb; /* in */
		unsigned want_tmp, want_files, want_file_mb;
	} cases[] = {
		{ 512, 64, 256, 64, 64, 256, 2 },          /* the defaults: 2 MB files */
		{ 128, 64, 256, 64, 64, 128, 1 },          /* 1 MB files, then fewer of them */
		{ 16, 64, 256, 64, 16, 16, 1 },            /* the smallest memory */
		{ 65536, 4096, 16, 4096, 4096, 16, 4096 }, /* already inside: unchanged */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ee_limits l;
		ee_limits_default(&l);
		l.memory_mb = cases[i].memory;
		l.tmp_mb = cases[i].tmp;
		l.open_files = cases[i].files;
		l.file_mb = cases[i].file_mb;
		ee_limits_fit_weak(&l);
		cr_expect_eq(l.tmp_mb, cases[i].want_tmp, "case %zu: tmp %u", i, l.tmp_mb);
		cr_expect_eq(l.open_files, cases[i].want_files, "case %zu: open files %u", i, l.open_files);
		cr_expect_eq(l.file_mb, cases[i].want_file_mb, "case %zu: file size %u", i, l.file_mb);
		cr_expect_leq((unsigned long)l.file_mb * l.open_files, l.memory_mb, "case %zu", i);
		cr_expect_leq(l.tmp_mb, l.memory_mb, "case %zu", i);
	}
}
