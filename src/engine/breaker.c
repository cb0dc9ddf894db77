/* breaker.c - the circuit breaker (breaker.h). */
#include "engine/breaker.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "verdict/violations.h"

static int parse_rate(const char *s, size_t len, double *rate)
{
	char buf[64], *end;

	if (len == 0 || len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	double v = strtod(buf, &end);
	if (end == buf || errno)
		return -1;
	if (*end == '%') {
		v /= 100;
		end++;
	}
	if (*end || !isfinite(v) || v < 0 || v >= 1)
		return -1;
	*rate = v;
	return 0;
}

int ee_breaker_parse(const char *text, struct ee_breaker_spec *ret, struct ee_err *err)
{
	memset(ret, 0, sizeof(*ret));
	if (!text || strcmp(text, "off") == 0)
		return 0;
	const char *sep = strstr(text, " over ");
	size_t skip = 6;
	if (!sep) {
		sep = strchr(text, '/');
		skip = 1;
	}
	char *end;
	double rate;
	if (!sep || parse_rate(text, (size_t)(sep - text), &rate) < 0)
		goto bad;
	errno = 0;
	unsigned long n = strtoul(sep + skip, &end, 10);
	if (end == sep + skip || *end || errno || n == 0 || n > EE_BREAKER_MAX_N || sep[skip] == '-')
		goto bad;
	ret->rate = rate;
	ret->n = (unsigned)n;
	return 0;
bad:
	return ee_fail(err, EE_ERR_USAGE,
	               "--breaker: expected \"RATE over N\" (RATE a fraction in [0, 1) or a "
	               "percentage, 1 <= N <= %d), e.g. \"0.05 over 100\", got '%s'",
	               EE_BREAKER_MAX_N, text);
}

int ee_breaker_init(struct ee_breaker *b, const struct ee_breaker_spec *spec, struct ee_err *err)
{
	memset(b, 0, sizeof(*b));
	b->spec = *spec;
	if (!spec->n)
		return 0;
	b->window = calloc(spec->n, 1);
	if (!b->window)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	return 0;
}

void ee_breaker_free(struct ee_breaker *b)
{
	free(b->window);
	memset(b, 0, sizeof(*b));
}

void ee_breaker_reset(struct ee_breaker *b)
{
	if (b->window)
		memset(b->window, 0, b->spec.n);
	b->pos = b->seen = b->hits = 0;
	b->tripped = 0;
	b->why[0] = '\0';
}

int ee_breaker_feed(struct ee_breaker *b, const json_t *record)
{
	if (!b->spec.n || !record)
		return 0;
	long escapes = ee_violations_escape_count(json_object_get(record, "violations"));
	unsigned char hit = escapes > 0;
	b->hits -= b->window[b->pos];
	b->window[b->pos] = hit;
	b->hits += hit;
	b->pos = (b->pos + 1) % b->spec.n;
	if (b->seen < b->spec.n)
		b->seen++;
	if (b->tripped || (double)b->hits <= b->spec.rate * b->spec.n)
		return 0;
	b->tripped = 1;
	const char *task = json_string_value(json_object_get(record, "task_id"));
	json_t *sample = json_object_get(record, "sample");
	snprintf(b->why, sizeof(b->why),
	         "circuit breaker: %u of the last %u candidates made escape-class attempts (more than "
	         "%g of %u); the last: task %s, sample %lld",
	         b->hits, b->seen, b->spec.rate, b->spec.n, task ? task : "?",
	         json_is_integer(sample) ? (long long)json_integer_value(sample) : -1LL);
	return 1;
}
