"""Front matter validation and corpus loading: every problem is reported per file, with the file and why."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from paths import FIXTURE_CORPUS

from ingest.documents import MAX_DOC_BYTES, DocumentError, detect_language, load_corpus, parse_document

FIXTURES = FIXTURE_CORPUS


def write(folder: Path, name: str, content: str | bytes) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_bytes(content)
    return path


def only_error(folder: Path) -> DocumentError:
    docs, errors = load_corpus(folder)
    assert docs == []
    assert len(errors) == 1, errors
    return errors[0]


# --- valid documents --------------------------------------------------------------------------------


def test_fixture_documents_parse_with_their_front_matter() -> None:
    docs, errors = load_corpus(FIXTURES)
    assert errors == []
    by_id = {d.id: d for d in docs}
    assert set(by_id) == {"gateway-en", "scheduler-ja"}
    ja = by_id["scheduler-ja"]
    assert ja.title == "ジョブスケジューラ比較メモ"
    assert ja.url == "https://example.test/scheduler-ja"
    assert ja.language == "ja"
    assert ja.license == "CC0-1.0"
    assert ja.path == "scheduler-ja.md"
    assert ja.body.lstrip().startswith("# ジョブスケジューラ比較メモ")
    assert "id:" not in ja.body  # the front matter is not part of the body


def test_id_comes_from_the_file_name_and_title_from_the_first_heading(tmp_path: Path) -> None:
    write(tmp_path, "sub/gpu-notes.md", "Intro line.\n\n## GPU 利用率の比較\n\n本文です。\n")
    write(tmp_path, "partial.md", "---\nurl: https://example.test/p\n---\n# Partial Title\n\nText.\n")
    docs, errors = load_corpus(tmp_path)
    assert errors == []
    by_id = {d.id: d for d in docs}
    assert by_id["gpu-notes"].title == "GPU 利用率の比較"
    assert by_id["gpu-notes"].path == "sub/gpu-notes.md"
    assert by_id["gpu-notes"].language == "ja"  # detected when missing
    assert by_id["partial"].title == "Partial Title"
    assert by_id["partial"].url == "https://example.test/p"
    assert by_id["partial"].language == "en"


def test_title_skips_comments_in_code_and_falls_back_to_the_id() -> None:
    doc = parse_document(b"```sh\n# install first\n```\n\n## Using C#\n\nText.\n", "csharp.md")
    assert doc.title == "Using C#"
    assert parse_document(b"No heading at all.\n", "plain.md").title == "plain"


@pytest.mark.parametrize(
    "raw",
    [
        b"---\n---\n# Empty front matter\n\nText.\n",
        b"---\r\nid: crlf\r\ntitle: CRLF\r\n---\r\nText.\r\n",
        b"\xef\xbb\xbf---\nid: bom\n---\nText after a byte order mark.\n",
        b"---\nid: extra\nauthor: someone\ndate: 2024-01-01\ntags: [a, b]\n---\nUnknown keys are kept.\n",
    ],
)
def test_accepted_front_matter_variants(raw: bytes) -> None:
    doc = parse_document(raw, "variant.md")
    assert doc.body.strip()
    assert "---" not in doc.body


def test_content_hash_follows_everything_that_is_indexed() -> None:
    base = parse_document(b"---\nid: a\ntitle: T\nurl: https://x.test/a\n---\nBody.\n", "a.md")
    same = parse_document(b"---\nid: a\ntitle: T\nurl: https://x.test/a\n---\nBody.\n", "a.md")
    assert base.content_hash == same.content_hash
    for changed in (
        b"---\nid: a\ntitle: T\nurl: https://x.test/a\n---\nBody!\n",
        b"---\nid: a\ntitle: T2\nurl: https://x.test/a\n---\nBody.\n",
        b"---\nid: a\ntitle: T\nurl: https://x.test/b\n---\nBody.\n",
    ):
        assert parse_document(changed, "a.md").content_hash != base.content_hash


def test_detect_language() -> None:
    assert detect_language("GPU利用率はどちらが高い？") == "ja"
    assert detect_language("Which scheduler is faster?") == "en"
    assert detect_language("12345 !!!") == "en"


# --- invalid documents: one error per file, naming the file and the reason ------------------------------


@pytest.mark.parametrize(
    ("content", "reason_parts"),
    [
        (b"---\nid: ok\n---\nCaf\xe9 au lait\n", ["not valid UTF-8", "byte"]),
        ("---\nid: a\ntitle: [unclosed\n---\nText.\n", ["malformed front matter", "line"]),
        ("---\nid: a\n  title: bad indent\n---\nText.\n", ["malformed front matter", "line 3"]),
        ("---\nid: a\ntitle: never closed\n\n# Heading\n\nText.\n", ["no closing '---'"]),
        ("--- \nid: a\ntitle: trailing space after the opening\nText.\n", ["no closing '---'"]),
        ("---\n- a\n- b\n---\nText.\n", ["expected 'key: value' lines"]),
        ("---\njust a sentence\n---\nText.\n", ["expected 'key: value' lines"]),
        ("---\nid: has spaces!\n---\nText.\n", ["'id'", "letters, digits"]),
        ("---\nid: ''\n---\nText.\n", ["'id'"]),
        ("---\nid: 42\n---\nText.\n", ["'id'"]),
        ("---\nurl: ftp://example.test/x\n---\nText.\n", ["'url'", "http(s) URL"]),
        ("---\nurl: example.test/x\n---\nText.\n", ["'url'"]),
        ("---\ntitle: Nothing below\n---\n\n   \n", ["empty"]),
        ("", ["empty"]),
        ("# Only a heading\n\n## And another\n", ["no text under them"]),
    ],
)
def test_invalid_files_are_reported_with_file_and_reason(
    tmp_path: Path, content: str | bytes, reason_parts: list[str]
) -> None:
    write(tmp_path, "broken-doc.md", content)
    error = only_error(tmp_path)
    assert error.path == "broken-doc.md"
    for part in reason_parts:
        assert part in error.reason, error.reason
    assert str(error).startswith("broken-doc.md: ")


def test_a_file_name_that_cannot_be_an_id_needs_an_explicit_id(tmp_path: Path) -> None:
    write(tmp_path, "my notes (draft).md", "Some text.\n")
    error = only_error(tmp_path)
    assert error.path == "my notes (draft).md"
    assert "set 'id' in the front matter" in error.reason
    write(tmp_path, "my notes (draft).md", "---\nid: my-notes\n---\nSome text.\n")
    docs, errors = load_corpus(tmp_path)
    assert errors == [] and docs[0].id == "my-notes"


def test_an_oversized_file_is_refused() -> None:
    with pytest.raises(ValueError, match="over the"):
        parse_document(b"a" * (MAX_DOC_BYTES + 1), "huge.md")


def test_duplicate_ids_name_both_files(tmp_path: Path) -> None:
    write(tmp_path, "a-first.md", "---\nid: shared\n---\nFirst.\n")
    write(tmp_path, "b-second.md", "---\nid: shared\n---\nSecond.\n")
    docs, errors = load_corpus(tmp_path)
    assert [d.path for d in docs] == ["a-first.md"]
    assert len(errors) == 1
    assert errors[0].path == "b-second.md"
    assert "duplicate id 'shared'" in errors[0].reason and "a-first.md" in errors[0].reason


def test_a_directory_named_like_a_document_is_unreadable(tmp_path: Path) -> None:
    # chmod 000 does not stop root (CI runs as root); a folder called x.md fails for everyone.
    (tmp_path / "folder.md").mkdir()
    error = only_error(tmp_path)
    assert error.path == "folder.md"
    assert error.reason.startswith("unreadable")


def test_a_dangling_symlink_is_unreadable(tmp_path: Path) -> None:
    os.symlink(tmp_path / "missing-target.md", tmp_path / "dangling.md")
    error = only_error(tmp_path)
    assert error.path == "dangling.md"
    assert error.reason.startswith("unreadable")


def test_one_bad_file_never_hides_the_others(corpus_dir: Path) -> None:
    write(corpus_dir, "bad-utf8.md", b"\xff\xfe broken")
    write(corpus_dir, "bad-url.md", "---\nurl: nope\n---\nText.\n")
    docs, errors = load_corpus(corpus_dir)
    assert sorted(d.id for d in docs) == ["gateway-en", "scheduler-ja"]
    assert sorted(e.path for e in errors) == ["bad-url.md", "bad-utf8.md"]
    assert all(e.reason for e in errors)


def test_hidden_files_and_the_readme_are_not_documents(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES, tmp_path / "c")
    write(tmp_path / "c", "README.md", "---\nid: [broken\n---\n")
    write(tmp_path / "c", ".drafts/secret.md", "\xff")
    write(tmp_path / "c", ".hidden.md", "---\nid: bad id\n---\n")
    write(tmp_path / "c", "notes.txt", "not markdown")
    docs, errors = load_corpus(tmp_path / "c")
    assert errors == []
    assert sorted(d.id for d in docs) == ["gateway-en", "scheduler-ja"]


def test_a_missing_corpus_folder_is_an_error(tmp_path: Path) -> None:
    docs, errors = load_corpus(tmp_path / "nowhere")
    assert docs == []
    assert [e.reason for e in errors] == ["corpus folder does not exist"]
    assert errors[0].path.endswith("nowhere")
