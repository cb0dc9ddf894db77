/* fuzz_netstring.c - the incremental decoder against a whole-buffer oracle.
 *
 * Input: byte 0 picks max_frame, byte 1 seeds the chunking, the rest is the
 * stream. The stream is fed in pseudo-random chunks, draining after each
 * feed; the frames and the final verdict must equal those of a one-shot
 * reference parse, whatever the chunking. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "protocol/netstring.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct frame {
	size_t off, len;
};

#define MAX_FRAMES 4096

/* One-shot parse of the whole stream: frames, and whether it is valid. */
static int reference(const char *s, size_t n, size_t max_frame, struct frame *fr, size_t *nfr)
{
	size_t pos = 0;

	*nfr = 0;
	while (pos < n) {
		size_t start = pos, value = 0;
		while (pos < n && s[pos] >= '0' && s[pos] <= '9') {
			if (pos > start && s[start] == '0')
				return -1;
			value = value * 10 + (size_t)(s[pos] - '0');
			if (value > max_frame)
				return -1;
			pos++;
		}
		if (pos == n || s[pos] != ':' || pos == start)
			return -1;
		pos++;
		if (n - pos < value + 1 || s[pos + value] != ',')
			return -1;
		if (*nfr == MAX_FRAMES)
			return -2; /* too many to compare: skip */
		fr[*nfr].off = pos;
		fr[(*nfr)++].len = value;
		pos += value + 1;
	}
	return 0;
}

static uint32_t next_rand(uint32_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 17;
	*state ^= *state << 5;
	return *state;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct frame want[MAX_FRAMES];
	struct ee_ns_decoder d;
	struct ee_err err;
	size_t nwant, got = 0;

	if (size < 2)
		return 0;
	size_t max_frame = (size_t)data[0] * 4;
	uint32_t state = 0x9e3779b9u ^ data[1];
	const char *s = (const char *)data + 2;
	size_t n = size - 2;
	int ref = reference(s, n, max_frame, want, &nwant);
	if (ref == -2)
		return 0;

	ee_ns_init(&d, max_frame, n);
	int failed = 0;
	for (size_t pos = 0; pos < n && !failed;) {
		size_t chunk = 1 + next_rand(&state) % 64;
		if (chunk > n - pos)
			chunk = n - pos;
		if (ee_ns_feed(&d, s + pos, chunk, &err) < 0)
			abort(); /* max_total == n: feeding can never overflow */
		pos += chunk;
		const char *p;
		size_t len;
		int r;
		while ((r = ee_ns_next(&d, &p, &len, &err)) == 1) {
			if (got >= nwant || len != want[got].len || p[len] != '\0' ||
			    memcmp(p, s + want[got].off, len) != 0)
				abort(); /* a frame the oracle does not have */
			got++;
		}
		failed = r < 0;
	}
	if (!failed)
		failed = ee_ns_finish(&d, &err) < 0;
	if (failed != (ref < 0))
		abort(); /* verdicts differ */
	if (!failed && got != nwant)
		abort();
	if (failed && ee_ns_finish(&d, &err) == 0)
		abort(); /* not sticky */
	ee_ns_free(&d);
	return 0;
}
