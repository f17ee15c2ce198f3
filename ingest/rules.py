"""Decision rules the corpus states, extracted at ingest (pure): situation → platform, with the quote.

Three shapes of text state a rule:
- a recommendation table: a column whose header names the choice (適切なプラットフォーム, Suitable
  platform) holds one platform per row; the row's other cells are the situation and the reason;
- a conditional statement: "…ならSlurmが本命", "…場合はKubernetes + Kubeflowの利用を検討", "If you …,
  Slurm is the shortcut", "choose Kubernetes if …";
- a strengths list: the items under "Kubernetesの強み" / "Strengths of Slurm".
A sentence that gives training to Slurm and inference to Kubernetes states the hybrid.

Each rule's condition is read into situation facets with the same reader the app uses on questions
(``core.situation``), so a verdict is a table over facets. Rules are stored with their chunk
(``StoredChunk.rules``, JSON), so an incremental ingest rebuilds exactly the rules of the documents that
changed.

Deliberately left out: matching a situation to rules (``app.advice.verdict``) and any rule written in code:
everything here is read from the documents.

    >>> [r.verdict for r in extract_rules("| シナリオ | 適切なプラットフォーム |\\n|---|---|\\n| オンプレ | Slurm |", "c#0", "d", "7", "ja")]
    ['slurm']
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from core.contract import Rule
from core.situation import read, role_split
from core.units import Unit, split_units

PLATFORM_NAMES = {"slurm": re.compile(r"slurm", re.I), "kubernetes": re.compile(r"kubernetes|k8s", re.I)}
_CHOICE_HEADER = re.compile(r"プラットフォーム|platform|推奨|recommend|choice|選択", re.I)
_REASON_HEADER = re.compile(r"理由|reason|why|rationale", re.I)
_P = r"(slurm|kubernetes|k8s)"
# A platform named as the recommendation, not merely described: "Slurmが本命", "Kubernetes + Kubeflowの利用を
# 検討", "Slurm is the shortcut", "consider Kubernetes" ("If no topology is given, Slurm will …" is no rule).
_JA_REC = r"[^。、]{0,24}?(?:が本命|が近道|が最適|が適|が向|が良い|がよい|がおすすめ|を推奨|を検討|を選|を採用)"
_EN_REC = (
    r"\s+(?:is|are|would be)\s+(?:the\s+|a\s+)?(?:shortcut|best|better|recommended|preferred|ideal|right|natural"
    r"|go-to|obvious|first|front-runner|prime|main|top|leading|strongest)"
)
# "<condition>ならSlurmが本命", "<condition>場合はKubernetes + Kubeflowの利用を検討"
_JA_IF = re.compile(
    rf"^(?P<cond>.{{6,}}?)(?:なら|ならば|のであれば|場合は|場合には)\s*(?P<p>{_P})(?:{_JA_REC}|\W*$)", re.I
)
# "If <condition>, Slurm is the shortcut" / "If <condition>, the basic policy is to consider Kubernetes"
_EN_IF = re.compile(
    rf"^(?:if|when)\s+(?P<cond>.{{6,}}?),\s*(?:(?P<p>{_P})(?:{_EN_REC}|\W*$)|[^,.]{{0,60}}?\b(?:consider|choose|use|pick|go with)"
    rf"\s+(?P<p2>{_P}))",
    re.I,
)
# "choose/use/consider Kubernetes if/when <condition>"
_EN_THEN_IF = re.compile(
    rf"\b(?:choose|use|pick|consider|go with)\s+(?P<p>{_P})\b[^.]*?\b(?:if|when|for)\s+(?P<cond>.{{6,}})", re.I
)
_STRENGTHS = re.compile(rf"(?P<p>{_P})\s*(?:の強み|'s strengths)|strengths of\s+(?P<q>{_P})", re.I)


def platform_of(text: str) -> str | None:
    """'slurm' or 'kubernetes' when ``text`` names exactly one of them."""
    named = [name for name, rx in PLATFORM_NAMES.items() if rx.search(text)]
    return named[0] if len(named) == 1 else None


def _canonical(name: str) -> str:
    return "slurm" if name.lower() == "slurm" else "kubernetes"


def _table_rule(unit: Unit) -> tuple[str, str, str] | None:
    """(verdict, condition, reason) of a recommendation-table row."""
    cells = [cell.partition(": ") for cell in unit.text.split("; ")]
    choice = next((c for c in cells if c[1] and _CHOICE_HEADER.search(c[0])), None)
    if choice is None:
        return None
    verdict = platform_of(choice[2])
    if verdict is None:
        return None
    reason = next((c[2] for c in cells if c[1] and _REASON_HEADER.search(c[0])), "")
    rest = [c[2] if c[1] else c[0] for c in cells if c is not choice and c[2] != reason]
    condition = "; ".join(r for r in rest if r)
    return (verdict, condition, reason) if condition else None


def _statement_rule(unit: Unit) -> tuple[str, str] | None:
    """(verdict, condition) of a conditional recommendation sentence or list item."""
    text = unit.text.strip()
    if role_split(text):
        return "hybrid", text
    for rx in (_JA_IF, _EN_IF, _EN_THEN_IF):
        m = rx.search(text)
        if m and platform_of(m.group("cond")) is None:
            named = m.groupdict().get("p") or m.groupdict().get("p2") or ""
            return _canonical(named), m.group("cond").strip(" ,、")
    return None


def _strength_rule(unit: Unit) -> str | None:
    """The platform whose strengths list holds this item."""
    if unit.kind != "item" or not unit.context:
        return None
    m = _STRENGTHS.search(unit.context.split(" › ")[-1])
    if not m:
        return None
    return _canonical(m.group("p") or m.group("q"))


def extract_rules(text: str, chunk_id: str, doc_id: str, section: str, language: str, kind: str = "text") -> list[Rule]:
    """Every rule one chunk states, in order."""
    rules: list[Rule] = []
    for unit in split_units(text, kind):
        found: tuple[str, str, str, str] | None = None  # verdict, condition, reason, source
        if unit.kind == "row":
            row = _table_rule(unit)
            found = (row[0], row[1], row[2], "table") if row else None
        elif (platform := _strength_rule(unit)) is not None:
            found = (platform, unit.text, "", "strengths")
        elif unit.kind in ("sentence", "item"):
            stated = _statement_rule(unit)
            found = (stated[0], stated[1], "", "statement") if stated else None
        if found is None:
            continue
        verdict, condition, reason, source = found
        rules.append(
            Rule(
                id=f"{chunk_id}:r{len(rules)}",
                doc_id=doc_id,
                chunk_id=chunk_id,
                section=section,
                language=language,
                condition=condition,
                verdict=verdict,
                reason=reason,
                quote=unit.quote,
                source=source,
                facets=read(condition).values(),
            )
        )
    return rules


def dump_rules(rules: Sequence[Rule]) -> str:
    return json.dumps([r.model_dump() for r in rules], ensure_ascii=False) if rules else ""


def load_rules(stored: str) -> list[Rule]:
    return [Rule.model_validate(r) for r in json.loads(stored)] if stored else []
