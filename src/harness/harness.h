/* harness.h - the embedded Python harness (src/harness/harness.py).
 * The source is linked in by embed.S at build time, NUL-terminated. */
#ifndef EE_HARNESS_H
#define EE_HARNESS_H

extern const char ee_harness_py[];

#endif
