/* choice.h - the names a user may give an enum's values: an option's
 * choices ("--extract fenced"), named here below the options table so a
 * lower module can own the table of its own enum (extract.h).
 *
 * One table per enum, in the order messages list the names, read by every
 * reader of that name (a command-line option, a request's field, a
 * module's own parser), so no second list of the same names can drift
 * from the first. Tables are static const; nothing here allocates.
 */
#ifndef EE_BASE_CHOICE_H
#define EE_BASE_CHOICE_H

#include <stddef.h>

struct ee_option_choice {
	const char *name;
	int value;
};

/* The value called name in choices[0..n): 0, or -1 when name is none of
 * them (or NULL), *ret then left alone. */
int ee_choice_find(const struct ee_option_choice *choices, size_t n, const char *name, int *ret);

#endif
