"""The user's side: ``TrainModule`` (an ``nn.Module`` with Lightning's hooks) and ``DataModule``."""

from __future__ import annotations

import argparse
import contextvars
import copy
import inspect
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import torch
from torch import nn

from strategies._hooks import _CheckpointHooks, _DataHooks, _ModelHooks
from strategies._module_tools import ModuleTools, _ClassOnly, build_from_datasets, read_hparams_file

if TYPE_CHECKING:
    from strategies.callbacks import Callback
    from strategies.trainer import Trainer


#: Set by ``strategies.cli`` while it builds a module: what ``save_hyperparameters()`` keeps instead
#: of ``__init__``'s arguments (the parsed config, and ``_instantiator``, how to rebuild from it).
GIVEN_HPARAMS: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar("GIVEN_HPARAMS", default=None)


class AttributeDict(dict[str, Any]):
    """A dict whose keys are also attributes (``module.hparams.lr``), as Lightning's."""

    def __getattr__(self, key: str) -> Any:
        try:
            return self[key]
        except KeyError as err:
            raise AttributeError(f"No hyperparameter `{key}`; saved: {sorted(self)}.") from err

    def __setattr__(self, key: str, value: Any) -> None:
        self[key] = value


class _Hyperparameters:
    """``save_hyperparameters`` and ``hparams``, for modules and datamodules alike (as Lightning's mixin)."""

    def save_hyperparameters(
        self, *args: Any, ignore: Sequence[str] | str | None = None, frame: Any = None, logger: bool = True
    ) -> None:
        """Keep ``__init__``'s arguments (or the names in ``args``, or one dict or
        ``argparse.Namespace``, whose items are taken) in ``hparams``.

        Checkpoints store them under ``"hyper_parameters"`` (a datamodule's under
        ``"datamodule_hyper_parameters"``), as Lightning's do.
        """
        ignored = {ignore} if isinstance(ignore, str) else set(ignore or ())
        if len(args) == 1 and isinstance(args[0], (Mapping, argparse.Namespace)):
            self.hparams.update(vars(args[0]) if isinstance(args[0], argparse.Namespace) else args[0])
            return
        if len(args) == 1 and not isinstance(args[0], str):
            raise ValueError(
                f"`save_hyperparameters` takes argument names, or one dict or `argparse.Namespace`; got a "
                f"`{type(args[0]).__name__}`."
            )
        frame = frame or inspect.currentframe().f_back  # type: ignore[union-attr]
        given = GIVEN_HPARAMS.get()
        init_args = dict(given) if given is not None else _init_arguments(frame)
        names = [a for a in args if isinstance(a, str)] or list(init_args)
        unknown = [n for n in names if n not in init_args]
        if unknown:
            raise ValueError(f"`save_hyperparameters{tuple(args)}`: {unknown} are not arguments of `__init__`.")
        self.hparams.update({n: copy.copy(init_args[n]) for n in names if n not in ignored})

    @property
    def hparams(self) -> AttributeDict:
        """The saved hyperparameters (``self.hparams.lr``)."""
        found = self.__dict__.get("_hparams")
        if found is None:  # a subclass whose __init__ did not call ours
            found = self.__dict__["_hparams"] = AttributeDict()
        return cast(AttributeDict, found)


class TrainModule(_Hyperparameters, ModuleTools, _ModelHooks, _DataHooks, _CheckpointHooks, nn.Module):
    """An ``nn.Module`` with the hooks and helpers of Lightning 2.x's ``LightningModule``.

    Override ``training_step`` (returns a loss, or a dict with ``"loss"``) and
    ``configure_optimizers``; the rest is optional. Layers may be created in ``setup`` or
    ``configure_model``: they are moved to the device and wrapped after those hooks. With
    ``self.automatic_optimization = False`` the step does its own ``self.optimizers()``,
    ``self.manual_backward(loss)`` and ``opt.step()`` (the way to train several optimizers).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._trainer: Trainer | None = None
        self._automatic_optimization = True
        self._hparams = AttributeDict()
        self._param_requires_grad_state: dict[nn.Parameter, bool] = {}

    # -- where the module runs ----------------------------------------------------------------

    @property
    def trainer(self) -> Trainer:
        """The Trainer running this module."""
        if self._trainer is None and not self.__dict__.get("_exporting"):  # TorchScript probes every name
            raise RuntimeError(f"`{type(self).__name__}` is not attached to a Trainer.")
        return self._trainer  # type: ignore[return-value]

    @trainer.setter
    def trainer(self, trainer: Trainer | None) -> None:
        self._trainer = trainer

    @property
    def device(self) -> torch.device:
        """Where the module runs: the strategy's device, also inside ``setup`` before the move."""
        if self._trainer is not None:
            return self._trainer.strategy.root_device
        param = next(self.parameters(), None)
        return param.device if param is not None else torch.device("cpu")

    @property
    def global_rank(self) -> int:
        """This process's rank (0 outside a run)."""
        return self._trainer.global_rank if self._trainer is not None else 0

    @property
    def local_rank(self) -> int:
        """This process's rank on its node (0 outside a run)."""
        return self._trainer.local_rank if self._trainer is not None else 0

    @property
    def current_epoch(self) -> int:
        """The Trainer's epoch (0 outside a run)."""
        return self._trainer.current_epoch if self._trainer is not None else 0

    @property
    def global_step(self) -> int:
        """Optimizer steps taken so far (0 outside a run)."""
        return self._trainer.global_step if self._trainer is not None else 0

    @property
    def automatic_optimization(self) -> bool:
        """``False``: ``training_step`` does its own backward and optimizer steps (manual optimization)."""
        return self._automatic_optimization

    @automatic_optimization.setter
    def automatic_optimization(self, value: bool) -> None:
        self._automatic_optimization = value

    # -- metrics, printing, collectives -------------------------------------------------------

    def log(
        self,
        name: str,
        value: Any,
        prog_bar: bool = False,
        logger: bool | None = None,
        on_step: bool | None = None,
        on_epoch: bool | None = None,
        reduce_fx: Any = "mean",
        enable_graph: bool = False,
        sync_dist: bool = False,
        sync_dist_group: Any = None,
        add_dataloader_idx: bool = True,
        batch_size: int | None = None,
        metric_attribute: str | None = None,
        rank_zero_only: bool = False,
    ) -> None:
        """Log a metric as Lightning does (``trainer.callback_metrics``, loggers, the progress bar).

        ``value`` is a number, a one-element tensor or a torchmetrics ``Metric`` (its forward value
        per step, its ``compute()`` per epoch). ``on_step``/``on_epoch`` default by hook: per step in
        ``training_step``, per epoch (the mean, or ``reduce_fx``) in evaluation; ``sync_dist=True``
        reduces the epoch value over ranks. With several evaluation loaders the name gets
        ``/dataloader_idx_N`` (``add_dataloader_idx``).
        """
        if self._trainer is None:
            warnings.warn(f"`self.log({name!r}, ...)` outside a Trainer run does nothing.", stacklevel=2)
            return
        self._trainer.metrics.log(
            name,
            value,
            prog_bar=prog_bar,
            logger=logger,
            on_step=on_step,
            on_epoch=on_epoch,
            reduce_fx=reduce_fx,
            enable_graph=enable_graph,
            sync_dist=sync_dist,
            sync_dist_group=sync_dist_group,
            add_dataloader_idx=add_dataloader_idx,
            batch_size=batch_size,
            metric_attribute=metric_attribute,
            rank_zero_only=rank_zero_only,
        )

    def log_dict(
        self,
        dictionary: Mapping[str, Any],
        prog_bar: bool = False,
        logger: bool | None = None,
        on_step: bool | None = None,
        on_epoch: bool | None = None,
        reduce_fx: Any = "mean",
        enable_graph: bool = False,
        sync_dist: bool = False,
        sync_dist_group: Any = None,
        add_dataloader_idx: bool = True,
        batch_size: int | None = None,
        rank_zero_only: bool = False,
    ) -> None:
        """``log`` each item of ``dictionary`` with the same options."""
        for name, value in dictionary.items():
            self.log(
                name,
                value,
                prog_bar=prog_bar,
                logger=logger,
                on_step=on_step,
                on_epoch=on_epoch,
                reduce_fx=reduce_fx,
                enable_graph=enable_graph,
                sync_dist=sync_dist,
                sync_dist_group=sync_dist_group,
                add_dataloader_idx=add_dataloader_idx,
                batch_size=batch_size,
                rank_zero_only=rank_zero_only,
            )

    def print(self, *args: Any, **kwargs: Any) -> None:
        """``print`` on global rank 0 only."""
        if self.global_rank == 0:
            print(*args, **kwargs)

    def all_gather(self, data: Any, group: Any = None, sync_grads: bool = False) -> Any:
        """Every tensor in ``data`` gathered from all ranks (a new first dimension of size world size).

        Outside a multi-process run the data comes back unchanged, as in Lightning.
        """
        from strategies._data import apply_to_tensors

        trainer = self._trainer
        if trainer is None or trainer.world_size == 1 and not torch.distributed.is_initialized():
            return data
        return apply_to_tensors(data, trainer.strategy.all_gather)

    # -- optimization -------------------------------------------------------------------------

    def configure_optimizers(self) -> Any:
        """Return an optimizer, a list, or a dict with ``"optimizer"`` and ``"lr_scheduler"``."""
        raise NotImplementedError(
            f"`{type(self).__name__}.configure_optimizers` is not defined: return an optimizer (e.g. "
            "`torch.optim.SGD(self.parameters(), lr=0.1)`) to fit."
        )

    def configure_callbacks(self) -> Sequence[Callback] | Callback:
        """Callbacks this module needs; they replace Trainer callbacks of the same type."""
        return []

    def optimizers(self, use_pl_optimizer: bool = True) -> Any:
        """The optimizer (one) or the list of them, wrapped so that ``step()`` runs the step hooks."""
        optimizers = self.trainer._optimizer_proxies if use_pl_optimizer else self.trainer.strategy.optimizers
        return optimizers[0] if len(optimizers) == 1 else list(optimizers)

    def lr_schedulers(self) -> Any:
        """The scheduler (one), the list of them, or ``None``."""
        schedulers = [config["scheduler"] for config in self.trainer.strategy.lr_scheduler_configs]
        if not schedulers:
            return None
        return schedulers[0] if len(schedulers) == 1 else schedulers

    def manual_backward(self, loss: torch.Tensor, *args: Any, **kwargs: Any) -> None:
        """Back-propagate in manual optimization, through the backward hooks and the precision."""
        if self.automatic_optimization:
            raise RuntimeError(
                "`manual_backward` is for manual optimization: set `self.automatic_optimization = False`."
            )
        self.trainer.hooks.backward(loss, *args, **kwargs)

    def backward(self, loss: torch.Tensor, *args: Any, **kwargs: Any) -> None:
        """Back-propagate ``loss`` through the strategy (grad scaler, DeepSpeed engine)."""
        self.trainer.strategy.backward(loss)

    def toggle_optimizer(self, optimizer: Any) -> None:
        """Freeze every parameter that ``optimizer`` does not train (undo with ``untoggle_optimizer``)."""
        own = {id(p) for group in optimizer.param_groups for p in group["params"]}
        for param in self.parameters():
            self._param_requires_grad_state.setdefault(param, param.requires_grad)
            if id(param) not in own:
                param.requires_grad = False

    def untoggle_optimizer(self, optimizer: Any) -> None:
        """Give back the ``requires_grad`` flags ``toggle_optimizer`` changed."""
        for param, requires_grad in self._param_requires_grad_state.items():
            param.requires_grad = requires_grad
        self._param_requires_grad_state = {}

    def clip_gradients(
        self, optimizer: Any, gradient_clip_val: float | None = None, gradient_clip_algorithm: str | None = None
    ) -> None:
        """Clip the optimizer's gradients by norm (default) or by value; nothing when the value is None."""
        from strategies._optimization import clip_gradients

        clip_gradients(self.trainer.strategy, optimizer, gradient_clip_val, gradient_clip_algorithm or "norm")

    def configure_gradient_clipping(
        self, optimizer: Any, gradient_clip_val: float | None = None, gradient_clip_algorithm: str | None = None
    ) -> None:
        """Called before each optimizer step with the Trainer's clipping settings; override to change them."""
        self.clip_gradients(optimizer, gradient_clip_val, gradient_clip_algorithm)

    def lr_scheduler_step(self, scheduler: Any, metric: Any) -> None:
        """Step one scheduler (with the monitored metric for ``ReduceLROnPlateau``)."""
        if metric is None:
            scheduler.step()
        else:
            scheduler.step(metric)

    def optimizer_step(self, epoch: int, batch_idx: int, optimizer: Any, optimizer_closure: Any = None) -> None:
        """Step ``optimizer``; ``optimizer_closure`` runs ``training_step`` and ``backward`` first."""
        optimizer.step(closure=optimizer_closure)

    def optimizer_zero_grad(self, epoch: int, batch_idx: int, optimizer: Any) -> None:
        """Zero the gradients (inside the closure, after ``training_step``)."""
        optimizer.zero_grad()

    # -- steps ----------------------------------------------------------------------------------

    def training_step(self, *args: Any, **kwargs: Any) -> Any:
        """One training step: return the loss (or a dict with ``"loss"``; ``None`` skips the step)."""
        raise NotImplementedError

    def validation_step(self, *args: Any, **kwargs: Any) -> Any:
        """One validation step."""
        raise NotImplementedError

    def test_step(self, *args: Any, **kwargs: Any) -> Any:
        """One test step."""
        raise NotImplementedError

    def predict_step(self, *args: Any, **kwargs: Any) -> Any:
        """One prediction step; the default calls the module on the batch."""
        batch = args[0] if args else kwargs["batch"]
        return self(batch)


def _init_arguments(frame: Any) -> dict[str, Any]:
    """The arguments of the ``__init__`` running in ``frame`` (``**kwargs`` flattened in)."""
    info = inspect.getargvalues(frame)
    values = {name: info.locals[name] for name in info.args[1:]}
    if info.varargs:
        values[info.varargs] = info.locals[info.varargs]
    if info.keywords:
        values.update(info.locals[info.keywords])
    return values


def _has_own(obj: Any, name: str, base: type) -> bool:
    """Whether ``obj`` overrides ``name`` of ``base``: in its class, or set on the object itself.

    As Lightning's ``is_overridden``: a function set on the instance counts (``from_datasets`` sets
    the dataloader hooks that way).
    """
    attr = getattr(obj, name, None)
    return getattr(attr, "__func__", attr) is not getattr(base, name, None)


class DataModule(_Hyperparameters, _DataHooks):
    """Data in one place: ``prepare_data``, ``setup(stage)`` and the dataloaders of each stage.

    Batch-transfer hooks overridden here are used instead of the module's, as in Lightning.
    ``save_hyperparameters()`` keeps ``__init__``'s arguments in checkpoints, and
    ``YourData.load_from_checkpoint(path)`` builds the datamodule from them, as Lightning 2.6's.
    """

    #: The checkpoint keys of a datamodule's hyperparameters, as Lightning's ``LightningDataModule`` names them.
    CHECKPOINT_HYPER_PARAMS_KEY = "datamodule_hyper_parameters"
    CHECKPOINT_HYPER_PARAMS_NAME = "datamodule_hparams_name"
    CHECKPOINT_HYPER_PARAMS_TYPE = "datamodule_hparams_type"
    #: A name for the datamodule (Lightning's attribute; nothing here reads it).
    name: str | None = None

    def __init__(self) -> None:
        self.trainer: Trainer | None = None

    @classmethod
    def from_datasets(
        cls,
        train_dataset: Any = None,
        val_dataset: Any = None,
        test_dataset: Any = None,
        predict_dataset: Any = None,
        batch_size: int = 1,
        num_workers: int = 0,
        **datamodule_kwargs: Any,
    ) -> DataModule:
        """A datamodule whose dataloaders serve the given datasets (each may be a list or dict of them).

        As Lightning 2.6: ``DataLoader(dataset, batch_size, num_workers)``, shuffled for training
        (not an ``IterableDataset``); ``batch_size``/``num_workers`` also go to ``__init__`` when it
        takes them, with ``datamodule_kwargs``.
        """
        datamodule: DataModule = build_from_datasets(
            cls, (train_dataset, val_dataset, test_dataset, predict_dataset), batch_size, num_workers, datamodule_kwargs
        )
        return datamodule

    @_ClassOnly
    def load_from_checkpoint(
        cls: type[DataModule],
        checkpoint_path: Any,
        map_location: Any = None,
        hparams_file: Any = None,
        weights_only: bool | None = None,
        **kwargs: Any,
    ) -> DataModule:
        """The datamodule built from a checkpoint's ``datamodule_hyper_parameters`` (``kwargs`` win), with its state.

        As Lightning 2.6: a YAML ``hparams_file`` replaces the saved hyperparameters; then
        ``load_state_dict`` gets what ``state_dict`` saved. On an instance it raises ``TypeError``.
        """
        from strategies._checkpoint import load_datamodule

        hparams = read_hparams_file(hparams_file) if hparams_file is not None else None
        return load_datamodule(cls, checkpoint_path, map_location, weights_only, hparams, **kwargs)

    def state_dict(self) -> dict[str, Any]:
        """What a checkpoint keeps of this datamodule."""
        return {}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what ``state_dict`` returned."""

    def on_exception(self, exception: BaseException) -> None:
        """When a stage raises."""
