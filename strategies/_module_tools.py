"""``TrainModule``'s Lightning 2.6 helpers beyond training: loading, freezing, exporting.

``load_from_checkpoint`` (a classmethod that refuses an instance, as Lightning 2.x's does),
``freeze``/``unfreeze``, ``example_input_array``, ``to_torchscript``, ``to_onnx``,
``toggled_optimizer``, ``logger``/``loggers``, ``on_gpu`` and ``strict_loading``: the names a
Lightning 2.6 program calls on its module outside ``fit``, with Lightning's arguments and results.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import types
import warnings
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import torch

if TYPE_CHECKING:
    from strategies.module import TrainModule

_F = TypeVar("_F", bound=Callable[..., Any])


class _ClassOnly(Generic[_F]):
    """A classmethod that refuses to be called on an instance, as Lightning 2.x's ``load_from_checkpoint``.

    In Lightning 1.x ``model.load_from_checkpoint(path)`` ran and returned a new module, which code
    often dropped, believing ``model`` itself was loaded. Lightning 2.x raises ``TypeError`` there,
    and so does this.
    """

    def __init__(self, fn: _F) -> None:
        self.fn = fn
        functools.update_wrapper(self, fn)  # type: ignore[arg-type]

    def __get__(self, instance: object, owner: type) -> Callable[..., Any]:
        if instance is None or torch.jit.is_scripting():
            return types.MethodType(self.fn, owner)
        name = self.fn.__name__

        def refuse(*args: Any, **kwargs: Any) -> Any:
            raise TypeError(
                f"The classmethod `{owner.__name__}.{name}` cannot be called on an instance: call it on the "
                f"class and use the module it returns (`model = {owner.__name__}.{name}(path)`)."
            )

        return refuse


def read_hparams_file(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The hyperparameters in a YAML file (Lightning's ``hparams.yaml``), for ``hparams_file=``.

    As in Lightning 2.6 they replace the checkpoint's; keyword arguments still win over them.
    """
    if not os.fspath(path).lower().endswith((".yaml", ".yml")):
        raise ValueError(f"`hparams_file={os.fspath(path)!r}`: a .yaml or .yml file is needed.")
    if importlib.util.find_spec("ruamel") is None:
        raise ImportError(
            f"`load_from_checkpoint(hparams_file={os.fspath(path)!r})` reads YAML with ruamel.yaml, which is not "
            "installed: `pip install ruamel.yaml`, or pass the hyperparameters as keyword arguments."
        )
    from ruamel.yaml import YAML

    with open(path, encoding="utf-8") as fh:
        loaded = YAML(typ="safe").load(fh)
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        raise ValueError(f"{os.fspath(path)}: expected a mapping of hyperparameters, got {type(loaded).__name__}")
    return dict(loaded)


def build_from_datasets(
    cls: type[Any], datasets: tuple[Any, Any, Any, Any], batch_size: int, num_workers: int, kwargs: dict[str, Any]
) -> Any:
    """``DataModule.from_datasets``: ``cls`` built, with a dataloader hook set for each dataset given."""
    from torch.utils.data import DataLoader, Dataset, IterableDataset

    from strategies._checkpoint import accepted_by

    def loaders(data: Any, shuffle: bool) -> Any:
        if isinstance(data, Dataset):
            return DataLoader(
                data,
                batch_size=batch_size,
                shuffle=shuffle and not isinstance(data, IterableDataset),
                num_workers=num_workers,
                pin_memory=torch.cuda.is_available(),
            )
        if isinstance(data, dict):
            return {key: loaders(value, shuffle) for key, value in data.items()}
        if isinstance(data, (list, tuple)):
            return type(data)(loaders(value, shuffle) for value in data)
        return data

    special = accepted_by(cls, {"batch_size": batch_size, "num_workers": num_workers})
    datamodule = cls(**kwargs, **special)
    for hook, data, shuffle in zip(
        ("train_dataloader", "val_dataloader", "test_dataloader", "predict_dataloader"),
        datasets,
        (True, False, False, False),
        strict=True,
    ):
        if data is not None:
            setattr(datamodule, hook, functools.partial(loaders, data, shuffle))
    return datamodule


class ModuleTools:
    """Mixed into ``TrainModule``: see the module docstring."""

    #: The checkpoint keys of the hyperparameters, as Lightning's ``LightningModule`` names them.
    CHECKPOINT_HYPER_PARAMS_KEY = "hyper_parameters"
    CHECKPOINT_HYPER_PARAMS_NAME = "hparams_name"
    CHECKPOINT_HYPER_PARAMS_TYPE = "hparams_type"

    # Properties TorchScript must not compile (they reach the Trainer, which a script has not).
    __jit_unused_properties__ = [
        "trainer",
        "device",
        "global_rank",
        "local_rank",
        "current_epoch",
        "global_step",
        "automatic_optimization",
        "hparams",
        "example_input_array",
        "logger",
        "loggers",
        "on_gpu",
        "strict_loading",
    ]

    # -- loading ------------------------------------------------------------------------------

    @_ClassOnly
    def load_from_checkpoint(
        cls: type[TrainModule],
        checkpoint_path: str | os.PathLike[str],
        map_location: Any = None,
        hparams_file: str | os.PathLike[str] | None = None,
        strict: bool | None = None,
        weights_only: bool | None = None,
        **kwargs: Any,
    ) -> TrainModule:
        """The module built from a checkpoint's hyperparameters, with the checkpoint's weights.

        As Lightning 2.6: the saved ``hyper_parameters``, then those of ``hparams_file`` (YAML),
        then ``kwargs`` go to ``__init__``; ``on_load_checkpoint(checkpoint)`` runs, then
        ``load_state_dict(state_dict, strict)`` (``strict=None``: the module's ``strict_loading``,
        true by default). Reads this library's files, Lightning 2.x's and 1.x's. Call it on the
        class: on an instance it raises ``TypeError``, as in Lightning 2.x.
        """
        from strategies._checkpoint import load_module

        hparams = read_hparams_file(hparams_file) if hparams_file is not None else None
        return load_module(cls, checkpoint_path, map_location, strict, weights_only, hparams, **kwargs)

    @property
    def strict_loading(self) -> bool:
        """Whether ``load_from_checkpoint``/resuming needs every key to match (default: true)."""
        value = self.__dict__.get("_strict_loading")  # no class-level annotations: TorchScript reads them
        return True if value is None else bool(value)

    @strict_loading.setter
    def strict_loading(self, value: bool) -> None:
        self.__dict__["_strict_loading"] = value

    # -- freezing -----------------------------------------------------------------------------

    def freeze(self) -> None:
        """No gradients for any parameter, and evaluation mode (``unfreeze`` undoes it)."""
        module: torch.nn.Module = self  # type: ignore[assignment]
        for param in module.parameters():
            param.requires_grad = False
        module.eval()

    def unfreeze(self) -> None:
        """Gradients for every parameter again, and training mode."""
        module: torch.nn.Module = self  # type: ignore[assignment]
        for param in module.parameters():
            param.requires_grad = True
        module.train()

    @contextlib.contextmanager
    def toggled_optimizer(self, optimizer: Any) -> Iterator[None]:
        """``toggle_optimizer`` for the ``with`` block, ``untoggle_optimizer`` after it."""
        self.toggle_optimizer(optimizer)  # type: ignore[attr-defined]
        try:
            yield
        finally:
            self.untoggle_optimizer(optimizer)  # type: ignore[attr-defined]

    # -- where it runs, what it logs to ---------------------------------------------------------

    @property
    def on_gpu(self) -> bool:
        """Whether the module runs on a CUDA device."""
        return bool(self.device.type == "cuda")  # type: ignore[attr-defined]

    @property
    def logger(self) -> Any:
        """The Trainer's first logger (``None`` without a Trainer or without loggers)."""
        trainer = getattr(self, "_trainer", None)
        return trainer.logger if trainer is not None else None

    @property
    def loggers(self) -> list[Any]:
        """The Trainer's loggers (``[]`` without a Trainer)."""
        trainer = getattr(self, "_trainer", None)
        return list(trainer.loggers) if trainer is not None else []

    # -- exporting ----------------------------------------------------------------------------

    @property
    def example_input_array(self) -> Any:
        """An input ``forward`` takes: the default of ``to_torchscript(method="trace")`` and ``to_onnx``."""
        return self.__dict__.get("_example_input_array")

    @example_input_array.setter
    def example_input_array(self, example: Any) -> None:
        self.__dict__["_example_input_array"] = example

    def _example_on_device(self, example: Any) -> Any:
        from strategies._data import apply_to_tensors

        device = self.device  # type: ignore[attr-defined]
        return apply_to_tensors(example, lambda t: t.to(device))

    @torch.no_grad()
    def to_torchscript(
        self,
        file_path: str | os.PathLike[str] | None = None,
        method: str | None = "script",
        example_inputs: Any = None,
        **kwargs: Any,
    ) -> Any:
        """This module as TorchScript (``torch.jit.script``, or ``torch.jit.trace`` with ``method="trace"``).

        As Lightning 2.6, which deprecates it (TorchScript is deprecated in PyTorch: prefer
        ``torch.export.export``): the script is made in evaluation mode and the module's mode is
        restored after; ``trace`` uses ``example_inputs`` or ``example_input_array``; with
        ``file_path`` the script is also saved there (``torch.jit.save``).
        """
        warnings.warn(
            "`to_torchscript` is deprecated in Lightning 2.6 (removed in 2.8): TorchScript is deprecated in "
            "PyTorch. Use `torch.export.export()` to export a model.",
            DeprecationWarning,
            stacklevel=2,
        )
        module: torch.nn.Module = self  # type: ignore[assignment]
        mode = module.training
        try:
            self.__dict__["_exporting"] = True  # `trainer` gives None instead of raising (TorchScript probes it)
            if method == "script":
                scripted = torch.jit.script(module.eval(), **kwargs)
            elif method == "trace":
                if example_inputs is None:
                    if self.example_input_array is None:
                        raise ValueError(
                            "`to_torchscript(method='trace')` needs `example_inputs` or `model.example_input_array`."
                        )
                    example_inputs = self.example_input_array
                scripted = torch.jit.trace(  # type: ignore[no-untyped-call]
                    module.eval(), self._example_on_device(example_inputs), **kwargs
                )
            else:
                raise ValueError(f"`to_torchscript(method={method!r})`: method must be 'script' or 'trace'.")
        finally:
            self.__dict__.pop("_exporting", None)
            module.train(mode)
        if file_path is not None:
            torch.jit.save(scripted, os.fspath(file_path))
        return scripted

    @torch.no_grad()
    def to_onnx(self, file_path: str | os.PathLike[str] | None = None, input_sample: Any = None, **kwargs: Any) -> Any:
        """Export to ONNX with ``torch.onnx.export`` (needs ``pip install onnx onnxscript``), as Lightning 2.6.

        ``input_sample`` (default: ``example_input_array``) is moved to the module's device; the
        export runs in evaluation mode and the mode is restored after; ``kwargs`` go to
        ``torch.onnx.export``. Returns what ``torch.onnx.export`` returns.
        """
        missing = [name for name in ("onnx", "onnxscript") if importlib.util.find_spec(name) is None]
        if missing:
            raise ModuleNotFoundError(f"`to_onnx` needs {' and '.join(missing)}: `pip install onnx onnxscript`.")
        if input_sample is None:
            if self.example_input_array is None:
                raise ValueError("`to_onnx` needs `input_sample` or `model.example_input_array`.")
            input_sample = self.example_input_array
        sample = self._example_on_device(input_sample)
        module: torch.nn.Module = self  # type: ignore[assignment]
        mode = module.training
        module.eval()
        try:
            args = sample if isinstance(sample, tuple) else (sample,)
            return torch.onnx.export(module, args, None if file_path is None else os.fspath(file_path), **kwargs)
        finally:
            module.train(mode)
