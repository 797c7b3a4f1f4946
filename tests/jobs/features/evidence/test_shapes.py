"""Edit shapes (issue 39, item 3): hunks normalised (names, literals, whitespace) and grouped,
outliers first; the plan gate shows a dry run's shapes, each milestone gate and the card the
milestone's; `approve` at a gate approves its shapes, and with `gates.auto_approve_known_shapes`
a later milestone of known shapes, green and covered, passes its gate on its own."""

from __future__ import annotations

from pathlib import Path

from markdown_it import MarkdownIt

from jobs.decisions.edit_shapes import job_shapes, normalise, sum_summaries, summarize
from jobs.kernel.model import Gate, JobStatus, Verb
from jobs.local import LocalSession
from jobs.notes.progress import render_card
from tests.jobs.features.evidence.shape_repos import shapes_issue, shapes_repo
from tests.kit.local_e2e import NUMBER, Recorder, load_job, show


def hunk(path: str, line: int, before: str, after: str) -> str:
    return f"@@ -{line},1 +{line},1 @@\n-{before}\n+{after}\n"


def diff(path: str, *hunks: str) -> str:
    return f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n" + "".join(hunks)


def test_names_literals_and_whitespace_normalise_to_one_shape() -> None:
    assert normalise("a.py", ["x = old(1)\n"]) == normalise("b.py", ["  total_2=other( 'q' )\n"]) \
        .replace("S", "0")  # the literal's kind stays: a number is not a string
    assert normalise("a.py", ["y = f(x)  # why\n"]) == "N = N ( N ) #"
    assert normalise("a.py", ["if x:\n"]) == "if N :"  # keywords kept
    assert normalise("a.py", ["foo(bar, (\n"]) == "N ( N , ("  # a fragment still normalises
    assert normalise("a.js", ['const a = f("x", 2); // c\n']) == "const N = N ( S , 0 ) ; #"
    assert normalise("a.py", []) == "∅"


def test_a_batch_of_two_shapes_and_one_outlier_lists_the_outlier_first() -> None:
    many = [hunk("a.py", n * 10, f"v{n} = old({n})", f"v{n} = new({n})") for n in range(1, 15)]
    others = [hunk("a.py", 200 + n * 10, f"t += old(x{n})", f"t += new(x{n})") for n in range(5)]
    odd = hunk("a.py", 400, 'print(old("x"))', 'print(new("x"), flush=True)')
    summary = summarize(diff("a.py", *many, *others, odd))
    assert summary.hunks == 20 and len(summary.shapes) == 3
    first, second, third = summary.ordered()
    assert (first.count, first.example, summary.is_outlier(first)) == (1, "a.py:400", True)
    assert first.after == 'print(new("x"), flush=True)'
    assert [second.count, third.count] == [14, 5]
    assert not summary.is_outlier(third)  # 5 of 20 is 25%


def test_a_shape_under_five_percent_is_an_outlier() -> None:
    many = [hunk("a.py", n * 10, f"v = old({n})", f"v = new({n})") for n in range(1, 40)]
    rare = [hunk("a.py", 500 + n * 10, "return old()", "return new()") for n in range(2)]
    summary = summarize(diff("a.py", *many, *rare))
    assert [(s.count, summary.is_outlier(s)) for s in summary.ordered()] == [(2, True), (39, False)]


def test_summaries_sum_across_repositories() -> None:
    one = summarize(diff("a.py", hunk("a.py", 1, "x = old(1)", "x = new(1)")))
    two = summarize(diff("b.py", hunk("b.py", 5, "y = old(2)", "y = new(2)"),
                         hunk("b.py", 50, "return old()", "return new()")))
    total = sum_summaries([one, two])
    assert total.hunks == 3 and sorted(s.count for s in total.shapes) == [1, 2]
    assert next(s for s in total.shapes if s.count == 2).example == "a.py:1"  # the first kept


def test_the_plan_and_milestone_gates_show_the_shapes_outliers_first(tmp_path: Path) -> None:
    repo = shapes_repo(tmp_path / "repo", outlier_in=1)
    sink = Recorder()
    local = LocalSession(repo, NUMBER, sink=sink)
    planned = local.run(shapes_issue(), yes=False)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.PLAN and planned.exit_code == 3
    plan = sink.seen[-2][1] if len(sink.seen) > 1 else ""
    plan_text = "\n".join(text for _, text in sink.seen)
    assert "- edit shapes of a dry run of batch 1 (2 files): 3 kinds of edit in 7 hunks, " \
        "1 to review first" in plan_text, plan
    assert '  - review first: 1 hunk, seen once like `pkg/m1.py:30`' in plan_text
    assert load_job(repo).batch(1).commit is None  # the dry run committed nothing
    _, at_milestone = local.verb(Verb.APPROVE)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.MILESTONE
    prompt = at_milestone.message
    assert "Evidence of milestone 1:" in prompt
    assert "- edit shapes: 3 kinds of edit in 7 hunks, 1 to review first" in prompt
    lines = prompt.splitlines()
    first = next(i for i, line in enumerate(lines) if "review first: 1 hunk, seen once like "
                 "`pkg/m1.py:" in line)
    assert 'c = old_helper("x" * 2)` → `c = new_helper("x" * 2)`' in lines[first]
    assert "4 hunks (57%) like `pkg/m1.py:6`: `a = old_helper(1)` → `a = new_helper(1)`" in \
        lines[first + 1]
    assert "changed lines run by the tests: 7 of 7 (100%)" in prompt
    card = render_card(job, fold_finished=False)  # as the milestone's report shows it
    assert "3 edit shapes (1 to review first)" in card


def list_items(markdown: str) -> list[str]:
    """The text of each list item's first paragraph (code spans without their backticks)."""
    tokens = MarkdownIt("commonmark").parse(markdown)
    return [next(t for t in tokens[index:] if t.type == "inline").content.replace("`", "")
            for index, token in enumerate(tokens) if token.type == "list_item_open"]


def test_known_shapes_pass_a_milestone_on_its_own_and_a_new_shape_stops_it(
        tmp_path: Path) -> None:
    repo = shapes_repo(tmp_path / "repo", outlier_in=5,
                       config={"gates": {"auto_approve_known_shapes": True}})
    local = LocalSession(repo, NUMBER, sink=Recorder())
    local.run(shapes_issue(), yes=False)  # the plan gate shows batch 1's shapes
    _, stopped = local.verb(Verb.APPROVE)
    job = load_job(repo)
    # milestones 1 and 2 hold only the shapes the plan gate showed: they passed on their own
    assert job.gate is not None and job.gate.kind is Gate.MILESTONE and job.gate.milestone == 3
    assert job.approved_milestones == [1, 2]
    assert "not passed on its own: 1 hunks have shapes no gate approved yet" in stopped.message
    card = render_card(job, fold_finished=False)
    assert "milestone 1 passed its gate on its own (`gates.auto_approve_known_shapes`)" in card
    # Read as GitHub reads Markdown: the milestone's evidence is a list of its own, not words
    # run into the last batch's line.
    items = list_items(card)
    assert any(item.startswith("milestone 1 passed its gate on its own") for item in items)
    assert not any(item.startswith("✓ batch") and "edit shapes:" in item for item in items)
    _, done = local.verb(Verb.APPROVE)
    job = load_job(repo)
    assert done.status is JobStatus.COMPLETED
    note = show(repo, job.branch, job.note_path)
    assert "milestones 1, 2 passed their gates on their own (`gates.auto_approve_known_shapes`)" \
        in note
    assert job_shapes(job.batches).hunks == 25  # 3 a module, and the outlier
