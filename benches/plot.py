#!/usr/bin/env python3
"""Draw the SVG plots of BENCHMARKS.md from recorded benchmark results.

Usage:
    python3 -m venv ~/.cache/skillreg/plot-venv
    ~/.cache/skillreg/plot-venv/bin/pip install -r benches/requirements-plot.txt
    ~/.cache/skillreg/plot-venv/bin/python benches/plot.py --results benches/results --out benches/plots

Inputs, JSON files in the results directory, read by name (any subset may be present):
  scale-1k.json, scale-100k.json, scale-1m.json
      `benches/e2e/whole_process.py --json`; the catalog size is read from `storage.skills`.
  peers-1k.json, peers-corpus.json
      `benches/e2e/run.py --out`: throughput of skillreg and its peers, per method and era.

Outputs, in the output directory:
  latency-by-scale.svg   p50 (solid) and p99 (dashed) latency per method against catalog size
  throughput-1k.svg, throughput-corpus.svg
                         req/s per method and server, one panel per protocol era

The SVGs are reproducible: the same results give the same bytes. Exit status: 0 when done,
1 when no recognised results file is present, 2 when matplotlib is not installed.
"""
import argparse
import json
import sys
from pathlib import Path

try:
    import matplotlib
except ImportError:
    print("plot.py needs matplotlib; install it with:\n"
          "  python3 -m venv ~/.cache/skillreg/plot-venv && "
          "~/.cache/skillreg/plot-venv/bin/pip install -r benches/requirements-plot.txt\n"
          "then run it with ~/.cache/skillreg/plot-venv/bin/python", file=sys.stderr)
    sys.exit(2)

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

plt.rcParams.update({"svg.hashsalt": "skillreg", "svg.fonttype": "none", "font.size": 9})

SCALE_FILES = ("scale-1k.json", "scale-100k.json", "scale-1m.json")
PEER_FILES = {"peers-1k.json": "throughput-1k.svg", "peers-corpus.json": "throughput-corpus.svg"}
LATENCY_METHODS = ("skills/get", "resources/read SKILL.md", "resources/read 200 KB binary",
                   "completion/complete", "tools/call search_skills", "skills/list (deep page)")
METHODS = (("list", "skills/list (page 1)"), ("list_deep", "skills/list (deep page)"),
           ("get", "skills/get"), ("read_md", "resources/read SKILL.md"),
           ("read_bin", "resources/read binary"), ("read_ref", "resources/read reference text"),
           ("dir", "resources/directory/read"),
           ("complete", "completion/complete"), ("search", "tools/call search_skills"))
ERAS = ("2026-07-28", "2025-11-25")
SERVERS = (("skillreg", "skillreg"), ("skillreg-pg", "skillreg on PostgreSQL"),
           ("rmcp", "rmcp 3.11.0 SkillCatalog"), ("ts", "TS SDK 2.4.0 reference"),
           ("fastmcp", "FastMCP 4.1.6"))
FOOTNOTE = "skills/list: rmcp answers the whole catalog in one page, the others 100 entries per page"
COLOURS = plt.rcParams["axes.prop_cycle"].by_key()["color"]


def count_label(n: float) -> str:
    """1000 -> "1k", 100000 -> "100k", 1000000 -> "1M"."""
    for size, suffix in ((1_000_000, "M"), (1_000, "k")):
        if n >= size:
            return f"{n / size:.3g}{suffix}"
    return f"{n:g}"


def latency_by_scale(runs: list[dict]):
    """One line per method and percentile against the number of skills (log x axis)."""
    runs = sorted(runs, key=lambda r: r["storage"]["skills"])
    xs = [r["storage"]["skills"] for r in runs]
    fig, ax = plt.subplots(figsize=(9, 5.5))
    handles = []
    for colour, method in zip(COLOURS, LATENCY_METHODS):
        points = [(x, r["latency_ms"][method]) for x, r in zip(xs, runs) if method in r["latency_ms"]]
        if not points:
            continue
        px = [x for x, _ in points]
        ax.plot(px, [v["p50"] for _, v in points], "o-", color=colour)
        ax.plot(px, [v["p99"] for _, v in points], "o--", color=colour, markerfacecolor="none")
        handles.append(Line2D([], [], color=colour, label=method))
    handles += [Line2D([], [], color="black", label="p50"),
                Line2D([], [], color="black", linestyle="--", label="p99")]
    ax.set_xscale("log")
    ax.set_xlim(xs[0] / 2, xs[-1] * 2)
    ax.set_xticks(xs, [count_label(x) for x in xs])
    ax.minorticks_off()
    ax.set_ylim(bottom=0)
    ax.set_xlabel("skills in the catalog")
    ax.set_ylabel("latency (ms)")
    ax.grid(True, alpha=0.3)
    ax.legend(handles=handles, loc="upper left", fontsize=8)
    ax.set_title("skillreg over HTTP: latency by catalog size (sequential requests)")
    fig.tight_layout()
    return fig


def throughput(results: dict):
    """Grouped horizontal bars: req/s per method (groups) and server (bars), a panel per era."""
    servers = [(key, title) for key, title in SERVERS if key in results["servers"]]
    cells = {key: results["servers"][key].get("cells", {}) for key, _ in servers}
    eras = [e for e in ERAS if any(k.endswith("|" + e) for c in cells.values() for k in c)] or list(ERAS)
    # Only the methods this run measured.
    methods = [(m, label) for m, label in METHODS
               if any(c.get("status") == "ok" for cs in cells.values() for k, c in cs.items()
                      if k.split("|")[0] == m)]
    fig, axes = plt.subplots(1, len(eras), figsize=(13, 7), sharex=True, sharey=True, squeeze=False)
    height = 0.8 / max(len(servers), 1)
    rates = [c["rps"] for cs in cells.values() for c in cs.values() if c.get("status") == "ok"]
    top = max(rates, default=1000) * 4
    for ax, era in zip(axes[0], eras):
        for j, (key, _) in enumerate(servers):
            ys, rps = [], []
            for i, (method, _) in enumerate(methods):
                cell = cells[key].get(f"{method}|{era}", {})
                if cell.get("status") == "ok":
                    ys.append(i + (j - (len(servers) - 1) / 2) * height)
                    rps.append(cell["rps"])
            ax.barh(ys, rps, height=height, color=COLOURS[j % len(COLOURS)])
            for y, v in zip(ys, rps):
                ax.text(v * 1.08, y, f"{v:,.0f}", va="center", fontsize=6)
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
        ax.set_xlim(right=top)
        ax.set_yticks(range(len(methods)), [label for _, label in methods])
        ax.set_ylim(len(methods) - 0.5, -0.5)
        ax.grid(True, axis="x", which="both", alpha=0.3)
        ax.set_xlabel("requests per second (log scale)")
        ax.set_title(f"protocol {era}")
    fig.legend(handles=[Patch(color=COLOURS[j % len(COLOURS)], label=title) for j, (_, title) in enumerate(servers)],
               loc="lower center", ncol=len(servers), bbox_to_anchor=(0.5, 0.035), frameon=False)
    connections = results.get("config", {}).get("connections", 16)
    fig.suptitle(f"skillreg and peers: throughput with a catalog of {results['catalog']['skills']:,} skills "
                 f"(req/s, {connections} connections)")
    fig.text(0.01, 0.01, FOOTNOTE, fontsize=8, style="italic")
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", type=Path, default=Path("benches/results"))
    ap.add_argument("--out", type=Path, default=Path("benches/plots"))
    args = ap.parse_args()
    load = lambda name: json.loads((args.results / name).read_text())
    figures = []
    scale = [load(name) for name in SCALE_FILES if (args.results / name).is_file()]
    if scale:
        figures.append(("latency-by-scale.svg", latency_by_scale(scale)))
    for name, svg in PEER_FILES.items():
        if (args.results / name).is_file():
            figures.append((svg, throughput(load(name))))
    if not figures:
        known = ", ".join(SCALE_FILES + tuple(PEER_FILES))
        print(f"plot.py: no results file in {args.results} (looked for {known})", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    for svg, fig in figures:
        path = args.out / svg
        fig.savefig(path, format="svg", metadata={"Date": None})
        plt.close(fig)
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
