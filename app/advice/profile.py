"""The questionnaire: a team's situation given as facet values (``Profile``) → a recommendation.

The form's answers are facets already, so nothing is turned back into text: they go straight into the
verdict table and its fitted combiner a selection question uses (``app.advice.table``), under the same rules
the documents state. Each answer becomes a reason: the platform it votes for and the rule it votes through, cited; an
answer no rule speaks to is listed as such.

Deliberately left out: any verdict written here (every vote is a rule read from the documents).
"""

from __future__ import annotations

from app.advice.model import verdict_model
from app.advice.reader import rules_for
from app.advice.verdict import build_verdict, needs, situation_of
from app.answer.citations import enrich
from app.answer.compose import Numbering
from app.answer.verdict_lines import cite_votes, verdict_lines
from app.models import Profile, Reason, Recommendation, Verdict
from app.retrieval.snapshot import Snapshot
from core.situation import facets


def recommend(profile: Profile, snap: Snapshot) -> Recommendation:
    language = profile.lang
    situation = situation_of(profile.facets())
    verdict = build_verdict(situation, rules_for(language, snap), language, model=verdict_model())
    numbering = Numbering()
    if verdict is not None:
        verdict = cite_votes(verdict, snap.chunks.get, numbering.cite)
    citations = enrich(numbering.citations(), [], snap)  # deep links; a translation's original beside its quote
    by_chunk = {c.chunk_id: c for c in citations}
    defs = facets()
    reasons = []
    for facet, value in profile.facets().items():
        vote = next((v for v in (verdict.votes if verdict else []) if v.facet == facet), None)
        reasons.append(
            Reason(
                criterion=facet,
                criterion_label=defs.facet_label(facet, language),
                value=value,
                answer=defs.label(facet, value, language),
                verdict=vote.platform if vote else None,
                rule=vote.rule if vote else None,
                citations=[by_chunk[vote.rule.chunk_id]] if vote and vote.rule.chunk_id in by_chunk else [],
            )
        )
    return Recommendation(
        verdict=verdict.value if verdict else None,
        reasons=reasons,
        citations=citations,
        answer=_markdown(verdict, reasons, language, situation_needs=needs(situation, language)),
        changes=verdict.changes if verdict else [],
        detail=verdict,
        needs=needs(situation, language),
    )


def _markdown(verdict: Verdict | None, reasons: list[Reason], language: str, situation_needs: list[str]) -> str:
    ja = language == "ja"
    if verdict is None:
        ask = "、".join(situation_needs) if ja else ", ".join(situation_needs)
        head = (
            f"回答からはプラットフォームを決められません。次の点を教えてください: {ask}"
            if ja
            else f"These answers do not decide a platform. Tell me about: {ask}"
        )
        lines = [head, ""]
    else:
        lines = [*verdict_lines(verdict, language), ""]
    for r in reasons:
        if r.rule is None:
            none = "資料に当てはまる推奨なし" if ja else "no rule in the documents speaks to this"
            lines.append(f"- **{r.criterion_label}**: {r.answer} — {none}")
    return "\n".join(lines).rstrip()
