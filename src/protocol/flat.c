/* flat.c - the checker of streamed values (see flat.h). One byte at a
 * time, so that a part may end anywhere; each token's field is bounded as
 * the harness's decoder bounds it (callserve.py _flat_decode). */
#include "protocol/flat.h"

#include <string.h>

#include "base/err.h"

enum { AT_TAG, AT_FIELD, AT_STRLEN, AT_STR, AT_COUNT, AT_RUNLEN, AT_RUN };

#define MAX_DIGITS 100001 /* an int's, with its sign: the harness's bound */
#define MAX_COUNT  12     /* digits of a count */
#define MAX_FLOAT  40
#define MAX_NAME   1000

static int bad(struct ee_err *err, const char *why)
{
	return ee_fail(err, EE_ERR_USAGE, "separate judge: a streamed value: %s", why);
}

void ee_flat_init(struct ee_flat *f, int handles)
{
	memset(f, 0, sizeof(*f));
	f->handles = handles;
}

int ee_flat_whole(const struct ee_flat *f)
{
	return f->state == AT_TAG && f->need == 0;
}

/* The current token is a whole value of its own: one fewer due. */
static void value_done(struct ee_flat *f)
{
	f->state = AT_TAG;
	if (--f->need == 0)
		f->values++;
}

static int is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/* A count's next byte (n of s<n>:, l<n>;, I<n>;). 1 at its end. */
static int count_byte(struct ee_flat *f, unsigned char c, char end, struct ee_err *err)
{
	if (c == (unsigned char)end) {
		if (f->field == 0)
			return bad(err, "a count without digits");
		/* Each value takes a byte at least: a count past what the
		 * bound could still hold is refused now, not at the end. */
		if (f->count > EE_FLAT_MAX_BYTES - f->bytes + 1)
			return bad(err, "a count past the bound");
		return 1;
	}
	if (!is_digit(c) || ++f->field > MAX_COUNT)
		return bad(err, "a bad count");
	f->count = f->count * 10 + (c - '0');
	return 0;
}

/* A field's next byte (i f c y o h, up to ';'). 1 at its end. */
static int field_byte(struct ee_flat *f, unsigned char c, struct ee_err *err)
{
	if (c == ';') {
		int ok = f->field > 0;
		if (f->tag == 'i' || f->tag == 'h')
			ok = f->digit;
		if (f->tag == 'b') /* hex pairs; b'' is "b;" */
			ok = f->field % 2 == 0;
		if (f->tag == 'c')
			ok = f->commas == 1 && f->digit;
		return ok ? 1 : bad(err, "an empty or malformed field");
	}
	size_t max = f->tag == 'b'   ? EE_FLAT_MAX_BYTES
	             : f->tag == 'i' ? MAX_DIGITS
	             : f->tag == 'h' ? MAX_COUNT
	             : f->tag == 'f' ? MAX_FLOAT
	             : f->tag == 'c' ? 2 * MAX_FLOAT + 1
	                             : MAX_NAME;
	int ok, float_char = is_digit(c) || (c >= 'a' && c <= 'z') || c == '.' || c == '+' || c == '-';
	if (f->tag == 'i')
		ok = is_digit(c) || (c == '-' && f->field == 0);
	else if (f->tag == 'h')
		ok = is_digit(c);
	else if (f->tag == 'c') /* two floats' texts, one comma between */
		ok = c == ',' ? ++f->commas == 1 : float_char;
	else if (f->tag == 'f')
		ok = float_char;
	else if (f->tag == 'b')
		ok = is_digit(c) || (c >= 'a' && c <= 'f');
	else /* y, o: a name, printable ASCII */
		ok = c >= 0x20 && c <= 0x7e;
	f->digit |= is_digit(c) || (f->tag == 'c' && c >= 'a' && c <= 'z');
	if (!ok || ++f->field > max)
		return bad(err, "a bad character in a field");
	return 0;
}

/* A run's next byte (I<n>;<int>,...;). 1 at its end. */
static int run_byte(struct ee_flat *f, unsigned char c, struct ee_err *err)
{
	if (c == ',' || c == ';') {
		if (!f->digit || f->count == 0 || (--f->count == 0) != (c == ';'))
			return bad(err, "a run of ints of the wrong length");
		f->digit = 0;
		f->field = 0;
		return c == ';';
	}
	if (!(is_digit(c) || (c == '-' && f->field == 0)) || ++f->field > MAX_DIGITS)
		return bad(err, "a bad int in a run");
	f->digit |= is_digit(c);
	return 0;
}

/* A str's next byte: its characters are UTF-8's, counted by lead byte. */
static int str_byte(struct ee_flat *f, unsigned char c, struct ee_err *err)
{
	if ((c & 0xC0) == 0x80) {
		if (f->cont == 0)
			return bad(err, "a stray byte in a str");
		f->cont--;
	} else {
		if (f->cont != 0 || f->count == 0)
			return bad(err, "a cut character in a str");
		f->count--;
		f->cont = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
	}
	return f->count == 0 && f->cont == 0;
}

static int tag_byte(struct ee_flat *f, unsigned char c, struct ee_err *err)
{
	if (f->need == 0)
		f->need = 1; /* a new value */
	f->tag = (char)c;
	f->field = 0;
	f->count = 0;
	f->digit = 0;
	f->commas = 0;
	if (c == 'N' || c == 'T' || c == 'F')
		value_done(f);
	else if (c == 'i' || c == 'f' || c == 'c' || c == 'b' || c == 'y' || c == 'o' ||
	         (c == 'h' && f->handles))
		f->state = AT_FIELD;
	else if (c == 's')
		f->state = AT_STRLEN;
	else if (c == 'l' || c == 't' || c == 'S' || c == 'Z' || c == 'd')
		f->state = AT_COUNT;
	else if (c == 'I')
		f->state = AT_RUNLEN;
	else
		return bad(err, "an unknown tag");
	return 0;
}

static int feed_byte(struct ee_flat *f, unsigned char c, struct ee_err *err)
{
	int end;

	switch (f->state) {
	case AT_TAG: return tag_byte(f, c, err);
	case AT_FIELD:
		if ((end = field_byte(f, c, err)) > 0)
			value_done(f);
		return end < 0 ? -1 : 0;
	case AT_STRLEN:
		if ((end = count_byte(f, c, ':', err)) < 0)
			return -1;
		if (end && f->count == 0)
			value_done(f);
		else if (end)
			f->state = AT_STR;
		return 0;
	case AT_STR:
		if ((end = str_byte(f, c, err)) > 0)
			value_done(f);
		return end < 0 ? -1 : 0;
	case AT_COUNT:
		if ((end = count_byte(f, c, ';', err)) < 0)
			return -1;
		if (end && f->count == 0)
			value_done(f); /* an empty container */
		else if (end) {
			f->need += f->count * (f->tag == 'd' ? 2 : 1) - 1; /* its items are due instead */
			f->state = AT_TAG;
		}
		return 0;
	case AT_RUNLEN:
		if ((end = count_byte(f, c, ';', err)) < 0)
			return -1;
		if (end && f->count == 0)
			return bad(err, "an empty run of ints");
		if (end) {
			f->field = 0;
			f->digit = 0;
			f->state = AT_RUN;
		}
		return 0;
	default: /* AT_RUN */
		if ((end = run_byte(f, c, err)) > 0)
			value_done(f);
		return end < 0 ? -1 : 0;
	}
}

int ee_flat_feed(struct ee_flat *f, const char *p, size_t n, struct ee_err *err)
{
	if (n > EE_FLAT_MAX_BYTES - f->bytes)
		return bad(err, "past its bound");
	f->bytes += n;
	for (size_t i = 0; i < n; i++)
		if (feed_byte(f, (unsigned char)p[i], err) < 0)
			return -1;
	return 0;
}
