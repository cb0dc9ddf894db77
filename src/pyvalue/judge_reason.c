/* judge_reason.c - the reasons of a mismatch (see judge_int.h).
 *
 * Reasons show at most QUOTE_BYTES of any untrusted text, with control bytes
 * and ill-formed UTF-8 replaced by '?', so a reason is always printable
 * UTF-8, and a reason cut by its buffer never ends inside a character.
 */
#include "pyvalue/judge_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/text.h"

/* Control characters as Python writes them: a tab is \t, not a '?'. */
const char *judge_control_escape(unsigned char ch)
{
	return ch == '\t' ? "\\t" : ch == '\r' ? "\\r" : ch == '\n' ? "\\n" : "?";
}

/* Writes at most max (<= QUOTE_BYTES) bytes of src[0..n) into dst as
 * printable UTF-8, cut between characters, with "..." when cut. */
void judge_quote(char dst[QUOTED_LEN], const char *src, size_t n, size_t max)
{
	size_t i = 0, o = 0;

	while (i < n) {
		size_t len = ee_utf8_char_len(src + i, n - i);
		unsigned char ch = (unsigned char)src[i];
		bool shown = len > 1 || (len == 1 && ch >= 0x20 && ch != 0x7f);
		const char *esc = shown ? NULL : judge_control_escape(ch);
		size_t out = shown ? len : strlen(esc);
		if (o + out > max)
			break;
		memcpy(dst + o, shown ? src + i : esc, out);
		o += out;
		i += shown ? len : 1;
	}
	if (i < n) {
		memcpy(dst + o, "...", 3);
		o += 3;
	}
	dst[o] = '\0';
}

/* Drops a character that a cut left incomplete at the end of s. */
void judge_trim_partial_char(char *s)
{
	size_t len = strlen(s), start = len;

	while (start > 0 && ((unsigned char)s[start - 1] & 0xC0) == 0x80)
		start--;
	if (start > 0 && ee_utf8_char_len(s + start - 1, len - start + 1) == 0)
		s[start - 1] = '\0';
}

bool judge_clear_reason(char *why, size_t why_len)
{
	if (why && why_len > 0)
		why[0] = '\0';
	return true;
}

/* Writes the reason (when the caller wants one); returns false, the verdict
 * that always comes with a reason. */
__attribute__((format(printf, 3, 4))) bool judge_say(char *why, size_t why_len, const char *fmt, ...)
{
	if (why && why_len > 0) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(why, why_len, fmt, ap);
		va_end(ap);
		if (n >= 0 && (size_t)n >= why_len)
			judge_trim_partial_char(why);
	}
	return false;
}
