/* flat.h - the checker of streamed values on the separate judge's channel
 * (docs/protocol.md, "Streamed values").
 *
 * A value past the canonical form's bounds (100 levels, 100,000 nodes)
 * crosses as a flat text in prefix order, in parts that the supervisor
 * relays as they come: nesting costs no depth here, and no part is held
 * longer than its frame. This parser reads the parts one after another,
 * in any cut (a token may span two parts), holding a few counters: it
 * checks every token's shape, counts the whole values, and refuses a
 * text past EE_FLAT_MAX_BYTES or one that claims more values than bytes
 * could still hold. The grammar:
 *
 *   N T F                       None, True, False
 *   i<int>;  f<float repr>;     c<float>,<float>;  (a complex)
 *   s<n>:<n characters>         a str (characters, not bytes)
 *   b<hex>;                     bytes, as lower-case hex pairs
 *   y<name>;  o<name>;          a builtin type; another type, by name
 *   h<n>;                       a handle (the judge's calls only)
 *   l t S Z d<n>;               list, tuple, set, frozenset, dict: n items
 *                               follow (a dict's: n keys and n values)
 *   I<n>;<int>,<int>,...;       a list of n ints
 *
 * Ownership: a caller-owned value, no heap. Errors: -1 with err set
 * (EE_ERR_USAGE: the text broke the grammar or a bound).
 */
#ifndef EE_FLAT_H
#define EE_FLAT_H

#include <stddef.h>

struct ee_err;

/* Bytes of one message's streamed values: the harness's bound, in
 * characters (canonical.py _MAX_STREAM_CHARS), times 4 (UTF-8). */
#define EE_FLAT_MAX_BYTES ((size_t)128 << 20)

struct ee_flat {
	int state;                /* what the next byte may be (flat.c) */
	char tag;                 /* the token being read */
	int handles;              /* h allowed */
	int digit;                /* a digit in the current number */
	int commas;               /* a complex's */
	int cont;                 /* continuation bytes of a str's character */
	size_t field;             /* bytes of the current field */
	unsigned long long count; /* a count being read; a str's characters or a run's ints left */
	unsigned long long need;  /* values due before the current value is whole */
	size_t values;            /* whole values so far */
	size_t bytes;             /* bytes so far */
};

/* A parser at its start; handles: whether h<n>; may occur. */
void ee_flat_init(struct ee_flat *f, int handles);

/* Reads the next n bytes of the text. */
int ee_flat_feed(struct ee_flat *f, const char *p, size_t n, struct ee_err *err);

/* Whether the text so far ends where a value does (every value whole). */
int ee_flat_whole(const struct ee_flat *f);

#endif
