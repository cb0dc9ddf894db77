/* reorder.h - records released in input order through a bounded buffer.
 *
 * Evaluations finish in any order; results files list records in input
 * order (human-eval's). Each input item takes a ticket when it is read, in
 * input order; its record comes back with ee_reorder_put in any order and
 * is handed to the sink only once every earlier ticket has been: at once
 * when it is the oldest outstanding, else it waits in the buffer. A ticket
 * that gave no record (interrupted, sandbox error) is put with NULL, which
 * lets its successors go.
 *
 * Bounded: a record that must wait is kept as its encoded line only (its
 * parsed form is dropped, and parsed again from the line when released),
 * and ee_reorder_full says when the buffer holds max_records records or
 * max_bytes bytes of lines; the caller then takes no ticket (it stops
 * reading input) until something is released. The oldest outstanding
 * ticket is always an evaluation in flight, so the wait ends when that one
 * does, whatever its run time: no deadlock. ee_reorder_flush hands over
 * what is held, gaps skipped (the end of a run, an interruption).
 *
 * Lifecycle: ee_reorder_init, ticket/put/full any number of times,
 * ee_reorder_flush, ee_reorder_free (which drops what is still held).
 * Ownership: put takes the record and its line; the sink borrows them for
 * the call. Errors: only "out of memory", from ee_reorder_ticket.
 */
#ifndef EE_REORDER_H
#define EE_REORDER_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* Receives a record and its encoded line, in ticket order. line is NULL
 * when encoding failed, record when parsing a waiting record's line again
 * ran out of memory; never both. */
typedef void (*ee_reorder_sink)(void *ctx, json_t *record, const char *line, size_t len);

struct ee_reorder_slot {
	json_t *record;
	char *line;
	size_t len;
	int arrived;
};

struct ee_reorder {
	struct ee_reorder_slot *ring; /* cap slots; ticket t lives at t % cap */
	size_t cap;
	uint64_t head; /* the oldest ticket not released */
	uint64_t next; /* the next ticket to hand out */
	size_t held, held_bytes;
	size_t max_records, max_bytes;
	ee_reorder_sink sink;
	void *ctx;
};

void ee_reorder_init(struct ee_reorder *o, size_t max_records, size_t max_bytes, ee_reorder_sink sink,
                     void *ctx);

/* The next ticket, in input order; -1 when out of memory. */
int ee_reorder_ticket(struct ee_reorder *o, uint64_t *ret);

/* The record of ticket (NULL: none) and its line (owned, may be NULL).
 * A ticket already flushed past is dropped. */
void ee_reorder_put(struct ee_reorder *o, uint64_t ticket, json_t *record, char *line, size_t len);

/* 1 when the buffer is at its bound: take no ticket now. */
int ee_reorder_full(const struct ee_reorder *o);

/* Hands over every record held, in ticket order, skipping tickets with no
 * record yet (they are dropped if they come later). */
void ee_reorder_flush(struct ee_reorder *o);

void ee_reorder_free(struct ee_reorder *o);

#endif
