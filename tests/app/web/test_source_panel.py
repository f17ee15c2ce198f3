"""app.web.source_panel: a citation plus its section's chunks → the source panel's HTML (pure, no server)."""

from __future__ import annotations

from app.models import Citation, OriginalQuote
from app.web.source_panel import panel_html, section_markdown
from core.contract import StoredChunk


def _chunk(doc_id: str, index: int, text: str, section: str = "Upgrades", **kw: object) -> StoredChunk:
    base: dict[str, object] = {
        "id": f"{doc_id}#{index}", "doc_id": doc_id, "doc_hash": "h", "title": "Gateway Guide",
        "url": "https://example.test/gateway", "section": section, "kind": "text", "language": "en",
        "index": index, "text": text,
    }  # fmt: skip
    base.update(kw)
    return StoredChunk.model_validate(base)


CITE = Citation(
    n=2, doc_id="gw", chunk_id="gw#1", title="Gateway <Guide>", url="https://example.test/gateway",
    section="Upgrades", quote="Minor releases ship three times a year.",
    link="https://example.test/gateway#:~:text=Minor%20releases",
)  # fmt: skip
CHUNKS = [
    _chunk(
        "gw", 1, "1. Minor releases ship three times a year.\n2. Each minor release is supported for fourteen months."
    ),
    _chunk("gw", 0, "Upgrades are done with one command; see [the setup](#installing)."),
]


def test_the_panel_shows_the_whole_section_rendered_with_the_quote_marked() -> None:
    html = panel_html(CITE, CHUNKS)
    assert html.index("Upgrades are done") < html.index("Minor releases")  # chunks in document order
    assert '<li class="hit">Minor releases ship three times a year.</li>' in html
    assert "<li>Each minor release is supported for fourteen months.</li>" in html  # the rest of the section
    assert 'href="https://example.test/gateway#installing"' in html  # a relative link leads to the source site
    assert 'class="sv-out" href="https://example.test/gateway#:~:text=Minor%20releases"' in html  # link out
    assert 'target="_blank"' in html and "Gateway &lt;Guide&gt;" in html and "<Guide>" not in html
    assert 'data-n="2"' in html and "sv-cols one" in html and "paraphrased" not in html.lower()
    assert "\n" not in html


def test_a_translation_shows_its_original_section_beside_it() -> None:
    original = OriginalQuote(
        doc_id="gw-ja", section="アップグレード", quote="マイナーリリースは年3回です。", url="https://example.test/ja"
    )
    translated = CITE.model_copy(update={"translation_of": "gw-ja", "verbatim": False, "original": original})
    ja_chunks = [
        _chunk("gw-ja", 0, "- マイナーリリースは年3回です。\n- サポートは14か月です。", section="アップグレード")
    ]
    html = panel_html(translated, CHUNKS, ja_chunks)
    assert "sv-cols two" in html and html.count('<section class="sv-doc">') == 2
    assert "Original · <code>gw-ja</code> · <em>アップグレード</em>" in html
    assert '<li class="hit">マイナーリリースは年3回です。</li>' in html and "<li>サポートは14か月です。</li>" in html
    assert "A translation of gw-ja" in html and "Paraphrased notes" not in html
    ja = panel_html(translated, CHUNKS, ja_chunks, lang="ja")
    assert "原文" in ja and "翻訳" in ja and "Original" not in ja


def test_paraphrased_notes_are_labelled_and_a_missing_section_shows_the_quote() -> None:
    notes = CITE.model_copy(update={"verbatim": False, "link": ""})
    html = panel_html(notes, CHUNKS)
    assert "Paraphrased notes, not the source&#x27;s wording" in html and 'class="sv-note sv-notes"' in html
    gone = panel_html(CITE, [])
    assert "no longer in the index" in gone and '<div class="hit"><p>Minor releases ship' in gone


def test_a_table_cut_between_chunks_is_joined_back_into_one() -> None:
    head = "| Scenario | Platform |\n|---|---|\n"
    chunks = [
        _chunk("t", 0, "Intro.\n\n" + head + "| On-prem | Slurm |"),
        _chunk("t", 1, head + "| Cloud | Kubernetes |"),
        _chunk("t", 2, "After the table."),
    ]
    text = section_markdown(chunks)
    assert text.count("| Scenario | Platform |") == 1
    assert "| On-prem | Slurm |\n| Cloud | Kubernetes |\n\nAfter the table." in text
