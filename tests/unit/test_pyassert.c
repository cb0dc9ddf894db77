/* test_pyassert.c - the literal-assert shape (pyliteral.h,
 * ee_pyassert_convert) against Python (pyliteral_tables.h). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "pyvalue/judge.h"
#include "pyvalue/pyliteral.h"
#include "pyliteral_tables.h"

Test(pyassert, shape_as_python_parses_it)
{
	for (size_t i = 0; i < COUNT(shape_cases); i++) {
		struct ee_pycall c;
		int rc = ee_pyassert_convert(shape_cases[i].code, &c);
		cr_expect_eq(rc, shape_cases[i].converts, "%s: got %d", shape_cases[i].code, rc);
		if (rc == 1) {
			cr_expect(c.fn && c.args && c.kwargs && c.expected);
		} else {
			cr_expect(!c.fn && !c.args && !c.expected);
		}
		ee_pycall_free(&c);
	}
}

Test(pyassert, parts)
{
	struct ee_pycall c;
	json_t *want;

	cr_assert_eq(ee_pyassert_convert("assert add(1, [2.5], k='x') == (4, 5), 'msg'", &c), 1);
	cr_expect_str_eq(c.fn, "add");
	want = load("[{\"int\":\"1\"},{\"list\":[{\"float\":\"2.5\"}]}]");
	cr_expect(json_equal(c.args, want));
	json_decref(want);
	want = load("[[\"k\",\"x\"]]");
	cr_expect(json_equal(c.kwargs, want));
	json_decref(want);
	want = load("{\"tuple\":[{\"int\":\"4\"},{\"int\":\"5\"}]}");
	cr_expect(json_equal(c.expected, want));
	json_decref(want);
	ee_pycall_free(&c);

	cr_assert_eq(ee_pyassert_convert("assert [1] == f()", &c), 1);
	cr_expect_str_eq(c.fn, "f");
	cr_expect_eq(json_array_size(c.args), 0);
	ee_pycall_free(&c);

	cr_expect_eq(ee_pyassert_convert(NULL, &c), 0);
	ee_pycall_free(&c); /* zeroed: fine */
	ee_pycall_free(NULL);
}
