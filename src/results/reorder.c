/* reorder.c - records released in input order (see reorder.h).
 *
 * The outstanding tickets [head, next) live in a ring that doubles when
 * full; it stays small because the caller stops taking tickets once
 * max_records wait (outstanding = held + in flight). */
#include "results/reorder.h"

#include <stdlib.h>
#include <string.h>

void ee_reorder_init(struct ee_reorder *o, size_t max_records, size_t max_bytes, ee_reorder_sink sink,
                     void *ctx)
{
	memset(o, 0, sizeof(*o));
	o->max_records = max_records ? max_records : 1;
	o->max_bytes = max_bytes ? max_bytes : 1;
	o->sink = sink;
	o->ctx = ctx;
}

static struct ee_reorder_slot *slot_of(const struct ee_reorder *o, uint64_t ticket)
{
	return &o->ring[ticket % o->cap];
}

static int grow(struct ee_reorder *o)
{
	size_t cap = o->cap ? 2 * o->cap : 16;
	struct ee_reorder_slot *ring = calloc(cap, sizeof(*ring));

	if (!ring)
		return -1;
	for (uint64_t t = o->head; t < o->next; t++)
		ring[t % cap] = *slot_of(o, t);
	free(o->ring);
	o->ring = ring;
	o->cap = cap;
	return 0;
}

int ee_reorder_ticket(struct ee_reorder *o, uint64_t *ret)
{
	if (o->next - o->head == o->cap && grow(o) < 0)
		return -1;
	*slot_of(o, o->next) = (struct ee_reorder_slot){ 0 };
	*ret = o->next++;
	return 0;
}

/* Hands the head's record over (if any) and moves the head on. */
static void release_head(struct ee_reorder *o)
{
	struct ee_reorder_slot *s = slot_of(o, o->head);

	if (s->arrived) {
		o->held--;
		o->held_bytes -= s->len;
		if (!s->record && s->line) /* it waited as its line only */
			s->record = json_loadb(s->line, s->len, 0, NULL);
		if (s->record || s->line)
			o->sink(o->ctx, s->record, s->line, s->len);
	}
	json_decref(s->record);
	free(s->line);
	*s = (struct ee_reorder_slot){ 0 };
	o->head++;
}

void ee_reorder_put(struct ee_reorder *o, uint64_t ticket, json_t *record, char *line, size_t len)
{
	if (ticket < o->head || ticket >= o->next || slot_of(o, ticket)->arrived) {
		json_decref(record);
		free(line);
		return;
	}
	struct ee_reorder_slot *s = slot_of(o, ticket);
	*s = (struct ee_reorder_slot){ record, line, len, 1 };
	o->held++;
	o->held_bytes += len;
	while (o->head < o->next && slot_of(o, o->head)->arrived)
		release_head(o);
	/* Still waiting: keep the line only, so max_bytes is what it holds
	 * (a parsed record takes several times its text). */
	if (ticket >= o->head && line) {
		json_decref(s->record);
		s->record = NULL;
	}
}

int ee_reorder_full(const struct ee_reorder *o)
{
	return o->held >= o->max_records || o->held_bytes >= o->max_bytes;
}

void ee_reorder_flush(struct ee_reorder *o)
{
	while (o->head < o->next)
		release_head(o);
}

void ee_reorder_free(struct ee_reorder *o)
{
	for (uint64_t t = o->head; t < o->next; t++) {
		json_decref(slot_of(o, t)->record);
		free(slot_of(o, t)->line);
	}
	free(o->ring);
	memset(o, 0, sizeof(*o));
}
