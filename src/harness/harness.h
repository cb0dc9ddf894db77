/* harness.h - the embedded Python harness (src/harness/parts/, one module
 * joined by src/harness/assemble.py: its source form and its pyc).
 *
 * Starting an interpreter on the harness's source costs a compile of ~40 KB
 * of Python per candidate (about 15-20 ms). The build therefore also embeds
 * the harness compiled to a .pyc by the build's /usr/bin/python3, and the
 * real path of that interpreter. When the host's interpreter is the same
 * file, the pyc is served from a sealed memfd (fd EE_FD_CODE inside the
 * sandbox) and run as /proc/self/fd/6; otherwise the source is, in the
 * same way (not on the command line: one argument holds at most 128 KiB).
 * Either way the candidate cannot alter it.
 */
#ifndef EE_HARNESS_H
#define EE_HARNESS_H

struct ee_err;

extern const char ee_harness_py[];
extern const char ee_lint_py[]; /* lint.py: sent in the job with --lint */
extern const unsigned char ee_harness_pyc[];
extern const unsigned char ee_harness_pyc_end[];
extern const char ee_harness_python[];

/* How to start the harness on this host. Owns code_fd. */
struct ee_harness {
	int code_fd;         /* sealed memfd with the pyc or the source, or -1 */
	int pyc;             /* code_fd holds the pyc */
	const char *argv[7]; /* NULL-terminated; argv[0] the interpreter */
};

/* Whether python is the interpreter the embedded pyc was compiled by (a
 * warm worker embeds that interpreter too). */
int ee_harness_pyc_applies(const char *python);

/* Chooses the pyc when python is the interpreter it was compiled by. */
int ee_harness_prepare(const char *python, struct ee_harness *ret, struct ee_err *err);
void ee_harness_release(struct ee_harness *h);

#endif
