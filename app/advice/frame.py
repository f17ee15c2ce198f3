"""Elliptical follow-ups keep the previous question's frame (pure).

A short turn that only names a new thing ("And Volcano?", "KAI Schedulerだと？", "what about the default?")
asks the previous question again about that thing: the previous question is rewritten with the new
subject put where its subject was, so its answer type, attribute and parts carry over. Where the new thing
goes, in order: a product or platform replaces the previous product or platform alike (with the version written
after it: "Slinky v1.2"); the other end of a scale replaces its opposite (in the previous question's language); a
new identifier (``MaxJobCount``, any word typed as code) the previous identifier; a phrase the words it shares;
a thing with a value of its own ("1.18以前のリリース") is asked of the previous subject; a product's "XのY" the
previous product's (a product of several words whole: "MPI OperatorのMPIJob"); the thing an earlier follow-up
put in (a chain: "and Helm?", "And NCCL?"); what the previous question asks about its product ("3Dトーラス" over
"Slurmのtreeトポロジ", never the value asked); an undocumented name the platform a product depends on. The rewrite
works across languages: a name is the same word in both.
    >>> reframe("And Volcano?", "Which apiVersion do Kueue Topology objects use?", {"Kueue", "Volcano"})
    'Which apiVersion do Volcano Topology objects use?'
    >>> reframe("Slurmだと？", "Kubernetesで GPU を2枚要求するにはどう書く？", set())
    'Slurmで GPU を2枚要求するにはどう書く？'

A turn may ask the same measure again ("Slurmだとどのくらい？", "How much for Slurm?"): it is read the same
way when the previous question asked that kind of value.
    >>> reframe("Slurmだとどのくらい？", "How much memory does the Kubernetes control plane use?", set())
    'How much memory does the Slurm control plane use?'
    >>> reframe("Slurmだといつ？", "How much memory does the Kubernetes control plane use?", set()) is None
    True

Deliberately left out: a turn that asks something of its own ("And how do I upgrade it?") or only names a
kind of value ("what about the default?", "デフォルトは？", of a thing the previous answer named): it stands as
written and leans on the conversation only for retrieval (``app.advice.followup``); a clause ("置換を1回だけ
試すモードは？") or a new thing with no slot of its kind in the previous question is not substituted, since
nothing says which words it replaces; the previous answer type is not forced onto a turn left as written
(tried: it raised "not stated" refusals more than it found values).
"""

from __future__ import annotations

import re
from collections.abc import Collection

from app.answer.question import cued_types, focus_entities, lexicon
from core.text import content_tokens, normalize

# "And X?", "What about X?", "How about for X?", "Same for X?", "And with X then?"
_EN = re.compile(
    r"^\s*(?:ok(?:ay)?,?\s+|so,?\s+|then,?\s+)?(?:and|what about|how about|what of|same for|and what about|and how about)"
    r"\s+(?:(?:for|with|in|on|under|using)\s+)?(?P<x>[^?]{1,60}?)(?:\s+(?:then|instead|too))?\s*\??\s*$",
    re.I,
)
# "How much for X?", "And how many with X?": the same measure asked of a new thing.
_EN_MEASURE = re.compile(
    r"^\s*(?:and\s+|so\s+|then\s+)?(?P<wh>how much|how many|how long|how often)\s+(?:for|with|in|on|under|about)\s+"
    r"(?P<x>[^?]{1,60}?)\s*\??\s*$",
    re.I,
)
# "Xだと？", "Xの場合は？", "Xでは？", "Xなら？", "じゃあXは？", and with the same measure asked again: "Xだとどのくらい？"
_JA = re.compile(
    r"^\s*(?:じゃあ|では|それでは|それじゃ|あと|また|なら)?[、,\s]*(?P<x>[^？?。]{1,40}?)"
    r"(?:だと|では|なら|だったら|の場合は?|の方は|は|って)"
    r"(?:どう(?:ですか|なる|なります|でしょう)?|(?P<wh>どのくらい|どれくらい|どのぐらい|どれぐらい|いくつ|いくら|いつ)(?:ですか)?)?"
    r"[？?]\s*$"
)
# The new "thing" must be a thing, not a clause that asks or states something of its own.
_NOT_A_THING = re.compile(
    r"^(if|we|i|you|they|it|its|that|this|those|these|our|my|your|when|how|why|what|which|where|who|does|do|is|are|can)\b"
    r"|\b(if|we|should|would|could|will|can|do|does|is|are|was|were)\b|何|どう|どの|どこ|いつ|いくつ|ます|たい|する|して"
    # a demonstrative points back into the conversation ("そのリリースの目玉機能は？": the release just named)
    r"|それ|その|これ|この|あれ|あの",
    re.I,
)
_PLATFORM = re.compile(r"(?<![A-Za-z0-9])(slurm|kubernetes|k8s)(?![A-Za-z0-9])", re.I)
_ARTICLE = re.compile(r"^(the|a|an)\s+", re.I)
# "Kubernetes'", "Slurm's", "Kubernetesのほう", "Slurm側", "the Kueue equivalent", "Kueueで相当するもの": the owner
# alone is the new thing.
_OWNER_TAIL = re.compile(
    r"(['’]s?|の(ほう|方)|側|\s+(equivalent|counterpart|one|side|version of (it|that|this))"
    r"|(で|の)?(相当|同等|対応)(する|の)?(もの|機能|設定)?)$",
    re.I,
)
# A word typed as code: a capital after a lower-case letter inside it ("TASReplaceNodeOnNodeTaints"), or "_",
# "." or "/" between letters ("slurm.conf", "SLURM_JOB_ID").
_CODE_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[a-z][A-Z]|[_./][A-Za-z0-9])[A-Za-z0-9_./-]*")
# A thing named by a noun phrase: words, katakana and kanji runs, no particle that makes it a clause
# ("3Dトーラス", "balanced placement"; not "置換を1回だけ試すモード").
_WORD = r"(?:[A-Za-z0-9][A-Za-z0-9._+/#-]*|[ァ-ヶー]+|[一-龠々]+)"
_NOUN_PHRASE = re.compile(rf"{_WORD}(?:\s*{_WORD}){{0,3}}")
# Noun phrases joined by "の" ("各計算ノード側のファイル"), not a clause ("Slurmの構築に必要な台数").
_NOUN_PHRASES = re.compile(rf"{_NOUN_PHRASE.pattern}(?:の{_NOUN_PHRASE.pattern})*")
# Words of a question: Latin words (with digits, dots, hyphens), katakana runs, kanji runs; kana particles
# and punctuation between them are not words.
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+/-]*|[ァ-ヶー]+|[一-龠々]+")
_FUNCTION_WORDS = frozenset(
    ("a", "an", "the", "and", "or", "of", "for", "to", "in", "on", "at", "by", "with", "what", "which", "how", "when",
     "where", "who", "is", "are", "does", "do", "did", "use", "uses", "used", "it", "its", "this", "that", "there")
)  # fmt: skip


def _elliptical_match(question: str) -> re.Match[str] | None:
    text = question.strip()
    return _EN_MEASURE.match(text) or _EN.match(text) or _JA.match(text)


def asked_measure(question: str) -> str:
    """The measure an elliptical follow-up asks again ("どのくらい" in "Slurmだとどのくらい？"), "" if none."""
    m = _elliptical_match(question)
    return (m.groupdict().get("wh") or "") if m is not None else ""


def new_thing(question: str) -> str | None:
    """The thing an elliptical follow-up names ("Volcano" in "And for Volcano?"), None when the turn asks
    more than that."""
    m = _elliptical_match(question)
    if m is None:
        return None
    thing = _OWNER_TAIL.sub("", _ARTICLE.sub("", m.group("x").strip(" 、,")))
    thing = re.sub(r"の(ほう|方)の", "の", thing)
    if not thing or _NOT_A_THING.search(thing) or len(thing.split()) > 5 or (not thing.isascii() and len(thing) > 25):
        return None
    return thing


def is_elliptical(question: str) -> bool:
    """Whether the turn only names a thing ("3Dトーラスは？", "and the Kueue equivalent?"): its frame is the
    previous question's, whether or not a word of it can be swapped for the thing."""
    thing = new_thing(question)
    return thing is not None and bool(_NOUN_PHRASES.fullmatch(thing))


def _products(text: str, names: Collection[str]) -> list[str]:
    """The products and platforms ``text`` names, a product also by its last two words ("MPI Operator" for
    "Kubeflow MPI Operator")."""
    known = {*names, *(" ".join(n.split()[-2:]) for n in names if len(n.split()) > 2)}
    found = [n for n in focus_entities(text, known) if n in known]
    return [*found, *(m.group() for m in _PLATFORM.finditer(text) if m.group() not in found)]


def _mentions(text: str, word: str) -> bool:
    return bool(re.search(rf"(?<![A-Za-z0-9]){re.escape(word)}(?![A-Za-z0-9])", text, re.I))


# A version written right after a product's name is that product's ("the Slinky slurm-operator v1.2").
_VERSION_AFTER = r"(?:\s+v?\d+(?:\.\d+)+|\s+v\d+)?(?![A-Za-z0-9.])"


def _replace(text: str, old: str, new: str, versioned: bool = False) -> str:
    """``text`` with ``new`` in place of ``old``; with ``versioned``, a version of ``old`` written right after
    it goes too: "And for Soperator?" after "… required by the Slinky slurm-operator v1.2?" asks of Soperator,
    not of a Soperator v1.2 nobody named."""
    after = _VERSION_AFTER if versioned else r"(?![A-Za-z0-9])"
    return re.sub(rf"(?<![A-Za-z0-9]){re.escape(old)}{after}", lambda _: new, text, count=0, flags=re.I)


def reframe(question: str, previous: str, names: Collection[str] = (), last_thing: str | None = None) -> str | None:
    """``previous`` asked again about the thing ``question`` names, or None when the turn is not an
    elliptical follow-up or nothing in ``previous`` can take the new thing's place. ``last_thing`` is the
    thing an earlier follow-up put into ``previous`` ("Helm" in "What minimum Helm version …"): a new thing
    of no known kind takes its place ("And NCCL?")."""
    thing = new_thing(question)
    if thing is None or not previous.strip():
        return None
    measure = asked_measure(question)
    if measure and not set(cued_types(measure)) & set(cued_types(previous)):
        return None  # "Slurmだといつ？" after a question of size asks something else of Slurm
    product = _products(thing, names)
    if product and len(thing) <= len(product[0]) + 3:  # the thing is a product or platform ("And for Volcano?")
        # a platform replaces a platform, a product a product, where the previous question names one alike
        alike = [
            p
            for p in _products(previous, names)
            if bool(_PLATFORM.fullmatch(p)) == bool(_PLATFORM.fullmatch(product[0]))
        ]
        old = alike or _products(previous, names)
        same = old and normalize(old[0]) == normalize(product[0])
        return _replace(previous, old[0], product[0], versioned=True) if old and not same else None
    opposite = _opposite(thing, previous)
    if opposite is not None:
        return opposite
    entities = [e for e in focus_entities(thing, names) if e not in names]
    if _CODE_WORD.fullmatch(thing) or (entities and len(entities[0]) >= len(thing) - 1):
        old_ids = [e for e in focus_entities(previous, names) if e not in names and not _PLATFORM.fullmatch(e)]
        alike = [e for e in old_ids if _shape(e) == _shape(thing)] or old_ids
        if alike:
            return _replace(previous, alike[-1], thing)
    aligned = _align(thing, previous)
    if aligned is not None:
        return aligned
    if _only_a_kind_of_value(thing):
        # "what about the default?" asks that value of what the previous question asked about, which its words
        # describe and often only its answer names ("Which parameter sets …?"): the turn stands with the
        # previous question beside it (``app.advice.followup``), not asked of a product named there
        return None
    value_types = [t for t in cued_types(f"the {thing}" if thing.isascii() else thing) if t != "yes_no"]
    if value_types and len(thing.split()) <= 2:
        return _ask_value(thing, previous, names, ja=not question.isascii())
    owned = _owned(thing, previous, names)
    if owned is not None or not _NOUN_PHRASE.fullmatch(thing):
        return owned
    if last_thing and _mentions(previous, last_thing) and normalize(last_thing) != normalize(thing):
        return _replace(previous, last_thing, thing)
    return _topic(thing, previous, names) or _dependency(thing, previous, names)


def _stem(word: str) -> str:
    w = word.lower()
    return w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w


def _align(thing: str, previous: str) -> str | None:
    """The new thing put over the words of ``previous`` it shares a word with, as many words as it has
    ("per task" over "per node", "Zone B" over "Zone A", "dragonfly network" over "ring networks",
    "blockトポロジ" over "treeトポロジ")."""
    new = list(_TOKEN.finditer(thing))
    old = list(_TOKEN.finditer(previous))
    for i, word in enumerate(new):
        if word.group().lower() in _FUNCTION_WORDS:
            continue
        for j, other in enumerate(old):
            if _stem(other.group()) != _stem(word.group()):
                continue
            first, last = j - i, j - i + len(new) - 1
            if first < 0 or last >= len(old):
                continue
            span = old[first : last + 1]
            if any(t.group().lower() in _FUNCTION_WORDS and not t.group().isupper() for t in span):
                continue
            if [t.group().lower() for t in span] == [t.group().lower() for t in new]:
                return None  # the same words: nothing new
            return previous[: span[0].start()] + thing + previous[span[-1].end() :]
    return None


# "AのB": A a word (Latin, katakana, or a name with a kanji suffix), B what A has.
_OWNED_TAIL = r"((?:[A-Za-z0-9](?:[A-Za-z0-9._+/ -]*[A-Za-z0-9])?)?(?:[ァ-ヶー]+|[一-龠々]+)*)"
_OWNED = re.compile(r"([A-Za-z0-9][A-Za-z0-9._+/-]*[一-龠々]*|[ァ-ヶー]+)の" + _OWNED_TAIL)


def _owned_by_products(previous: str, names: Collection[str]) -> list[re.Match[str]]:
    """Every "AのB" of ``previous`` whose A is a product or platform, in order; a product of several words
    whole ("MPI OperatorのMPIJob"), not its last word."""
    several = [p for p in _products(previous, names) if " " in p]
    found = [
        m for p in several for m in re.finditer(rf"(?<![A-Za-z0-9])({re.escape(p)})の{_OWNED_TAIL}", previous, re.I)
    ]
    found += [
        m
        for m in _OWNED.finditer(previous)
        if _products(m.group(1), names) and not any(f.start() <= m.start() < f.end() for f in found)
    ]
    return sorted(found, key=lambda m: m.start())


def _owned(thing: str, previous: str, names: Collection[str]) -> str | None:
    """A product's "XのY" over the previous product's "AのB" ("Slurmのアップグレード" over
    "Kubernetesのマイナーリリース", "k8s本体のWorkload API" over "KueueのResourceFlavor")."""
    mine = _OWNED.fullmatch(thing)
    if mine is None or not _products(mine.group(1), names):
        return None
    m = next(iter(_owned_by_products(previous, names)), None)
    if m is None:
        return None
    if cued_types(m.group(2)) and mine.group(2).isascii() and not cued_types(mine.group(2)):
        # the previous "AのB" is the value asked ("Kubernetesのバージョン") and the new "XのY" names a component
        # ("Slinkyのslurm-operator"), not a parallel attribute ("Slurmのアップグレード"): the attribute stays, and
        # the component takes the place of the other product ("Volcano" in "Volcanoを入れる前提の…")
        others = [p for p in _products(previous, names) if normalize(p) != normalize(m.group(1))]
        return _replace(previous, others[0], thing) if others else None
    return previous[: m.start()] + thing + previous[m.end() :]


def _topic(thing: str, previous: str, names: Collection[str]) -> str | None:
    """A thing with no product of its own over what the previous question asks about a product, its "AのB"
    ("3Dトーラス" over "treeトポロジ" in "Slurmのtreeトポロジってどのファイルに書く？"). A B that names the
    value asked ("Slurmのバージョン") is the attribute, which stays."""
    if re.fullmatch(r"[a-z]+", thing):
        return None  # one plain word may be a modifier ("newest"), not a thing of its own
    for m in _owned_by_products(previous, names):
        owned = m.group(2)
        if owned and not cued_types(owned):
            return previous[: m.start(2)] + thing + previous[m.end(2) :]
    return None


def _dependency(thing: str, previous: str, names: Collection[str]) -> str | None:
    """A name the corpus does not document ("Helm", "NCCL") over the platform of a question about a product
    ("What minimum Kubernetes version does Soperator need?"): the product stays the subject, the platform
    is what it depends on."""
    if not re.fullmatch(r"[A-Z][A-Za-z0-9]*(?:[ -][A-Z][A-Za-z0-9]*)?", thing) or cued_types(f"the {thing}"):
        return None
    found = _products(previous, names)
    platforms = [p for p in found if _PLATFORM.fullmatch(p)]
    if platforms and len(found) > len(platforms):
        return _replace(previous, platforms[0], thing)
    return None


# Opposite ends of a scale: "And the maximum?" after "What's the minimum …?" asks the same of the other end. The
# pairs of a group translate each other, so "And the maximum?" after "最小の…は？" puts "最大" in its place.
_OPPOSITES = (
    (("minimum", "maximum"), ("min", "max"), ("最小", "最大")),
    (("lowest", "highest"), ("最低", "最高")),
    (("lower limit", "upper limit"), ("下限", "上限")),
    (("first", "last"), ("最初", "最後")),
    (("oldest", "newest"), ("最古", "最新")),
)


def _opposite(thing: str, previous: str) -> str | None:
    word = thing.lower().strip()
    for group in _OPPOSITES:
        for side in (0, 1):
            if word not in (pair[side] for pair in group):
                continue
            for pair in group:
                rx = rf"(?<![a-z]){re.escape(pair[1 - side])}(?![a-z])"
                if re.search(rx, previous, re.I):
                    return re.sub(rx, pair[side], previous, count=1, flags=re.I)
    return None


def _shape(identifier: str) -> str:
    """A file or path name ("slurm.conf") or a name ("MaxJobCount"): a new identifier replaces one alike."""
    return "path" if re.search(r"[./]", identifier) else "name"


def _only_a_kind_of_value(thing: str) -> bool:
    """Whether the thing is nothing but the cue of a kind of value ("the default", "default value",
    "デフォルト"), not a thing that has one ("1.18以前のリリース")."""
    lex = lexicon()
    # the thing as a question asks it: "the default", "デフォルトは" (a Japanese value's cue needs its particle)
    text = normalize(f"the {thing}" if thing.isascii() else f"{thing}は")
    covered = [False] * len(text)
    for pattern in (p for name in lex.order if name != "yes_no" for p in lex.types[name]):
        for m in pattern.finditer(text):
            covered[m.start() : m.end()] = [True] * (m.end() - m.start())
    rest = "".join(" " if hit else ch for ch, hit in zip(text, covered, strict=True))
    return not content_tokens(rest)


def _ask_value(thing: str, previous: str, names: Collection[str], ja: bool) -> str | None:
    """ "1.18以前のリリースは？": a thing with a value of its own, asked of the previous question's subject."""
    subject = " ".join(focus_entities(previous, names))
    if not subject:
        return None
    return f"{subject}の{thing}は？" if ja else f"What is the {thing} of {subject}?"
