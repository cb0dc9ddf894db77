/* environment.h - what a run's verdicts depend on besides the samples: the
 * interpreter's version and the third-party packages candidates can import.
 *
 * Candidates run with the host's interpreter and see its dist-packages
 * directories (the harness adds them: harness/parts/cold.py), so a package
 * installed between two runs can turn a failing `import numpy` into a pass.
 * The fingerprint of those packages is read on the host from the names of
 * the directories' `*.dist-info` and `*.egg-info` entries ("numpy-1.24.2
 * .dist-info" is numpy 1.24.2): no Python runs for it. The directories are
 * the harness's, for the interpreter's X.Y: /usr/local/lib/pythonX.Y/
 * dist-packages, /usr/lib/python3/dist-packages, /usr/lib/pythonX.Y/
 * dist-packages.
 *
 * Ownership: results are new JSON values owned by the caller; arguments
 * are borrowed. Errors: none; an unreadable directory counts as absent.
 */
#ifndef EE_ENVIRONMENT_H
#define EE_ENVIRONMENT_H

#include <jansson.h>
#include <stddef.h>

#define EE_ENV_MAX_PACKAGES 100000 /* entries read per directory; the rest are counted, not named */

/* {"sha256": hex of the sorted "name==version\n" lines, "count": packages,
 * "dirs": [the directories that exist]} for interpreter version ("3.11.2";
 * NULL or unparsable: null, nothing is known). NULL when out of memory. */
json_t *ee_env_packages(const char *python_version);

/* The same from explicit directories (for tests): dirs[0..n). */
json_t *ee_env_packages_in(const char *const *dirs, size_t n);

/* Whether two summaries' "environment" objects differ in what verdicts
 * depend on (the interpreter's version, the packages' fingerprint); what
 * differs goes to out ("python 3.11.2 -> 3.12.1, packages 120 -> 121
 * (fingerprint changed)"). 0 when either is unknown (absent or null). */
int ee_env_differs(const json_t *was, const json_t *now, char *out, size_t size);

#endif
