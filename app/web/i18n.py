"""The web UI's strings in English and Japanese, one language at a time.

``t("ask", "ja")`` → ``"質問する"``. Every label, button, note and message the UI shows is here, keyed by a
short name, so the language toggle can relabel the page and the renderers can write in the user's
language. An unknown language falls back to English; an unknown key is a programming error (KeyError).
The questionnaire asks about the situation facets of ``core/facets.toml`` (``core.situation.facets``):
its questions and choices are those facets' own labels, so the form, the "Read as" line and the answers
speak of a situation in the same words.

Deliberately left out: answer text (written by the pipeline in the question's language), document text,
and the facets themselves (``core/facets.toml``).
"""

from __future__ import annotations

from typing import Literal

from core.situation import facets

Lang = Literal["en", "ja"]
LANGS: list[tuple[str, Lang]] = [("EN", "en"), ("日本語", "ja")]

_STRINGS: dict[str, tuple[str, str]] = {
    "title": ("# Slurm × Kubernetes Advisor", "# Slurm×K8s アドバイザー"),
    "intro": (
        "Ask about running distributed LLM training on Slurm or Kubernetes — every answer cites the knowledge base.",
        "LLM分散学習の基盤選び（Slurm か Kubernetes か）について質問してください。回答には出典が付きます。",
    ),
    "tab_chat": ("💬 Ask", "💬 質問"),
    "tab_helper": ("🧭 Which platform?", "🧭 どちらの基盤？"),
    "tab_library": ("📚 Library", "📚 文書"),
    "placeholder": ("Ask in English or Japanese…", "日本語または英語で質問してください…"),
    "chat_placeholder": (
        "**Ask a question below or pick an example.** Answers quote the knowledge base with numbered sources.",
        "**下の欄に質問するか、質問例を選んでください。** 回答には番号付きの出典が付きます。",
    ),
    "ask": ("Ask", "質問する"),
    "stop": ("■ Stop", "■ 停止"),
    "clear": ("New chat", "新しい会話"),
    "export_chat": ("⬇ Export as Markdown", "⬇ Markdownで保存"),
    "examples": ("Examples", "質問例"),
    "settings": ("Settings", "設定"),
    "backend": ("Answer backend", "回答方式"),
    "k": ("Passages to use", "参照するパッセージ数"),
    "refresh": ("🔄 Refresh status", "🔄 状態を更新"),
    "passages_panel": ("Retrieved passages and scores", "検索されたパッセージとスコア"),
    "comment": ("Comment on your rating (optional)", "評価へのコメント（任意）"),
    "save_comment": ("Save comment", "コメントを保存"),
    "vote_saved": ("Thank you — your rating is saved.", "評価を保存しました。ありがとうございます。"),
    "comment_saved": ("Comment saved.", "コメントを保存しました。"),
    "feedback_failed": (
        "Your rating could not be saved (the feedback database is unavailable). Please try again later.",
        "評価を保存できませんでした（フィードバックのデータベースに接続できません）。後でもう一度お試しください。",
    ),
    "close": ("✕ Close", "✕ 閉じる"),
    "vote_first": ("Rate an answer with 👍 or 👎 first.", "先に 👍 / 👎 で回答を評価してください。"),
    "helper_intro": (
        "Describe your situation; the recommendation follows the decision rules the knowledge base states, "
        "each with its source. Leave a question on “Not sure” if it does not apply.",
        "状況を選ぶと、ナレッジベースに書かれた判断ルールに沿って推奨を示します（各ルールに出典付き）。"
        "当てはまらない項目は「わからない」のままにしてください。",
    ),
    "recommend": ("Recommend", "推奨を表示"),
    "export_rec": ("⬇ Export recommendation", "⬇ 推奨を保存"),
    "not_sure": ("Not sure", "わからない"),
    "rules_panel": ("How recommendations are made", "推奨の決め方（判断ルール）"),
    "language": ("Language", "言語"),
    # source panel
    "panel_translated": ("Translation", "翻訳"),
    "open_page": ("Open the original page ↗", "元のページを開く ↗"),
    "panel_translation": (
        "A translation of {of}; the original section is shown beside it.",
        "{of} の翻訳です。原文の該当セクションを並べて表示しています。",
    ),
    "panel_notes": (
        "Paraphrased notes, not the source's wording: check the original page before quoting it.",
        "要約メモです（原文の文言ではありません）。引用する前に元のページを確認してください。",
    ),
    "section_missing": (
        "This section is no longer in the index; the quote is shown as it was cited.",
        "このセクションは現在のインデックスにありません。引用時の文面を表示しています。",
    ),
    "source_gone": (
        "This source is no longer available: ask the question again.",
        "この出典はもう利用できません。もう一度質問してください。",
    ),
    # rendering
    "sources": ("Sources", "出典"),
    "quoted": ("Quoted passage", "引用"),
    "paraphrased": ("paraphrased notes — not the source's wording", "要約メモ（原文の引用ではありません）"),
    "translation": ("translation", "翻訳"),
    "original": ("Original", "原文"),
    "stale": ("translation may be out of date", "翻訳が古い可能性があります"),
    "verdict": ("Verdict", "判定"),
    "changes": ("What would change it", "判定が変わる条件"),
    # the answer's shape
    "answer": ("Answer", "回答"),
    "read_as": ("Read as", "読み取った状況"),
    "read_question": ("Read as", "質問の読み取り"),
    "read_nothing": ("nothing answered yet", "まだ回答がありません"),
    "depends_on": ("Depends on", "決め手"),
    "from_kb": ("From the knowledge base", "ナレッジベースの該当箇所"),
    "not_stated": ("Not stated in the documents", "資料には記載がありません"),
    "not_stated_help": (
        "The documents cover this, but none of them states the value you asked for.",
        "この話題は資料にありますが、質問の値はどの資料にも書かれていません。",
    ),
    "asked": ("You asked", "質問"),
    "focus": ("About", "対象"),
    "related": ("Related, but not an answer", "関連する記述（回答ではありません）"),
    "needs": (
        "To recommend a platform, tell me: {facts}",
        "プラットフォームを推奨するには、次の点を教えてください: {facts}",
    ),
    "needs_none": (
        "No rule in the documents decides on these answers.",
        "資料の判断ルールでは、この回答からは決められません。",
    ),
    "missing": ("Not stated in the documents", "資料に記載なし"),
    "why": ("Why", "理由"),
    "why_more": ("What would change it, and the rules behind it", "判定が変わる条件と根拠のルール"),
    "rules_used": ("The rules it rests on", "根拠のルール"),
    "rule_situation": ("Situation", "状況"),
    "rule_platform": ("Platform", "基盤"),
    "rule_source": ("Source", "出典"),
    "edit_facet": ("Change “{facet}” in the form", "フォームで「{facet}」を変更"),
    "flagged": (
        "{n} sentence(s) of the model's answer had no valid citation and were left out.",
        "モデルの回答のうち、出典のない {n} 文を除きました。",
    ),
    "notice_llm_timeout": (
        "The language model did not answer in time, so this answer is quoted from the documents instead.",
        "言語モデルが時間内に応答しなかったため、文書からの引用で回答しています。",
    ),
    "notice_llm_unavailable": (
        "The language model is not available right now, so this answer is quoted from the documents instead.",
        "言語モデルを現在利用できないため、文書からの引用で回答しています。",
    ),
    "notice_llm_unsupported": (
        "The language model's answer cited none of the passages, so this answer is quoted from the documents instead.",
        "言語モデルの回答が出典を示さなかったため、文書からの引用で回答しています。",
    ),
    "no_passages": ("No passages retrieved yet.", "まだ検索結果はありません。"),
    "score_help": (
        "**Relevance** ranks the passages: rank fusion of the two searches (higher is better). "
        "**Meaning** is the semantic similarity (cosine, −1…1); **Keywords** is the BM25 word-match score.",
        "**関連度**は2つの検索の順位を統合したスコア（高いほど上位）。**意味**は意味の類似度（コサイン、−1〜1）、"
        "**キーワード**は語の一致度（BM25）です。",
    ),
    "relevance": ("relevance", "関連度"),
    "meaning": ("meaning", "意味"),
    "keywords": ("keywords", "キーワード"),
    "loading": ("⏳ **Loading models…** — questions will be answered once ready.", "⏳ **モデルを読み込み中…**"),
    "waiting": ("⏳ Models are still loading…", "⏳ モデルを読み込み中…"),
    "no_index": (
        "⚠️ **No index yet** — run `ingest` to build it; this line updates by itself.",
        "⚠️ **インデックスがありません** — `ingest` を実行してください（この表示は自動で更新されます）。",
    ),
    "status": (
        "📚 **{docs}** documents · **{chunks}** chunks · embedder `{embedder}` · last ingest {when}",
        "📚 文書 **{docs}** 件 · チャンク **{chunks}** 件 · 埋め込み `{embedder}` · 最終取り込み {when}",
    ),
    "stale_one": ("1 translation is stale: {ids}", "古い翻訳が 1 件あります: {ids}"),
    "stale_many": ("{n} translations are stale: {ids}", "古い翻訳が {n} 件あります: {ids}"),
    "clause_sep": ("; ", "。"),
    "sections_named": (" ({names})", "（{names}）"),
    "unaligned_one": (
        "1 of its sections is not indexed until it is re-translated",
        "再翻訳するまで 1 セクションは索引に含まれません",
    ),
    "unaligned_many": (
        "{n} of its sections are not indexed until it is re-translated",
        "再翻訳するまで {n} セクションは索引に含まれません",
    ),
    "unaligned_their": (
        "{n} of their sections are not indexed until they are re-translated",
        "再翻訳するまで {n} セクションは索引に含まれません",
    ),
    "index_unavailable": ("⚠️ **Index unavailable** — {msg}", "⚠️ **インデックスを利用できません** — {msg}"),
    "kb_unavailable": (
        "⚠️ **The knowledge base is unavailable:** {msg}\n\nAsk again once it is back; the app reconnects by itself.",
        "⚠️ **ナレッジベースを利用できません:** {msg}\n\n復旧後にもう一度質問してください。",
    ),
    "llm_unavailable": (
        "⚠️ **The language-model server is not reachable right now.** Choose “Extractive (offline)” under "
        "Settings to get an answer quoted from the documents, or try again later.",
        "⚠️ **言語モデルのサーバーに現在接続できません。** 「設定」で「抽出型（オフライン）」を選ぶと、"
        "ドキュメントから引用した回答を得られます。時間をおいて再度お試しください。",
    ),
    "internal": (
        "⚠️ Something went wrong while answering. Please try again; if it keeps happening, check the server log.",
        "⚠️ 回答中にエラーが発生しました。もう一度お試しください。",
    ),
    "limit": ("(limit: {n} characters)", "（上限 {n} 文字）"),
    "too_long": (
        "**The question is too long:** {n} characters; the limit is {limit}. Shorten it and ask again — "
        "your text is still in the box.",
        "**質問が長すぎます:** {n} 文字です（上限 {limit} 文字）。短くしてもう一度質問してください。入力した文章は欄に残っています。",
    ),
    "unavailable": ("unavailable", "利用不可"),
    "more_docs": ("More from the documents", "ドキュメントからのその他の記述"),
    "against": ("argues against the verdict", "この判定に反する記述"),
    "backend_info": (
        "A language-model backend is offered here while its server is running.",
        "言語モデルの回答方式は、そのサーバーが動いているときにここに表示されます。",
    ),
    "stopped": (
        "■ Stopped — this answer was not finished. Your question is back in the box.",
        "■ 停止しました — この回答は途中までです。質問は入力欄に戻してあります。",
    ),
    "busy": (
        "**The advisor is busy:** {n} questions are being answered or waiting. Ask again in a moment — "
        "your text is still in the box.",
        "**ただいま混み合っています:** {n} 件の質問を処理中または待機中です。少し待ってからもう一度質問してください。"
        "入力した文章は欄に残っています。",
    ),
    # library
    "lib_title": ("Title", "タイトル"),
    "lib_lang": ("Language", "言語"),
    "lib_license": ("Licence", "ライセンス"),
    "lib_kind": ("Completeness", "完全性"),
    "lib_chunks": ("Chunks", "チャンク"),
    "kind_full": ("full text", "全文"),
    "kind_notes": ("paraphrased notes", "要約メモ"),
    "kind_translation": ("translation of {of}", "{of} の翻訳"),
    "lib_empty": ("_No documents indexed yet — run `ingest`._", "_文書がありません — `ingest` を実行してください。_"),
    "rules_empty": ("_No decision rules in the index yet._", "_判断ルールはまだありません。_"),
    "rec_title": ("Recommendation", "推奨"),
    "no_rule": ("no rule in the documents speaks to this", "該当する判断ルールはありません"),
    "no_verdict": ("No platform yet", "まだ決まりません"),
}

VERDICTS: dict[str, tuple[str, str]] = {
    "slurm": ("Slurm", "Slurm"),
    "kubernetes": ("Kubernetes", "Kubernetes"),
    "hybrid": ("Hybrid — train on Slurm, serve on Kubernetes", "ハイブリッド（学習はSlurm、推論はKubernetes）"),
    "depends": ("It depends", "条件次第"),
}

UNSET = "unset"  # the questionnaire's "Not sure" choice (Profile field left None)


def t(key: str, lang: str, **values: object) -> str:
    """The string ``key`` in ``lang`` (English when unknown), with ``{name}`` placeholders filled."""
    en, ja = _STRINGS[key]
    text = ja if lang == "ja" else en
    return text.format(**values) if values else text


BACKENDS = {
    "extractive": ("extractive", "抽出型"),
    "openai": ("OpenAI-compatible", "OpenAI互換"),
    "ollama": ("Ollama", "Ollama"),
}


def backend_name(backend: str, lang: str) -> str:
    """An answer backend's name as the footer of an answer shows it: ``("extractive", "ja")`` → ``"抽出型"``."""
    en, ja = BACKENDS.get(backend, (backend, backend))
    return ja if lang == "ja" else en


def verdict_label(value: str | None, lang: str) -> str:
    """A verdict's name; ``None`` (nothing decides it yet) has its own words."""
    if value is None:
        return t("no_verdict", lang)
    en, ja = VERDICTS.get(value, (value, value))
    return ja if lang == "ja" else en


def capital(text: str) -> str:
    """A label as a form or a line starts it: "where it runs" → "Where it runs" (Japanese is unchanged)."""
    return text[:1].upper() + text[1:]


def form_facets() -> tuple[str, ...]:
    """The questionnaire's questions: every situation facet, in the data file's order (Profile's fields)."""
    return facets().order


def facet_name(facet: str, lang: str) -> str:
    """A facet's human label ("where it runs"); a facet the data file does not know is shown as it is."""
    defs = facets()
    return defs.facet_label(facet, as_lang(lang)) if facet in defs.labels else facet


def value_name(facet: str, value: str, lang: str) -> str:
    """``("deployment", "on_prem", "ja")`` → ``"オンプレミス"``; an unknown value is shown as it is."""
    defs = facets()
    return defs.label(facet, value, as_lang(lang)) if value in defs.values.get(facet, {}) else value


def question_choices(facet: str, lang: str) -> list[tuple[str, str]]:
    """Radio choices (label, value) for a questionnaire facet, "Not sure" first."""
    values = facets().values[facet]
    return [(t("not_sure", lang), UNSET)] + [(capital(value_name(facet, v, lang)), v) for v in values]


def question_label(facet: str, lang: str) -> str:
    return capital(facet_name(facet, lang))


def quoted(text: str, lang: str) -> str:
    """The user's words in quotation marks of the language: “…” or 「…」."""
    return f"「{text}」" if lang == "ja" else f"“{text}”"


def listed(items: list[str], lang: str) -> str:
    """Items joined as the language lists them: "a, b" or "a、b"."""
    return ("、" if lang == "ja" else ", ").join(items)


def as_lang(value: object) -> Lang:
    return "ja" if value == "ja" else "en"
