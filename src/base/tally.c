/* tally.c - a small fixed table of named counts (see tally.h). */
#include "base/tally.h"

#include <string.h>

static struct ee_tally_entry *find(struct ee_tally *t, const char *name)
{
	for (unsigned i = 0; i < t->n; i++)
		if (strncmp(t->v[i].name, name, EE_TALLY_NAME - 1) == 0)
			return &t->v[i];
	return NULL;
}

void ee_tally_add(struct ee_tally *t, const char *name, unsigned long count)
{
	struct ee_tally_entry *e = find(t, name);
	if (!e && t->n == EE_TALLY_MAX)
		e = find(t, "other");
	if (!e) {
		/* Full: the last slot becomes "other" and keeps what it had. */
		if (t->n == EE_TALLY_MAX) {
			e = &t->v[EE_TALLY_MAX - 1];
			name = "other";
		} else {
			e = &t->v[t->n++];
			e->count = 0;
		}
		memset(e->name, 0, sizeof(e->name));
		strncpy(e->name, name, EE_TALLY_NAME - 1);
	}
	e->count += count;
}

unsigned long ee_tally_get(const struct ee_tally *t, const char *name)
{
	const struct ee_tally_entry *e = find((struct ee_tally *)t, name);
	return e ? e->count : 0;
}
