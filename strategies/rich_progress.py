"""``RichProgressBar`` and ``RichModelSummary``: the progress bar and the model summary drawn with
``rich`` (the ``rich`` extra), with Lightning 2.6's arguments.

The bar follows the rule of the tqdm one (``strategies._progress``): rank 0 only, and drawn only
when stdout is a terminal.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from strategies._progress import _DESCRIPTION, BarSettings, check_count
from strategies._summary import summary_rows
from strategies.model_summary import ModelSummary

if TYPE_CHECKING:
    from strategies.module import TrainModule
    from strategies.trainer import Trainer

__all__ = ["RichModelSummary", "RichProgressBar", "RichProgressBarTheme"]


def _require_rich(name: str) -> None:
    import importlib.util

    if importlib.util.find_spec("rich") is None:
        raise ModuleNotFoundError(
            f"`{name}` requires `rich`: pip install rich (or strategy-compat's `rich` extra).", name="rich"
        )


@dataclass
class RichProgressBarTheme:
    """The styles of the bar's parts (rich style strings), Lightning's fields and defaults."""

    description: str = ""
    progress_bar: str = "#6206E0"
    progress_bar_finished: str = "#6206E0"
    progress_bar_pulse: str = "#6206E0"
    batch_progress: str = ""
    time: str = "dim"
    processing_speed: str = "dim underline"
    metrics: str = "italic"
    metrics_text_delimiter: str = " "
    metrics_format: str = ".3f"


class RichProgressBar(BarSettings):
    """A progress bar drawn with ``rich`` (``Trainer(callbacks=[RichProgressBar()])``).

    Args:
        refresh_rate: redraw every N batches (0: no bar).
        leave: keep each training epoch's bar when it ends.
        theme: the styles (a ``RichProgressBarTheme``).
        console_kwargs: arguments of the ``rich.console.Console`` it draws on.

    Raises:
        ModuleNotFoundError: without ``rich``.
        ValueError: a ``refresh_rate`` that is not an int >= 0; at ``Trainer(...)``, with
            ``enable_progress_bar=False`` (Lightning's rule).
    """

    def __init__(
        self,
        refresh_rate: int = 1,
        leave: bool = False,
        theme: RichProgressBarTheme = RichProgressBarTheme(),  # noqa: B008  (Lightning's default; never mutated)
        console_kwargs: dict[str, Any] | None = None,
    ) -> None:
        _require_rich("RichProgressBar")
        check_count("RichProgressBar", "refresh_rate", refresh_rate)
        super().__init__(refresh_rate, leave)
        self.theme = theme
        self._console_kwargs = dict(console_kwargs or {})
        self._progress: Any = None

    def bar(self, enabled: bool) -> RichBar:
        """The bar one loop draws with these settings (all of a run's bars share one live display)."""
        return RichBar(enabled and self.is_enabled, self)

    def teardown(self, trainer: Trainer, module: TrainModule, stage: str) -> None:
        """The run is over: stop the live display."""
        self._stop()

    def on_exception(self, trainer: Trainer, module: TrainModule, exception: BaseException) -> None:
        """A failed run: stop the live display too."""
        self._stop()

    def _live(self) -> Any:
        progress = getattr(self, "_progress", None)
        if progress is None:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            theme = self.theme
            progress = self._progress = Progress(
                TextColumn("{task.description}", style=theme.description),
                BarColumn(
                    complete_style=theme.progress_bar,
                    finished_style=theme.progress_bar_finished,
                    pulse_style=theme.progress_bar_pulse,
                ),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                TextColumn("{task.fields[metrics]}", style=theme.metrics),
                console=Console(**{"file": sys.stdout, **self._console_kwargs}),
            )
            progress.start()
        return progress

    def _stop(self) -> None:
        progress, self._progress = getattr(self, "_progress", None), None
        if progress is not None:
            progress.stop()

    def __getstate__(self) -> dict[str, Any]:  # a live display does not cross to spawned processes
        state = self.__dict__.copy()
        state["_progress"] = None
        return state


class RichBar:
    """One loop's task on the ``RichProgressBar``'s live display: ``update``/``close`` as the tqdm bar's.

    As Lightning draws them: one training bar reset each epoch (a new one per epoch with
    ``leave=True``), and evaluation bars that go when their run ends.
    """

    def __init__(self, enabled: bool, settings: RichProgressBar) -> None:
        self.enabled = enabled and sys.stdout.isatty()
        self.settings = settings
        self._task: Any = None
        self._key: tuple[str, int] | None = None

    def update(self, stage: str, epoch: int, step: int, total: int | None, metrics: dict[str, float]) -> None:
        """Show ``step`` of ``total`` batches of ``stage`` with the ``prog_bar`` metrics."""
        if not self.enabled:
            return
        if step % self.settings.refresh_rate != 0 and step != total:
            return
        progress, theme = self.settings._live(), self.settings.theme
        description = _DESCRIPTION.get(stage, stage).format(epoch=epoch)
        if self._key != (stage, epoch):
            if self._task is not None and stage == "train" and not self.settings._leave:
                progress.reset(self._task, total=total, description=description)
            else:
                self._task = progress.add_task(description, total=total, metrics="")
            self._key = (stage, epoch)
        text = theme.metrics_text_delimiter.join(f"{k}: {v:{theme.metrics_format}}" for k, v in metrics.items())
        progress.update(self._task, completed=step, metrics=text)

    def close(self) -> None:
        """An evaluation bar goes; the training bar stays."""
        progress = getattr(self.settings, "_progress", None)
        if self._task is not None and progress is not None and self._key and self._key[0] != "train":
            progress.remove_task(self._task)
        self._task, self._key = None, None


class RichModelSummary(ModelSummary):
    """The model summary drawn as a ``rich`` table when ``fit`` starts (global rank 0).

    Args:
        max_depth: the levels of nesting to list (1: the direct children, -1: all, 0: none).
        **summarize_kwargs: ``header_style`` (``"bold magenta"``) and ``title_style`` for the table.

    Raises:
        ModuleNotFoundError: without ``rich``.
    """

    def __init__(self, max_depth: int = 1, **summarize_kwargs: Any) -> None:
        _require_rich("RichModelSummary")
        super().__init__(max_depth, **summarize_kwargs)

    def on_fit_start(self, trainer: Trainer, module: TrainModule) -> None:
        """Draw the table (unless ``max_depth=0``)."""
        if not self._max_depth or not trainer.is_global_zero:
            return
        from rich.console import Console
        from rich.table import Table

        rows, totals = summary_rows(module, self._max_depth)
        table = Table(header_style=self._summarize_kwargs.get("header_style", "bold magenta"))
        for header in ("", "Name", "Type", "Params", "Mode"):
            table.add_column(header, justify="right" if header == "" else "left")
        for row in rows:
            table.add_row(*row)
        console = Console(file=sys.stdout)
        console.print(table)
        for count, label in totals:
            console.print(f"[bold]{label}[/bold]: {count}")
