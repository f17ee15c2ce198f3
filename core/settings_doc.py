"""docs/settings.md, generated from the ``Settings`` model (pure): one table per section of the tree.

``python -m core.settings_doc`` rewrites the file; a test fails when the file and the model differ, so the
document cannot drift from the code.

Deliberately left out: anything not on the model (the Makefile's exported variables are listed as text).
"""

from __future__ import annotations

import sys
from pathlib import Path

from core.settings import PROJECT_ROOT, setting_fields, settings_table

DOC_PATH = PROJECT_ROOT / "docs" / "settings.md"

_HEAD = """# Settings

One typed `Settings` object (`core/settings.py`) holds every setting. Each command (`ingest`, `ask`,
`app`, `evals`) builds it once, from environment variables `ADVISOR_<NAME>` or a `.env` file in the working
folder, and passes it down. A bad value is reported as one line naming the variable, and the command exits
with status 2.

This file is generated from the model by `python -m core.settings_doc`; `tests/core/test_settings.py`
fails when the two differ.

The Makefile also exports `ANONYMIZED_TELEMETRY=False`, `GRADIO_ANALYTICS_ENABLED=False`, `HF_HUB_OFFLINE=1`,
`HF_HUB_DISABLE_TELEMETRY=1` and `TRANSFORMERS_OFFLINE=1`, so nothing phones home. The tests also read
`ADVISOR_TEST_CHROMA_HOST` / `ADVISOR_TEST_CHROMA_PORT` (the Chroma server `.ci/run` starts).
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render() -> str:
    """The whole document."""
    defaults = {env: (default, description) for env, default, description in settings_table()}
    lines = [_HEAD]
    section = ""
    for info in setting_fields():
        if info.section != section:
            section = info.section
            lines += ["", f"## `{section}`", "", "| variable | default | meaning |", "|---|---|---|"]
        default, description = defaults[info.env]
        shown = "(secret)" if info.secret and default not in ("", "None") else default
        lines.append(f"| `{info.env}` | `{_cell(shown)}` | {_cell(description)} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    DOC_PATH.parent.mkdir(parents=True, exist_ok=True)
    DOC_PATH.write_text(render(), encoding="utf-8")
    print(f"wrote {Path(DOC_PATH).relative_to(PROJECT_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
