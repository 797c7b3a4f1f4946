"""`stepwise check-config` as a subprocess, as a repository's CI runs it: 0 when valid (or
absent), 2 listing every problem with its field and fix."""

from __future__ import annotations

from pathlib import Path

from tests.kit.local_e2e import cli


def write(root: Path, text: str) -> Path:
    (root / ".github").mkdir(parents=True, exist_ok=True)
    (root / ".github" / "stepwise.yml").write_text(text, encoding="utf-8")
    return root


def test_a_valid_config_exits_0(tmp_path: Path) -> None:
    done = cli("check-config", "--repo", write(tmp_path, "batch_size: 3\nnotes: per_milestone\n"))
    assert done.code == 0 and ".github/stepwise.yml is valid" in done.out


def test_no_config_means_the_defaults(tmp_path: Path) -> None:
    done = cli("check-config", "--repo", tmp_path)
    assert done.code == 0 and "every default applies" in done.out


def test_every_problem_is_listed_and_exits_2(tmp_path: Path) -> None:
    done = cli("check-config", "--repo",
               write(tmp_path, "batch_size: 0\nbogus: 1\nnetwork: maybe\nnotes: sometimes\n"))
    assert done.code == 2
    assert "has 4 problems" in done.err
    for field in ("bogus", "network", "batch_size", "notes"):
        assert f"config field `{field}`" in done.err


def test_a_missing_directory_is_bad_input(tmp_path: Path) -> None:
    done = cli("check-config", "--repo", tmp_path / "nowhere")
    assert done.code == 2 and "is not a directory" in done.err
