"""Loggers: where ``self.log`` values go. ``CSVLogger`` is built in; ``TensorBoardLogger`` needs
``tensorboard``, ``MLFlowLogger`` ``mlflow`` and ``WandbLogger`` ``wandb`` (each imported when used).

The Trainer calls loggers on global rank 0 only, so a logger never needs ``rank_zero_only``
guards; user code that reaches ``logger.experiment`` on another rank gets a ``DummyExperiment``
(every call does nothing), as in Lightning, so only rank 0 writes files. Both built-in loggers
write under ``<save_dir>/<name>/version_<N>/`` as Lightning does: ``N`` is one more than the
highest ``version_*`` folder already there (0 for a new folder).
"""

from __future__ import annotations

import csv
import json
import os
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

from typing_extensions import override

from strategies._logger_tools import add_prefix
from strategies.utilities.rank_zero import rank_zero_only


class DummyExperiment:
    """``logger.experiment`` on a global rank other than 0, as Lightning's: every method call,
    item and attribute does nothing (``self.logger.experiment.add_image(...)`` in a module runs on
    every rank; only rank 0's writes)."""

    def nop(self, *args: Any, **kwargs: Any) -> None:
        """Nothing."""

    def __getattr__(self, name: str) -> Any:
        return self.nop

    def __getitem__(self, index: Any) -> DummyExperiment:
        return self

    def __setitem__(self, key: Any, value: Any) -> None:
        pass


class Logger(ABC):
    """What the Trainer needs of a logger: metrics with their step, hyperparameters, a flush."""

    @property
    @abstractmethod
    def name(self) -> str | None:
        """The experiment name (a folder under ``save_dir`` for the built-in loggers)."""

    @property
    @abstractmethod
    def version(self) -> int | str | None:
        """The run's version: an int gives ``version_<int>``, a str is used as the folder name."""

    @property
    def save_dir(self) -> str | None:
        """The folder that holds this logger's experiments, or None when it writes nowhere local."""
        return None

    @property
    def log_dir(self) -> str | None:
        """This run's folder, or None when the logger writes nowhere local."""
        return None

    @abstractmethod
    def log_metrics(self, metrics: dict[str, float], step: int | None = None) -> None:
        """Record ``metrics`` (plain floats) at ``step``."""

    @abstractmethod
    def log_hyperparams(self, params: Mapping[str, Any]) -> None:
        """Record the run's hyperparameters."""

    def save(self) -> None:  # noqa: B027 (an optional hook: the base does nothing)
        """Flush what was logged; the Trainer calls it after every ``log_metrics``."""

    def finalize(self, status: str) -> None:  # noqa: B027 (an optional hook: the base does nothing)
        """Close the run (``status`` is ``"success"`` or ``"failed"``)."""

    def after_save_checkpoint(self, checkpoint_callback: Any) -> None:  # noqa: B027 (an optional hook)
        """Called after a ``ModelCheckpoint`` wrote a file."""


class _VersionedLogger(Logger):
    """A logger writing to ``<save_dir>/<name>/version_<N>``, ``N`` found on first use."""

    def __init__(self, save_dir: str | os.PathLike[str], name: str | None, version: int | str | None) -> None:
        self._save_dir = os.fspath(save_dir)
        self._name = name or ""
        self._version = version

    @property
    @override
    def name(self) -> str:
        return self._name

    @property
    @override
    def version(self) -> int | str:
        if self._version is None:
            self._version = self._next_version()
        return self._version

    @property
    @override
    def save_dir(self) -> str:
        return self._save_dir

    @property
    def root_dir(self) -> str:
        """``<save_dir>/<name>``: the folder holding every version."""
        return os.path.join(self._save_dir, self._name)

    @property
    @override
    def log_dir(self) -> str:
        version = self.version
        return os.path.join(self.root_dir, version if isinstance(version, str) else f"version_{version}")

    def _next_version(self) -> int:
        try:
            names = os.listdir(self.root_dir)
        except FileNotFoundError:
            return 0
        found = [
            int(n[len("version_") :])
            for n in names
            if n.startswith("version_")
            and n[len("version_") :].isdigit()
            and os.path.isdir(os.path.join(self.root_dir, n))
        ]
        return max(found) + 1 if found else 0

    def _write_hparams(self, params: Mapping[str, Any]) -> None:
        os.makedirs(self.log_dir, exist_ok=True)
        with open(os.path.join(self.log_dir, "hparams.yaml"), "w") as f:
            f.write(_to_yaml(params))


class CSVLogger(_VersionedLogger):
    """Writes ``metrics.csv`` (and ``hparams.yaml``) under ``<save_dir>/<name>/version_<N>/``.

    The columns are every key ever logged plus ``step``, sorted by name, as Lightning's
    ``CSVLogger`` writes them; a row holds the metrics of one ``log_metrics`` call and leaves
    the others empty. Each call reaches the file at once (Lightning buffers up to
    ``flush_logs_every_n_steps`` rows; the argument is accepted and has no effect).

    Args:
        save_dir: the folder that holds the experiments.
        name: the experiment's folder under ``save_dir`` (``None``: versions go right in ``save_dir``).
        version: an int for ``version_<int>``, a str for a folder of that name, None for the next free one.
        prefix: put before every metric name, joined with ``-``.
        flush_logs_every_n_steps: accepted for Lightning compatibility.
    """

    def __init__(
        self,
        save_dir: str | os.PathLike[str],
        name: str | None = "lightning_logs",
        version: int | str | None = None,
        prefix: str = "",
        flush_logs_every_n_steps: int = 100,
    ) -> None:
        super().__init__(save_dir, name, version)
        self._prefix = prefix
        self._keys: list[str] = []
        self._started = False

    @property
    def metrics_file_path(self) -> str:
        """``<log_dir>/metrics.csv``."""
        return os.path.join(self.log_dir, "metrics.csv")

    @override
    def log_metrics(self, metrics: dict[str, float], step: int | None = None) -> None:
        row = add_prefix(metrics, self._prefix)
        row["step"] = step if step is not None else 0
        if not self._started:
            # As Lightning: a run starts its own metrics.csv, even in a reused version folder.
            os.makedirs(self.log_dir, exist_ok=True)
            if os.path.isfile(self.metrics_file_path):
                os.remove(self.metrics_file_path)
            self._started = True
        new = sorted(set(row) - set(self._keys))
        if new:
            self._keys = sorted({*self._keys, *new})
            self._rewrite_header()
        with open(self.metrics_file_path, "a", newline="") as f:
            csv.DictWriter(f, fieldnames=self._keys).writerow(row)

    def _rewrite_header(self) -> None:
        rows: list[dict[str, str]] = []
        if os.path.isfile(self.metrics_file_path):
            with open(self.metrics_file_path, newline="") as f:
                rows = list(csv.DictReader(f))
        with open(self.metrics_file_path, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=self._keys)
            writer.writeheader()
            writer.writerows(rows)

    @override
    def log_hyperparams(self, params: Mapping[str, Any]) -> None:
        self._write_hparams(params)


class TensorBoardLogger(_VersionedLogger):
    """Writes TensorBoard event files under ``<save_dir>/<name>/version_<N>/``; needs ``tensorboard``.

    Scalars go through ``torch.utils.tensorboard.SummaryWriter``; hyperparameters are written to
    ``hparams.yaml`` and to TensorBoard's HPARAMS tab. Unlike Lightning, no ``hp_metric`` placeholder
    is logged.

    Args:
        save_dir: the folder that holds the experiments.
        name: the experiment's folder under ``save_dir``.
        version: an int for ``version_<int>``, a str for a folder of that name, None for the next free one.
        sub_dir: an extra folder under the version folder for the event files.
        prefix: put before every metric name, joined with ``-``.
        **kwargs: passed on to ``SummaryWriter`` (``flush_secs``, ``max_queue``, ...).
    """

    def __init__(
        self,
        save_dir: str | os.PathLike[str],
        name: str | None = "lightning_logs",
        version: int | str | None = None,
        sub_dir: str | None = None,
        prefix: str = "",
        **kwargs: Any,
    ) -> None:
        _require_tensorboard()
        super().__init__(save_dir, name, version)
        self._sub_dir = sub_dir
        self._prefix = prefix
        self._kwargs = kwargs
        self._writer: Any = None

    @property
    @override
    def log_dir(self) -> str:
        base = super().log_dir
        return os.path.join(base, self._sub_dir) if self._sub_dir else base

    @property
    def experiment(self) -> Any:
        """The ``SummaryWriter`` (created on first use); a ``DummyExperiment`` off rank 0."""
        if rank_zero_only.rank != 0:
            return DummyExperiment()
        if self._writer is None:
            from torch.utils.tensorboard import SummaryWriter

            self._writer = SummaryWriter(log_dir=self.log_dir, **self._kwargs)
        return self._writer

    @override
    def log_metrics(self, metrics: dict[str, float], step: int | None = None) -> None:
        for key, value in add_prefix(metrics, self._prefix).items():
            self.experiment.add_scalar(key, value, step)

    @override
    def log_hyperparams(self, params: Mapping[str, Any]) -> None:
        from torch.utils.tensorboard.summary import hparams

        self._write_hparams(params)
        flat = {k: v if isinstance(v, (int, float, str, bool)) else str(v) for k, v in params.items()}
        writer = self.experiment._get_file_writer()
        for summary in hparams(flat, {}):  # type: ignore[no-untyped-call]  # unannotated in torch
            writer.add_summary(summary)

    @override
    def save(self) -> None:
        if self._writer is not None:
            self._writer.flush()
            # Lightning writes hparams.yaml at each save, `{}` when no hyperparameters were logged
            if not os.path.isfile(os.path.join(self.log_dir, "hparams.yaml")):
                self._write_hparams({})

    @override
    def finalize(self, status: str) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_writer"] = None  # ddp_spawn pickles the Trainer; each process opens its own writer
        return state


def _require_tensorboard() -> None:
    import importlib.util

    if importlib.util.find_spec("tensorboard") is None:
        raise ModuleNotFoundError(
            "`TensorBoardLogger` needs the `tensorboard` package, which is not installed: "
            "`pip install tensorboard` (or `pip install strategy-compat[tensorboard]`), or use `CSVLogger`."
        )


def _to_yaml(params: Mapping[str, Any]) -> str:
    """``key: value`` lines; each value is JSON, which YAML reads as the same value."""
    if not params:
        return "{}\n"
    return "".join(f"{json.dumps(str(k))}: {json.dumps(v, default=str)}\n" for k, v in params.items())


# The service loggers build on `Logger` above, so they are imported after it.
from strategies.mlflow_logger import MLFlowLogger  # noqa: E402
from strategies.wandb_logger import WandbLogger  # noqa: E402

__all__ = ["CSVLogger", "Logger", "MLFlowLogger", "TensorBoardLogger", "WandbLogger"]
