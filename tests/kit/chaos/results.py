"""A scenario's results over its trials, and the table lines they are printed as."""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field

from tests.kit.chaos.settings import MAX_SLOWDOWN
from tests.kit.chaos.trial import Trial


@dataclass
class ScenarioResult:
    name: str
    trials: list[Trial] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    reference_s: float | None = None  # the no-fault control's time to finish
    reconcile_s: float | None = None  # the reconciler interval (gate scenarios)

    @property
    def finish_s(self) -> float | None:
        """Median time to finish of the trials that completed."""
        done = [t.seconds for t in self.trials if t.completed]
        return statistics.median(done) if done else None

    @property
    def ratio(self) -> float | None:
        finish = self.finish_s
        return finish / self.reference_s if finish and self.reference_s else None

    @property
    def slowest_shown(self) -> float | None:
        shown = [g for t in self.trials for g in t.shown_s]
        return max(shown) if shown else None

    @property
    def completed(self) -> int:
        return sum(t.completed for t in self.trials)

    @property
    def committed(self) -> int:
        return sum(t.committed for t in self.trials)

    @property
    def duplicates(self) -> int:
        return sum(t.duplicates + len(t.other_duplicates) for t in self.trials)

    @property
    def lost(self) -> int:
        return sum(len(t.lost) for t in self.trials)

    @property
    def stuck(self) -> int:
        return sum(t.stuck for t in self.trials)

    @property
    def recoveries(self) -> list[float]:
        return [r for t in self.trials for r in t.recover_s]

    @property
    def median_recover(self) -> float | None:
        return statistics.median(self.recoveries) if self.recoveries else None

    @property
    def ended_otherwise(self) -> str:
        """How the jobs that did not complete ended (e.g. `failed 2, failure gate 1`)."""
        counts = Counter((f"{t.gate} gate" if t.gate else t.status) for t in self.trials
                         if not t.completed)
        return ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "-"

    @property
    def late(self) -> int:
        return sum(t.late for t in self.trials)

    @property
    def ok(self) -> bool:
        """0 duplicates, 0 lost, 0 stuck, every gate its step left unpublished taken up by a
        reconciler pass within one interval, and a faulted scenario finishing within 3× its
        no-fault control."""
        slow = self.ratio is not None and self.name != "baseline" and self.ratio > MAX_SLOWDOWN
        return self.duplicates == 0 and self.lost == 0 and self.stuck == 0 and \
            self.late == 0 and not slow


def _seconds(value: float | None) -> str:
    return f"{value:.1f} s" if value is not None else "-"


HEADER = (f"{'scenario':<14} {'trials':>6} {'completed':>9} {'batches':>8} {'duplicate':>9} "
          f"{'lost':>5} {'stuck':>5} {'recover p50':>11} {'recover max':>11} {'finish':>8} "
          f"{'x base':>7} {'gate shown':>10}  not completed")


def table_line(r: ScenarioResult) -> str:
    worst = max(r.recoveries) if r.recoveries else None
    return (f"{r.name:<14} {len(r.trials):>6} {r.completed:>9} {r.committed:>8} "
            f"{r.duplicates:>9} {r.lost:>5} {r.stuck:>5} {_seconds(r.median_recover):>11} "
            f"{_seconds(worst):>11} {_seconds(r.finish_s):>8} {_ratio(r.ratio):>7} "
            f"{_seconds(r.slowest_shown):>10}  {r.ended_otherwise}")


def _ratio(value: float | None) -> str:
    return f"{value:.2f}×" if value is not None else "-"


def markdown_table(results: list[ScenarioResult]) -> str:
    lines = ["| scenario | trials | jobs completed | batches committed | duplicate batch commits "
             "| lost batches | stuck jobs | median time to recover | slowest recovery "
             "| median time to finish | × no-fault | slowest gate shown | jobs not completed |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in results:
        worst = max(r.recoveries) if r.recoveries else None
        lines.append(f"| {r.name} | {len(r.trials)} | {r.completed} | {r.committed} | "
                     f"{r.duplicates} | {r.lost} | {r.stuck} | {_seconds(r.median_recover)} | "
                     f"{_seconds(worst)} | {_seconds(r.finish_s)} | {_ratio(r.ratio)} | "
                     f"{_seconds(r.slowest_shown)} | {r.ended_otherwise} |")
    return "\n".join(lines)
