"""`ingest` command: bring the Chroma index in line with the corpus folder (incrementally).

``ingest --translate [--to en|ja] [DOC_ID ...]`` first writes missing or stale translation companions
through the configured OpenAI-compatible or Ollama server (``ingest.translator.writer``), then ingests as usual.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from core.settings import Settings, settings_or_exit
from ingest.embeddings import make_embeddings
from ingest.indexer import IngestError, run_ingest
from ingest.store import IndexUnavailable


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ingest",
        description="Chunk, embed and index the Markdown corpus. Re-running only embeds what changed.",
    )
    parser.add_argument("--corpus", type=Path, help="corpus folder, searched recursively for *.md")
    parser.add_argument("--translations", type=Path, help="folder of translation companions")
    parser.add_argument("--index", type=Path, help="index folder (embedded Chroma)")
    parser.add_argument(
        "--rebuild",
        action="store_true",
        help="rebuild every document into a fresh generation (vectors come from the embedding cache when it has them)",
    )
    parser.add_argument("--skip-invalid", action="store_true", help="ingest valid files, report the rest")
    parser.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    parser.add_argument("--sync", action="store_true", help="download sources from their URLs first")
    group = parser.add_argument_group("translation companions (machine translation through an LLM server)")
    group.add_argument(
        "--translate", action="store_true", help="write missing or stale translation companions first, then ingest"
    )
    group.add_argument(
        "--to", choices=["en", "ja"], help="target language (default for named documents: the other of en/ja)"
    )
    group.add_argument(
        "--backend", choices=["openai", "ollama"], help="translation server (default: ADVISOR_ANSWER_BACKEND)"
    )
    group.add_argument("--no-ingest", action="store_true", help="only translate; do not ingest afterwards")
    group.add_argument("doc_ids", nargs="*", metavar="DOC_ID", help="originals to translate (default: all)")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.translate and (args.doc_ids or args.to or args.backend or args.no_ingest):
        parser.error("DOC_ID, --to, --backend and --no-ingest go with --translate")
    overrides: dict[str, object] = {}
    if args.corpus:
        overrides["corpus_dir"] = args.corpus
    if args.translations:
        overrides["translations_dir"] = args.translations
    if args.index:
        overrides["index_dir"] = args.index
    settings = settings_or_exit("ingest", overrides)  # a bad ADVISOR_* value or flag: one line, exit 2
    if args.sync:
        from ingest.sync.sources import run_sync

        sync_report = run_sync(settings)
        print(sync_report.summary(), file=sys.stderr)
    translated = 0
    if args.translate:
        translated, go_on = _translate(args, settings)
        if not go_on or args.no_ingest:
            return translated
    return max(_ingest(args, settings), translated)


def _translate(args: argparse.Namespace, settings: Settings) -> tuple[int, bool]:
    """(exit code, whether to ingest next): documents that failed still let the written ones be ingested."""
    from ingest.translator.writer import BackendUnreachable, TranslateUsageError, resolve_backend, run_translate

    try:
        backend = resolve_backend(settings, args.backend)
        report = run_translate(settings, backend, args.doc_ids, args.to, progress=True)
    except (TranslateUsageError, BackendUnreachable) as exc:
        print(f"ingest --translate: {exc}", file=sys.stderr)
        if args.json:  # --json callers always get one JSON object on stdout
            print(json.dumps({"error": str(exc), "files": []}, ensure_ascii=False))
        return (2 if isinstance(exc, TranslateUsageError) else 1), False
    except KeyboardInterrupt:
        print("ingest --translate: interrupted; companions already written are complete", file=sys.stderr)
        return 130, False
    for outcome in report.outcomes:
        if outcome.status in ("failed", "kept"):
            print(f"{outcome.status}: {outcome.companion_id}: {outcome.reason}", file=sys.stderr)
    # --json keeps stdout for the ingest's one JSON object.
    print(f"translate: {report.summary()}", file=sys.stderr if args.json else sys.stdout)
    return (1 if report.count("failed") else 0), True


def _ingest(args: argparse.Namespace, settings: Settings) -> int:
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
            "cache_hits",
            "cache_misses",
            "units",
            "units_embedded",
            "seconds",
            "translations_stale",
            "translations_unaligned",
        )
        print(json.dumps({k: getattr(report, k) for k in keys}, ensure_ascii=False))
        for stale in report.translations_stale:  # stdout stays one JSON object; people read stderr
            print(
                f"ingest: translation {stale} is stale (its original changed); `ingest --translate` rewrites it",
                file=sys.stderr,
            )
        for companion, sections in report.translations_unaligned.items():
            print(
                f"ingest: translation {companion}: left out until re-translated (no matching section in the"
                f" original): {'; '.join(sections)}",
                file=sys.stderr,
            )
    else:
        print(f"ingest: {report.summary()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
