"""A translation's quote aligned with its original's passage, on a snapshot written here (no index, no model).

Each test builds one original section and its translation as stored chunks; a table cut between two
chunks repeats its header there, as the chunker writes it.
"""

from __future__ import annotations

from typing import Any, cast

from app.models import Passage, to_passage
from app.retrieval.companions import original_quote, original_units
from app.retrieval.lexical import LexicalIndex
from app.retrieval.snapshot import Snapshot
from core.contract import StoredChunk


def _chunk(doc_id: str, index: int, text: str, language: str, translation_of: str = "") -> StoredChunk:
    return StoredChunk(
        id=f"{doc_id}:{index}",
        doc_id=doc_id,
        doc_hash="h",
        title=doc_id,
        url="https://example.test/doc",
        section="Plan" if translation_of else "計画",
        kind="text",
        language=language,
        index=index,
        text=text,
        translation_of=translation_of,
        original_section="計画" if translation_of else "",
    )


def _pair(original: list[str], translation: list[str]) -> tuple[Snapshot, Passage]:
    chunks = [_chunk("orig", i, t, "ja") for i, t in enumerate(original)]
    chunks += [_chunk("orig-en", i, t, "en", translation_of="orig") for i, t in enumerate(translation)]
    snap = Snapshot(
        generation=cast(Any, None),
        chunks={c.id: c for c in chunks},
        lexical=LexicalIndex([c.id for c in chunks], [c.text for c in chunks]),
    )
    return snap, to_passage(chunks[len(original)], 1.0, None, None)


def test_a_code_block_quoted_from_the_original_keeps_both_fences() -> None:
    snap, p = _pair(
        ["手順:\n\n```\nsrun hostname\nsrun hostname\n```"], ["Steps:\n\n```\nsrun hostname\nsrun hostname\n```"]
    )
    found = original_quote(p, ["```", "srun hostname", "srun hostname", "```"], snap)
    assert found == ("計画", "```\nsrun hostname\nsrun hostname\n```")


def test_rows_of_one_table_share_one_header_and_a_pipe_in_code_is_code() -> None:
    table = "| 観点 | 選択 |\n|---|---|\n| 規模 | Slurm |\n| 伸縮 | Kubernetes |"
    code = "```sh\n| grep gpu\n| grep gpu\n```"
    snap, p = _pair(
        [f"{table}\n\n{code}"],
        ["| Aspect | Choice |\n|---|---|\n| Scale | Slurm |\n| Elastic | Kubernetes |\n\n" + code],
    )
    rows = original_quote(
        p, ["| Aspect | Choice |", "|---|---|", "| Scale | Slurm |", "| Elastic | Kubernetes |"], snap
    )
    assert rows == ("計画", table)
    assert original_quote(p, code.split("\n"), snap) == ("計画", code)


def _aligned_row(table_chunks: list[str], original_table: str) -> list[str]:
    """The original's row aligned with the translation's last row, the table cut after its first row."""
    snap, p = _pair([original_table + "\n\nその後の段落。"], [*table_chunks, "A paragraph after."])
    return [u.text for u in original_units(p, [table_chunks[-1].split("\n")[-1]], snap)]


def test_a_table_without_outer_pipes_cut_between_chunks_is_one_table() -> None:
    header = "Aspect | Choice\n--- | ---"
    original = "観点 | 選択\n--- | ---\n規模 | Slurm\n伸縮 | Kubernetes"
    assert _aligned_row([f"{header}\nScale | Slurm", f"{header}\nElastic | Kubernetes"], original) == [
        "観点: 伸縮; 選択: Kubernetes"
    ]


def test_a_table_in_a_quote_cut_between_chunks_is_one_table() -> None:
    header = "> | Aspect | Choice |\n> |---|---|"
    original = "> | 観点 | 選択 |\n> |---|---|\n> | 規模 | Slurm |\n> | 伸縮 | Kubernetes |"
    assert _aligned_row([f"{header}\n> | Scale | Slurm |", f"{header}\n> | Elastic | Kubernetes |"], original) == [
        "観点: 伸縮; 選択: Kubernetes"
    ]


def test_a_table_with_outer_pipes_cut_between_chunks_is_one_table() -> None:
    header = "| Aspect | Choice |\n|---|---|"
    original = "| 観点 | 選択 |\n|---|---|\n| 規模 | Slurm |\n| 伸縮 | Kubernetes |"
    assert _aligned_row([f"{header}\n| Scale | Slurm |", f"{header}\n| Elastic | Kubernetes |"], original) == [
        "観点: 伸縮; 選択: Kubernetes"
    ]
