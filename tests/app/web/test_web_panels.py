"""app.web.panels: library, decision rules, recommendation and exports (pure, no server)."""

from __future__ import annotations

from app.models import Answer, Citation, Reason, Recommendation, Rule
from app.web import panels as web_panels
from core.contract import DocumentInfo, IndexInfo, IndexMeta

DOCS = [
    DocumentInfo(doc_id="k8s-en", title="GPUs | <b>", url="https://kubernetes.io/docs/gpus/", language="en",
                 license="CC-BY-4.0", kind="full", chunks=3),
    DocumentInfo(doc_id="nebius-notes", title="Notes", url="https://example.test/n", language="en",
                 license="notes", kind="notes", chunks=2),
    DocumentInfo(doc_id="article-ja", title="記事", language="ja", license="CC-BY-4.0", kind="translation",
                 translation_of="article-en", stale=True, chunks=4),
]  # fmt: skip
RULE = Rule(
    id="r1", doc_id="k8s-en", chunk_id="k8s-en#0", section="Scheduling GPUs > Elastic fleets", language="en",
    condition="an elastic cloud fleet", verdict="kubernetes", reason="autoscaling", quote="| Elastic | **Kubernetes** |",
)  # fmt: skip
CITE = Citation(n=1, doc_id="k8s-en", chunk_id="k8s-en#0", title="GPUs", url="https://kubernetes.io/docs/gpus/",
                section="Scheduling GPUs > Elastic fleets", quote="Elastic fleets scale.")  # fmt: skip


def test_library_lists_language_licence_completeness_and_stale_translations() -> None:
    info = IndexInfo(generation="g", meta=IndexMeta(embedder="fake:128", chunker="v", chunk_size=1, chunk_min=1),
                     documents=3, chunks=9, updated_at="2026-11-30T10:00:00Z",
                     translations_stale=["article-ja"])  # fmt: skip
    md = web_panels.library_markdown(DOCS, info)
    assert "last ingest 2026-11-30 10:00:00 UTC" in md and "1 translation(s) stale: article-ja" in md
    assert md.count("<th>") == 5 and md.count("<tr>") == 4  # a header and one row per document
    assert md.count('<span class="cell-label">Language</span>') == 3  # each cell names its column (phone cards)
    assert "full text" in md and "paraphrased notes" in md and "translation of article-en" in md
    assert "out of date" in md and "GPUs | &lt;b&gt;" in md and "GPUs | <b>" not in md  # escaped
    assert "CC-BY-4.0" in md
    assert md.rindex("記事") > md.rindex("nebius-notes")  # translations listed after the originals
    ja = web_panels.library_markdown(DOCS, None, "ja")
    assert "全文" in ja and "要約メモ" in ja and "full text" not in ja
    assert "run `ingest`" in web_panels.library_markdown([], None)


def test_rules_show_condition_verdict_quote_and_deep_link() -> None:
    md = web_panels.rules_markdown([RULE], DOCS)
    assert "an elastic cloud fleet</b> → " in md and "verdict-kubernetes" in md and "autoscaling" in md
    assert 'href="https://kubernetes.io/docs/gpus/' in md and ":~:text=" in md  # a deep link to the quote
    assert "<td>Elastic</td><td><strong>Kubernetes</strong></td>" in md  # the quote rendered: a table row
    assert md.startswith('<div class="rule">') and "\n\n" not in md  # one card per rule, one HTML block
    assert "No decision rules" in web_panels.rules_markdown([])


def test_recommendation_lines_and_export() -> None:
    rec = Recommendation(
        verdict="kubernetes",
        reasons=[
            Reason(criterion="fleet", answer="elastic", verdict="kubernetes", rule=RULE, citations=[CITE]),
            Reason(criterion="deployment", answer="on_prem"),
        ],
        citations=[CITE],
        answer="Summary restating the reasons [1].",
        changes=["A fixed on-prem fleet would favour Slurm."],
    )
    md = web_panels.recommendation_markdown(rec)
    assert "verdict-kubernetes" in md and "**GPU fleet:** Elastic → Kubernetes" in md and "#src-rec-1" in md
    assert "**Where does it run?:** On-premises — no rule" in md
    assert "Summary restating" not in md  # the reasons already say it
    assert "What would change it" in md and "favour Slurm" in md and "**Sources**" in md
    ja = web_panels.recommendation_markdown(rec, "ja")
    assert "GPU台数" in ja and "伸縮" in ja and "判定が変わる条件" in ja
    text = web_panels.recommendation_export(rec)
    assert text.startswith("# Recommendation: Kubernetes\n") and "<" not in text.replace("<https", "")
    assert "1. GPUs — Scheduling GPUs > Elastic fleets <https://kubernetes.io/docs/gpus/#elastic-fleets:~:text=" in text


def test_conversation_export_is_plain_markdown() -> None:
    answer = Answer(question="How?", answer="Like this [1].", citations=[CITE])
    text = web_panels.conversation_export(["How?", "And then?"], [answer, "⚠️ error text"])
    assert "## How?" in text and "Like this [1]." in text and "[1] GPUs — " in text
    assert "## And then?" in text and "⚠️ error text" in text and "<sup" not in text


def test_recommendation_labels_are_escaped_once() -> None:
    reason = Reason(criterion="hpc_experience", answer="experienced", verdict="slurm", rule=RULE, citations=[CITE])
    md = web_panels.recommendation_markdown(Recommendation(verdict="slurm", reasons=[reason], citations=[CITE]))
    assert "**Team's HPC experience:** Experienced → Slurm" in md and "&#x27;" not in md and "&amp;" not in md
