"""`ingest` command: bring the Chroma index in line with the corpus folder (incrementally)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ingest.embeddings import make_embeddings
from ingest.indexer import IngestError, run_ingest
from ingest.settings import settings_or_exit
from ingest.store import IndexUnavailable


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ingest",
        description="Chunk, embed and index the Markdown corpus. Re-running only embeds what changed.",
    )
    parser.add_argument("--corpus", type=Path, help="corpus folder, searched recursively for *.md")
    parser.add_argument("--index", type=Path, help="index folder (embedded Chroma)")
    parser.add_argument("--rebuild", action="store_true", help="re-embed everything into a fresh generation")
    parser.add_argument("--skip-invalid", action="store_true", help="ingest valid files, report the rest")
    parser.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    parser.add_argument("--sync", action="store_true", help="download sources from their URLs first")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    overrides: dict[str, object] = {}
    if args.corpus:
        overrides["corpus_dir"] = args.corpus
    if args.index:
        overrides["index_dir"] = args.index
    settings = settings_or_exit("ingest", overrides)  # a bad ADVISOR_* value or flag: one line, exit 2
    if args.sync:
        from ingest.sync import run_sync

        sync_report = run_sync(settings)
        print(sync_report.summary(), file=sys.stderr)
    embeddings = make_embeddings(settings)
    try:
        report = run_ingest(
            settings,
            embeddings,
            rebuild=args.rebuild,
            skip_invalid=args.skip_invalid,
            progress=sys.stderr.isatty() or not args.json,
        )
    except IngestError as exc:
        for err in exc.errors:
            print(f"error: {err}", file=sys.stderr)
        print(f"ingest: {exc}", file=sys.stderr)
        if args.json:
            print(json.dumps({"error": str(exc), "files": [e.model_dump() for e in exc.errors]}, ensure_ascii=False))
        return 1
    except IndexUnavailable as exc:
        print(f"ingest: {exc}", file=sys.stderr)
        if args.json:  # --json callers always get one JSON object on stdout
            print(json.dumps({"error": str(exc), "files": []}, ensure_ascii=False))
        return 1
    except KeyboardInterrupt:
        print("ingest: interrupted; the previous index is unchanged", file=sys.stderr)
        return 130
    for err in report.skipped:
        print(f"skipped: {err}", file=sys.stderr)
    if args.json:
        keys = (
            "docs_added",
            "docs_updated",
            "docs_unchanged",
            "docs_deleted",
            "chunks_total",
            "embedded",
            "seconds",
        )
        print(json.dumps({k: getattr(report, k) for k in keys}))
    else:
        print(f"ingest: {report.summary()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
