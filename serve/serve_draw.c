/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * serve_draw.c: what the collector's pages draw (serve_page.c): times in
 * UTC ISO 8601 with their age, names percent-encoded for links, and the
 * planned-against-measured plot as SVG drawn on the server (axes from 0,
 * ticks at 1, 2 or 5 times a power of ten, axis labels, the parity line
 * and a legend), so the page needs no script (its Content-Security-Policy
 * allows none).
 */
#include "config.h"

#include "serve_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

void serve_draw_time(struct serve_buf *b, long long t, long long now)
{
	struct tm tm;
	time_t tt = (time_t)t;
	char iso[32];
	long long age = now - t;

	if (t <= 0 || gmtime_r(&tt, &tm) == NULL) {
		serve_buf_add(b, "<span class=\"age\">never</span>");
		return;
	}
	strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%M:%SZ", &tm);
	serve_buf_add(b, "<time datetime=\"%s\">%s</time> <span class=\"age\">(", iso, iso);
	if (age < 0)
		serve_buf_add(b, "in %lld s", -age);
	else if (age < 120)
		serve_buf_add(b, "%lld s ago", age);
	else if (age < 120 * 60)
		serve_buf_add(b, "%lld min ago", age / 60);
	else if (age < 48 * 3600)
		serve_buf_add(b, "%lld h ago", age / 3600);
	else
		serve_buf_add(b, "%lld d ago", age / 86400);
	serve_buf_add(b, ")</span>");
}

void serve_buf_url(struct serve_buf *b, const char *s)
{
	for (; s != NULL && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    strchr("-._~", c) != NULL)
			serve_buf_add(b, "%c", c);
		else
			serve_buf_add(b, "%%%02X", c);
	}
}

/* ------------------------------------------------------------------------
 * The plot
 * ---------------------------------------------------------------------- */

/* Plot area: left margin, top margin, side (square: one scale for both
 * axes, so that the parity line is the diagonal). */
#define PLOT_LEFT 64.0
#define PLOT_TOP 16.0
#define PLOT_SIDE 320.0

static const char *const point_colour[] = {"#1e88e5", "#e53935", "#9e9e9e"};

/* The tick step for an axis from 0 to max: 1, 2 or 5 times a power of ten,
 * giving 4 to 10 ticks. */
static double tick_step(double max)
{
	double raw = max / 5.0, p = pow(10.0, floor(log10(raw))), m = raw / p;

	return (m < 1.5 ? 1.0 : m < 3.5 ? 2.0 : m < 7.5 ? 5.0 : 10.0) * p;
}

void serve_draw_plot(struct serve_buf *b, const struct serve_point *p, size_t n,
		     const char *context_label)
{
	double max = 0, step, w = PLOT_LEFT + PLOT_SIDE + 24, h = PLOT_TOP + PLOT_SIDE + 56;
	size_t count[3] = {0, 0, 0};
	double y0 = PLOT_TOP + PLOT_SIDE;

	for (size_t i = 0; i < n; i++)
		if (isfinite(p[i].planned) && isfinite(p[i].measured))
			max = fmax(max, fmax(p[i].planned, p[i].measured));
	if (!(max > 0))
		max = 1;
	step = tick_step(max);
	max = ceil(max * 1.05 / step) * step;
	serve_buf_add(b,
		      "<svg id=\"step-plot\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
		      "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" "
		      "font-size=\"11\">\n"
		      "<rect class=\"frame\" x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" "
		      "fill=\"#fff\" stroke=\"#555\"/>\n<g class=\"ticks\">\n",
		      w, h, w, h, PLOT_LEFT, PLOT_TOP, PLOT_SIDE, PLOT_SIDE);
	for (int k = 0; k * step <= max * (1 + 1e-9); k++) {
		double v = k * step, at = v / max * PLOT_SIDE;

		/* x tick and label, y tick and label, a light grid line each */
		serve_buf_add(
			b,
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\"/>"
			"<text class=\"xtick\" x=\"%.1f\" y=\"%.1f\" "
			"text-anchor=\"middle\">%g</text>"
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\"/>"
			"<text class=\"ytick\" x=\"%.1f\" y=\"%.1f\" "
			"text-anchor=\"end\">%g</text>",
			PLOT_LEFT + at, y0, PLOT_LEFT + at, y0 + 5, PLOT_LEFT + at, y0 + 18, v,
			PLOT_LEFT - 5, y0 - at, PLOT_LEFT, y0 - at, PLOT_LEFT - 8, y0 - at + 4, v);
		if (k > 0)
			serve_buf_add(b,
				      "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" "
				      "stroke=\"#eee\"/><line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" "
				      "y2=\"%.1f\" stroke=\"#eee\"/>",
				      PLOT_LEFT + at, PLOT_TOP, PLOT_LEFT + at, y0 - 1,
				      PLOT_LEFT + 1, y0 - at, PLOT_LEFT + PLOT_SIDE, y0 - at);
		serve_buf_add(b, "\n");
	}
	serve_buf_add(b,
		      "</g>\n<text class=\"xlabel\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\" "
		      "font-size=\"12\">planned step time (s)</text>\n"
		      "<text class=\"ylabel\" transform=\"translate(16 %.0f) rotate(-90)\" "
		      "text-anchor=\"middle\" font-size=\"12\">measured step time (s)</text>\n"
		      "<line class=\"parity\" x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" "
		      "stroke=\"#777\" stroke-dasharray=\"4\"/>\n",
		      PLOT_LEFT + PLOT_SIDE / 2, y0 + 38, PLOT_TOP + PLOT_SIDE / 2, PLOT_LEFT, y0,
		      PLOT_LEFT + PLOT_SIDE, PLOT_TOP);
	/* the context first, under this job's points */
	for (int kind = SERVE_POINT_CONTEXT; kind >= SERVE_POINT_FINE; kind--)
		for (size_t i = 0; i < n; i++) {
			double x = p[i].planned, y = p[i].measured;

			if ((int)p[i].kind != kind || !(x > 0) || !(y > 0) || !isfinite(x) ||
			    !isfinite(y))
				continue;
			count[kind]++;
			serve_buf_add(b,
				      "<circle class=\"point%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" "
				      "fill=\"%s\" fill-opacity=\"0.8\"><title>planned %.4g s, "
				      "measured %.4g s</title></circle>\n",
				      kind == SERVE_POINT_CONTEXT ? " context" : "",
				      PLOT_LEFT + x / max * PLOT_SIDE, y0 - y / max * PLOT_SIDE,
				      point_colour[kind], x, y);
		}
	/* the legend, bottom right inside the frame: below the diagonal, where
	 * a step measured faster than planned would be (seldom) */
	{
		const char *label[3] = {"measured within 20% of planned",
					"measured over 20% slower", context_label};
		int rows = context_label != NULL ? 4 : 3;
		double lx = PLOT_LEFT + PLOT_SIDE - 244, ly = y0 - 8 - (rows * 16 + 8);

		serve_buf_add(
			b,
			"<g class=\"legend\"><rect x=\"%.0f\" y=\"%.0f\" width=\"236\" "
			"height=\"%d\" fill=\"#fff\" fill-opacity=\"0.9\" stroke=\"#bbb\"/>\n",
			lx, ly, rows * 16 + 8);
		for (int k = 0; k < rows - 1; k++)
			serve_buf_add(b,
				      "<circle cx=\"%.0f\" cy=\"%.0f\" r=\"3.5\" fill=\"%s\"/>"
				      "<text x=\"%.0f\" y=\"%.0f\">%s (%zu)</text>\n",
				      lx + 10, ly + 12 + 16 * k, point_colour[k], lx + 20,
				      ly + 16 + 16 * k, label[k], count[k]);
		serve_buf_add(
			b,
			"<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"#777\" "
			"stroke-dasharray=\"4\"/><text x=\"%.0f\" y=\"%.0f\">measured = "
			"planned</text></g>\n",
			lx + 4, ly + 12 + 16 * (rows - 1), lx + 16, ly + 12 + 16 * (rows - 1),
			lx + 20, ly + 16 + 16 * (rows - 1));
	}
	serve_buf_add(b, "</svg>\n");
}
