/* fuzz_report.c - the report's page from hostile results files.
 *
 * Input: JSON lines. Each line that parses is offered to a report
 * (rejected records are fine); then the page is written. Invariants: the
 * page is written, every tag in it is one html.c or svg.c writes (every
 * '<' of the input is escaped), with exactly one <script>, and no
 * attribute value is NaN or infinite. */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/err.h"
#include "report/out.h"
#include "report/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The elements html.c and svg.c write; any other tag came from the input. */
static const char *const own_tags[] = {
	"!DOCTYPE", "html", "head", "meta",   "title", "style", "body",   "header", "h1",     "h2",
	"h3",       "h4",   "p",    "main",   "div",   "b",     "span",   "nav",    "a",      "section",
	"svg",      "text", "rect", "line",   "path",  "g",     "circle", "table",  "thead",  "tbody",
	"tr",       "th",   "td",   "button", "ul",    "li",    "code",   "pre",    "script",
};

static int own_tag(const char *p)
{
	size_t n = strspn(p, "!ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789");

	for (size_t i = 0; i < sizeof(own_tags) / sizeof(own_tags[0]); i++)
		if (strlen(own_tags[i]) == n && strncmp(p, own_tags[i], n) == 0)
			return 1;
	return 0;
}

static void check(const char *page)
{
	size_t scripts = 0;

	for (const char *p = page; (p = strchr(p, '<')); p++) {
		const char *name = p[1] == '/' ? p + 2 : p + 1;
		if (!own_tag(name))
			abort(); /* a tag smuggled in */
		scripts += strncmp(p, "<script", 7) == 0;
	}
	if (scripts != 1)
		abort();
	for (const char *p = page; *p; p++)
		if (*p == '"' && (strncasecmp(p + 1, "nan", 3) == 0 || strncasecmp(p + 1, "inf", 3) == 0 ||
		                  strncasecmp(p + 1, "-nan", 4) == 0 || strncasecmp(p + 1, "-inf", 4) == 0))
			abort(); /* an attribute value that is not a number */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned long ks[] = { 1, 2 };
	const char *p = (const char *)data, *end = p + size;
	struct ee_report *r = ee_report_new();
	struct ee_out o;
	struct ee_err err = { 0 };
	unsigned long line = 0;
	char where[32];

	if (!r)
		abort();
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		json_t *rec = json_loadb(p, len, 0, NULL);
		snprintf(where, sizeof(where), "fuzz:%lu", ++line);
		if (rec)
			ee_report_add(r, rec, where, &err);
		json_decref(rec);
		p += len + (nl != NULL);
	}
	struct ee_report_options opt = { .title = "fuzz", .generated_at = "now", .ks = ks, .nk = 2 };
	ee_out_init(&o, 64u << 20);
	if (ee_report_html(r, &opt, &o, &err) < 0)
		abort(); /* a fuzz input is far below the cap */
	check(o.buf.data);
	ee_out_free(&o);
	ee_report_free(r);
	return 0;
}
