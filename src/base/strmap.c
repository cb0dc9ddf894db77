/* strmap.c - string-keyed hash map, open addressing (see strmap.h).
 *
 * Slots hold the key's full hash, so probing compares hashes first and
 * growing never rehashes a key. The table is at most half full, so a probe
 * sequence ends at an empty slot after a few steps on average.
 */
#include "base/strmap.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#define MIN_CAP 16

/* ---- SipHash-1-3 (Aumasson and Bernstein), 64-bit output ---------------- */

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

static void sip_round(uint64_t v[4])
{
	v[0] += v[1];
	v[1] = ROTL(v[1], 13) ^ v[0];
	v[0] = ROTL(v[0], 32);
	v[2] += v[3];
	v[3] = ROTL(v[3], 16) ^ v[2];
	v[0] += v[3];
	v[3] = ROTL(v[3], 21) ^ v[0];
	v[2] += v[1];
	v[1] = ROTL(v[1], 17) ^ v[2];
	v[2] = ROTL(v[2], 32);
}

static uint64_t load_le(const unsigned char *p, size_t n)
{
	uint64_t w = 0;

	for (size_t i = 0; i < n; i++)
		w |= (uint64_t)p[i] << (8 * i);
	return w;
}

static uint64_t siphash13(uint64_t k0, uint64_t k1, const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t v[4] = { k0 ^ 0x736f6d6570736575ULL, k1 ^ 0x646f72616e646f6dULL, k0 ^ 0x6c7967656e657261ULL,
		          k1 ^ 0x7465646279746573ULL };
	size_t full = len - len % 8;

	for (size_t i = 0; i < full; i += 8) {
		uint64_t m = load_le(p + i, 8);
		v[3] ^= m;
		sip_round(v);
		v[0] ^= m;
	}
	uint64_t last = ((uint64_t)len << 56) | load_le(p + full, len % 8);
	v[3] ^= last;
	sip_round(v);
	v[0] ^= last;
	v[2] ^= 0xff;
	for (int i = 0; i < 3; i++)
		sip_round(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

/* A fresh random key; without getrandom (early boot, old kernel) the clock
 * and an address still differ between runs, which keeps accidental
 * collisions rare even if it no longer stops a determined attacker. */
static void draw_key(struct ee_strmap *m)
{
	uint64_t k[2];

	if (getrandom(k, sizeof(k), GRND_NONBLOCK) != (ssize_t)sizeof(k)) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		k[0] = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32);
		k[1] = (uint64_t)(uintptr_t)m ^ 0x9e3779b97f4a7c15ULL;
	}
	m->k0 = k[0];
	m->k1 = k[1];
	m->keyed = 1;
}

/* ---- the table ---------------------------------------------------------- */

void ee_strmap_init(struct ee_strmap *m)
{
	memset(m, 0, sizeof(*m));
}

void ee_strmap_free(struct ee_strmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->slots[i].key);
	free(m->slots);
	m->slots = NULL;
	m->cap = m->len = 0;
}

/* The slot holding key, or the empty slot where it would go. */
static struct ee_strmap_slot *probe(const struct ee_strmap *m, const char *key, uint64_t h)
{
	size_t mask = m->cap - 1;

	for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
		struct ee_strmap_slot *sl = &m->slots[i];
		if (!sl->key || (sl->hash == h && strcmp(sl->key, key) == 0))
			return sl;
	}
}

size_t *ee_strmap_get(const struct ee_strmap *m, const char *key)
{
	if (m->len == 0)
		return NULL;
	struct ee_strmap_slot *sl = probe(m, key, siphash13(m->k0, m->k1, key, strlen(key)));
	return sl->key ? &sl->value : NULL;
}

static int grow(struct ee_strmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : MIN_CAP;
	struct ee_strmap old = *m;

	if (cap < m->cap || cap > SIZE_MAX / sizeof(*m->slots))
		return -1;
	m->slots = calloc(cap, sizeof(*m->slots));
	if (!m->slots) {
		m->slots = old.slots;
		return -1;
	}
	m->cap = cap;
	for (size_t i = 0; i < old.cap; i++)
		if (old.slots[i].key)
			*probe(m, old.slots[i].key, old.slots[i].hash) = old.slots[i];
	free(old.slots);
	return 0;
}

size_t *ee_strmap_put(struct ee_strmap *m, const char *key, size_t value, int *ret_added)
{
	if (!m->keyed)
		draw_key(m);
	if ((m->len + 1) * 2 > m->cap && grow(m) < 0)
		return NULL;
	uint64_t h = siphash13(m->k0, m->k1, key, strlen(key));
	struct ee_strmap_slot *sl = probe(m, key, h);
	if (ret_added)
		*ret_added = !sl->key;
	if (sl->key)
		return &sl->value;
	sl->key = strdup(key);
	if (!sl->key)
		return NULL;
	sl->hash = h;
	sl->value = value;
	m->len++;
	return &sl->value;
}

const struct ee_strmap_slot *ee_strmap_next(const struct ee_strmap *m, size_t *pos)
{
	while (*pos < m->cap) {
		const struct ee_strmap_slot *sl = &m->slots[(*pos)++];
		if (sl->key)
			return sl;
	}
	return NULL;
}
