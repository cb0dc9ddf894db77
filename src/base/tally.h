/* tally.h - a small fixed table of named counts (what a candidate tried).
 *
 * Fixed size and no allocation: the sandbox's outcome holds one, filled
 * from the loop as refused system calls are answered (sandbox/notify.h).
 * Names past EE_TALLY_MAX distinct ones are counted under "other".
 */
#ifndef EE_TALLY_H
#define EE_TALLY_H

#define EE_TALLY_MAX  24
#define EE_TALLY_NAME 32

struct ee_tally_entry {
	char name[EE_TALLY_NAME];
	unsigned long count;
};

struct ee_tally {
	unsigned n;
	struct ee_tally_entry v[EE_TALLY_MAX];
};

/* Adds count to name (truncated to EE_TALLY_NAME - 1 characters). */
void ee_tally_add(struct ee_tally *t, const char *name, unsigned long count);
/* The count of name, 0 when absent. */
unsigned long ee_tally_get(const struct ee_tally *t, const char *name);

#endif
