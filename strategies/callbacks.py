"""Callbacks, and the hook record that makes the lifecycle order observable."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from strategies.module import TrainModule
    from strategies.trainer import Trainer


class Callback:
    """Hooks called around the module's own; every method is optional."""

    def setup(self, trainer: Trainer, module: TrainModule, stage: str) -> None:
        """Before the module's ``setup``; the process group is live."""

    def teardown(self, trainer: Trainer, module: TrainModule, stage: str) -> None:
        """After the module's ``teardown``."""

    def on_fit_start(self, trainer: Trainer, module: TrainModule) -> None:
        """After ``strategy.setup``."""

    def on_fit_end(self, trainer: Trainer, module: TrainModule) -> None:
        """After the training loop."""

    def on_train_epoch_start(self, trainer: Trainer, module: TrainModule) -> None:
        """Before each training epoch."""

    def on_train_epoch_end(self, trainer: Trainer, module: TrainModule) -> None:
        """After each training epoch."""

    def on_train_batch_start(self, trainer: Trainer, module: TrainModule, batch: Any, batch_idx: int) -> None:
        """Before each training step."""

    def on_train_batch_end(
        self, trainer: Trainer, module: TrainModule, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        """After each optimizer step."""

    def on_validation_epoch_end(self, trainer: Trainer, module: TrainModule) -> None:
        """After each validation epoch."""

    def on_test_epoch_end(self, trainer: Trainer, module: TrainModule) -> None:
        """After the test epoch."""

    def state_dict(self) -> dict[str, Any]:
        """What a checkpoint keeps of this callback."""
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` returned."""


class HookCall(NamedTuple):
    """One entry of the hook record: which process, which stage, which call."""

    rank: int
    stage: str
    name: str


class HookRecorder(Callback):
    """Keeps ``Trainer(record_hooks=True)``'s record of one rank in ``calls``.

    Each lifecycle step and hook call is a :class:`HookCall`: ``strategy.setup_environment``,
    ``process_group.init``, ``module.setup``, ``strategy.model_to_device``, ``strategy.wrap``,
    ``module.configure_optimizers``, ``module.on_fit_start``, ... (docs/lifecycle.md has the table).
    """

    def __init__(self) -> None:
        self.calls: list[HookCall] = []

    def record(self, rank: int, stage: str, name: str) -> None:
        """Append one call."""
        self.calls.append(HookCall(rank, stage, name))

    def names(self, stage: str | None = None) -> list[str]:
        """The recorded names, optionally of one stage."""
        return [c.name for c in self.calls if stage is None or c.stage == stage]


def __getattr__(name: str) -> Any:
    # Lightning users import these from `lightning.pytorch.callbacks`; loaded lazily (they import Callback).
    if name == "ModelCheckpoint":
        from strategies.model_checkpoint import ModelCheckpoint

        return ModelCheckpoint
    if name == "EarlyStopping":
        from strategies.early_stopping import EarlyStopping

        return EarlyStopping
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
