"""``BaseFinetuning`` and ``BackboneFinetuning``: freeze layers, then unfreeze them into the optimizer.

As in Lightning 2.6: ``freeze_before_training(module)`` runs in the callback's ``setup`` (before
``configure_optimizers``, so the optimizer can be given only the trainable parameters), and
``finetune_function(module, epoch, optimizer)`` at each training epoch's start, where
``unfreeze_and_add_param_group`` adds the unfrozen layers to the optimizer as a new group. The
groups added are kept in checkpoints (by parameter name), so a resumed run rebuilds them before
the optimizer's state is loaded into it.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Generator, Iterable
from typing import TYPE_CHECKING, Any

import torch
from torch.nn import Module, ModuleDict
from torch.nn.modules.batchnorm import _BatchNorm

from strategies.callbacks import Callback

if TYPE_CHECKING:
    from strategies.module import TrainModule
    from strategies.trainer import Trainer

__all__ = ["BackboneFinetuning", "BaseFinetuning"]

log = logging.getLogger("strategies")
Modules = Module | Iterable[Any]


def multiplicative(epoch: int) -> float:
    """``BackboneFinetuning``'s default schedule: the backbone's learning rate times 2 each epoch."""
    return 2.0


class BaseFinetuning(Callback):
    """Base class of a fine-tuning callback: define ``freeze_before_training`` and ``finetune_function``.

    Example::

        class Unfreeze(BaseFinetuning):
            def freeze_before_training(self, module):
                self.freeze(module.feature_extractor)

            def finetune_function(self, module, epoch, optimizer):
                if epoch == 10:
                    self.unfreeze_and_add_param_group(module.feature_extractor, optimizer)

    The module's ``configure_optimizers`` should then optimize only what is trainable
    (``filter(lambda p: p.requires_grad, self.parameters())``).
    """

    def __init__(self) -> None:
        #: optimizer index -> its parameter groups, parameters by name (what a checkpoint keeps)
        self._internal_optimizer_metadata: dict[int, list[dict[str, Any]]] = {}
        self._restarting = False
        self._rebuilt = False

    # -- the two methods a subclass defines ----------------------------------------------------

    def freeze_before_training(self, module: TrainModule) -> None:
        """Freeze what must not train at first (called in ``setup``, before the optimizers exist)."""
        raise NotImplementedError(f"`{type(self).__name__}` must define `freeze_before_training(module)`")

    def finetune_function(self, module: TrainModule, epoch: int, optimizer: torch.optim.Optimizer) -> None:
        """Unfreeze at the right epoch (called at each training epoch's start, for each optimizer)."""
        raise NotImplementedError(f"`{type(self).__name__}` must define `finetune_function(module, epoch, optimizer)`")

    # -- helpers -------------------------------------------------------------------------------

    @staticmethod
    def flatten_modules(modules: Modules) -> list[Module]:
        """The leaf modules (and the modules with parameters of their own) of a module or a nest of them."""
        if isinstance(modules, ModuleDict):
            modules = modules.values()
        if isinstance(modules, Iterable):
            found: list[Module] = []
            for item in modules:
                found.extend(BaseFinetuning.flatten_modules(item))
            candidates: Iterable[Module] = found
        else:
            candidates = modules.modules()
        return [m for m in candidates if not list(m.children()) or m._parameters]

    @staticmethod
    def filter_params(
        modules: Modules, train_bn: bool = True, requires_grad: bool = True
    ) -> Generator[Any, None, None]:
        """The parameters whose ``requires_grad`` is ``requires_grad`` (batch norms' only with ``train_bn``)."""
        for module in BaseFinetuning.flatten_modules(modules):
            if isinstance(module, _BatchNorm) and not train_bn:
                continue
            for param in module.parameters(recurse=False):
                if param.requires_grad == requires_grad:
                    yield param

    @staticmethod
    def make_trainable(modules: Modules) -> None:
        """Unfreeze every parameter (and let batch norms track their statistics again)."""
        for module in BaseFinetuning.flatten_modules(modules):
            if isinstance(module, _BatchNorm):
                module.track_running_stats = True
            for param in module.parameters(recurse=False):
                param.requires_grad = True

    @staticmethod
    def freeze_module(module: Module) -> None:
        """Freeze one module's own parameters (a batch norm also stops tracking its statistics)."""
        if isinstance(module, _BatchNorm):
            module.track_running_stats = False
        for param in module.parameters(recurse=False):
            param.requires_grad = False

    @staticmethod
    def freeze(modules: Modules, train_bn: bool = True) -> None:
        """Freeze the modules; batch norms stay trainable with ``train_bn``."""
        for module in BaseFinetuning.flatten_modules(modules):
            if isinstance(module, _BatchNorm) and train_bn:
                BaseFinetuning.make_trainable(module)
            else:
                BaseFinetuning.freeze_module(module)

    @staticmethod
    def filter_on_optimizer(optimizer: torch.optim.Optimizer, params: Iterable[Any]) -> list[Any]:
        """The ``params`` not already in one of ``optimizer``'s groups (those are skipped, with a warning)."""
        inside = {id(p) for group in optimizer.param_groups for p in group["params"]}
        kept: list[Any] = []
        skipped: list[Any] = []
        for param in params:
            (skipped if id(param) in inside else kept).append(param)
        if skipped:
            warnings.warn(
                f"{len(skipped)} of the parameters to unfreeze are already in a group of this optimizer and "
                "are skipped: build it from the trainable parameters only, "
                f"`{type(optimizer).__name__}(filter(lambda p: p.requires_grad, self.parameters()), ...)`.",
                UserWarning,
                stacklevel=3,
            )
        return kept

    @staticmethod
    def unfreeze_and_add_param_group(
        modules: Modules,
        optimizer: torch.optim.Optimizer,
        lr: float | None = None,
        initial_denom_lr: float = 10.0,
        train_bn: bool = True,
    ) -> None:
        """Unfreeze ``modules`` and add their parameters to ``optimizer`` as a new group.

        Its learning rate is ``lr``, else the first group's divided by ``initial_denom_lr``.
        """
        BaseFinetuning.make_trainable(modules)
        base = optimizer.param_groups[0]["lr"] if lr is None else float(lr)
        denominator = initial_denom_lr if lr is None else 1.0
        params = BaseFinetuning.filter_on_optimizer(
            optimizer, BaseFinetuning.filter_params(modules, train_bn=train_bn, requires_grad=True)
        )
        if params:
            optimizer.add_param_group({"params": params, "lr": base / denominator})

    # -- hooks ---------------------------------------------------------------------------------

    def setup(self, trainer: Trainer, module: TrainModule, stage: str) -> None:
        """``freeze_before_training``; DeepSpeed is refused (it owns the parameter groups)."""
        self.freeze_before_training(module)
        from strategies.deepspeed import DeepSpeedStrategy

        if isinstance(trainer.strategy, DeepSpeedStrategy):
            raise NotImplementedError(
                f"`{type(self).__name__}` cannot run with DeepSpeed, which builds the optimizer's parameter "
                "groups itself: use another strategy or drop the callback."
            )

    def on_load_checkpoint(self, trainer: Trainer, module: TrainModule, checkpoint: dict[str, Any]) -> None:
        """Rebuild the saved parameter groups now, before the optimizers' states are loaded into them."""
        from strategies._checkpoint import callback_state

        saved = callback_state(checkpoint.get("callbacks", {}), self)
        metadata = saved.get("internal_optimizer_metadata", {}) if isinstance(saved, dict) else {}
        if metadata:
            self._rebuild(trainer, module, metadata)
            self._rebuilt = True  # `load_state_dict`, next, must not ask `on_fit_start` to do it again

    def on_fit_start(self, trainer: Trainer, module: TrainModule) -> None:
        """A state loaded without a checkpoint restore (``load_state_dict``): rebuild its groups."""
        if self._restarting and self._internal_optimizer_metadata:
            self._rebuild(trainer, module, self._internal_optimizer_metadata)
        self._restarting = False

    def on_train_epoch_start(self, trainer: Trainer, module: TrainModule) -> None:
        """``finetune_function`` for each optimizer, and note the groups it added."""
        for index, optimizer in enumerate(trainer.optimizers):
            before = len(optimizer.param_groups)
            self.finetune_function(module, trainer.current_epoch, optimizer)
            self._store(module, index, before, optimizer.param_groups)

    # -- checkpoints ---------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """The optimizers' parameter groups, parameters by name (Lightning's key)."""
        return {"internal_optimizer_metadata": self._internal_optimizer_metadata}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Take the saved groups (rebuilt in ``on_load_checkpoint``, or at ``on_fit_start``)."""
        # Rebuilt already (a checkpoint restore)? Doing it again at `on_fit_start` would put back the
        # learning rates of when each group was added over the ones the optimizer's state restored.
        self._restarting = not getattr(self, "_rebuilt", False)
        self._rebuilt = False
        self._internal_optimizer_metadata = dict(state_dict.get("internal_optimizer_metadata", state_dict))

    def _rebuild(self, trainer: Trainer, module: TrainModule, metadata: dict[Any, list[dict[str, Any]]]) -> None:
        named = dict(module.named_parameters())
        for index, optimizer in enumerate(trainer.optimizers):
            groups = metadata.get(index, metadata.get(str(index)))
            if groups:
                optimizer.param_groups = _with_params(groups, named)
                # They were trainable when saved (only trainable ones are added); `freeze_before_training`
                # froze them again in this run's setup. Lightning 2.6 leaves them frozen: a resumed run
                # then trains less than the run it continues.
                for group in optimizer.param_groups:
                    for param in group["params"]:
                        param.requires_grad_(True)
        self._internal_optimizer_metadata = {int(k): v for k, v in metadata.items()}
        self._restarting = False

    def _store(self, module: TrainModule, index: int, before: int, groups: list[dict[str, Any]]) -> None:
        names = {p: n for n, p in module.named_parameters()}
        if index not in self._internal_optimizer_metadata:
            self._internal_optimizer_metadata[index] = _with_params(groups, names)
        elif before != len(groups):
            self._internal_optimizer_metadata[index].extend(_with_params(groups[before:], names))


def _with_params(groups: list[dict[str, Any]], mapping: dict[Any, Any]) -> list[dict[str, Any]]:
    """The groups with each parameter replaced through ``mapping`` (a parameter <-> its name)."""
    return [
        {**{k: v for k, v in g.items() if k != "params"}, "params": [mapping[p] for p in g["params"]]} for g in groups
    ]


class BackboneFinetuning(BaseFinetuning):
    """Train the module's ``backbone`` from ``unfreeze_backbone_at_epoch`` on, its learning rate rising.

    Args:
        unfreeze_backbone_at_epoch: the epoch (from 0) the backbone joins the optimizer.
        lambda_func: ``epoch -> factor`` applied to the backbone's learning rate each later epoch.
        backbone_initial_ratio_lr: the backbone's first learning rate, as a share of the module's.
        backbone_initial_lr: or that learning rate itself.
        should_align: once the backbone's rate would pass the module's, use the module's.
        initial_denom_lr: passed to ``unfreeze_and_add_param_group``.
        train_bn: train the backbone's batch norms from the start.
        verbose: log both learning rates each epoch (``strategies`` logger, INFO).
        rounding: digits of those logged rates.

    Raises:
        ValueError: at ``fit``, a module without an ``nn.Module`` ``backbone`` attribute.
    """

    def __init__(
        self,
        unfreeze_backbone_at_epoch: int = 10,
        lambda_func: Callable[[int], float] = multiplicative,
        backbone_initial_ratio_lr: float = 10e-2,
        backbone_initial_lr: float | None = None,
        should_align: bool = True,
        initial_denom_lr: float = 10.0,
        train_bn: bool = True,
        verbose: bool = False,
        rounding: int = 12,
    ) -> None:
        super().__init__()
        self.unfreeze_backbone_at_epoch = unfreeze_backbone_at_epoch
        self.lambda_func = lambda_func
        self.backbone_initial_ratio_lr = backbone_initial_ratio_lr
        self.backbone_initial_lr = backbone_initial_lr
        self.should_align = should_align
        self.initial_denom_lr = initial_denom_lr
        self.train_bn = train_bn
        self.verbose = verbose
        self.rounding = rounding
        self.previous_backbone_lr: float | None = None

    def state_dict(self) -> dict[str, Any]:
        """The parameter groups and the backbone's last learning rate (Lightning's keys)."""
        return {**super().state_dict(), "previous_backbone_lr": self.previous_backbone_lr}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Take the saved groups and learning rate."""
        self.previous_backbone_lr = state_dict.get("previous_backbone_lr")
        super().load_state_dict(state_dict)

    def on_fit_start(self, trainer: Trainer, module: TrainModule) -> None:
        """Check that the module has a ``backbone``."""
        if not isinstance(getattr(module, "backbone", None), Module):
            raise ValueError(
                f"`BackboneFinetuning` needs `{type(module).__name__}.backbone`, an `nn.Module`: name the part to "
                "fine-tune `self.backbone`, or write your own `BaseFinetuning` subclass."
            )
        super().on_fit_start(trainer, module)

    def freeze_before_training(self, module: TrainModule) -> None:
        """Freeze the backbone."""
        self.freeze(module.backbone)

    def finetune_function(self, module: TrainModule, epoch: int, optimizer: torch.optim.Optimizer) -> None:
        """Add the backbone at its epoch, then raise its learning rate by ``lambda_func`` each epoch."""
        current = optimizer.param_groups[0]["lr"]
        if epoch == self.unfreeze_backbone_at_epoch:
            initial = (
                self.backbone_initial_lr
                if self.backbone_initial_lr is not None
                else current * self.backbone_initial_ratio_lr
            )
            self.previous_backbone_lr = initial
            self.unfreeze_and_add_param_group(
                module.backbone, optimizer, initial, train_bn=self.train_bn, initial_denom_lr=self.initial_denom_lr
            )
            backbone = initial
        elif epoch > self.unfreeze_backbone_at_epoch and self.previous_backbone_lr is not None:
            backbone = self.lambda_func(epoch + 1) * self.previous_backbone_lr
            if self.should_align and backbone > current:
                backbone = current
            optimizer.param_groups[-1]["lr"] = backbone
            self.previous_backbone_lr = backbone
        else:
            return
        if self.verbose:
            log.info(f"Current lr: {round(current, self.rounding)}, Backbone lr: {round(backbone, self.rounding)}")
