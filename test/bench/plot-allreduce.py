#!/usr/bin/env python3
"""Draws the allreduce lines of cclc-allreduce-bench's CSV as an SVG: latency
and bus bandwidth against message size, one line per library, and cclc's
speedup over Open MPI and over the faster Gloo algorithm, with the goals
marked; all axes are logarithmic.

    plot-allreduce.py allreduce-bench.csv docs/performance-allreduce.svg

Written with the standard library only, so that drawing the figures needs
nothing beyond what building cclc needs.
"""
import csv
import math
import sys
from html import escape

COLORS = ["#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"]
PANEL_WIDTH, PANEL_HEIGHT = 360, 300
MARGIN_LEFT, MARGIN_TOP, MARGIN_BOTTOM = 70, 50, 60
GAP = 90
LEGEND_HEIGHT = 30


def read_figures(path):
    """Returns the comment lines and, per library, its allreduce's (bytes,
    time_us, busbw) rows; a CSV from before the collective column holds
    allreduce alone."""
    with open(path) as f:
        lines = f.read().splitlines()
    comments = [line[1:].strip() for line in lines if line.startswith("#")]
    series = {}
    for row in csv.DictReader(line for line in lines if not line.startswith("#")):
        if row.get("collective", "allreduce") != "allreduce":
            continue
        series.setdefault(row["library"], []).append(
            (int(row["bytes"]), float(row["time_us"]), float(row["busbw_gbs"])))
    return comments, series


def format_bytes(value):
    for unit in ["B", "KiB", "MiB", "GiB"]:
        if value < 1024:
            return f"{value} {unit}"
        value //= 1024
    return f"{value} TiB"


def format_decade(exponent):
    if -3 <= exponent <= 5:
        return f"{10.0 ** exponent:f}".rstrip("0").rstrip(".")
    return f"1e{exponent}"


def speedups(series, over):
    """cclc's speedup over the libraries `over` accepts, per size: the best of
    their times over cclc's."""
    cclc = {size: time for size, time, _ in series.get("cclc", [])}
    best = {}
    for library, rows in series.items():
        if over(library):
            for size, time, _ in rows:
                best[size] = min(best.get(size, time), time)
    return [(size, best[size] / cclc[size]) for size in sorted(cclc) if size in best]


class Panel:
    """One log-log chart at (left, top) of the drawing."""

    def __init__(self, left, top, x_range, y_values, title, y_label):
        self.left, self.top = left, top
        self.x_low, self.x_high = (math.log2(v) for v in x_range)
        positive = [v for v in y_values if v > 0]
        self.y_low = math.floor(math.log10(min(positive)))
        self.y_high = math.ceil(math.log10(max(positive)))
        if self.y_high == self.y_low:
            self.y_high += 1
        self.title, self.y_label = title, y_label

    def x(self, value):
        span = max(self.x_high - self.x_low, 1)
        return self.left + (math.log2(value) - self.x_low) / span * PANEL_WIDTH

    def y(self, value):
        fraction = (math.log10(max(value, 10.0 ** self.y_low)) - self.y_low) / (
            self.y_high - self.y_low)
        return self.top + PANEL_HEIGHT - fraction * PANEL_HEIGHT

    def frame(self, sizes):
        out = [f'<rect x="{self.left}" y="{self.top}" width="{PANEL_WIDTH}" '
               f'height="{PANEL_HEIGHT}" fill="none" stroke="#444"/>',
               f'<text x="{self.left + PANEL_WIDTH / 2}" y="{self.top - 12}" '
               f'text-anchor="middle" font-weight="bold">{escape(self.title)}</text>']
        for exponent in range(self.y_low, self.y_high + 1):
            y = self.y(10.0 ** exponent)
            out.append(f'<line x1="{self.left}" y1="{y:.1f}" x2="{self.left + PANEL_WIDTH}" '
                       f'y2="{y:.1f}" stroke="#ddd"/>')
            out.append(f'<text x="{self.left - 6}" y="{y + 4:.1f}" text-anchor="end">'
                       f'{format_decade(exponent)}</text>')
        # Every other size keeps the labels of a x4 sweep apart.
        for size in sizes[::2]:
            x = self.x(size)
            out.append(f'<line x1="{x:.1f}" y1="{self.top}" x2="{x:.1f}" '
                       f'y2="{self.top + PANEL_HEIGHT}" stroke="#eee"/>')
            out.append(f'<text x="{x:.1f}" y="{self.top + PANEL_HEIGHT + 16}" '
                       f'text-anchor="middle">{format_bytes(size)}</text>')
        out.append(f'<text x="{self.left + PANEL_WIDTH / 2}" '
                   f'y="{self.top + PANEL_HEIGHT + 38}" text-anchor="middle">message size</text>')
        middle = self.top + PANEL_HEIGHT / 2
        out.append(f'<text x="{self.left - 52}" y="{middle}" text-anchor="middle" '
                   f'transform="rotate(-90 {self.left - 52} {middle})">'
                   f'{escape(self.y_label)}</text>')
        return out

    def line(self, points, color):
        path = " ".join(f"{self.x(x):.1f},{self.y(y):.1f}" for x, y in points if y > 0)
        dots = [f'<circle cx="{self.x(x):.1f}" cy="{self.y(y):.1f}" r="2.5" fill="{color}"/>'
                for x, y in points if y > 0]
        return [f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"/>',
                *dots]

    def mark(self, value, text, color, from_size):
        """A dashed horizontal line at value, from from_size to the right edge."""
        x, y = self.x(from_size), self.y(value)
        return [f'<line x1="{x:.1f}" y1="{y:.1f}" x2="{self.left + PANEL_WIDTH}" y2="{y:.1f}" '
                f'stroke="{color}" stroke-dasharray="6 4"/>',
                f'<text x="{x + 4:.1f}" y="{y - 4:.1f}" fill="{color}">{escape(text)}</text>']


def draw(comments, series):
    sizes = sorted({size for rows in series.values() for size, _, _ in rows})
    times = [t for rows in series.values() for _, t, _ in rows]
    busbws = [b for rows in series.values() for _, _, b in rows]
    over_mpi = speedups(series, lambda library: library == "openmpi")
    over_gloo = speedups(series, lambda library: library.startswith("gloo"))
    ratios = [r for _, r in over_mpi + over_gloo] + [1.0, 2.0]
    x_range = (sizes[0], sizes[-1])
    step = PANEL_WIDTH + GAP
    latency = Panel(MARGIN_LEFT, MARGIN_TOP, x_range, times, "Latency (lower is better)",
                    "time per allreduce (us)")
    bandwidth = Panel(MARGIN_LEFT + step, MARGIN_TOP, x_range, busbws,
                      "Bus bandwidth (higher is better)", "busbw (GB/s)")
    speedup = Panel(MARGIN_LEFT + 2 * step, MARGIN_TOP, x_range, ratios,
                    "cclc speedup (higher is better)", "other's time / cclc's time")
    width = MARGIN_LEFT + 3 * PANEL_WIDTH + 2 * GAP + 20
    height = MARGIN_TOP + PANEL_HEIGHT + MARGIN_BOTTOM + LEGEND_HEIGHT + 20
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{width / 2}" y="18" text-anchor="middle" font-size="14">'
           f'f32 sum allreduce: {escape("; ".join(comments))}</text>']
    for panel in (latency, bandwidth, speedup):
        out += panel.frame(sizes)
    legend_y = MARGIN_TOP + PANEL_HEIGHT + MARGIN_BOTTOM + 10
    for index, (library, rows) in enumerate(series.items()):
        color = COLORS[index % len(COLORS)]
        out += latency.line([(size, time) for size, time, _ in rows], color)
        out += bandwidth.line([(size, busbw) for size, _, busbw in rows], color)
        x = MARGIN_LEFT + index * 200
        out.append(f'<line x1="{x}" y1="{legend_y}" x2="{x + 24}" y2="{legend_y}" '
                   f'stroke="{color}" stroke-width="3"/>')
        out.append(f'<text x="{x + 30}" y="{legend_y + 4}">{escape(library)}</text>')
    # The goals: at least Open MPI everywhere, at least twice Gloo from 1 MiB.
    out += speedup.mark(1.0, "goal over Open MPI", "#555", sizes[0])
    out += speedup.mark(2.0, "goal over Gloo", "#555", max(sizes[0], 1 << 20))
    for index, (label, points, color) in enumerate((("over Open MPI", over_mpi, "#1f77b4"),
                                                    ("over faster Gloo", over_gloo, "#2ca02c"))):
        out += speedup.line(points, color)
        x = speedup.left + index * 160
        out.append(f'<line x1="{x}" y1="{legend_y}" x2="{x + 24}" y2="{legend_y}" '
                   f'stroke="{color}" stroke-width="3"/>')
        out.append(f'<text x="{x + 30}" y="{legend_y + 4}">{label}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: plot-allreduce.py FIGURES.csv OUT.svg")
    comments, series = read_figures(sys.argv[1])
    if not series:
        sys.exit(f"plot-allreduce.py: {sys.argv[1]} holds no figures")
    with open(sys.argv[2], "w") as f:
        f.write(draw(comments, series))
    return 0


if __name__ == "__main__":
    sys.exit(main())
