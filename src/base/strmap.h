/* strmap.h - a hash map from strings to size_t values.
 *
 * Open addressing with linear probing; the table doubles when it would be
 * more than half full, so lookups stay O(1) on average. Keys come from data
 * files, so the hash is SipHash-1-3 under a random key drawn per map: input
 * crafted to collide cannot turn the table into a list (hash flooding).
 * There is no deletion (the summary only ever adds).
 *
 * Lifecycle: zero the struct or call ee_strmap_init, put/get, ee_strmap_free.
 * Ownership: the map copies every key and owns the copies and its slots;
 * value pointers returned by get/put are borrowed and stay valid only until
 * the next put (a put may move the slots).
 * Errors: put returns NULL when memory is exhausted (the map is unchanged).
 */
#ifndef EE_STRMAP_H
#define EE_STRMAP_H

#include <stddef.h>
#include <stdint.h>

struct ee_strmap_slot {
	char *key; /* NULL: empty slot */
	uint64_t hash;
	size_t value;
};

struct ee_strmap {
	struct ee_strmap_slot *slots; /* cap entries, NULL until the first put */
	size_t cap;                   /* 0 or a power of two */
	size_t len;                   /* keys held */
	uint64_t k0, k1;              /* SipHash key, drawn at the first put */
	int keyed;
};

void ee_strmap_init(struct ee_strmap *m);
/* Frees the keys and slots; accepts a zeroed or half-built map. */
void ee_strmap_free(struct ee_strmap *m);

/* The value of key, or NULL when key is absent. */
size_t *ee_strmap_get(const struct ee_strmap *m, const char *key);

/* The value of key; when key is absent it is added (copied) with value and
 * *ret_added (when non-NULL) is set to 1, else 0. NULL when out of memory. */
size_t *ee_strmap_put(struct ee_strmap *m, const char *key, size_t value, int *ret_added);

/* Iteration in slot order: start with *pos = 0; returns the next occupied
 * slot, or NULL at the end. The map must not change during an iteration. */
const struct ee_strmap_slot *ee_strmap_next(const struct ee_strmap *m, size_t *pos);

#endif
