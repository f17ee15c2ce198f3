"""Fact survey: what ``ingest.facts`` reads from the real corpus, chunk by chunk as the ingest sees it, and how long.

Chunks each document as the ingest does (no model: nothing checks the embedder's token limit, so a few chunks
may be cut differently from the index's), extracts the facts of every chunk, checks every span is verbatim, and
prints the counts by kind and by document, the extractor's own total time, and a few example facts per kind.

    .venv/bin/python bench/fact_survey.py                        # corpus/docs
    .venv/bin/python bench/fact_survey.py --corpus corpus/docs --examples 5

Deliberately left out: whether a fact answers anything (that is for the ranker and `evals`).
"""

from __future__ import annotations

import argparse
import collections
import time
from pathlib import Path

from core.contract import Fact
from core.settings import Settings
from ingest.documents import load_corpus
from ingest.facts import extract_facts
from ingest.indexer import chunk_document

KINDS = ("manifest", "config", "flag", "param", "cell", "env")


def survey(corpus: Path) -> tuple[dict[str, list[Fact]], float, int]:
    """doc id → its facts, the extractor's total seconds, and the number of chunks read."""
    settings = Settings().with_(corpus_dir=corpus)
    docs, _ = load_corpus(corpus, settings.index.translations_folder)
    chunks = [c for doc in docs for c in chunk_document(doc, settings, None)]
    found: dict[str, list[Fact]] = collections.defaultdict(list)
    started = time.perf_counter()
    per_chunk = [(c, extract_facts(c.text)) for c in chunks]
    seconds = time.perf_counter() - started
    for chunk, facts in per_chunk:
        for fact in facts:
            assert chunk.text[fact.start : fact.end] == fact.value, (chunk.id, fact)
        found[chunk.doc_id].extend(facts)
    return dict(found), seconds, len(chunks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=Path("corpus/docs"))
    parser.add_argument("--examples", type=int, default=3, help="example facts shown per kind")
    args = parser.parse_args()
    found, seconds, chunks = survey(args.corpus)
    total: collections.Counter[str] = collections.Counter(f.kind for facts in found.values() for f in facts)
    print(f"{sum(total.values())} facts from {chunks} chunks of {len(found)} documents in {seconds:.2f}s (extractor)\n")
    print("| document | " + " | ".join(KINDS) + " |\n|---|" + "---:|" * len(KINDS))
    for doc_id, facts in sorted(found.items()):
        counts: collections.Counter[str] = collections.Counter(f.kind for f in facts)
        if counts:
            print(f"| {doc_id} | " + " | ".join(str(counts.get(k, 0) or "") for k in KINDS) + " |")
    print("| **total** | " + " | ".join(str(total.get(k, 0)) for k in KINDS) + " |\n")
    for kind in KINDS:
        shown = [(d, f) for d, facts in sorted(found.items()) for f in facts if f.kind == kind][
            :: max(1, total[kind] // 7)
        ]
        for doc_id, fact in shown[: args.examples]:
            print(f"- {kind}: {doc_id} · {fact.subject} · {fact.key} = {fact.value[:60]!r}")


if __name__ == "__main__":
    main()
