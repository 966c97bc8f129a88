"""Plots of a run's report for a notebook, on matplotlib (Debian: python3-matplotlib; pip:
ablationd[plot]). They draw the report's own numbers (Client.report: report.proto's Report, the
CLI's model), never numbers of their own.

    report = daemon.report(summary.run_id)
    ablationd.plot.ladder(report)                 # a ladder's rungs, their intervals, cuBLAS
    ablationd.plot.compare(daemon.report(41), daemon.report(42))

Each returns the matplotlib Figure (drawn into `ax` when given)."""

import textwrap

from google.protobuf import json_format

from ablationd._proto import report_pb2, words_to_names

_LADDER = report_pb2.SECTION_LAYOUT_LADDER
_OK = report_pb2.ROW_STATUS_OK


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise ImportError("ablationd.plot needs matplotlib (apt install python3-matplotlib, or "
                          "pip install 'ablationd[plot]')") from e
    return plt


def _as_report(report):
    """A Report from a Report, or from Client.report_json's dict."""
    if isinstance(report, report_pb2.Report):
        return report
    if isinstance(report, dict):
        return json_format.ParseDict(words_to_names(dict(report), report_pb2.Report.DESCRIPTOR),
                                     report_pb2.Report(), ignore_unknown_fields=True)
    raise TypeError(f"a report is a report_pb2.Report (Client.report) or Client.report_json's "
                    f"dict, not {type(report).__name__}")


def _measured_rungs(section):
    return sum(1 for r in section.rows if not r.baseline and r.status == _OK)


def _section(report, section):
    """The ladder section named `section`, or the ladder with the most measured rungs (the one the
    run swept; the first of those that tie)."""
    ladders = [s for s in report.sections if s.layout == _LADDER]
    if section is not None:
        for s in ladders:
            if s.id == section:
                return s
        raise ValueError(f"the report of run {report.run.id} has no ladder section "
                         f"{section!r}; it has {', '.join(s.id for s in ladders) or 'none'}")
    best = max(ladders, key=_measured_rungs, default=None)
    if best is None or _measured_rungs(best) == 0:
        raise ValueError(f"the report of run {report.run.id} has no ladder with a measured rung")
    return best


def _rungs(section):
    """(rung rows, the cuBLAS row or None): the rungs in the preset's order."""
    rungs = [r for r in section.rows if not r.baseline]
    cublas = next((r for r in section.rows if r.baseline and r.status == _OK), None)
    return rungs, cublas


def _whisker(row):
    """(below, above) the bar: the row's 95% TFLOPS interval (0, 0 without one)."""
    if row.status != _OK or not row.HasField("tflops_interval"):
        return 0.0, 0.0
    i = row.tflops_interval
    return max(0.0, row.tflops - min(i.low, i.high)), max(0.0, max(i.low, i.high) - row.tflops)


def _axes(ax, width):
    plt = _pyplot()
    if ax is not None:
        return ax.figure, ax
    fig, ax = plt.subplots(figsize=(max(8.0, 0.55 * width + 4), 4.5), layout="constrained")
    return fig, ax


def _finish(ax, title):
    """The title (wrapped) and the legend beside the plot, where it hides no bar."""
    ax.set_title("\n".join(textwrap.wrap(title, 70)), fontsize=11)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, frameon=False)


def ladder(report, section=None, ax=None):
    """One ladder of a report: a bar per rung (its TFLOPS over the run's rounds; missing rungs
    have no bar and say so), each with its 95% interval as a whisker, and cuBLAS of the same
    dtype and shape as a dashed reference line. section: the preset's id ("ladder-b"; default:
    the ladder with the most measured rungs, the one the run swept)."""
    report = _as_report(report)
    s = _section(report, section)
    rungs, cublas = _rungs(s)
    fig, ax = _axes(ax, len(rungs))
    x = list(range(len(rungs)))
    heights = [r.tflops if r.status == _OK else 0.0 for r in rungs]
    errors = list(zip(*[_whisker(r) for r in rungs])) or [[], []]
    ax.bar(x, heights, yerr=errors, capsize=3, color="#4878a8", ecolor="#222222",
           label="rung (95% interval)")
    for i, r in enumerate(rungs):
        if r.status != _OK:
            ax.annotate(report_pb2.RowStatus.Name(r.status)[len("ROW_STATUS_"):].lower(),
                        (i, 0), textcoords="offset points", xytext=(0, 4), ha="center",
                        fontsize=9, color="#888888", rotation=90)
    if cublas is not None:
        ax.axhline(cublas.tflops, color="#888888", linestyle="--",
                   label=f"{cublas.variant} {cublas.tflops:.1f}")
    ax.set_xticks(x, [r.rung for r in rungs])
    ax.set_ylabel("TFLOPS")
    shape = rungs[0].shape if rungs else None
    where = f" at {shape.m}x{shape.n}x{shape.k}" if shape else ""
    _finish(ax, f"run {report.run.id}: {s.title or s.id}{where}")
    return fig


def compare(a, b, section=None, ax=None, labels=None):
    """The same ladder of two runs' reports side by side: per rung a bar for each run with its
    95% interval, each run's cuBLAS as a dashed line of its colour. section: as for ladder()
    (default: of the ladders both measured, the one with the most rungs in `a`). labels: the two
    legends (default "run N")."""
    a, b = _as_report(a), _as_report(b)
    if section is None:
        measured_b = {s.id for s in b.sections if s.layout == _LADDER and _measured_rungs(s)}
        common = [s for s in a.sections
                  if s.layout == _LADDER and _measured_rungs(s) and s.id in measured_b]
        if not common:
            raise ValueError(f"runs {a.run.id} and {b.run.id} measured no ladder in common")
        section = max(common, key=_measured_rungs).id
    sa, sb = _section(a, section), _section(b, section)
    (rungs_a, cublas_a), (rungs_b, cublas_b) = _rungs(sa), _rungs(sb)
    names = [r.rung for r in rungs_a] + [r.rung for r in rungs_b
                                          if r.rung not in {x.rung for x in rungs_a}]
    fig, ax = _axes(ax, 2 * len(names))
    labels = labels or (f"run {a.run.id}", f"run {b.run.id}")
    width = 0.4
    for offset, rungs, cublas, colour, label in ((-width / 2, rungs_a, cublas_a, "#4878a8",
                                                  labels[0]),
                                                 (width / 2, rungs_b, cublas_b, "#d08030",
                                                  labels[1])):
        by_rung = {r.rung: r for r in rungs}
        rows = [by_rung.get(n) for n in names]
        heights = [r.tflops if r is not None and r.status == _OK else 0.0 for r in rows]
        errors = list(zip(*[_whisker(r) if r is not None else (0.0, 0.0) for r in rows]))
        ax.bar([i + offset for i in range(len(names))], heights, width, yerr=errors or None,
               capsize=3, color=colour, ecolor="#222222", label=label)
        if cublas is not None:
            ax.axhline(cublas.tflops, color=colour, linestyle="--", linewidth=1,
                       label=f"{label}: {cublas.variant} {cublas.tflops:.1f}")
    ax.set_xticks(range(len(names)), names)
    ax.set_ylabel("TFLOPS")
    _finish(ax, f"{sa.title or sa.id}: {labels[0]} and {labels[1]}")
    return fig
