"""A parsed corpus document: the ingest stage's own type (Chroma types stay in `ingest.store`)."""

from __future__ import annotations

import hashlib
import re

from pydantic import BaseModel, Field

_PARAPHRASED = re.compile(r"paraphras|not verbatim|summary notes", re.IGNORECASE)


class Document(BaseModel):
    """A corpus document after front-matter validation."""

    id: str
    title: str
    url: str = ""
    language: str = "en"
    license: str = ""
    completeness: str = ""
    role: str = ""
    path: str = Field("", description="Source file, relative to the corpus folder.")
    body: str = Field(description="Markdown body without front matter, verbatim.")
    translation_of: str = Field("", description="A translation companion: the original document's id.")
    source_sha256: str = Field("", description="A translation: SHA-256 of the original's body it was made from.")
    section_map: dict[str, str] = Field(
        default_factory=dict, description="A translation: its section paths → the original's (set by linking)."
    )

    @property
    def body_sha256(self) -> str:
        """SHA-256 of the UTF-8 body: what a translation's ``source_sha256`` records of its original."""
        return hashlib.sha256(self.body.encode("utf-8")).hexdigest()

    @property
    def verbatim(self) -> bool:
        """False for paraphrased notes (``completeness: partial (paraphrased notes …; not verbatim)``): a
        quote from them is not the source's wording, and a citation must say so."""
        return not _PARAPHRASED.search(self.completeness)

    @property
    def content_hash(self) -> str:
        """Hash of everything that ends up in the index, so any change triggers re-embedding."""
        h = hashlib.sha256()
        aligned = "\n".join(f"{k}\t{v}" for k, v in sorted(self.section_map.items()))
        for part in (
            self.id,
            self.title,
            self.url,
            self.language,
            str(self.verbatim),
            self.translation_of,
            aligned,
            self.body,
        ):
            h.update(part.encode("utf-8"))
            h.update(b"\x00")
        return h.hexdigest()[:16]
