/* prescan.h - what a request body will cost to parse, read from its bytes
 * before it is parsed.
 *
 * Parsing a 16 MiB body of small JSON values takes jansson about a second
 * on the server's only thread, and building a task of 400,000 tests more:
 * the bounds on tests and values must be checked before either. One pass
 * over the bytes (no allocation, a few ms for 16 MiB) counts the body's
 * JSON values and the tests of its tasks, as request.h reads them: the
 * top-level "task" (a /v1/run's, or a batch's shared one) and the "task"
 * of each element of a top-level "runs". A task's tests are the elements
 * of its "tests", "test_list" and "challenge_test_list" arrays, and its
 * "test" (HumanEval's, one). Object keys are not values.
 *
 * The scan does not validate: a malformed body is left to the parser,
 * which says where it is wrong. Keys are compared as written, so a key
 * with an escape ("t\u0061sk") where fields are matched is refused
 * (EE_PRESCAN_ESCAPED): it would hide its tests from the count.
 */
#ifndef EE_SERVE_PRESCAN_H
#define EE_SERVE_PRESCAN_H

#include <stddef.h>

struct ee_prescan {
	size_t values;            /* JSON values (containers and scalars), keys not counted */
	int has_task;             /* a top-level "task" object */
	size_t task_tests;        /* its tests */
	size_t runs;              /* elements of the top-level "runs" array */
	size_t runs_without_task; /* of which objects without their own "task" (or not objects) */
	size_t own_tests;         /* tests of the runs' own tasks, summed */
	size_t max_own;           /* the most tests of one run's own task */
	size_t max_own_index;     /* that run's index */
	char escaped[64];         /* EE_PRESCAN_ESCAPED: where ("runs[3]") */
};

enum { EE_PRESCAN_OK = 0, EE_PRESCAN_MALFORMED = -1, EE_PRESCAN_ESCAPED = -2 };

/* Counts body[0..len) into *ret (zeroed first; filled as far as the scan
 * went even when it fails). Returns an EE_PRESCAN_ value. */
int ee_prescan(const char *body, size_t len, struct ee_prescan *ret);

#endif
