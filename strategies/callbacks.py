"""Callbacks, and the hook record that makes the lifecycle order observable."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

if TYPE_CHECKING:
    import torch

    from strategies.module import TrainModule
    from strategies.trainer import Trainer


class Callback:
    """Hooks called around the module's own, with Lightning 2.x's names and order; all optional.

    Each hook gets ``(trainer, module, ...)``. docs/lifecycle.md lists when each one runs.
    Monitoring callbacks (checkpointing, early stopping) set ``_monitors``: their
    ``on_train_epoch_end`` runs after the module's, and checkpoint callbacks (``_is_checkpoint``)
    run after all others, as in Lightning.
    """

    _is_checkpoint: ClassVar[bool] = False
    _monitors: ClassVar[bool] = False

    @property
    def state_key(self) -> str:
        """The key of this callback's state in a checkpoint (its class name)."""
        return type(self).__qualname__

    # -- setup and teardown -------------------------------------------------------------------

    def setup(self, trainer: Trainer, module: TrainModule, stage: str) -> None:
        """After the datamodule's ``setup``, before the module's; the process group is live."""

    def teardown(self, trainer: Trainer, module: TrainModule, stage: str) -> None:
        """After the datamodule's ``teardown``, before the module's."""

    def on_fit_start(self, trainer: Trainer, module: TrainModule) -> None:
        """After ``strategy.setup``: the model is on its device, wrapped, with its optimizers."""

    def on_fit_end(self, trainer: Trainer, module: TrainModule) -> None:
        """After ``strategy.teardown`` (the module is back on the CPU)."""

    def on_sanity_check_start(self, trainer: Trainer, module: TrainModule) -> None:
        """Before the sanity-check validation run of ``fit``."""

    def on_sanity_check_end(self, trainer: Trainer, module: TrainModule) -> None:
        """After the sanity-check validation run."""

    # -- training -----------------------------------------------------------------------------

    def on_train_start(self, trainer: Trainer, module: TrainModule) -> None:
        """Before the first training epoch (after the sanity check)."""

    def on_train_end(self, trainer: Trainer, module: TrainModule) -> None:
        """After the last training epoch."""

    def on_train_epoch_start(self, trainer: Trainer, module: TrainModule) -> None:
        """Before each training epoch."""

    def on_train_epoch_end(self, trainer: Trainer, module: TrainModule) -> None:
        """After each training epoch and its validation."""

    def on_train_batch_start(self, trainer: Trainer, module: TrainModule, batch: Any, batch_idx: int) -> None:
        """Before each training step (the batch is on the device)."""

    def on_train_batch_end(
        self, trainer: Trainer, module: TrainModule, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        """After each training step (and its optimizer step, unless accumulating)."""

    def on_before_backward(self, trainer: Trainer, module: TrainModule, loss: torch.Tensor) -> None:
        """Before ``module.backward``."""

    def on_after_backward(self, trainer: Trainer, module: TrainModule) -> None:
        """After ``module.backward``: gradients exist (unless accumulating, not yet synced)."""

    def on_before_optimizer_step(self, trainer: Trainer, module: TrainModule, optimizer: Any) -> None:
        """After the closure (step and backward), before clipping and the optimizer step."""

    def on_before_zero_grad(self, trainer: Trainer, module: TrainModule, optimizer: Any) -> None:
        """Before ``module.optimizer_zero_grad`` (inside the closure, after ``training_step``)."""

    # -- evaluation -----------------------------------------------------------------------------

    def on_validation_start(self, trainer: Trainer, module: TrainModule) -> None:
        """Before each validation run (also the sanity check)."""

    def on_validation_end(self, trainer: Trainer, module: TrainModule) -> None:
        """After each validation run."""

    def on_validation_epoch_start(self, trainer: Trainer, module: TrainModule) -> None:
        """Before the validation batches."""

    def on_validation_epoch_end(self, trainer: Trainer, module: TrainModule) -> None:
        """After the validation batches."""

    def on_validation_batch_start(
        self, trainer: Trainer, module: TrainModule, batch: Any, batch_idx: int, dataloader_idx: int = 0
    ) -> None:
        """Before each ``validation_step``."""

    def on_validation_batch_end(
        self, trainer: Trainer, module: TrainModule, outputs: Any, batch: Any, batch_idx: int, dataloader_idx: int = 0
    ) -> None:
        """After each ``validation_step``."""

    def on_test_start(self, trainer: Trainer, module: TrainModule) -> None:
        """Before the test run."""

    def on_test_end(self, trainer: Trainer, module: TrainModule) -> None:
        """After the test run."""

    def on_test_epoch_start(self, trainer: Trainer, module: TrainModule) -> None:
        """Before the test batches."""

    def on_test_epoch_end(self, trainer: Trainer, module: TrainModule) -> None:
        """After the test batches."""

    def on_test_batch_start(
        self, trainer: Trainer, module: TrainModule, batch: Any, batch_idx: int, dataloader_idx: int = 0
    ) -> None:
        """Before each ``test_step``."""

    def on_test_batch_end(
        self, trainer: Trainer, module: TrainModule, outputs: Any, batch: Any, batch_idx: int, dataloader_idx: int = 0
    ) -> None:
        """After each ``test_step``."""

    def on_predict_start(self, trainer: Trainer, module: TrainModule) -> None:
        """Before the predict run."""

    def on_predict_end(self, trainer: Trainer, module: TrainModule) -> None:
        """After the predict run."""

    def on_predict_epoch_start(self, trainer: Trainer, module: TrainModule) -> None:
        """Before the predict batches."""

    def on_predict_epoch_end(self, trainer: Trainer, module: TrainModule) -> None:
        """After the predict batches."""

    def on_predict_batch_start(
        self, trainer: Trainer, module: TrainModule, batch: Any, batch_idx: int, dataloader_idx: int = 0
    ) -> None:
        """Before each ``predict_step``."""

    def on_predict_batch_end(
        self, trainer: Trainer, module: TrainModule, outputs: Any, batch: Any, batch_idx: int, dataloader_idx: int = 0
    ) -> None:
        """After each ``predict_step``."""

    # -- checkpoints and errors ---------------------------------------------------------------

    def on_exception(self, trainer: Trainer, module: TrainModule, exception: BaseException) -> None:
        """When a stage raises, before the strategy is torn down."""

    def state_dict(self) -> dict[str, Any]:
        """What a checkpoint keeps of this callback."""
        return {}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what ``state_dict`` returned."""

    def on_save_checkpoint(self, trainer: Trainer, module: TrainModule, checkpoint: dict[str, Any]) -> None:
        """Add to (or edit) a checkpoint before it is written."""

    def on_load_checkpoint(self, trainer: Trainer, module: TrainModule, checkpoint: dict[str, Any]) -> None:
        """Read a checkpoint being restored."""


class Checkpoint(Callback):
    """The base of checkpoint callbacks, as Lightning's ``Checkpoint``.

    Subclass it for a callback of your own that saves checkpoints: the Trainer then runs its
    hooks after every other callback's (so it sees what they logged) and adds no default
    ``ModelCheckpoint`` beside it. ``ModelCheckpoint`` and ``OnExceptionCheckpoint`` are ones.
    """

    _saves: ClassVar[bool] = True


class HookCall(NamedTuple):
    """One entry of the hook record: which process, which stage, which call."""

    rank: int
    stage: str
    name: str


class HookRecorder:
    """Keeps ``Trainer(record_hooks=True)``'s record of one rank in ``calls``.

    Each lifecycle step and hook call is a ``HookCall``: ``strategy.setup_environment``,
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


def _exported() -> dict[str, type]:
    """The ``Callback`` subclasses ``strategies`` exports (read when first asked: they import this module)."""
    import strategies

    found = {name: getattr(strategies, name) for name in getattr(strategies, "__all__", ())}
    return {n: v for n, v in found.items() if isinstance(v, type) and issubclass(v, Callback) and v is not Callback}


def __getattr__(name: str) -> Any:
    # Lightning users import every callback from `lightning.pytorch.callbacks`: here each one
    # `strategies` exports, so a callback added there needs no second list here.
    value = _exported().get(name)
    if value is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_exported()})
