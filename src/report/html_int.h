/* html_int.h - the report page's parts, shared by html.c (the page, its
 * head and figures), html_charts.c and html_tasks.c. Not a public header:
 * everyone else goes through report.h. Each part writes into o; a failed
 * write is noticed once, at the page's end (ee_out_failed). */
#ifndef EE_REPORT_HTML_INT_H
#define EE_REPORT_HTML_INT_H

#include <jansson.h>

struct ee_out;
struct ee_report;
struct ee_report_options;

/* ---- html.c: small pieces --------------------------------------------------- */

/* obj[key] as a number, NAN when it is none. */
double html_num_at(const json_t *obj, const char *key);
/* Whether the summary s has a class other than "" (the tasks without one):
 * without, the page has no panel by class (it would hold one bar). */
int html_has_classes(const json_t *s);
/* An interval [lo, hi] as the summary writes it, when v is one: 1, else 0. */
int html_interval(const json_t *v, double *lo, double *hi);
/* Opens a <section class="panel"> (id and title are written as they are). */
void html_open_panel(struct ee_out *o, const char *id, const char *title);
/* A <p class="note"> of text (HTML, written as it is). */
void html_note(struct ee_out *o, const char *text);
/* A status badge: status is a REP_* index (report_int.h). */
void html_status_badge(struct ee_out *o, int status);

/* ---- html_charts.c ---------------------------------------------------------- */

/* The panels of charts: pass@k, classes, models, statuses, scores, time and memory. */
void html_charts(struct ee_out *o, const struct ee_report *r, const json_t *s);
/* The trends over earlier runs (opt->trends). */
void html_trends(struct ee_out *o, const struct ee_report_options *opt);

/* ---- html_tasks.c ----------------------------------------------------------- */

/* The sortable task table, then one section per task with its failures. */
void html_tasks(struct ee_out *o, const struct ee_report *r);

#endif
