/* budget.h - the bytes the server holds for its clients, against
 * --max-buffered and each address's share of it.
 *
 * What a request holds is charged as it comes to be held, never as it is
 * announced: body bytes as they arrive (a Content-Length is a claim, not a
 * cost), its parsed tasks once read, its records as they come back. The
 * whole is bounded by `total`; what one client address holds by `share`
 * (so a few connections from one place cannot lock every other client
 * out). Records of admitted work are charged to the total only (the work
 * was admitted; its answer is not one client's hoard, and the admission
 * already reserved it: server.c).
 *
 * Lifecycle: ee_budget_init; per connection ee_budget_join its address
 * (a share shared by every connection from it), charge and release,
 * ee_budget_leave (the share is freed with its last connection, so the
 * table never holds more entries than connections); ee_budget_free.
 * Ownership: the budget owns its shares; a caller holds a share pointer
 * from join to leave.
 */
#ifndef EE_SERVE_BUDGET_H
#define EE_SERVE_BUDGET_H

#include <stddef.h>

struct ee_budget_share {
	char address[64]; /* "127.0.0.1", "::1": the key */
	size_t held;      /* bytes charged to this address */
	unsigned conns;   /* connections holding this share */
	struct ee_budget_share *next;
};

struct ee_budget {
	size_t total, share; /* caps: every client, one address */
	size_t held;         /* bytes charged, every client */
	struct ee_budget_share *shares;
};

enum ee_budget_result { EE_BUDGET_OK = 0, EE_BUDGET_TOTAL = -1, EE_BUDGET_SHARE = -2 };

void ee_budget_init(struct ee_budget *b, size_t total, size_t share);
void ee_budget_free(struct ee_budget *b);

/* The share of address (created with 0 held); NULL when out of memory. */
struct ee_budget_share *ee_budget_join(struct ee_budget *b, const char *address);
/* Drops a connection from its share (NULL is a no-op); what it still
 * holds must have been released. */
void ee_budget_leave(struct ee_budget *b, struct ee_budget_share *s);

/* Charges n bytes to the total and, when s is not NULL, to s. Returns
 * EE_BUDGET_OK, or which cap it would exceed (nothing charged). */
int ee_budget_charge(struct ee_budget *b, struct ee_budget_share *s, size_t n);
/* Releases n bytes charged before (to s, when not NULL). */
void ee_budget_release(struct ee_budget *b, struct ee_budget_share *s, size_t n);

#endif
