"""app.web.panels: library, decision rules, recommendation and exports (pure, no server)."""

from __future__ import annotations

import re

from app.models import Answer, Change, Citation, Reason, Recommendation, Rule, Verdict, Vote
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
    source="table",
)  # fmt: skip
CITE = Citation(n=1, doc_id="k8s-en", chunk_id="k8s-en#0", title="GPUs", url="https://kubernetes.io/docs/gpus/",
                section="Scheduling GPUs > Elastic fleets", quote="Elastic fleets scale.")  # fmt: skip


def test_library_lists_language_licence_completeness_and_stale_translations() -> None:
    info = IndexInfo(generation="g", meta=IndexMeta(embedder="fake:128", chunker="v", chunk_size=1, chunk_min=1),
                     documents=3, chunks=9, updated_at="2026-11-30T10:00:00Z",
                     translations_stale=["article-ja"])  # fmt: skip
    md = web_panels.library_markdown(DOCS, info)
    assert "last ingest 2026-11-30 10:00:00 UTC" in md and "1 translation is stale: article-ja" in md
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


VOTE = Vote(facet="fleet", value="elastic", label="elastic fleet", platform="kubernetes", rule=RULE, n=1)
DETAIL = Verdict(
    value="kubernetes",
    read_as=["elastic fleet", "on-prem"],
    votes=[VOTE],
    change_detail=[
        Change(
            facet="workload", value="training_and_serving", condition="if you also served the models", verdict="hybrid"
        )
    ],
)
REC = Recommendation(
    verdict="kubernetes",
    reasons=[
        Reason(
            criterion="fleet",
            criterion_label="GPU fleet",
            value="elastic",
            answer="elastic fleet",
            verdict="kubernetes",
            rule=RULE,
            citations=[CITE],
        ),
        Reason(criterion="deployment", criterion_label="where it runs", value="on_prem", answer="on-prem"),
    ],
    citations=[CITE],
    answer="**Verdict: Kubernetes** — read as: elastic fleet · on-prem\n- elastic fleet → Kubernetes [1]",
    changes=["if you also served the models → hybrid"],
    detail=DETAIL,
)


def test_the_recommendation_reads_like_a_verdict_with_an_editable_read_as() -> None:
    md = web_panels.recommendation_markdown(REC)
    assert md.count('class="verdict-line"') == 1 and md.count('class="verdict verdict-') == 1
    assert 'Recommendation:</span> <span class="verdict verdict-kubernetes">Kubernetes</span>' in md
    # "Read as" from the answers' labels, each a link back to its question in the form.
    chips = re.findall(r'<a class="facet facet-edit" href="#q-(\w+)" title="([^"]+)">([^<]+)<', md)
    assert chips == [("fleet", "Change “GPU fleet” in the form", "elastic fleet"),
                     ("deployment", "Change “where it runs” in the form", "on-prem")]  # fmt: skip
    assert "<b>GPU fleet:</b> elastic fleet → Kubernetes: an elastic cloud fleet — autoscaling" in md
    assert "#src-rec-1" in md and "<b>Where it runs:</b> on-prem — no rule in the documents speaks to this" in md
    assert "read as:" not in md  # the advisor's Markdown summary is not shown beside the same data
    assert '<details class="why">' in md and "If you also served the models → Hybrid" in md and "**Sources**" in md
    for raw in ("training_and_serving", "on_prem", "→ kubernetes", "→ hybrid"):
        assert raw not in md.replace('href="#q-', ""), raw


def test_the_recommendation_in_japanese_and_its_export() -> None:
    ja = web_panels.recommendation_markdown(REC, "ja")
    assert "推奨:</span>" in ja and "読み取った状況:" in ja and "台数が伸縮" in ja and "オンプレミス" in ja
    assert "<b>GPU台数:</b>" in ja and "判定が変わる条件" in ja and "Recommendation" not in ja
    text = web_panels.recommendation_export(REC)
    assert text.startswith("# Recommendation: Kubernetes — Read as: elastic fleet · on-prem\n")
    assert "<" not in text.replace("<https", "") and text.count("Kubernetes —") == 1
    assert "- **GPU fleet:** elastic fleet → Kubernetes: an elastic cloud fleet — autoscaling [1]" in text
    assert "- If you also served the models → Hybrid — train on Slurm, serve on Kubernetes" in text
    assert "1. GPUs — Scheduling GPUs > Elastic fleets <https://kubernetes.io/docs/gpus/#elastic-fleets:~:text=" in text


def test_no_platform_yet_names_the_facts_still_to_give() -> None:
    reason = Reason(criterion="ops_team", criterion_label="operations team", value="dedicated",
                    answer="dedicated platform team")  # fmt: skip
    rec = Recommendation(verdict=None, reasons=[reason], answer="Tell me more.")
    md = web_panels.recommendation_markdown(rec)
    assert "verdict-none" in md and "No platform yet" in md
    assert "To recommend a platform, tell me: where it runs, GPU fleet, workload, one platform for everything, " in md
    assert "operations team," not in md.split("tell me:")[1].split("</div>")[0]  # answered: not asked again
    assert "<b>Operations team:</b> dedicated platform team — no rule" in md
    empty = web_panels.recommendation_markdown(Recommendation(verdict=None), "ja")
    assert "まだ回答がありません" in empty and "実行環境、GPU台数" in empty
    assert "To recommend a platform" in web_panels.recommendation_export(rec)


def test_conversation_export_is_plain_markdown() -> None:
    answer = Answer(question="How?", answer="Like this [1].", citations=[CITE])
    text = web_panels.conversation_export(["How?", "And then?"], [answer, "⚠️ error text"])
    assert "## How?" in text and "Like this [1]." in text and "[1] GPUs — " in text
    assert "## And then?" in text and "⚠️ error text" in text and "<sup" not in text


def test_recommendation_labels_are_escaped_once() -> None:
    reason = Reason(criterion="hpc_experience", value="experienced", verdict="slurm", rule=RULE, citations=[CITE])
    md = web_panels.recommendation_markdown(Recommendation(verdict="slurm", reasons=[reason], citations=[CITE]))
    assert "<b>HPC experience:</b> experienced with HPC → Slurm" in md and "&#x27;" not in md and "&amp;" not in md
    tricky = RULE.model_copy(update={"condition": "a team's own <cluster>"})
    md = web_panels.recommendation_markdown(Recommendation(verdict="slurm", reasons=[
        reason.model_copy(update={"rule": tricky})], citations=[CITE]))  # fmt: skip
    assert "a team&#x27;s own &lt;cluster&gt;" in md and "&amp;#x27;" not in md and "<cluster>" not in md
