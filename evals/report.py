"""Render runs for people and machines: a console table, a JSON document, and a Markdown report
(``report.md``) with a PNG chart (``ablation.png``) and every failed case with what was missing.

Only golden-file text (questions, patterns, doc ids, section names) goes into the report files, never
answer text: answers quote the third-party corpus, which must not end up in committed files.

Deliberately left out: HTML output and history across runs (diff two JSON outputs for that).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evals.metrics import CaseScore
from evals.runner import SystemRun
from evals.summary import STAGES, Summary, breakdown, by_answer_type, by_direction

DEFAULT_SYSTEM = "hybrid (default)"
BASELINE_SYSTEM = "langchain-baseline"

# (Summary field, label) in display order.
METRICS: tuple[tuple[str, str], ...] = (
    ("accuracy", "answer accuracy (what is read first)"),
    ("accuracy_whole", "  key facts anywhere in the answer"),
    ("value_line_precision", "value-line precision"),
    ("value_line_coverage", "value-line coverage (answerable)"),
    ("median_answer_chars", "median answer length (chars)"),
    ("leads_repeating", "leads that show a line twice"),
    ("leads_announcing_nothing", "leads that announce what they do not show"),
    ("accuracy_ja", "  accuracy (ja)"),
    ("accuracy_en", "  accuracy (en)"),
    ("context_recall", "key facts in contexts"),
    ("hit1", "hit@1"),
    ("hit3", "hit@3"),
    ("hit5", "hit@5"),
    ("mrr", "MRR"),
    ("ndcg10", "nDCG@10"),
    ("section_hit", "section hit"),
    ("citation_precision", "citation precision"),
    ("citation_recall", "citation recall"),
    ("refusal_precision", "refusal precision"),
    ("refusal_recall", "refusal recall"),
    ("injection_resistance", "injection resistance"),
    ("verdict_accuracy", "verdict as expected (selection)"),
    ("verdict_on_factual", "verdict lines on non-selection"),
    ("decisions_on_factual", "verdicts or situation requests on non-selection"),
    ("followup_accuracy", "follow-up accuracy"),
    ("followup_selection_accuracy", "selection follow-ups right (verdict too)"),
    ("followup_factual_accuracy", "factual follow-ups right"),
    ("situation_accuracy", "situation read right (selection)"),
    ("not_stated_recall", "near-miss answered 'not stated'"),
    ("not_stated_precision", "'not stated' precision"),
    ("answerable_refused", "answerable but refused"),
    ("token_f1", "token F1 (ja-aware)"),
    ("latency_p50_ms", "latency p50"),
    ("latency_p95_ms", "latency p95"),
    ("errors", "errors"),
)
CHART_METRICS: tuple[str, ...] = (
    "accuracy", "hit1", "hit5", "mrr", "ndcg10", "section_hit",
    "citation_precision", "citation_recall", "refusal_recall", "token_f1",
)  # fmt: skip
RETRIEVAL_METRICS: tuple[str, ...] = ("hit1", "hit3", "hit5", "mrr", "ndcg10")
TARGETS: dict[str, float] = {"accuracy": 0.90, "hit5": 0.95, "citation_precision": 0.90, "refusal_recall": 1.0}
LABELS = dict(METRICS)


def fmt(key: str, value: float | int | None) -> str:
    if value is None:
        return "n/a"
    if key.endswith("_ms"):
        return f"{value:,.0f} ms"
    if key in (
        "errors", "verdict_on_factual", "decisions_on_factual", "answerable_refused", "median_answer_chars",
        "leads_repeating", "leads_announcing_nothing",
    ):  # fmt: skip
        return str(int(value))
    return f"{value:.3f}"


def primary(runs: Sequence[SystemRun]) -> SystemRun:
    """The run the gate and the breakdown are about: the default system, else the first."""
    return next((r for r in runs if r.name == DEFAULT_SYSTEM), runs[0])


def _rows(runs: Sequence[SystemRun]) -> list[list[str]]:
    rows = [["metric", *(r.name for r in runs)]]
    rows.append(["cases", *(str(r.summary.cases) for r in runs)])
    for key, label in METRICS:
        rows.append([label, *(with_interval(key, r.summary) for r in runs)])
    return rows


def with_interval(key: str, summary: Summary) -> str:
    """A figure with its 95 % bootstrap interval when the summary has one ("0.812 [0.76, 0.86]")."""
    shown = fmt(key, getattr(summary, key))
    ci = summary.intervals.get(key)
    return f"{shown} [{ci[0]:.2f}, {ci[1]:.2f}]" if ci is not None and shown != "n/a" else shown


def console_table(runs: Sequence[SystemRun]) -> str:
    """Metrics as rows, systems as columns (reads well for one system and for six)."""
    rows = _rows(runs)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for n, row in enumerate(rows):
        cells = [row[0].ljust(widths[0]), *(c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True))]
        lines.append("  ".join(cells))
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def to_json(runs: Sequence[SystemRun], golden: Path) -> dict[str, Any]:
    return {
        "golden": str(golden),
        "generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "systems": [
            {
                "name": r.name,
                "note": r.note,
                "seconds": r.seconds,
                "summary": r.summary.model_dump(),
                "by_direction": by_direction(r.scores),
                "by_answer_type": by_answer_type(r.scores),
                "failed": [s.id for s in r.failed],
                "cases": [s.model_dump() for s in r.scores],
            }
            for r in runs
        ],
    }


def target_checks(runs: Sequence[SystemRun]) -> list[tuple[str, bool]]:
    """The issue's targets for the default system, as (description, met) pairs."""
    main = primary(runs)
    checks: list[tuple[str, bool]] = []
    for key, target in TARGETS.items():
        value = getattr(main.summary, key)
        checks.append((f"{LABELS[key]} ≥ {target:.2f} (is {fmt(key, value)})", value is not None and value >= target))
    baseline = next((r for r in runs if r.name == BASELINE_SYSTEM), None)
    if baseline is not None and baseline is not main:
        for key in RETRIEVAL_METRICS:
            ours, theirs = getattr(main.summary, key), getattr(baseline.summary, key)
            met = ours is not None and theirs is not None and ours > theirs
            checks.append(
                (f"{LABELS[key]} ahead of the LangChain baseline ({fmt(key, ours)} vs {fmt(key, theirs)})", met)
            )
    return checks


def _code(text: str) -> str:
    return "`" + text.replace("`", "'").replace("|", "\\|") + "`"


def failure_lines(s: CaseScore) -> list[str]:
    """What went wrong with one case, one bullet per finding."""
    tags = f", {', '.join(s.tags)}" if s.tags else ""
    where = f"; {s.direction}" + (f"; lost at: **{s.stage}**" if s.stage else "")
    out = [f"#### {s.id} ({s.lang}{tags}{where})", "", f"> {s.question.replace(chr(10), ' ')}", ""]
    if s.expected_verdict is not None and s.verdict != s.expected_verdict:
        out.append(f"- **verdict** {s.verdict or '(none)'}, expected {s.expected_verdict}")
    elif not s.selection and s.verdict is not None:
        out.append(f"- **verdict line on a non-selection question** ({s.verdict})")
    if s.error:
        out.append(f"- **error:** {_code(s.error[:300])}")
    if s.expected_refuse and not s.refused:
        out.append("- **answered but should have refused**")
    elif s.refused and not s.expected_refuse:
        out.append("- **refused but the knowledge base answers this**")
    if s.missing:
        groups = "; ".join(" or ".join(_code(p) for p in group) for group in s.missing)
        out.append(f"- **missing key facts:** {groups}")
        if s.context_complete is not None:
            where = (
                "all were in the retrieved passages (answer composition)"
                if s.context_complete
                else "not all were in the retrieved passages (retrieval)"
            )
            out.append(f"- key facts: {where}")
    if s.expected_docs:
        hit = "hit@5 miss" if s.hit5 == 0.0 else f"first relevant at rank {round(1 / s.rr) if s.rr else '-'}"
        out.append(f"- expected docs: {', '.join(s.expected_docs)}; retrieved: {', '.join(s.retrieved_docs) or '(none)'}"
                   f" ({hit})")  # fmt: skip
        out.append(f"- cited: {', '.join(s.cited_docs) or '(nothing)'}")
    if s.section_hit == 0.0:
        got = "; ".join(dict.fromkeys(s.retrieved_sections[:5])) or "(none)"
        out.append(f"- expected section {_code(s.expected_section or '')}; retrieved: {got}")
    if s.injection_resisted is False:
        out.append(
            f"- **injection got through**; markers: {', '.join(_code(m) for m in s.leaked) or 'none (wrong answer)'}"
        )
    out.append("")
    return out


def _summary_table(runs: Sequence[SystemRun]) -> list[str]:
    rows = _rows(runs)
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" + "---:|" * (len(rows[0]) - 1)]
    lines += ["| " + " | ".join(c.strip() for c in row) + " |" for row in rows[1:]]
    return lines


def markdown(runs: Sequence[SystemRun], golden: Path, chart: str | None, context: str = "") -> str:
    main = primary(runs)
    scores = main.scores
    n_ja = sum(1 for s in scores if s.lang == "ja")
    n_ref = sum(1 for s in scores if s.expected_refuse)
    lines = [
        "# Evaluation report",
        "",
        f"Generated {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} from `{golden.name}`: "
        f"{len(scores)} cases ({n_ja} Japanese, {len(scores) - n_ja} English, {n_ref} to refuse). {context}".rstrip(),
        "",
        "Retrieval metrics are by document (duplicate doc ids dropped, best rank kept); accuracy means every",
        "key-fact group matched (or, for unanswerable questions, that the system refused). See `evals/metrics.py`.",
        "",
        "## Summary",
        "",
        *_summary_table(runs),
        "",
    ]
    if chart:
        lines += [f"![metrics by system]({chart})", ""]
    notes = [f"- **{r.name}**: {r.note}" for r in runs if r.note]
    if notes:
        lines += ["Systems:", "", *notes, ""]
    lines += [f"## Targets ({main.name})", ""]
    lines += [f"- {'✅' if met else '❌'} {text}" for text, met in target_checks(runs)]
    lines += [*_breakdowns(main), *_verdict_line(main.summary)]
    for run in [main, *(r for r in runs if r is not main)]:
        lines += _failures(run, main=run is main)
    return "\n".join(lines)


def _breakdowns(main: SystemRun) -> list[str]:
    """Accuracy by language and tag, by direction and by answer type, with the stage each failure was lost at."""
    scores = main.scores
    stages = " | ".join(STAGES)
    lines = [
        "",
        f"## Accuracy by language and tag ({main.name})",
        "",
        "| group | cases | accuracy |",
        "|---|---:|---:|",
    ]
    lines += [f"| {k} | {n} | {acc:.3f} |" for k, (n, acc) in breakdown(scores).items()]
    lines += [
        "",
        f"## By direction: question language -> language of the answer's document ({main.name})",
        "",
        "A translation companion counts as its original (an English question about the Japanese article is",
        "en->ja even when it is answered from the English translation). Failures by the stage that lost them.",
        "",
        f"| direction | cases | accuracy | key facts in contexts | lost: {stages} |",
        "|---|---:|---:|---:|" + "---:|" * len(STAGES),
    ]
    lines += [
        f"| {d} | {r['cases']} | {r['accuracy']:.3f} | {r['contexts']:.3f} | "
        + " | ".join(str(r[s]) for s in STAGES)
        + " |"
        for d, r in by_direction(scores).items()
    ]
    lines += [
        "",
        f"## By answer type ({main.name})",
        "",
        "The case's labelled type (a near-miss question counts as 'none'); 'typed' is the share the advisor",
        "read as that type. Failures by the stage that lost them.",
        "",
        f"| answer type | cases | accuracy | typed | lost: {stages} |",
        "|---|---:|---:|---:|" + "---:|" * len(STAGES),
    ]
    lines += [
        f"| {k} | {r['cases']} | {r['accuracy']:.3f} | {r['typed']:.2f} | "
        + " | ".join(str(r[s]) for s in STAGES)
        + " |"
        for k, r in by_answer_type(scores).items()
    ]
    return lines


def _verdict_line(summ: Summary) -> list[str]:
    return [
        "",
        f"Verdicts: expected verdict on {fmt('accuracy', summ.verdict_accuracy)} of labelled selection cases; "
        f"verdict lines on non-selection questions: {summ.verdict_on_factual}; "
        f"verdicts or situation requests on non-selection questions: {summ.decisions_on_factual}; "
        f"follow-ups right: {fmt('accuracy', summ.followup_accuracy)} (selection "
        f"{fmt('accuracy', summ.followup_selection_accuracy)}, factual {fmt('accuracy', summ.followup_factual_accuracy)}); "
        f"situations read right: {fmt('accuracy', summ.situation_accuracy)}. "
        f"Near-miss questions answered 'not stated': {fmt('accuracy', summ.not_stated_recall)} "
        f"(precision {fmt('accuracy', summ.not_stated_precision)}); answerable questions refused: "
        f"{summ.answerable_refused} ({fmt('accuracy', summ.answerable_refused_rate)}).",
        "",
    ]


def _failures(run: SystemRun, main: bool) -> list[str]:
    failed = run.failed
    lines = [f"## Failed cases: {run.name} ({len(failed)} of {len(run.scores)})", ""]
    if not failed:
        return [*lines, "None.", ""]
    body = [line for s in failed for line in failure_lines(s)]
    # the other systems' failures matter less; keep the page scannable
    return [*lines, *body] if main else [*lines, "<details><summary>show</summary>", "", *body, "</details>", ""]


def plot(runs: Sequence[SystemRun], path: Path) -> None:
    """Grouped bars: one group per main metric, one bar per system (missing metrics are left blank)."""
    import matplotlib

    matplotlib.use("Agg")  # no display; safe in CI and under the web app
    import matplotlib.pyplot as plt

    width = 0.8 / max(len(runs), 1)
    fig, ax = plt.subplots(figsize=(max(8.0, 1.1 * len(CHART_METRICS) + 0.4 * len(runs)), 4.8))
    for i, run in enumerate(runs):
        values = [_value(run.summary, key) for key in CHART_METRICS]
        xs = [x + (i - (len(runs) - 1) / 2) * width for x in range(len(CHART_METRICS))]
        ax.bar(xs, values, width, label=run.name)
    ax.set_xticks(range(len(CHART_METRICS)))
    ax.set_xticklabels([LABELS[k].strip() for k in CHART_METRICS], rotation=30, ha="right")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("score (higher is better)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))  # outside: never hides a bar
    ax.set_title(f"Golden set: {runs[0].summary.cases} cases")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _value(summary: Summary, key: str) -> float:
    value = getattr(summary, key)
    return float("nan") if value is None else float(value)


def write_report(runs: Sequence[SystemRun], golden: Path, report_dir: Path, context: str = "") -> Path:
    """Write ``report.md`` and ``ablation.png`` into ``report_dir``; returns the Markdown path."""
    report_dir.mkdir(parents=True, exist_ok=True)
    chart = report_dir / "ablation.png"
    plot(runs, chart)
    path = report_dir / "report.md"
    path.write_text(markdown(runs, golden, chart.name, context) + "\n", encoding="utf-8")
    return path
