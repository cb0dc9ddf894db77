/* http.c - the table's HTTP rows read from a request (see http.h). */
#include "options/http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/jsonfield.h"
#include "base/resource_limits.h"
#include "input/task.h"
#include "options/options.h"

const char *ee_option_http_field(const struct ee_option *row)
{
	return (row->fronts & EE_FRONT_HTTP) && !row->http_limit ? row->http : NULL;
}

/* What a text row's field must be, said as a message. */
static const char *expected_json(const struct ee_option *row)
{
	unsigned forms = row->http_json ? row->http_json : EE_HTTP_STRING;

	if (forms == EE_HTTP_NUMBER)
		return "expected a number";
	return forms & EE_HTTP_NUMBER ? "expected a number or a string" : "expected a string";
}

/* v as the text the row's parse reads (a number written as on a command
 * line, a whole number without a point), or NULL when the row does not
 * take v's type. */
static const char *text_of(const struct ee_option *row, const json_t *v, char *buf, size_t size)
{
	unsigned forms = row->http_json ? row->http_json : EE_HTTP_STRING;

	if (json_is_string(v) && (forms & EE_HTTP_STRING))
		return json_string_value(v);
	if (!(forms & EE_HTTP_NUMBER))
		return NULL;
	if (json_is_integer(v))
		snprintf(buf, size, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v)) /* the shortest text that reads back the same */
		for (int digits = 15; digits <= 17; digits++) {
			snprintf(buf, size, "%.*g", digits, json_real_value(v));
			if (strtod(buf, NULL) == json_real_value(v))
				break;
		}
	else
		return NULL;
	if (json_is_real(v) && !strpbrk(buf, ".eEn")) /* a real stays one: 2.0 is no seed */
		snprintf(buf + strlen(buf), size - strlen(buf), ".0");
	return buf;
}

/* obj[row->http] as the row's value: 0 when absent, 1 read, 2 read and
 * stored by the row's parse (a text), -1 refused. */
static int http_value(const struct ee_jf *c, const struct ee_option *row, const json_t *obj,
                      struct ee_option_sink *s, double *ret)
{
	const json_t *v = json_object_get(obj, row->http);
	char choices[128];
	int choice;

	if (!v)
		return 0;
	if (row->type == EE_OPT_TEXT && row->parse) { /* read by the row's parse, into s */
		char text[64];
		const char *arg = text_of(row, v, text, sizeof(text));
		if (!arg)
			return ee_jf_fail(c, row->http, "%s", expected_json(row));
		if (row->parse(row, arg, s, c->err) < 0) {
			char why[sizeof(c->err->msg)];
			const char *msg = c->err->msg;
			/* the new rows drop "--NAME: " (the field names it); --reward keeps
			 * its message as clients already match it */
			size_t flag = strlen(row->name) + 4;
			if (row->http_json && strncmp(msg, "--", 2) == 0 &&
			    strncmp(msg + 2, row->name, flag - 4) == 0 &&
			    strncmp(msg + flag - 2, ": ", 2) == 0)
				msg += flag;
			snprintf(why, sizeof(why), "%s", msg);
			return ee_jf_fail(c, row->http, "%s", why);
		}
		return 2;
	}
	if (row->type != EE_OPT_ENUM || !row->set)
		return ee_jf_fail(c, row->http, "internal: --%s has no request form", row->name);
	if (!json_is_string(v) || ee_option_choice(row, json_string_value(v), &choice) < 0) {
		ee_option_choices_text(row, ", ", choices, sizeof(choices));
		return ee_jf_fail(c, row->http, "expected one of %s", choices);
	}
	*ret = choice;
	return 1;
}

int ee_options_http_read(const struct ee_jf *c, const json_t *obj, struct ee_option_sink *s)
{
	for (size_t i = 0; i < ee_options_count; i++) {
		const struct ee_option *row = &ee_options[i];
		double value = 0;
		int rc;

		if (!ee_option_http_field(row))
			continue;
		if ((rc = http_value(c, row, obj, s, &value)) < 0)
			return -1;
		if (rc == 1)
			row->set(row, value, s);
	}
	return 0;
}

/* Whether lim has row's limit (options.h: task_has_offset). */
static int task_has(const struct ee_option *row, const struct ee_task_limits *lim)
{
	int has;

	memcpy(&has, (const char *)lim + row->task_has_offset, sizeof(has));
	return has;
}

/* A limit row's value in lim, as a double (lim must have it). */
static double task_limit(const struct ee_option *row, const struct ee_task_limits *lim)
{
	struct ee_eval_options o;

	/* the row's field in o.limits has the width of the task's field */
	memcpy((char *)&o + row->offset, (const char *)lim + row->task_offset, row->size);
	return ee_option_value(row, &o);
}

int ee_options_http_ceiling(const struct ee_jf *c, const struct ee_task_limits *lim,
                            const struct ee_limits *max)
{
	struct ee_eval_options server;

	if (!max)
		return 0;
	server.limits = *max;
	for (size_t i = 0; i < ee_options_count; i++) {
		const struct ee_option *row = &ee_options[i];
		if (!(row->fronts & EE_FRONT_HTTP) || !row->http_limit || !task_has(row, lim))
			continue;
		double v = task_limit(row, lim), ceiling = ee_option_value(row, &server);
		if (v > ceiling)
			return ee_jf_fail(c, row->http,
			                  row->type == EE_OPT_DOUBLE
			                          ? "%g is above this server's ceiling %g (its --%s)"
			                          : "%.0f is above this server's ceiling %.0f (its --%s)",
			                  v, ceiling, row->name);
	}
	return 0;
}

void ee_options_http_limits_over(struct ee_task_limits *dst, const struct ee_task_limits *src)
{
	for (size_t i = 0; i < ee_options_count; i++) {
		const struct ee_option *row = &ee_options[i];
		if (!(row->fronts & EE_FRONT_HTTP) || !row->http_limit || !task_has(row, src))
			continue;
		memcpy((char *)dst + row->task_offset, (const char *)src + row->task_offset, row->size);
		memcpy((char *)dst + row->task_has_offset, (const char *)src + row->task_has_offset,
		       sizeof(int));
	}
}
