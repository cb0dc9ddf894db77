/* svg.c - chart primitives for the report (svg.h).
 *
 * Every chart is a plot area inside margins: values map to lengths through
 * ee_svg_scale (finite, clamped), and lengths to attributes through num(),
 * which prints one decimal. Marks carry a <title> child, the tooltip a
 * browser shows on hover, with the full label and value.
 */
#include "report/svg.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "report/out.h"

#define DEFAULT_WIDTH 560
#define LABEL_CHARS   30 /* of a row's label in horizontal bars */
#define VLABEL_CHARS  12 /* of a label under a vertical bar */

double ee_svg_scale(double v, double max, double len)
{
	if (!isfinite(v) || !isfinite(max) || !isfinite(len) || max <= 0 || len <= 0 || v <= 0)
		return 0;
	return v >= max ? len : v / max * len;
}

static double finite_or_0(double x)
{
	return isfinite(x) ? x : 0;
}

static int width_of(const struct ee_svg_chart *c)
{
	return c->width > 0 && c->width <= 4000 ? c->width : DEFAULT_WIDTH;
}

/* The scale's top: c->max, else the largest value (or hi), else 1. */
static double top_of(const struct ee_svg_chart *c, const struct ee_svg_bar *bars, size_t n)
{
	double max = 0;

	if (isfinite(c->max) && c->max > 0)
		return c->max;
	for (size_t i = 0; i < n; i++) {
		double v = finite_or_0(bars[i].value);
		double hi = bars[i].has_ci ? finite_or_0(bars[i].hi) : 0;
		max = v > max ? v : max;
		max = hi > max ? hi : max;
	}
	return max > 0 ? max : 1;
}

/* ` name="x"` with one decimal. */
static void num(struct ee_out *o, const char *name, double x)
{
	ee_out_fmt(o, " %s=\"", name);
	ee_out_num(o, x, 1);
	ee_out_raw(o, "\"");
}

/* Path commands: "M12.0 30.5", "V40.0". */
static void path_xy(struct ee_out *o, char cmd, double x, double y)
{
	ee_out_fmt(o, "%c", cmd);
	ee_out_num(o, x, 1);
	ee_out_raw(o, " ");
	ee_out_num(o, y, 1);
}

static void path_1(struct ee_out *o, char cmd, double v)
{
	ee_out_fmt(o, "%c", cmd);
	ee_out_num(o, v, 1);
}

static void open_svg(struct ee_out *o, const struct ee_svg_chart *c, int w, double h)
{
	ee_out_raw(o, "<svg class=\"chart\"");
	if (c->id) {
		ee_out_raw(o, " id=\"");
		ee_out_text(o, c->id);
		ee_out_raw(o, "\"");
	}
	ee_out_fmt(o, " viewBox=\"0 0 %d ", w);
	ee_out_num(o, h, 0);
	ee_out_fmt(o, "\" width=\"%d\"", w);
	num(o, "height", h);
	ee_out_raw(o, " role=\"img\" aria-label=\"");
	ee_out_text(o, c->title);
	ee_out_raw(o, "\"><title>");
	ee_out_text(o, c->title);
	ee_out_raw(o, "</title>\n");
}

static void no_data(struct ee_out *o, const struct ee_svg_chart *c, int w, double h)
{
	open_svg(o, c, w, h);
	ee_out_raw(o, "<text class=\"empty\" text-anchor=\"middle\"");
	num(o, "x", w / 2.0);
	num(o, "y", h / 2.0);
	ee_out_raw(o, ">no data</text></svg>\n");
}

/* <text class=cls x y anchor>; the caller writes the content and </text>. */
static void open_text(struct ee_out *o, const char *cls, double x, double y, const char *anchor)
{
	ee_out_fmt(o, "<text class=\"%s\" text-anchor=\"%s\"", cls, anchor);
	num(o, "x", x);
	num(o, "y", y);
	ee_out_raw(o, ">");
}

static void line(struct ee_out *o, const char *cls, double x1, double y1, double x2, double y2)
{
	ee_out_fmt(o, "<line class=\"%s\"", cls);
	num(o, "x1", x1);
	num(o, "y1", y1);
	num(o, "x2", x2);
	num(o, "y2", y2);
	ee_out_raw(o, "/>\n");
}

/* The tooltip of a bar: "label: text". */
static void tooltip(struct ee_out *o, const struct ee_svg_bar *b)
{
	ee_out_raw(o, "<title>");
	ee_out_text(o, b->label);
	ee_out_raw(o, ": ");
	if (b->text)
		ee_out_text(o, b->text);
	else
		ee_out_num(o, b->value, 3);
	if (b->has_ci) {
		ee_out_raw(o, " (CI ");
		ee_out_num(o, b->lo, 3);
		ee_out_raw(o, "\xe2\x80\x93"); /* en dash */
		ee_out_num(o, b->hi, 3);
		ee_out_raw(o, ")");
	}
	ee_out_raw(o, "</title>");
}

static void bar_rect(struct ee_out *o, const struct ee_svg_bar *b, double x, double y, double w, double h)
{
	ee_out_fmt(o, "<rect class=\"%s\"", b->cls ? b->cls : "bar");
	num(o, "x", x);
	num(o, "y", y);
	num(o, "width", w);
	num(o, "height", h);
	ee_out_raw(o, ">");
	tooltip(o, b);
	ee_out_raw(o, "</rect>\n");
}

static void value_text(struct ee_out *o, const struct ee_svg_bar *b)
{
	if (b->text)
		ee_out_text(o, b->text);
	else
		ee_out_num(o, b->value, 3);
}

/* A label, linked when the bar has an href. */
static void label(struct ee_out *o, const struct ee_svg_bar *b, double x, double y, const char *anchor,
                  size_t chars)
{
	if (b->href) {
		ee_out_raw(o, "<a href=\"");
		ee_out_text(o, b->href);
		ee_out_raw(o, "\">");
	}
	open_text(o, b->href ? "label link" : "label", x, y, anchor);
	ee_out_text_cut(o, b->label, chars);
	ee_out_raw(o, "</text>");
	ee_out_raw(o, b->href ? "</a>\n" : "\n");
}

/* Horizontal grid lines with their values at the left, from 0 to max. */
static void y_grid(struct ee_out *o, double left, double right, double top, double height, double max,
                   int ticks, int decimals)
{
	for (int i = 0; i <= ticks; i++) {
		double v = max * i / ticks, y = top + height - ee_svg_scale(v, max, height);
		line(o, i ? "grid" : "axis", left, y, right, y);
		open_text(o, "tick", left - 6, y + 4, "end");
		ee_out_num(o, v, decimals);
		ee_out_raw(o, "</text>\n");
	}
}

void ee_svg_vbars(struct ee_out *o, const struct ee_svg_chart *c, const struct ee_svg_bar *bars, size_t n)
{
	const double H = 260, ml = 48, mr = 12, mt = 22, mb = 36;
	int W = width_of(c);
	double pw = W - ml - mr, ph = H - mt - mb, max = top_of(c, bars, n);

	if (n == 0) {
		no_data(o, c, W, H);
		return;
	}
	open_svg(o, c, W, H);
	y_grid(o, ml, W - mr, mt, ph, max, 4, 2);
	double slot = pw / (double)n, bw = slot * 0.6 > 90 ? 90 : slot * 0.6;
	for (size_t i = 0; i < n; i++) {
		const struct ee_svg_bar *b = &bars[i];
		double x = ml + slot * (double)i + (slot - bw) / 2, cx = x + bw / 2;
		double h = ee_svg_scale(b->value, max, ph), y = mt + ph - h, text_y = y;
		bar_rect(o, b, x, y, bw, h);
		if (b->has_ci) {
			double ylo = mt + ph - ee_svg_scale(b->lo, max, ph);
			double yhi = mt + ph - ee_svg_scale(b->hi, max, ph);
			ee_out_raw(o, "<path class=\"whisker\" d=\"");
			path_xy(o, 'M', cx, ylo);
			path_1(o, 'V', yhi);
			path_xy(o, 'M', cx - 6, ylo);
			path_1(o, 'H', cx + 6);
			path_xy(o, 'M', cx - 6, yhi);
			path_1(o, 'H', cx + 6);
			ee_out_raw(o, "\"/>\n");
			text_y = yhi < text_y ? yhi : text_y;
		}
		open_text(o, "value", cx, text_y - 6 < 12 ? 12 : text_y - 6, "middle");
		value_text(o, b);
		ee_out_raw(o, "</text>\n");
		label(o, b, cx, H - mb + 18, "middle", VLABEL_CHARS);
	}
	ee_out_raw(o, "</svg>\n");
}

void ee_svg_hbars(struct ee_out *o, const struct ee_svg_chart *c, const struct ee_svg_bar *bars, size_t n)
{
	const double row = 22, mt = 6, mb = 6, lw = 200, tw = 96;
	int W = width_of(c);
	double H = mt + row * (double)n + mb, x0 = lw + 8, bmax = W - x0 - tw, max = top_of(c, bars, n);

	if (n == 0) {
		no_data(o, c, W, 60);
		return;
	}
	open_svg(o, c, W, H);
	line(o, "axis", x0, mt, x0, H - mb);
	for (size_t i = 0; i < n; i++) {
		const struct ee_svg_bar *b = &bars[i];
		double y = mt + row * (double)i, cy = y + row / 2, w = ee_svg_scale(b->value, max, bmax);
		double text_x = x0 + w;
		label(o, b, lw, cy + 4, "end", LABEL_CHARS);
		bar_rect(o, b, x0, y + 4, w, row - 8);
		if (b->has_ci) {
			double xlo = x0 + ee_svg_scale(b->lo, max, bmax),
			       xhi = x0 + ee_svg_scale(b->hi, max, bmax);
			ee_out_raw(o, "<path class=\"whisker\" d=\"");
			path_xy(o, 'M', xlo, cy);
			path_1(o, 'H', xhi);
			path_xy(o, 'M', xlo, cy - 5);
			path_1(o, 'V', cy + 5);
			path_xy(o, 'M', xhi, cy - 5);
			path_1(o, 'V', cy + 5);
			ee_out_raw(o, "\"/>\n");
			text_x = xhi > text_x ? xhi : text_x;
		}
		open_text(o, "value", text_x + 6, cy + 4, "start");
		value_text(o, b);
		ee_out_raw(o, "</text>\n");
	}
	ee_out_raw(o, "</svg>\n");
}

void ee_svg_stack(struct ee_out *o, const struct ee_svg_chart *c, const struct ee_svg_bar *parts, size_t n)
{
	const double bar_h = 30, mt = 6, gap = 14, row = 20;
	int W = width_of(c);
	double total = 0, x = 4, bw = W - 8;

	for (size_t i = 0; i < n; i++)
		total += parts[i].value > 0 && isfinite(parts[i].value) ? parts[i].value : 0;
	if (total <= 0) {
		no_data(o, c, W, 60);
		return;
	}
	double H = mt + bar_h + gap + row * (double)n;
	open_svg(o, c, W, H);
	for (size_t i = 0; i < n; i++) {
		double w = ee_svg_scale(parts[i].value, total, bw);
		if (w > 0)
			bar_rect(o, &parts[i], x, mt, w, bar_h);
		x += w;
	}
	for (size_t i = 0; i < n; i++) {
		const struct ee_svg_bar *p = &parts[i];
		double y = mt + bar_h + gap + row * (double)i;
		bar_rect(o, p, 4, y, 12, 12);
		open_text(o, "label", 24, y + 11, "start");
		ee_out_text_cut(o, p->label, LABEL_CHARS);
		ee_out_raw(o, "</text>\n");
		open_text(o, "value", 220, y + 11, "start");
		value_text(o, p);
		ee_out_raw(o, " (");
		ee_out_num(o, 100 * finite_or_0(p->value) / total, 1);
		ee_out_raw(o, "%)</text>\n");
	}
	ee_out_raw(o, "</svg>\n");
}

static void mark_line(struct ee_out *o, const struct ee_svg_mark *m, size_t i, double x, double top,
                      double bottom, int W)
{
	const char *anchor = x < 60 ? "start" : x > W - 60 ? "end" : "middle";

	ee_out_fmt(o, "<g class=\"%s\">", m->cls ? m->cls : "mark");
	line(o, "mark-line", x, top, x, bottom);
	open_text(o, "mark-label", x, top - 6 - 13 * (double)(i % 2), anchor);
	ee_out_text_cut(o, m->label, LABEL_CHARS);
	ee_out_raw(o, " ");
	ee_out_num(o, m->value, 2);
	ee_out_raw(o, "</text></g>\n");
}

void ee_svg_histogram(struct ee_out *o, const struct ee_svg_chart *c, const unsigned long *counts,
                      size_t nbins, double lo, double hi, const struct ee_svg_mark *marks, size_t nmarks)
{
	const double H = 260, ml = 48, mr = 16, mt = 40, mb = 36;
	int W = width_of(c);
	double pw = W - ml - mr, ph = H - mt - mb, max = 0, total = 0;

	for (size_t i = 0; i < nbins; i++) {
		max = (double)counts[i] > max ? (double)counts[i] : max;
		total += (double)counts[i];
	}
	if (nbins == 0 || total == 0 || !isfinite(lo) || !isfinite(hi) || hi <= lo) {
		no_data(o, c, W, H);
		return;
	}
	/* whole counts on the axis: the top is a multiple of the ticks */
	int ticks = max >= 4 ? 4 : max >= 1 ? (int)max : 1;
	max = ceil(max / ticks) * ticks;
	if (isfinite(c->max) && c->max > 0)
		max = c->max;
	open_svg(o, c, W, H);
	y_grid(o, ml, W - mr, mt, ph, max, ticks, 0);
	double slot = pw / (double)nbins, step = (hi - lo) / (double)nbins;
	for (size_t i = 0; i < nbins; i++) {
		double h = ee_svg_scale((double)counts[i], max, ph);
		ee_out_raw(o, "<rect class=\"bar\"");
		num(o, "x", ml + slot * (double)i + 1);
		num(o, "y", mt + ph - h);
		num(o, "width", slot - 2 > 1 ? slot - 2 : 1);
		num(o, "height", h);
		ee_out_raw(o, "><title>");
		ee_out_num(o, lo + step * (double)i, 2);
		ee_out_raw(o, "\xe2\x80\x93");
		ee_out_num(o, lo + step * (double)(i + 1), 2);
		ee_out_fmt(o, ": %lu</title></rect>\n", counts[i]);
	}
	for (int i = 0; i <= 4; i++) {
		open_text(o, "tick", ml + pw * i / 4, H - mb + 18, "middle");
		ee_out_num(o, lo + (hi - lo) * i / 4, 2);
		ee_out_raw(o, "</text>\n");
	}
	for (size_t i = 0; i < nmarks; i++) {
		double x = ml + ee_svg_scale(marks[i].value - lo, hi - lo, pw);
		mark_line(o, &marks[i], i, x, mt, mt + ph, W);
	}
	ee_out_raw(o, "</svg>\n");
}

/* ---- trend ----------------------------------------------------------------- */

static int by_time(const void *a, const void *b)
{
	double x = ((const struct ee_svg_point *)a)->t, y = ((const struct ee_svg_point *)b)->t;
	return (x > y) - (x < y);
}

static void date_text(struct ee_out *o, double t)
{
	char s[32];
	struct tm tm;
	time_t tt = (time_t)t;

	if (t < 0 || t > 253402300799.0 || !gmtime_r(&tt, &tm) ||
	    strftime(s, sizeof(s), "%Y-%m-%d %H:%M", &tm) == 0)
		ee_out_raw(o, "?");
	else
		ee_out_raw(o, s);
}

/* The finite points, sorted by time (malloc'd; NULL when there are none
 * or memory is short: then o is marked failed). */
static struct ee_svg_point *usable_points(struct ee_out *o, const struct ee_svg_point *pts, size_t n,
                                          size_t *ret_n)
{
	struct ee_svg_point *p = n ? calloc(n, sizeof(*p)) : NULL;
	size_t m = 0;

	*ret_n = 0;
	if (n && !p) {
		o->failed = 1;
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		if (isfinite(pts[i].t) && isfinite(pts[i].value))
			p[m++] = pts[i];
	if (m == 0) {
		free(p);
		return NULL;
	}
	qsort(p, m, sizeof(*p), by_time);
	*ret_n = m;
	return p;
}

void ee_svg_trend(struct ee_out *o, const struct ee_svg_chart *c, const struct ee_svg_point *pts, size_t n)
{
	const double H = 240, ml = 48, mr = 16, mt = 16, mb = 40;
	int W = width_of(c);
	double pw = W - ml - mr, ph = H - mt - mb;
	size_t m;
	struct ee_svg_point *p = usable_points(o, pts, n, &m);

	if (!p) {
		no_data(o, c, W, H);
		return;
	}
	double t0 = p[0].t, t1 = p[m - 1].t, ymin = 0, ymax = 0;
	for (size_t i = 0; i < m; i++) {
		ymin = p[i].value < ymin ? p[i].value : ymin;
		ymax = p[i].value > ymax ? p[i].value : ymax;
	}
	if (isfinite(c->max) && c->max > ymin)
		ymax = c->max;
	if (ymax <= ymin)
		ymax = ymin + 1;
	open_svg(o, c, W, H);
	for (int i = 0; i <= 4; i++) {
		double v = ymin + (ymax - ymin) * i / 4, y = mt + ph - ph * i / 4;
		line(o, i ? "grid" : "axis", ml, y, W - mr, y);
		open_text(o, "tick", ml - 6, y + 4, "end");
		ee_out_num(o, v, 2);
		ee_out_raw(o, "</text>\n");
	}
	ee_out_raw(o, "<path class=\"trend-line\" d=\"");
	for (size_t i = 0; i < m; i++) {
		double x = t1 > t0 ? ml + ee_svg_scale(p[i].t - t0, t1 - t0, pw) : ml + pw / 2;
		double y = mt + ph - ee_svg_scale(p[i].value - ymin, ymax - ymin, ph);
		path_xy(o, i ? 'L' : 'M', x, y);
	}
	ee_out_raw(o, "\"/>\n");
	for (size_t i = 0; i < m; i++) {
		double x = t1 > t0 ? ml + ee_svg_scale(p[i].t - t0, t1 - t0, pw) : ml + pw / 2;
		double y = mt + ph - ee_svg_scale(p[i].value - ymin, ymax - ymin, ph);
		ee_out_raw(o, "<circle class=\"dot\" r=\"3.5\"");
		num(o, "cx", x);
		num(o, "cy", y);
		ee_out_raw(o, "><title>");
		date_text(o, p[i].t);
		ee_out_raw(o, ": ");
		ee_out_num(o, p[i].value, 3);
		ee_out_raw(o, "</title></circle>\n");
	}
	open_text(o, "tick", m > 1 ? ml : ml + pw / 2, H - mb + 18, m > 1 ? "start" : "middle");
	date_text(o, t0);
	ee_out_raw(o, "</text>\n");
	if (m > 1) {
		open_text(o, "tick", W - mr, H - mb + 18, "end");
		date_text(o, t1);
		ee_out_raw(o, "</text>\n");
	}
	free(p);
	ee_out_raw(o, "</svg>\n");
}
