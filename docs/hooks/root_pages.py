"""mkdocs hook: CHANGELOG.md and CONTRIBUTING.md live at the repository's root, where GitHub and packagers look
for them; the site shows the same files as changelog.md and contributing.md (no copy to keep in step)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PAGES = {"CHANGELOG.md": "changelog.md", "CONTRIBUTING.md": "contributing.md"}


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    for source, uri in PAGES.items():
        files.append(File.generated(config, uri, abs_src_path=str(ROOT / source)))
    return files
