"""``StochasticWeightAveraging``: average the weights of the last epochs, as Lightning 2.6 does.

From the epoch ``swa_epoch_start`` on, each training epoch's start adds the module's weights to
a running average (a copy of the module), and the optimizer's schedule becomes
``torch.optim.swa_utils.SWALR``, annealing to ``swa_lrs`` over ``annealing_epochs``. When training
ends the module gets the averaged weights. A module with batch norm runs one epoch more: the
averaged weights go in, the batch-norm statistics restart, and that epoch only runs the forward
passes to recompute them (no backward; its one optimizer step, at the last batch, has no gradients
and changes no weight). **Differs from Lightning 2.6:** there that step applies the gradients left
from the epoch before, so the module ends one optimizer step away from the average; here it ends
with the average (its batch-norm statistics are the same in both).

The callback's state (the average, how many epochs it holds, the scheduler's state) is saved in
checkpoints under Lightning's keys, so a resumed run continues the same average.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch
from torch import nn

from strategies.callbacks import Callback
from strategies.utilities.rank_zero import rank_zero_info, rank_zero_warn

if TYPE_CHECKING:
    from strategies.module import TrainModule
    from strategies.trainer import Trainer

_AvgFn = Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]

__all__ = ["StochasticWeightAveraging"]


class StochasticWeightAveraging(Callback):
    """Stochastic Weight Averaging (Izmailov et al., 2018) with Lightning 2.6's arguments and rules.

    Args:
        swa_lrs: the learning rate the schedule anneals to: one float for every parameter group,
            or a list with one per group.
        swa_epoch_start: the epoch averaging starts (an int >= 1, counted from 1), or a fraction
            of ``max_epochs`` (a float in [0, 1]).
        annealing_epochs: the epochs the annealing to ``swa_lrs`` takes.
        annealing_strategy: ``"cos"`` or ``"linear"``.
        avg_fn: ``avg_fn(averaged, current, n_averaged) -> new averaged`` for each parameter; the
            equal-weight mean by default.
        device: where the average lives (``"cpu"`` by default; None: the module's device).

    Example::

        trainer = Trainer(max_epochs=20, callbacks=[StochasticWeightAveraging(swa_lrs=1e-2)])
        trainer.fit(model)  # epochs 16-20 are averaged into `model`

    One optimizer and at most one scheduler (stepped every epoch) are supported, not FSDP or
    DeepSpeed (their weights are sharded), as in Lightning.
    """

    def __init__(
        self,
        swa_lrs: float | list[float],
        swa_epoch_start: int | float = 0.8,
        annealing_epochs: int = 10,
        annealing_strategy: str = "cos",
        avg_fn: _AvgFn | None = None,
        device: torch.device | str | None = torch.device("cpu"),  # noqa: B008  (Lightning's default)
    ) -> None:
        if isinstance(swa_epoch_start, bool) or not isinstance(swa_epoch_start, (int, float)):
            raise TypeError(f"`swa_epoch_start={swa_epoch_start!r}`: pass an int >= 1 or a float between 0 and 1.")
        if (isinstance(swa_epoch_start, int) and swa_epoch_start < 1) or (
            isinstance(swa_epoch_start, float) and not 0 <= swa_epoch_start <= 1
        ):
            raise ValueError(f"`swa_epoch_start={swa_epoch_start!r}`: pass an int >= 1 or a float between 0 and 1.")
        lrs_ok = (isinstance(swa_lrs, float) and swa_lrs > 0) or (
            isinstance(swa_lrs, list) and all(isinstance(lr, float) and lr > 0 for lr in swa_lrs)
        )
        if not lrs_ok:
            raise ValueError(f"`swa_lrs={swa_lrs!r}`: pass a positive float, or a list of positive floats.")
        if annealing_strategy not in ("cos", "linear"):
            raise ValueError(f"`annealing_strategy={annealing_strategy!r}`: pass 'cos' or 'linear'.")
        if avg_fn is not None and not callable(avg_fn):
            raise TypeError("`avg_fn` must be callable: `avg_fn(averaged, current, n_averaged) -> averaged`.")
        if device is not None and not isinstance(device, (torch.device, str)):
            raise TypeError(f"`device={device!r}`: pass a torch.device, a str such as 'cpu', or None.")
        self._swa_epoch_start: int | float = swa_epoch_start
        self._swa_lrs: float | list[float] = swa_lrs
        self._annealing_epochs = annealing_epochs
        self._annealing_strategy = annealing_strategy
        self._avg_fn: _AvgFn = avg_fn or self.avg_fn
        self._device = device
        self.n_averaged: torch.Tensor | None = None
        """How many epochs' weights the average holds."""
        self.momenta: dict[nn.modules.batchnorm._BatchNorm, float | None] = {}
        self._average_model: nn.Module | None = None
        self._batch_norm = False
        self._initialized = False
        self._swa_scheduler: torch.optim.swa_utils.SWALR | None = None
        self._scheduler_state: dict[str, Any] | None = None
        self._init_n_averaged = 0
        self._latest_update_epoch = -1
        self._max_epochs = -1
        self._accumulate_grad_batches = 1

    # -- the epochs ------------------------------------------------------------------------------

    @property
    def swa_start(self) -> int:
        """The first averaged epoch, counted from 0."""
        return max(int(self._swa_epoch_start) - 1, 0)

    @property
    def swa_end(self) -> int | float:
        """The last averaged epoch, counted from 0 (inf without ``max_epochs``)."""
        return float("inf") if self._max_epochs == -1 else self._max_epochs - 1

    @staticmethod
    def pl_module_contains_batch_norm(pl_module: nn.Module) -> bool:
        """Whether the module has a batch-norm layer (then an epoch recomputes its statistics)."""
        return any(isinstance(module, nn.modules.batchnorm._BatchNorm) for module in pl_module.modules())

    # -- the hooks ----------------------------------------------------------------------------------

    def setup(self, trainer: Trainer, module: TrainModule, stage: str) -> None:
        """Copy the module for the average (before the strategy moves or wraps it)."""
        from strategies.deepspeed import DeepSpeedStrategy
        from strategies.fsdp import FSDPStrategy

        if isinstance(trainer.strategy, (FSDPStrategy, DeepSpeedStrategy)):
            raise ValueError(
                "`StochasticWeightAveraging` does not support sharded models (FSDP, DeepSpeed): remove it, or "
                "train with a strategy that keeps whole weights on each process (ddp)."
            )
        self._average_model = _copy_module(module)

    def on_fit_start(self, trainer: Trainer, module: TrainModule) -> None:
        """Check the optimizers; resolve a fractional start; add the batch-norm epoch."""
        if len(trainer.strategy.optimizers) != 1:
            raise ValueError(
                f"`StochasticWeightAveraging` works with one optimizer; `configure_optimizers` gave "
                f"{len(trainer.strategy.optimizers)}."
            )
        if len(trainer.strategy.lr_scheduler_configs) > 1:
            raise ValueError("`StochasticWeightAveraging` works with at most one learning-rate scheduler.")
        if isinstance(self._swa_epoch_start, float):
            if trainer.max_epochs == -1:
                raise ValueError(
                    "`StochasticWeightAveraging(swa_epoch_start=<a fraction>)` needs `max_epochs`: pass "
                    "`swa_epoch_start` as an int, or set `Trainer(max_epochs=...)`."
                )
            self._swa_epoch_start = int(trainer.max_epochs * self._swa_epoch_start)
        self._batch_norm = self.pl_module_contains_batch_norm(module)
        self._max_epochs = trainer.max_epochs
        if self._batch_norm and trainer.max_epochs != -1:
            trainer.max_epochs += 1
        if self._scheduler_state is not None:  # resumed: the SWA scheduler replaces the restored one
            trainer.strategy.lr_scheduler_configs.clear()

    def on_train_epoch_start(self, trainer: Trainer, module: TrainModule) -> None:
        """Start the schedule at ``swa_start``; add this epoch's weights; in the batch-norm epoch,
        put the average in and run forward passes only."""
        epoch = trainer.current_epoch
        if not self._initialized and self.swa_start <= epoch <= self.swa_end:
            self._start(trainer, module)
        if self.swa_start <= epoch <= self.swa_end and epoch > self._latest_update_epoch:
            assert self.n_averaged is not None and self._average_model is not None
            self.update_parameters(self._average_model, module, self.n_averaged, self._avg_fn)
            self._latest_update_epoch = epoch
        if self._max_epochs != -1 and epoch == self.swa_end + 1:
            assert self._average_model is not None
            self.transfer_weights(self._average_model, module)
            self.reset_batch_norm_and_save_state(module)
            self._accumulate_grad_batches = trainer.accumulate_grad_batches
            if trainer.num_training_batches == float("inf"):
                raise ValueError(
                    "`StochasticWeightAveraging` recomputes batch-norm statistics over one epoch, which needs "
                    "a training loader with a length."
                )
            # Accumulating over more than the epoch: the only step is the last batch's, with no gradients.
            trainer.accumulate_grad_batches = int(trainer.num_training_batches) + 1
            trainer.state.forward_only = True
            # Lightning leaves the previous epoch's last gradients in place here, so that one step
            # moves the averaged weights (with momentum); without gradients it changes nothing.
            for optimizer in trainer.strategy.optimizers:
                optimizer.zero_grad(set_to_none=True)

    def on_train_epoch_end(self, trainer: Trainer, module: TrainModule) -> None:
        """The batch-norm epoch is over: back to normal steps."""
        trainer.state.forward_only = False

    def on_train_end(self, trainer: Trainer, module: TrainModule) -> None:
        """The module gets the average (or, after the batch-norm epoch, keeps it and its momenta return)."""
        if self._batch_norm and self._max_epochs != -1 and trainer.current_epoch - 1 == self.swa_end + 1:
            trainer.accumulate_grad_batches = self._accumulate_grad_batches
            trainer.max_epochs -= 1
            self.reset_momenta()
        elif (trainer.current_epoch - 1 == self.swa_end or self._max_epochs == -1) and self._average_model is not None:
            self.transfer_weights(self._average_model, module)

    def _start(self, trainer: Trainer, module: TrainModule) -> None:
        from torch.optim.swa_utils import SWALR

        from strategies._optimizers import _scheduler_config

        self._initialized = True
        assert self._average_model is not None
        self._average_model = self._average_model.to(self._device or module.device)
        optimizer = trainer.strategy.optimizers[0]
        if isinstance(self._swa_lrs, float):
            self._swa_lrs = [self._swa_lrs] * len(optimizer.param_groups)
        for lr, group in zip(self._swa_lrs, optimizer.param_groups, strict=False):
            group["initial_lr"] = lr
        self._swa_scheduler = SWALR(
            optimizer,
            swa_lr=self._swa_lrs,  # type: ignore[arg-type]  # torch takes one per group too
            anneal_epochs=self._annealing_epochs,
            anneal_strategy=self._annealing_strategy,  # type: ignore[arg-type]  # checked in __init__
            last_epoch=trainer.max_epochs if self._annealing_strategy == "cos" else -1,
        )
        if self._scheduler_state is not None:
            self._swa_scheduler.load_state_dict(self._scheduler_state)
        elif trainer.current_epoch != self.swa_start:
            rank_zero_warn("SWA is initializing after swa_start without any checkpoint data.")
        config = _scheduler_config(self._swa_scheduler)
        configs = trainer.strategy.lr_scheduler_configs
        if configs:
            old = configs[0]
            if old["interval"] != "epoch" or old["frequency"] != 1:
                rank_zero_warn(
                    f"SWA is only supported every epoch; the scheduler it replaces stepped every {old['frequency']} "
                    f"{old['interval']}(s)."
                )
            rank_zero_info(f"Swapping scheduler `{type(old['scheduler']).__name__}` for `SWALR`")
            configs[0] = config
        else:
            configs.append(config)
        if self.n_averaged is None:
            self.n_averaged = torch.tensor(self._init_n_averaged, dtype=torch.long, device=module.device)

    # -- the averaging ---------------------------------------------------------------------------

    @staticmethod
    def transfer_weights(src_pl_module: nn.Module, dst_pl_module: nn.Module) -> None:
        """Copy the parameters of ``src_pl_module`` into ``dst_pl_module``."""
        for source, target in zip(src_pl_module.parameters(), dst_pl_module.parameters(), strict=True):
            target.detach().copy_(source.to(target.device))

    @staticmethod
    def update_parameters(average_model: nn.Module, model: nn.Module, n_averaged: torch.Tensor, avg_fn: _AvgFn) -> None:
        """Add ``model``'s parameters to the average (the first call copies them); counts in ``n_averaged``."""
        for averaged, current in zip(average_model.parameters(), model.parameters(), strict=True):
            device = averaged.device
            averaged_, current_ = averaged.detach(), current.detach().to(device)
            averaged_.copy_(current_ if n_averaged == 0 else avg_fn(averaged_, current_, n_averaged.to(device)))
        n_averaged += 1

    @staticmethod
    def avg_fn(
        averaged_model_parameter: torch.Tensor, model_parameter: torch.Tensor, num_averaged: torch.Tensor
    ) -> torch.Tensor:
        """The equal-weight running mean."""
        return averaged_model_parameter + (model_parameter - averaged_model_parameter) / (num_averaged + 1)

    def reset_batch_norm_and_save_state(self, pl_module: nn.Module) -> None:
        """Restart every batch-norm layer's statistics (a cumulative mean: momentum None), keeping the momenta."""
        self.momenta = {}
        for module in pl_module.modules():
            if not isinstance(module, nn.modules.batchnorm._BatchNorm):
                continue
            assert module.running_mean is not None and module.running_var is not None
            module.running_mean = torch.zeros_like(module.running_mean)
            module.running_var = torch.ones_like(module.running_var)
            self.momenta[module] = module.momentum
            module.momentum = None  # None: torch's cumulative average
            assert module.num_batches_tracked is not None
            module.num_batches_tracked *= 0

    def reset_momenta(self) -> None:
        """Give the batch-norm layers their momenta back."""
        for module, momentum in self.momenta.items():
            module.momentum = momentum

    # -- checkpoints -----------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """Lightning's keys: ``n_averaged``, ``latest_update_epoch``, ``scheduler_state``, ``average_model_state``."""
        return {
            "n_averaged": 0 if self.n_averaged is None else self.n_averaged.item(),
            "latest_update_epoch": self._latest_update_epoch,
            "scheduler_state": None if self._swa_scheduler is None else self._swa_scheduler.state_dict(),
            "average_model_state": None if self._average_model is None else self._average_model.state_dict(),
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Continue the saved average."""
        self._init_n_averaged = state_dict["n_averaged"]
        self._latest_update_epoch = state_dict["latest_update_epoch"]
        self._scheduler_state = state_dict["scheduler_state"]
        if self._average_model is not None and state_dict["average_model_state"] is not None:
            self._average_model.load_state_dict(state_dict["average_model_state"])


def _copy_module(module: nn.Module) -> nn.Module:
    """A deep copy of ``module`` without its Trainer (the copy only holds weights)."""
    trainer = module.__dict__.get("_trainer")
    module.__dict__["_trainer"] = None
    try:
        return copy.deepcopy(module)
    finally:
        module.__dict__["_trainer"] = trainer
