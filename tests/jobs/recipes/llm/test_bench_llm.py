"""`make bench-llm` in protocol mode: the benchmark runs tasks per edit format against the
scripted model and prints its table (run as a process: tests never import bench)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.kit.local_e2e import ROOT


@pytest.mark.slow  # four jobs with their validation: ~20 s
def test_the_model_benchmark_runs_against_the_scripted_model_and_prints_its_table() -> None:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith("STEPWISE_LLM_")}
    done = subprocess.run(
        [sys.executable, "-m", "bench.llm_tasks", "--tasks",
         "py_api_migration_needs_second_file,js_logger_keeps_levels",
         "--formats", "tools,search_replace"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "# bench-llm: 2 task(s) x 2 format(s), the scripted model (protocol only" in out
    assert "| format | success | rounds/task | tool calls/task | tokens/task | seconds/task |" \
        in out
    assert "\n| tools | 2/2 (100%) | 3.5 | 3.5 | " in out  # read, 1 or 2 edits, finish
    assert "\n| search_replace | 2/2 (100%) | 1.0 | 0.0 | " in out


def test_an_unknown_task_is_refused_with_the_list() -> None:
    done = subprocess.run([sys.executable, "-m", "bench.llm_tasks", "--tasks", "nope"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert "unknown format or task" in done.stderr and "py_type_annotations" in done.stderr
