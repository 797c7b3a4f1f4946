"""GitHub's limits in one place: a text too long keeps its head and its commands, says what it left
out and where the whole text is; bodies are counted in characters, check-run output in bytes."""

from __future__ import annotations

from jobs.basics.github_limits import (
    BODY_CHARS,
    CHECK_OUTPUT_BYTES,
    cut_bytes,
    cut_chars,
    fit_bytes,
    fit_chars,
    is_command_line,
)


def matrix_report(jobs: int = 14, lines: int = 100, width: int = 70, char: str = "x") -> str:
    """A `ci_failed` gate as the gate prompt renders it: failing jobs' log tails, then commands."""
    tails = "\n\n".join(f"tests (py3.{n}):\n" + "\n".join(f"{n:02d}:{i:03d} " + char * width
                                                          for i in range(lines)) for n in range(jobs))
    return ("Waiting at gate `ci_failed` (g-7): CI failed on milestone 1's head `abc1234`\n\n"
            f"Output tail:\n```\n{tails}\n```\n\n"
            "To accept the result as it is: `/stepwise approve`\n\n"
            "Other choices: `/stepwise retry`, `/stepwise skip <reason>`, `/stepwise cancel`")


def test_a_text_within_the_limit_is_left_as_it_is() -> None:
    text = matrix_report(jobs=2)
    assert fit_chars(text) == text and fit_bytes(text) == text


def test_a_report_of_14_failing_matrix_jobs_keeps_its_head_and_commands() -> None:
    text = matrix_report()
    assert len(text) > BODY_CHARS  # the 92,889-character comment GitHub refused
    fitted = fit_chars(text, where="the task center")
    assert len(fitted) <= BODY_CHARS
    assert fitted.startswith("Waiting at gate `ci_failed` (g-7)")
    assert "`/stepwise approve`" in fitted and "`/stepwise retry`" in fitted
    assert "Too long for GitHub" in fitted and "The whole text is in the task center." in fitted
    head = fitted.split("✂️")[0]
    assert head.count("```") % 2 == 0  # the cut closed the log's fence
    left = int(fitted.split("Too long for GitHub: ")[1].split(" ")[0])
    assert left == len(text.split("\n")) - len(head.rstrip("\n").split("\n")) + 1  # closing fence
    assert len(fitted) > BODY_CHARS - 1_000  # no room wasted


def test_reserve_leaves_room_for_the_hidden_marker() -> None:
    fitted = fit_chars(matrix_report(), reserve=60)
    assert len(fitted) <= BODY_CHARS - 60


def test_non_ascii_output_is_cut_by_utf8_bytes() -> None:
    text = matrix_report(char="ü")
    assert len(text) < 2 * CHECK_OUTPUT_BYTES < len(text.encode())
    fitted = fit_bytes(text)
    assert len(fitted.encode()) <= CHECK_OUTPUT_BYTES
    assert len(fitted.encode()) > CHECK_OUTPUT_BYTES - 1_000
    assert "`/stepwise retry`" in fitted and "bytes) were left out" in fitted
    four_byte = "🙂" * 20_000  # one enormous line of 80,000 bytes
    fitted = fit_bytes(four_byte)
    assert len(fitted.encode()) <= CHECK_OUTPUT_BYTES and fitted.startswith("🙂")


def test_one_line_fields_are_cut_with_an_ellipsis() -> None:
    assert cut_chars("a" * 300, 256) == "a" * 255 + "…"
    assert cut_chars("short", 256) == "short"
    cut = cut_bytes("é" * 200, 255)
    assert len(cut.encode()) <= 255 and cut.endswith("…")


def test_command_lines_are_the_ones_a_maintainer_types() -> None:
    assert is_command_line("To continue: `/stepwise approve`")
    assert is_command_line("/stepwise approve")
    assert is_command_line("Other choices: `@stepwise-bot retry`")
    assert not is_command_line("`approve` accepts the result")
    assert not is_command_line("E   assert 1 == 2")
