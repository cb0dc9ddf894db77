/* svg.h - the report's charts: inline SVG written into an ee_out.
 *
 * Each function writes one <svg> element sized by its viewBox (the page's
 * CSS scales it to the column's width), with a <title> for screen readers
 * and a small text in place of the marks when there is no data, so a chart
 * is always there. Labels and value texts are untrusted (task ids, classes,
 * details) and are escaped; ids, CSS classes and hrefs are execeval's own.
 * Coordinates are printed with one decimal and are always finite: values
 * go through ee_svg_scale, which maps NaN and infinities to 0 and clamps
 * to the plot, so hostile or broken numbers cannot break the markup.
 *
 * Everything is borrowed for the call; nothing is kept.
 */
#ifndef EE_REPORT_SVG_H
#define EE_REPORT_SVG_H

#include <stddef.h>

struct ee_out;

struct ee_svg_chart {
	const char *id;    /* the element's id (execeval's own), or NULL */
	const char *title; /* what the chart shows (escaped) */
	double max;        /* the value scale's top; <= 0 or non-finite: from the data */
	int width;         /* of the viewBox, px; 0: the default, 560 */
};

struct ee_svg_bar {
	const char *label; /* escaped; long labels are cut (the full one is in a tooltip) */
	double value;
	int has_ci; /* draw a whisker from lo to hi */
	double lo, hi;
	const char *text; /* the value as shown (escaped); NULL: value with 3 decimals */
	const char *href; /* the label links here (execeval's own, e.g. "#t-3"), or NULL */
	const char *cls;  /* the bar's CSS class (execeval's own), or NULL: "bar" */
};

/* A vertical line across a histogram at `value`, labelled. */
struct ee_svg_mark {
	const char *label; /* escaped */
	double value;
	const char *cls; /* CSS class, or NULL: "mark" */
};

/* One point of a trend: t in seconds since the epoch (UTC). */
struct ee_svg_point {
	double t;
	double value;
};

/* v / max of len, clamped to [0, len]; 0 for a non-finite v, max or len, or
 * a max <= 0. */
double ee_svg_scale(double v, double max, double len);

/* Vertical bars, one per entry, with an optional CI whisker each
 * (pass@k). Scale from 0 to c->max, else to the largest value or hi. */
void ee_svg_vbars(struct ee_out *o, const struct ee_svg_chart *c, const struct ee_svg_bar *bars, size_t n);

/* Horizontal bars, a labelled row each (per-class rates, details, the
 * slowest tasks). */
void ee_svg_hbars(struct ee_out *o, const struct ee_svg_chart *c, const struct ee_svg_bar *bars, size_t n);

/* One bar split into segments by value (shares of a whole: the statuses),
 * with a legend row per segment. Zero segments get a legend row only. */
void ee_svg_stack(struct ee_out *o, const struct ee_svg_chart *c, const struct ee_svg_bar *parts, size_t n);

/* A histogram of counts[0..nbins) over [lo, hi) in equal bins, with
 * vertical marks (median, p10). */
void ee_svg_histogram(struct ee_out *o, const struct ee_svg_chart *c, const unsigned long *counts,
                      size_t nbins, double lo, double hi, const struct ee_svg_mark *marks, size_t nmarks);

/* A line over pts[0..n) in time order (they are sorted here; points with
 * a non-finite t or value are left out), with a dot and a tooltip per
 * point, the first and last dates under the axis. The value scale runs
 * from min(0, smallest) to c->max, else to the largest value. */
void ee_svg_trend(struct ee_out *o, const struct ee_svg_chart *c, const struct ee_svg_point *pts, size_t n);

#endif
