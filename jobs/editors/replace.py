"""The `replace` recipe: each `find` pattern substituted with the `replace` template, per match."""

from __future__ import annotations

import re

from jobs.adapters.safe_paths import read_regular, write_regular
from jobs.editors.base import EditError, EditRequest, EditResult


class ReplaceEditor:
    name = "replace"
    writes_only_request_files = True  # in this process, nothing else (jobs/engine/attempt.py)

    def apply(self, request: EditRequest) -> EditResult:
        template = request.spec.replace or ""
        patterns = [re.compile(pattern, re.MULTILINE) for pattern in request.spec.find]
        file_summaries: dict[str, str] = {}
        total = 0
        for rel in request.files:
            # A link, a special file or a symlinked parent is refused (UnsafePathError), never
            # followed: this runs in Stepwise's own process, outside the sandbox.
            try:
                text = read_regular(request.worktree, rel).decode("utf-8")  # line ends kept
            except UnicodeDecodeError as exc:
                raise EditError(
                    f"cannot read {rel} as UTF-8 text: {exc}",
                    hint="exclude the file from `paths` or convert it to UTF-8",
                ) from exc
            count = 0
            for pattern in patterns:
                text, made = pattern.subn(template, text)
                count += made
            if count:
                write_regular(request.worktree, rel, text.encode("utf-8"))
                file_summaries[rel] = f"{count} replacement{'s' if count != 1 else ''}"
                total += count
        summary = f"{total} replacement{'s' if total != 1 else ''} in {len(file_summaries)} file" \
            f"{'s' if len(file_summaries) != 1 else ''}"
        return EditResult(summary=summary, file_summaries=file_summaries)
