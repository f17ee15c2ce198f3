"""The web UI's strings in English and Japanese, one language at a time.

``t("ask", "ja")`` → ``"質問する"``. Every label, button, note and message the UI shows is here, keyed by a
short name, so the language toggle can relabel the page and the renderers can write in the user's
language. An unknown language falls back to English; an unknown key is a programming error (KeyError).

Deliberately left out: answer text (written by the pipeline in the question's language) and document text.
"""

from __future__ import annotations

from typing import Literal

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
    "flagged": ("{n} sentence(s) had no valid citation and should be checked.", "出典のない文が {n} 件あります。"),
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
    "stale_status": ("{n} translation(s) stale: {ids}", "古い翻訳 {n} 件: {ids}"),
    "index_unavailable": ("⚠️ **Index unavailable** — {msg}", "⚠️ **インデックスを利用できません** — {msg}"),
    "kb_unavailable": (
        "⚠️ **The knowledge base is unavailable:** {msg}\n\nAsk again once it is back; the app reconnects by itself.",
        "⚠️ **ナレッジベースを利用できません:** {msg}\n\n復旧後にもう一度質問してください。",
    ),
    "llm_unavailable": (
        "⚠️ **The answer backend is unavailable.** {msg}",
        "⚠️ **回答バックエンドを利用できません。** {msg}",
    ),
    "internal": (
        "⚠️ Something went wrong ({name}). Please try again; if it keeps happening, check the server log.",
        "⚠️ エラーが発生しました（{name}）。もう一度お試しください。",
    ),
    "limit": ("(limit: {n} characters)", "（上限 {n} 文字）"),
    "too_long": (
        "**The question is too long:** {n} characters; the limit is {limit}. Shorten it and ask again — "
        "your text is still in the box.",
        "**質問が長すぎます:** {n} 文字です（上限 {limit} 文字）。短くしてもう一度質問してください。入力した文章は欄に残っています。",
    ),
    "unavailable": ("unavailable", "利用不可"),
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
    "why": ("Why", "理由"),
    "no_rule": ("no rule in the documents speaks to this", "該当する判断ルールはありません"),
    "no_verdict": ("no platform yet", "まだ決まりません"),
}

VERDICTS: dict[str, tuple[str, str]] = {
    "slurm": ("Slurm", "Slurm"),
    "kubernetes": ("Kubernetes", "Kubernetes"),
    "hybrid": ("Hybrid (both)", "ハイブリッド（併用）"),
    "depends": ("It depends", "条件次第"),
}

# The questionnaire (app.models.Profile): field → (label en, label ja, [(value, en, ja)]).
QUESTIONS: dict[str, tuple[str, str, list[tuple[str, str, str]]]] = {
    "deployment": (
        "Where does it run?",
        "実行環境",
        [("on_prem", "On-premises", "オンプレミス"), ("cloud", "Cloud", "クラウド")],
    ),
    "workload": (
        "Workload",
        "ワークロード",
        [("training", "Training only", "学習のみ"), ("training_and_serving", "Training and serving", "学習と推論")],
    ),
    "fleet": ("GPU fleet", "GPU台数", [("fixed", "Fixed", "固定"), ("elastic", "Elastic", "伸縮")]),
    "one_platform": (
        "One platform for training and serving?",
        "学習と推論を一つの基盤にまとめたいですか？",
        [
            ("yes", "Yes, one platform", "はい、一つにまとめたい"),
            ("no", "Separate platforms are fine", "分かれてもよい"),
        ],
    ),
    "hpc_experience": (
        "Team's HPC experience",
        "チームのHPC経験",
        [("experienced", "Experienced", "経験あり"), ("new", "New to HPC", "経験なし")],
    ),
    "ops_team": (
        "Ops headcount",
        "運用体制",
        [("small", "1–2 people", "1〜2人"), ("dedicated", "Dedicated team", "専任チーム")],
    ),
    "priority": (
        "What matters most?",
        "最も重視すること",
        [
            ("training_speed_cost", "Training speed and cost", "学習速度とコスト"),
            ("integration", "Integration with the stack", "既存基盤との統合"),
        ],
    ),
}
UNSET = "unset"  # the questionnaire's "Not sure" choice (Profile field left None)


def t(key: str, lang: str, **values: object) -> str:
    """The string ``key`` in ``lang`` (English when unknown), with ``{name}`` placeholders filled."""
    en, ja = _STRINGS[key]
    text = ja if lang == "ja" else en
    return text.format(**values) if values else text


def verdict_label(value: str | None, lang: str) -> str:
    """A verdict's name; ``None`` (nothing decides it yet) has its own words."""
    if value is None:
        return t("no_verdict", lang)
    en, ja = VERDICTS.get(value, (value, value))
    return ja if lang == "ja" else en


def question_choices(field: str, lang: str) -> list[tuple[str, str]]:
    """Radio choices (label, value) for a questionnaire field, "Not sure" first."""
    _, _, options = QUESTIONS[field]
    return [(t("not_sure", lang), UNSET)] + [(ja if lang == "ja" else en, value) for value, en, ja in options]


def question_label(field: str, lang: str) -> str:
    en, ja, _ = QUESTIONS[field]
    return ja if lang == "ja" else en


def criterion_label(field: str, lang: str) -> str:
    """A Profile field's question, or the field name itself when it is not one of ours."""
    return question_label(field, lang) if field in QUESTIONS else field


def choice_label(field: str, value: str, lang: str) -> str:
    """``("deployment", "cloud", "ja")`` → ``"クラウド"``; unknown values are shown as they are."""
    for option, en, ja in QUESTIONS.get(field, ("", "", []))[2]:
        if option == value:
            return ja if lang == "ja" else en
    return value


def as_lang(value: object) -> Lang:
    return "ja" if value == "ja" else "en"
