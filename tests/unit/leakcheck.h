/* leakcheck.h - no_leaks(): fail the current test, by name, when it leaked.
 *
 * `make unit` already fails a run whose worker leaks (abort_on_error); this
 * names the test. A no-op when built without AddressSanitizer. */
#ifndef EE_TEST_LEAKCHECK_H
#define EE_TEST_LEAKCHECK_H

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define no_leaks() cr_expect_eq(__lsan_do_recoverable_leak_check(), 0, "memory leaked (see above)")
#else
#define no_leaks() ((void)0)
#endif

#endif
