/* embed.S - puts the harness into the binary's read-only data, so execeval
 * stays one self-contained file (see src/harness/harness.h):
 *   ee_harness_py      the source, NUL-terminated;
 *   ee_lint_py         the lint phase's source (lint.py), NUL-terminated,
 *                      sent in the job when --lint asks for it;
 *   ee_harness_pyc     the same compiled at build time by ee_harness_python
 *                      (ee_harness_pyc_end marks its end);
 *   ee_harness_python  the real path of the interpreter that compiled it. */
	.section .rodata
	.global ee_harness_py
	.type ee_harness_py, @object
	.balign 16
ee_harness_py:
	.incbin HARNESS_PATH
	.byte 0
	.size ee_harness_py, . - ee_harness_py

	.global ee_lint_py
	.type ee_lint_py, @object
	.balign 16
ee_lint_py:
	.incbin LINT_PATH
	.byte 0
	.size ee_lint_py, . - ee_lint_py

	.global ee_harness_pyc
	.type ee_harness_pyc, @object
	.balign 16
ee_harness_pyc:
	.incbin PYC_PATH
	.global ee_harness_pyc_end
ee_harness_pyc_end:
	.byte 0

	.global ee_harness_python
	.type ee_harness_python, @object
ee_harness_python:
	.incbin PYTHON_PATH_FILE
	.byte 0
	.section .note.GNU-stack, "", @progbits
