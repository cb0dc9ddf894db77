/* http.h - the options table's HTTP front: the rows with EE_FRONT_HTTP are
 * what a request body may say about how it is evaluated (docs/api.md).
 *
 * A limit row (http_limit) is a key of the request's "limits" object, read
 * as a task's limits are (ee_task_limits_from_json) and refused above the
 * server's own value, its ceiling; every other row is a field of the run or
 * batch object of its own name (row->http), read here by the row's type.
 * The request's reader (serve/request.c) takes its field names and their
 * reading from here, so a row given EE_FRONT_HTTP is a request field with
 * no second list to update. Errors name the JSON path (jsonfield.h).
 */
#ifndef EE_OPTIONS_HTTP_H
#define EE_OPTIONS_HTTP_H

#include <jansson.h>

struct ee_jf;
struct ee_limits;
struct ee_option;
struct ee_option_sink;
struct ee_task_limits;

/* The field row is in a run or batch object, or NULL when it is none (a
 * row HTTP does not take, or a limit, which is under "limits"). */
const char *ee_option_http_field(const struct ee_option *row);

/* Reads every field of the table's rows that obj has; c is obj's context.
 * Each is stored through its row's setter (a text row: its parse) into s,
 * whose opt is the request's own options: only "reward" lands there. -1 on a wrong value,
 * naming the field ("runs[2].extract: expected one of auto, fenced, none"). */
int ee_options_http_read(const struct ee_jf *c, const json_t *obj, struct ee_option_sink *s);

/* Refuses a limit lim has above max's value of its row (NULL: no ceiling);
 * c is the context of the limits object ("limits", "runs[0].task.limits").
 * A limit above the ceiling is refused, never cut: a cut one would change
 * the verdict without saying so. */
int ee_options_http_ceiling(const struct ee_jf *c, const struct ee_task_limits *lim,
                            const struct ee_limits *max);

/* Each limit src has replaces dst's. */
void ee_options_http_limits_over(struct ee_task_limits *dst, const struct ee_task_limits *src);

#endif
