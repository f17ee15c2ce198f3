"""Facts read at ingest (ingest.facts, ingest.fact_code): tiny documents written for these tests, never corpus text.

Each document states known values; the extractor finds them as (kind, subject, key, value), and every fact's
value is verbatim at its span. An ingest into tmp_path stores the facts with the chunk and reads them back, and
an index built before facts existed gets them on the next ingest without embedding anything again.
"""

from __future__ import annotations

import doctest

import pytest
from fakes import FakeEmbeddings
from paths import SHARED_DOCS

from bench.fact_survey import survey
from core.contract import Fact, IndexMeta, StoredChunk, dump_facts, load_facts
from core.settings import Settings
from ingest import fact_code, indexer
from ingest import facts as facts_module
from ingest.facts import extract_facts
from ingest.indexer import run_ingest
from ingest.store import Store

QUEUES = """Create the flavor and the queue:

```yaml
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: gpu-a
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: team-q
spec:
  resourceGroups:
  - coveredResources: ["cpu", "nvidia.com/gpu"]
    flavors:
    - name: "gpu-a"
      resources:
      - name: "nvidia.com/gpu"
        nominalQuota: 8  # eight cards
```
"""

HELM = """```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-ctl
spec:
  replicas: {{ .Values.replicas | default 2 }}
  template:
    spec:
      priorityClassName: high-batch
```
"""

JSON = """```json
{
  "apiVersion": "v1",
  "kind": "Pod",
  "metadata": {"name": "probe"},
  "spec": {"restartPolicy": "Never"}
}
```
"""

SLURM_CONF = """Lines of an example *slurm.conf*:

```
# two racks
SelectType=select/cons_tres
NodeName=gn[01-04] Gres=gpu:h100:4 RealMemory=512000
PriorityWeightAge=500 # age counts a little
```
"""

USAGE = """```console
$ runbox --help
      --image=NAME[:TAG]
                      the image to start the box from. It is pulled
                      once per node.
      --keep          keep the box after the task ends
      --cores=N       cores given to the box (default: 2)
```
"""

FLAG_TABLE = """| Flag | Meaning | Default |
|---|---|---|
| `--spread=MODE` | how tasks are spread | `block` |
| `--quiet` | print nothing | off |
"""

PARAMS = """- **SweepInterval** — seconds between two sweeps. Default: 45.
- `max-retries`: how often a failed step is started again (default: 3)
- **NOTE**: this list is abridged.
"""

RUN_ON = (
    "DecayWindow: How long usage counts. The default value is 9-0 (9 days). SweepLimit: The most jobs swept at once."
)

TABLE = """| 項目 | Slurm | Kubernetes |
|---|---|---|
| 単位 | ジョブ | Pod |
| キュー | partition | `LocalQueue` |
"""

JAPANESE = """次の設定で起動します。設定ファイルは `box.conf` です：

```
BoxMode=strict
```

環境変数も設定します。

```bash
export BOX_HOME=/srv/box
srun --cpu-bind=cores -n4 ./train
```
"""

SHELL_SET = """```bash
helm install ctl ./chart --set image.tag=v2.1 --set workers=3
```
"""

CASES = {
    "kueue multi-document": (
        QUEUES,
        [
            ("manifest", "ResourceFlavor gpu-a", "metadata > name", "gpu-a"),
            ("manifest", "ClusterQueue team-q", "kind", "ClusterQueue"),
            ("manifest", "ClusterQueue team-q", "spec > resourceGroups > coveredResources", "nvidia.com/gpu"),
            ("manifest", "ClusterQueue team-q", "spec > resourceGroups > flavors > name", "gpu-a"),
            ("manifest", "ClusterQueue team-q", "spec > resourceGroups > flavors > resources > nominalQuota", "8"),
        ],
    ),
    "helm template": (
        HELM,
        [
            ("manifest", "Deployment {{ .Release.Name }}-ctl", "kind", "Deployment"),
            ("manifest", "Deployment {{ .Release.Name }}-ctl", "spec > replicas", "{{ .Values.replicas | default 2 }}"),
            (
                "manifest",
                "Deployment {{ .Release.Name }}-ctl",
                "spec > template > spec > priorityClassName",
                "high-batch",
            ),
        ],
    ),
    "json manifest": (
        JSON,
        [("manifest", "Pod probe", "apiVersion", "v1"), ("manifest", "Pod probe", "spec > restartPolicy", "Never")],
    ),
    "slurm.conf": (
        SLURM_CONF,
        [
            ("config", "slurm.conf", "SelectType", "select/cons_tres"),
            ("config", "slurm.conf", "NodeName", "gn[01-04]"),
            ("config", "slurm.conf NodeName=gn[01-04]", "Gres", "gpu:h100:4"),
            ("config", "slurm.conf NodeName=gn[01-04]", "RealMemory", "512000"),
            ("config", "slurm.conf", "PriorityWeightAge", "500"),
        ],
    ),
    "usage block": (
        USAGE,
        [
            ("flag", "runbox", "--image", "NAME[:TAG]"),
            ("flag", "runbox", "--keep", "--keep"),
            ("flag", "runbox", "--cores", "N"),
        ],
    ),
    "flag table": (
        FLAG_TABLE,
        [
            ("cell", "--spread=MODE", "Meaning", "how tasks are spread"),
            ("cell", "--spread=MODE", "Default", "block"),
            ("flag", "", "--spread", "MODE"),
            ("flag", "", "--quiet", "--quiet"),
        ],
    ),
    "parameter list": (
        PARAMS,
        [("param", "", "SweepInterval", "45"), ("param", "", "max-retries", "3")],
    ),
    "run-on definitions": (
        RUN_ON,
        [("param", "", "DecayWindow", "9-0"), ("param", "", "SweepLimit", "The most jobs swept at once.")],
    ),
    "markdown table": (
        TABLE,
        [
            ("cell", "単位", "Slurm", "ジョブ"),
            ("cell", "単位", "Kubernetes", "Pod"),
            ("cell", "キュー", "Slurm", "partition"),
            ("cell", "キュー", "Kubernetes", "LocalQueue"),
        ],
    ),
    "japanese prose around code": (
        JAPANESE,
        [
            ("config", "box.conf", "BoxMode", "strict"),
            ("env", "export", "BOX_HOME", "/srv/box"),
            ("flag", "srun", "--cpu-bind", "cores"),
        ],
    ),
    "helm --set": (
        SHELL_SET,
        [("config", "helm install ctl", "image.tag", "v2.1"), ("config", "helm install ctl", "workers", "3")],
    ),
}


def _found(facts: list[Fact]) -> set[tuple[str, str, str, str]]:
    return {(f.kind, f.subject, f.key, f.value) for f in facts}


@pytest.mark.parametrize("text, expected", CASES.values(), ids=CASES.keys())
def test_the_stated_values_are_found_with_verbatim_spans(text: str, expected: list[tuple[str, str, str, str]]) -> None:
    facts = extract_facts(text)
    assert set(expected) <= _found(facts)
    for fact in facts:
        assert text[fact.start : fact.end] == fact.value, fact
        assert text.count("\n", 0, fact.start) == fact.line, fact


@pytest.mark.parametrize("text", [t for t, _ in CASES.values()], ids=CASES.keys())
def test_the_same_text_indented_in_a_list_item_keeps_its_spans(text: str) -> None:
    nested = "- step:\n\n" + "\n".join(f"  {line}" if line else "" for line in text.split("\n"))
    for fact in extract_facts(nested):
        assert nested[fact.start : fact.end] == fact.value, fact


def test_manifest_facts_carry_their_documents_api_version_and_kind() -> None:
    facts = {f.key: f for f in extract_facts(QUEUES) if f.subject == "ClusterQueue team-q"}
    quota = facts["spec > resourceGroups > flavors > resources > nominalQuota"]
    assert (quota.api_version, quota.object_kind) == ("kueue.x-k8s.io/v1beta1", "ClusterQueue")
    assert quota.gloss == "kueue ClusterQueue spec resourceGroups flavors resources nominalQuota"
    flavor = next(f for f in extract_facts(QUEUES) if f.subject == "ResourceFlavor gpu-a" and f.key == "kind")
    assert flavor.object_kind == "ResourceFlavor"  # the first document's kind, not the second's


def test_descriptions_and_defaults() -> None:
    usage = {f.key: f for f in extract_facts(USAGE)}
    assert usage["--image"].description == "the image to start the box from. It is pulled once per node."
    assert usage["--cores"].default == "2" and usage["--keep"].default == ""
    table = {f.key: f for f in extract_facts(FLAG_TABLE) if f.kind == "flag"}
    assert (table["--spread"].description, table["--spread"].default) == ("how tasks are spread", "block")
    params = {f.key: f for f in extract_facts(PARAMS)}
    assert params["SweepInterval"].description == "seconds between two sweeps. Default: 45."
    assert "NOTE" not in params  # a remark, not a parameter


@pytest.mark.parametrize(
    "text", ["", "あ", "Plain prose, nothing to read. 🙂", "```python\nx = 1\n```", "```yaml\n: [\n```"]
)
def test_text_without_facts_gives_none(text: str) -> None:
    assert extract_facts(text) == []


def test_the_stored_form_round_trips() -> None:
    facts = extract_facts(QUEUES + SLURM_CONF)
    stored = dump_facts(facts)
    assert dump_facts([]) == ""
    base = dict(id="d#0", doc_id="d", doc_hash="h", title="t", url="", section="", kind="text", language="en", index=0)
    assert load_facts(StoredChunk(**base, text="x", facts=stored)) == facts
    assert load_facts(StoredChunk(**base, text="x")) == []


DOC = """---
id: "box-notes"
title: "Box notes"
url: "https://example.test/box"
---

# Box notes

## Setup

Lines of an example *slurm.conf*:

```
SelectType=select/cons_tres
NodeName=gn[01-04] Gres=gpu:h100:4
```
"""


def test_an_ingest_stores_the_facts_with_the_chunk_and_reads_them_back(settings: Settings) -> None:
    (settings.index.corpus_dir / "box-notes.md").write_text(DOC, encoding="utf-8")
    run_ingest(settings, FakeEmbeddings())
    gen = Store.open(settings).current()
    assert gen is not None and gen.meta is not None and gen.meta.facts
    chunks, _ = gen.all_chunks()
    stored = [f for c in chunks for f in load_facts(c)]
    assert [f for c in chunks for f in extract_facts(c.text)] == stored
    assert ("config", "slurm.conf NodeName=gn[01-04]", "Gres", "gpu:h100:4") in _found(stored)
    for chunk in chunks:
        for fact in load_facts(chunk):
            assert chunk.text[fact.start : fact.end] == fact.value


def test_an_index_built_before_facts_gets_them_without_embedding_again(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    (settings.index.corpus_dir / "box-notes.md").write_text(DOC, encoding="utf-8")
    embeddings = FakeEmbeddings()
    real_meta = indexer.index_meta
    monkeypatch.setattr(indexer, "index_meta", lambda s, e: IndexMeta(**{**real_meta(s, e).model_dump(), "facts": ""}))
    monkeypatch.setattr(indexer, "extract_facts", lambda text: [])
    first = run_ingest(settings, embeddings)
    monkeypatch.undo()
    calls = embeddings.calls
    again = run_ingest(settings, embeddings)
    assert again.rebuilt and (again.embedded, embeddings.calls) == (0, calls)
    assert again.chunks_total == first.chunks_total
    gen = Store.open(settings).current()
    assert gen is not None
    assert any(load_facts(c) for c in gen.all_chunks()[0])


def test_doctests_pass() -> None:
    assert doctest.testmod(facts_module).failed == 0 and doctest.testmod(fact_code).failed == 0


@pytest.mark.skipif(not SHARED_DOCS.is_dir(), reason=f"{SHARED_DOCS} not on this machine")
def test_the_real_corpus_yields_every_kind_with_verbatim_spans() -> None:
    found, _, chunks = survey(SHARED_DOCS)  # the survey asserts every span itself
    kinds = {f.kind for doc_facts in found.values() for f in doc_facts}
    assert kinds == {"manifest", "config", "flag", "param", "cell", "env"} and chunks > 100
    gres = {(f.subject, f.key, f.value) for f in found["slurm-gres"]}
    assert ("gres.conf", "AutoDetect", "nvml") in gres
