"""Synthetic corpus: deterministic Japanese and English Markdown documents for scale tests.

Each document has YAML front matter, an H1 title and sections (H2/H3) holding paragraphs, bullet
lists (some nested), tables and now and then a code block — the structures the chunker handles —
written from templates and word lists in this file, so any number of chunks can be made without
copying third-party text. The same seed always gives the same corpus.

    .venv/bin/python bench/synth_corpus.py OUT_DIR --docs 200 --seed 7   # writes OUT_DIR/*.md
    synth_chunks(20_000, seed=7)                                          # exactly 20k StoredChunks

Deliberately left out: realistic facts (the texts are plausible-looking noise; only sizes, structure
and vocabulary statistics matter here) and any retrieval-quality use (that is `evals`).
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Iterator
from pathlib import Path

from core.settings import load_settings
from ingest.documents import parse_document
from ingest.indexer import chunk_document
from ingest.store import StoredChunk

EN_SUBJECTS = [
    "The scheduler", "The control plane", "Each worker node", "The job queue", "The GPU operator",
    "The training launcher", "The storage gateway", "The admission controller", "The metrics agent",
    "The gang scheduler", "The login node", "The accounting daemon", "The network fabric", "The checkpoint store",
]  # fmt: skip
EN_VERBS = [
    "allocates", "preempts", "drains", "restarts", "reserves", "balances", "throttles", "replicates",
    "monitors", "compacts", "schedules", "isolates", "rebalances", "caches",
]  # fmt: skip
EN_OBJECTS = [
    "idle accelerators", "pending jobs", "NCCL rings", "MPI ranks", "spot instances", "fair-share quotas",
    "container images", "topology hints", "burst buffers", "partition limits", "node pools",
    "RDMA queues", "tenant namespaces", "elastic replicas", "job arrays", "health probes",
]  # fmt: skip
EN_TAILS = [
    "within {n} seconds", "for up to {n} tenants", "across {n} racks", "every {n} minutes",
    "at {n}% utilisation", "before {n} retries", "with {n} GB of headroom", "on {n} nodes at once",
]  # fmt: skip
EN_HEADINGS = [
    "Overview", "Installation", "Scheduling", "Networking", "Storage", "Monitoring", "Upgrades",
    "Troubleshooting", "Costs", "Security", "Quotas", "Failure handling", "Benchmarks", "Operations",
]  # fmt: skip

JA_SUBJECTS = [
    "スケジューラ", "制御プレーン", "各ワーカーノード", "ジョブキュー", "GPUオペレーター", "学習ランチャー",
    "ストレージゲートウェイ", "アドミッションコントローラ", "メトリクスエージェント", "ギャングスケジューラ",
    "ログインノード", "課金デーモン", "ネットワークファブリック", "チェックポイント保存先",
]  # fmt: skip
JA_OBJECTS = [
    "空いているアクセラレータ", "待機中のジョブ", "NCCLリング", "MPIランク", "スポットインスタンス",
    "フェアシェアの割り当て", "コンテナイメージ", "トポロジー情報", "バーストバッファ", "パーティション上限",
    "ノードプール", "RDMAキュー", "テナントの名前空間", "伸縮するレプリカ", "ジョブ配列", "ヘルスチェック",
]  # fmt: skip
JA_VERBS = [
    "割り当てます", "横取りします", "退避させます", "再起動します", "予約します", "均等に配分します",
    "抑制します", "複製します", "監視します", "圧縮します", "スケジュールします", "隔離します",
]  # fmt: skip
JA_TAILS = [
    "{n}秒以内に", "最大{n}テナントに対して", "{n}ラックにまたがって", "{n}分ごとに", "利用率{n}%で",
    "{n}回の再試行の前に", "{n}GBの余裕を持って", "{n}ノード同時に",
]  # fmt: skip
JA_HEADINGS = [
    "概要", "導入", "スケジューリング", "ネットワーク", "ストレージ", "監視", "更新", "トラブルシューティング",
    "費用", "セキュリティ", "クォータ", "障害対応", "ベンチマーク", "運用",
]  # fmt: skip
PLATFORMS = ["Slurm", "Kubernetes", "Kueue", "Volcano", "Ray", "Flux", "Nomad", "Batch"]
CODE = [
    ("bash", "sbatch --nodes={n} --gres=gpu:8 train.sh\nsqueue -u $USER"),
    ("yaml", "apiVersion: batch/v1\nkind: Job\nspec:\n  parallelism: {n}\n  completions: {n}"),
    ("python", "import torch\nworld = {n}\ntorch.distributed.init_process_group('nccl')"),
]


def _n(rng: random.Random) -> int:
    return rng.choice([2, 3, 4, 8, 12, 16, 24, 32, 64, 90, 128, 256, 512, 1024])


def _en_sentence(rng: random.Random) -> str:
    tail = rng.choice(EN_TAILS).format(n=_n(rng))
    extra = f" when {rng.choice(PLATFORMS)} is used" if rng.random() < 0.3 else ""
    return f"{rng.choice(EN_SUBJECTS)} {rng.choice(EN_VERBS)} {rng.choice(EN_OBJECTS)} {tail}{extra}."


def _ja_sentence(rng: random.Random) -> str:
    tail = rng.choice(JA_TAILS).format(n=_n(rng))
    extra = f"{rng.choice(PLATFORMS)}を使う場合、" if rng.random() < 0.3 else ""
    return f"{extra}{rng.choice(JA_SUBJECTS)}は{tail}{rng.choice(JA_OBJECTS)}を{rng.choice(JA_VERBS)}。"


def _paragraph(rng: random.Random, ja: bool) -> str:
    sentence = _ja_sentence if ja else _en_sentence
    joiner = "" if ja else " "
    return joiner.join(sentence(rng) for _ in range(rng.randint(2, 6)))


def _bullets(rng: random.Random, ja: bool) -> str:
    sentence = _ja_sentence if ja else _en_sentence
    lines = []
    for _ in range(rng.randint(3, 6)):
        lines.append(f"- {sentence(rng)}")
        if rng.random() < 0.25:
            lines.append(f"  - {sentence(rng)}")
    return "\n".join(lines)


def _table(rng: random.Random, ja: bool) -> str:
    a, b = rng.sample(PLATFORMS, 2)
    head = "| 項目 | " + a + " | " + b + " |" if ja else f"| Aspect | {a} | {b} |"
    rows = [head, "|---|---|---|"]
    aspects = JA_OBJECTS if ja else EN_OBJECTS
    for aspect in rng.sample(aspects, rng.randint(3, 6)):
        rows.append(f"| {aspect} | {_n(rng)} | {_n(rng)} |")
    return "\n".join(rows)


def _code(rng: random.Random) -> str:
    lang, body = rng.choice(CODE)
    return f"```{lang}\n{body.format(n=_n(rng))}\n```"


def document(index: int, seed: int = 7) -> tuple[str, str]:
    """(file name, Markdown text with front matter) of synthetic document ``index``; deterministic."""
    rng = random.Random(f"{seed}:{index}")
    ja = index % 2 == 1
    headings = JA_HEADINGS if ja else EN_HEADINGS
    subject = rng.choice(PLATFORMS)
    title = f"{subject} 運用メモ {index}" if ja else f"{subject} operations notes {index}"
    doc_id = f"synth-{index:06d}-{'ja' if ja else 'en'}"
    parts = [
        f'---\nid: "{doc_id}"\ntitle: "{title}"\nurl: "https://example.test/{doc_id}"\n'
        f'language: "{"ja" if ja else "en"}"\nlicense: "CC0-1.0"\n---\n',
        f"# {title}",
    ]
    for h in rng.sample(headings, rng.randint(6, 10)):
        parts.append(f"## {h}")
        blocks = [_paragraph(rng, ja) for _ in range(rng.randint(1, 3))]
        if rng.random() < 0.5:
            blocks.append(_bullets(rng, ja))
        if rng.random() < 0.35:
            blocks.append(_table(rng, ja))
        if rng.random() < 0.15:
            blocks.append(_code(rng))
        if rng.random() < 0.3:
            blocks.append(f"### {rng.choice(headings)} {_n(rng)}\n\n{_paragraph(rng, ja)}")
        parts.extend(blocks)
    return f"{doc_id}.md", "\n\n".join(parts) + "\n"


def documents(count: int, seed: int = 7) -> Iterator[tuple[str, str]]:
    for i in range(count):
        yield document(i, seed)


def synth_chunks(count: int, seed: int = 7, chunk_size: int = 600, chunk_min: int = 120) -> list[StoredChunk]:
    """Exactly ``count`` StoredChunks cut by our chunker from as many synthetic documents as needed."""
    settings = load_settings({"chunk_size": chunk_size, "chunk_min": chunk_min}, env_file=None)
    chunks: list[StoredChunk] = []
    index = 0
    while len(chunks) < count:
        name, text = document(index, seed)
        chunks.extend(chunk_document(parse_document(text.encode("utf-8"), name), settings, None))
        index += 1
    return chunks[:count]


def questions(count: int, seed: int = 11) -> list[str]:
    """Question-like strings over the same vocabulary (half Japanese), for lexical query timing."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        if i % 2:
            out.append(f"{rng.choice(JA_SUBJECTS)}は{rng.choice(JA_OBJECTS)}をどう{rng.choice(JA_VERBS)}か？")
        else:
            out.append(f"How does {rng.choice(EN_SUBJECTS).lower()} handle {rng.choice(EN_OBJECTS)}?")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("out", type=Path, help="folder to write the documents into (created)")
    parser.add_argument("--docs", type=int, default=100, help="number of documents (default 100)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    total = 0
    for name, text in documents(args.docs, args.seed):
        (args.out / name).write_text(text, encoding="utf-8")
        total += len(text)
    print(f"wrote {args.docs} documents ({total:,} characters) to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
