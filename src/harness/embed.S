/* embed.S - puts harness.py into the binary's read-only data, NUL-terminated,
 * so execeval stays one self-contained file. See src/harness/harness.h. */
	.section .rodata
	.global ee_harness_py
	.type ee_harness_py, @object
	.balign 16
ee_harness_py:
	.incbin HARNESS_PATH
	.byte 0
	.size ee_harness_py, . - ee_harness_py
	.section .note.GNU-stack, "", @progbits
