/* lines.h - reading a file line by line with a cap on each line.
 *
 * Data files (tasks, samples, results) come from users and crashed runs: a
 * line may be huge or torn. Every line goes through here, bounded.
 */
#ifndef EE_LINES_H
#define EE_LINES_H

#include <stddef.h>

/* Reads one line of at most cap bytes (newline excluded) from f (a FILE *)
 * into *buf (grown as needed, owned by the caller). Returns the length, -1 at
 * EOF, -2 when the line is longer than cap (the rest of it is skipped) or
 * memory ran out. *had_newline says whether the line was terminated (a torn
 * last line is not). */
long ee_read_line(void *f, char **buf, size_t *alloc, size_t cap, int *had_newline);

#endif
