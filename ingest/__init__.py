"""Ingest stage: parse the Markdown corpus, chunk it by structure, embed, and upsert into Chroma."""
