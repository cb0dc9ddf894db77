/* budget.c - bytes held, in total and per address (see budget.h). */
#include "serve/budget.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ee_budget_init(struct ee_budget *b, size_t total, size_t share)
{
	memset(b, 0, sizeof(*b));
	b->total = total;
	b->share = share < total ? share : total;
}

void ee_budget_free(struct ee_budget *b)
{
	while (b->shares) {
		struct ee_budget_share *s = b->shares;
		b->shares = s->next;
		free(s);
	}
}

struct ee_budget_share *ee_budget_join(struct ee_budget *b, const char *address)
{
	struct ee_budget_share *s;

	for (s = b->shares; s; s = s->next)
		if (strcmp(s->address, address) == 0)
			break;
	if (!s) {
		if (!(s = calloc(1, sizeof(*s))))
			return NULL;
		snprintf(s->address, sizeof(s->address), "%s", address);
		s->next = b->shares;
		b->shares = s;
	}
	s->conns++;
	return s;
}

void ee_budget_leave(struct ee_budget *b, struct ee_budget_share *s)
{
	if (!s || --s->conns > 0)
		return;
	for (struct ee_budget_share **p = &b->shares; *p; p = &(*p)->next)
		if (*p == s) {
			*p = s->next;
			free(s);
			return;
		}
}

int ee_budget_charge(struct ee_budget *b, struct ee_budget_share *s, size_t n)
{
	if (n > b->total - b->held)
		return EE_BUDGET_TOTAL;
	if (s && n > b->share - (s->held < b->share ? s->held : b->share))
		return EE_BUDGET_SHARE;
	b->held += n;
	if (s)
		s->held += n;
	return EE_BUDGET_OK;
}

void ee_budget_release(struct ee_budget *b, struct ee_budget_share *s, size_t n)
{
	b->held -= n < b->held ? n : b->held;
	if (s)
		s->held -= n < s->held ? n : s->held;
}
