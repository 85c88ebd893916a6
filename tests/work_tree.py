"""A git work tree of a test's own, for the tests of how `kdiagnose check` shows paths (relative to the git
work tree around the working directory): they must not depend on where this repository sits, which may be
an exported copy with no `.git` (git archive) or a copy nested in another checkout."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

__all__ = ["git_work_tree"]


def git_work_tree(root: Path, *dirs: str, source: Path) -> Path:
    """`root` made a git work tree (`git init`; a bare `.git` directory where git is not installed, which
    is all find_git_root looks for) holding copies of `dirs` (paths relative to `source`)."""
    for d in dirs:
        shutil.copytree(source / d, root / d)
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q", str(root)], check=True, capture_output=True)
    else:
        (root / ".git").mkdir()
    return root
