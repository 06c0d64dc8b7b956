"""What a checkpoint holds, and how a run is restored from one (keys as Lightning's where they overlap).

One file layout is written (``dump_checkpoint``) and several are read (``upgrade``):

- this library's own: ``epoch`` is the epoch a resumed run starts in, ``step_in_epoch`` the batches of
  it already done, ``global_step`` the optimizer steps done. It also carries what Lightning 2.6 reads
  to resume (``pytorch-lightning_version``, ``loops``), so ``lightning.pytorch.Trainer.fit(ckpt_path=...)``
  and ``LightningModule.load_from_checkpoint`` take it.
- Lightning 1.6 to 2.6: ``epoch`` is the epoch running when the file was written, whether or not it
  had finished; the loop state (``loops["fit_loop"]``) says where the run was, and is what is read.
- Lightning 1.2 to 1.5: no loop state; ``epoch`` is the next epoch to run and ``global_step`` the steps
  done (1.x wrote ``current_epoch + 1`` and ``global_step + 1``, and resumed at the start of ``epoch``
  even from a file written mid-epoch). Callback states of 1.2-1.4 are keyed by class, hyperparameters
  may be a ``pytorch_lightning`` ``AttributeDict``: ``read_file`` loads those with ``weights_only=True``.
"""

from __future__ import annotations

import argparse
import inspect
import os
import pickle
import re
import sys
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, cast

import torch

from strategies._preflight import CheckpointError

if TYPE_CHECKING:
    from strategies.module import DataModule, TrainModule
    from strategies.trainer import Trainer

# The Lightning release whose keys and loop state `dump_checkpoint` writes (read as "pytorch-lightning_version").
LIGHTNING_FORMAT = "2.6.0"
# The key only this library's files have: its `epoch`/`global_step` are read as written.
_OWN_KEY = "step_in_epoch"
# Which precision state key each source uses: ours, Lightning 2.x (the plugin's class name), Lightning 1.x.
_PRECISION_KEYS = ("precision", "MixedPrecision", "FSDPPrecision", "native_amp_scaling_state")
_UNSAFE_ENV = "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"
_UPGRADE = "python -m strategies.utilities.upgrade_checkpoint"

# Classes a 1.2-1.5 file names: callbacks keyed by their class (1.2-1.4), hyperparameters kept as an
# AttributeDict. Each is read as an inert stand-in (a callback key) or a plain dict, never imported.
_LEGACY_CALLBACKS = {
    "pytorch_lightning.callbacks.model_checkpoint.ModelCheckpoint": "ModelCheckpoint",
    "pytorch_lightning.callbacks.early_stopping.EarlyStopping": "EarlyStopping",
    "pytorch_lightning.callbacks.timer.Timer": "Timer",
    "pytorch_lightning.callbacks.quantization.QuantizationAwareTraining": "QuantizationAwareTraining",
    "pytorch_lightning.callbacks.finetuning.BackboneFinetuning": "BackboneFinetuning",
    "pytorch_lightning.callbacks.stochastic_weight_avg.StochasticWeightAveraging": "StochasticWeightAveraging",
}
_LEGACY_DICTS = (
    "pytorch_lightning.utilities.parsing.AttributeDict",
    "pytorch_lightning.core.saving.AttributeDict",
)


class _LegacyCallbackKey:
    """Stands for a callback class a 1.2-1.4 checkpoint used as the key of the callback's state."""


def _stand_in(name: str) -> type:
    return type(name, (_LegacyCallbackKey,), {"__module__": __name__})


_STAND_INS = {path: _stand_in(name) for path, name in _LEGACY_CALLBACKS.items()}


def unsafe_load_requested() -> bool:
    """Whether the user set ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1`` (torch's switch) to load trusted pickles."""
    return os.environ.get(_UNSAFE_ENV, "0").strip().lower() in ("1", "y", "yes", "true")


@contextmanager
def legacy_globals() -> Iterator[None]:
    """``torch.load(weights_only=True)`` inside also reads the 1.2-1.5 names above (as inert stand-ins)."""
    allowed: list[Any] = [(cls, path) for path, cls in _STAND_INS.items()]
    allowed += [(dict, path) for path in _LEGACY_DICTS]
    allowed.append(argparse.Namespace)  # plain attributes; building one runs no code of the file
    with torch.serialization.safe_globals(allowed):
        yield


class _LegacyUnpickler(pickle.Unpickler):
    """For ``weights_only=False``: a 1.x name whose package is not installed becomes its stand-in."""

    def find_class(self, module: str, name: str) -> Any:
        path = f"{module}.{name}"
        try:
            return super().find_class(module, name)
        except (ImportError, AttributeError):
            if path in _STAND_INS:
                return _STAND_INS[path]
            if path in _LEGACY_DICTS:
                return dict
            if module.startswith("pytorch_lightning"):
                return _stand_in(name)  # another 1.x callback class used as a key
            raise


class _LegacyPickle:
    Unpickler = _LegacyUnpickler
    load = pickle.load
    __name__ = "pickle"


def read_file(
    path: str | os.PathLike[str], map_location: Any = "cpu", weights_only: bool | None = None, mmap: bool = False
) -> dict[str, Any]:
    """Load a checkpoint file, ``weights_only=True`` unless ``weights_only=False`` or the env var says so.

    Raises:
        CheckpointError: the file is damaged, or holds objects that ``weights_only=True`` refuses; the
            message says how to convert a trusted file once so that it loads with ``weights_only=True``.
    """
    if weights_only is None:
        weights_only = not unsafe_load_requested()
    try:
        if weights_only:
            with legacy_globals():
                checkpoint = torch.load(path, map_location=map_location, weights_only=True, mmap=mmap)
        else:
            checkpoint = torch.load(path, map_location=map_location, weights_only=False, pickle_module=_LegacyPickle)
    except FileNotFoundError:
        raise
    except Exception as err:
        raise CheckpointError(_load_error(path, err, weights_only)) from None
    if not isinstance(checkpoint, dict):
        raise CheckpointError(
            f"{path} holds a `{type(checkpoint).__name__}`, not a checkpoint dict. Pass a file written by "
            "`trainer.save_checkpoint(path)` or by a `ModelCheckpoint`."
        )
    return checkpoint


def load_error_message(path: str | os.PathLike[str], err: BaseException) -> str:
    """What to say when ``torch.load(path, weights_only=True)`` raised ``err``: never torch's own advice,
    which is to pass ``weights_only=False`` (that runs code stored in the file)."""
    return _load_error(path, err, weights_only=True)


def _load_error(path: str | os.PathLike[str], err: BaseException, weights_only: bool) -> str:
    found = re.search(r"GLOBAL (\S+)", str(err))
    if weights_only and found:
        return (
            f"{path} holds `{found.group(1)}`, an object that `torch.load(weights_only=True)` does not load "
            "(pickled hyperparameters such as an OmegaConf config, or a 1.x callback keyed by its class). Only if "
            f"you trust the file, convert it once: `{_UPGRADE} --trust {path}` (it unpickles the file in full, "
            "which can execute code stored in it; it keeps a `.bak` copy); the converted file then loads with "
            f"`weights_only=True`. Or set `{_UNSAFE_ENV}=1` for the run (the same risk, at every load)."
        )
    return (
        f"{path} is not a checkpoint written by this library or by Lightning: it cannot be read "
        f"(`torch.load(weights_only={weights_only})` raised {type(err).__name__}: the file is damaged or "
        "truncated, or holds objects other than tensors and plain data). Pass a file written by "
        "`trainer.save_checkpoint(path)` or by a `ModelCheckpoint`."
    )


# -- which format, and where it resumes -------------------------------------------------------------


def source_of(checkpoint: Mapping[str, Any]) -> str:
    """``"strategies"`` (this library's file), ``"lightning"`` (1.6 to 2.x, with loop state) or ``"lightning-1.x"``."""
    if _OWN_KEY in checkpoint:
        return "strategies"
    version = _version(checkpoint.get("pytorch-lightning_version"))
    loops = checkpoint.get("loops")
    if version >= (1, 6) and isinstance(loops, Mapping) and "fit_loop" in loops:
        return "lightning"
    return "lightning-1.x"  # 1.5 with fault-tolerant training also wrote "loops", in a layout 1.5 alone read


def _version(text: Any) -> tuple[int, ...]:
    numbers = re.findall(r"\d+", str(text or "0").split("+")[0])[:3]
    return tuple(int(n) for n in numbers)


def resume_point(checkpoint: Mapping[str, Any]) -> tuple[int, int, int]:
    """``(epoch, batches of it done, global_step)`` a resumed ``fit`` starts from, as the writer resumed.

    Lightning 1.6-2.6 files: an epoch that ran all its batches (``epoch_progress`` processed, not yet
    completed: written at the epoch's end) resumes at the next epoch; one cut short resumes after
    ``epoch_loop.batch_progress`` processed batches; Lightning 2.6's ``fit`` resumes at the same point.
    Lightning 1.2-1.5 files resume at the start of ``epoch`` with ``global_step`` steps done.
    """
    global_step = int(checkpoint.get("global_step", 0))
    source = source_of(checkpoint)
    if source == "strategies":
        return int(checkpoint.get("epoch", 0)), int(checkpoint[_OWN_KEY]), global_step
    if source == "lightning-1.x":
        return int(checkpoint.get("epoch", 0)), 0, global_step
    fit_loop = checkpoint["loops"]["fit_loop"]
    epochs = fit_loop["epoch_progress"]["current"]
    completed = int(epochs["completed"])
    if epochs["processed"] > completed:
        return completed + 1, 0, global_step
    if epochs["started"] > completed:
        batches = fit_loop.get("epoch_loop.batch_progress", {}).get("current", {}).get("processed", 0)
        return completed, int(batches), global_step
    return completed, 0, global_step


def upgrade(checkpoint: Mapping[str, Any]) -> dict[str, Any]:
    """A checkpoint of any format read above, with the keys this library reads (a new dict).

    ``resume_point`` of the result is that of ``checkpoint``; a Lightning 1.6+ file keeps its keys
    (``epoch`` as Lightning meant it: hooks reading the checkpoint see what Lightning would give
    them). Adds ``step_in_epoch`` to a 1.x file (whose ``epoch`` already means ours), the
    precision state under ``precision`` (from Lightning 2.x's class-named key or 1.x's
    ``native_amp_scaling_state``), callback states under their state key (1.2-1.4 keyed them by class,
    1.5 had ``save_on_train_epoch_end`` in ``ModelCheckpoint``'s key), hyperparameters as plain dicts,
    and, for a file without it, the Lightning 2.6 loop state and version so that Lightning resumes it.
    """
    result = dict(checkpoint)
    source = source_of(result)
    epoch, step_in_epoch, global_step = resume_point(result)
    if source == "lightning-1.x":
        result[_OWN_KEY] = 0  # 1.x's `epoch` (the next one) and `global_step` (steps done) are ours
    result["callbacks"] = _callback_states(result.get("callbacks"))
    if "precision" not in result:
        found = next((result[key] for key in _PRECISION_KEYS[1:] if key in result), None)
        result["precision"] = dict(found) if isinstance(found, Mapping) else {}
    if result.get("hyper_parameters") is not None:
        result["hyper_parameters"] = _plain(result["hyper_parameters"])
    result.pop("hparams_type", None)  # the class of an OmegaConf config: the values are kept as a dict
    if source == "lightning-1.x" or "loops" not in result:  # a 1.x file, or an older one of this library
        result["loops"] = loops_state(epoch, step_in_epoch, global_step, epoch_done=False)
        result["pytorch-lightning_version"] = LIGHTNING_FORMAT
    return result


def _callback_states(states: Any) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, state in dict(states or {}).items():
        if isinstance(key, type):
            key = key.__qualname__  # 1.2-1.4: the callback's class
        if isinstance(key, str) and key.startswith("ModelCheckpoint{"):
            key = re.sub(r", 'save_on_train_epoch_end': (None|True|False)", "", key)
        result[str(key)] = state
    return result


def _plain(value: Any) -> Any:
    """Hyperparameters as built-in containers (an ``AttributeDict``, ``Namespace`` or OmegaConf config
    becomes a dict), so that the file loads with ``weights_only=True`` anywhere."""
    if isinstance(value, Mapping) or (hasattr(value, "items") and hasattr(value, "keys")):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, argparse.Namespace):
        return _plain(vars(value))
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def callback_state(saved: Mapping[str, Any], callback: Any) -> Any:
    """The state saved for ``callback``: under its state key, or its class name (1.2-1.4 files)."""
    if callback.state_key in saved:
        return saved[callback.state_key]
    return saved.get(type(callback).__qualname__, {})


# -- Lightning 2.6's loop state ----------------------------------------------------------------------


def _tracker(*names: str, **values: int) -> dict[str, int]:
    return {name: values.get(name, 0) for name in names}


def _progress(current: dict[str, int], total: dict[str, int]) -> dict[str, Any]:
    return {"total": total, "current": current}


_BATCH = ("ready", "completed", "started", "processed")
_STEP = ("ready", "completed")
_ZERO_GRAD = ("ready", "completed", "started")


def _batch_progress(done: int, finished: int, offset: int, last: bool) -> dict[str, Any]:
    """``done`` batches started and processed, ``finished`` of them through their end hooks."""

    def counts(base: int) -> dict[str, int]:
        return _tracker(
            *_BATCH, ready=base + done, started=base + done, processed=base + done, completed=base + finished
        )

    return {**_progress(counts(0), counts(offset)), "is_last_batch": last}


def _evaluation_loop() -> dict[str, Any]:
    return {"state_dict": {}, "batch_progress": _batch_progress(0, 0, 0, False)}


def loops_state(
    epoch: int, step_in_epoch: int, global_step: int, epoch_done: bool, batches_per_epoch: float | None = None
) -> dict[str, Any]:
    """``checkpoint["loops"]`` as Lightning 2.6 writes it at the same point of a run, so that its
    ``fit(ckpt_path=...)`` resumes where this library would: the next epoch after one that ran all its
    batches (``epoch_done``), after ``step_in_epoch`` batches of one cut short, at ``epoch`` otherwise.
    ``epoch`` is the epoch running (0-based) when written, ``global_step`` the optimizer steps done.
    """
    if epoch_done:
        epochs = _tracker(*_BATCH, ready=epoch + 1, started=epoch + 1, processed=epoch + 1, completed=epoch)
        done, finished, stepped = step_in_epoch, step_in_epoch, global_step
    elif step_in_epoch > 0:  # written by a batch's end hooks (or a validation after it): resume after it
        epochs = _tracker(*_BATCH, ready=epoch + 1, started=epoch + 1, processed=epoch, completed=epoch)
        done, finished, stepped = step_in_epoch, step_in_epoch - 1, max(global_step - 1, 0)
    else:
        epochs = _tracker(*_BATCH, ready=epoch, started=epoch, processed=epoch, completed=epoch)
        done, finished, stepped = 0, 0, global_step
    finite = batches_per_epoch is not None and batches_per_epoch != float("inf")
    offset = int(epoch * batches_per_epoch) if finite and batches_per_epoch is not None else 0
    last = epoch_done or (finite and batches_per_epoch is not None and step_in_epoch >= batches_per_epoch)
    steps = _tracker(*_STEP, ready=global_step, completed=global_step)
    zero_grad = _tracker(*_ZERO_GRAD, ready=global_step, completed=global_step, started=global_step)
    fit_loop = {
        "state_dict": {},
        "epoch_loop.state_dict": {"_batches_that_stepped": stepped},
        "epoch_loop.batch_progress": _batch_progress(done, finished, offset, bool(last)),
        "epoch_loop.scheduler_progress": _progress(_tracker(*_STEP), _tracker(*_STEP)),
        "epoch_loop.automatic_optimization.state_dict": {},
        "epoch_loop.automatic_optimization.optim_progress": {
            "optimizer": {
                "step": _progress(dict(steps), dict(steps)),
                "zero_grad": _progress(dict(zero_grad), zero_grad),
            }
        },
        "epoch_loop.manual_optimization.state_dict": {},
        "epoch_loop.manual_optimization.optim_step_progress": _progress(dict(steps), dict(steps)),
        "epoch_loop.val_loop.state_dict": {},
        "epoch_loop.val_loop.batch_progress": _batch_progress(0, 0, 0, False),
        "epoch_progress": _progress(dict(epochs), epochs),
    }
    return {
        "fit_loop": fit_loop,
        "validate_loop": _evaluation_loop(),
        "test_loop": _evaluation_loop(),
        "predict_loop": {"state_dict": {}, "batch_progress": _progress(_tracker(*_BATCH), _tracker(*_BATCH))},
    }


# -- writing and restoring a run -----------------------------------------------------------------------


def dump_checkpoint(trainer: Trainer, weights_only: bool = False) -> dict[str, Any]:
    """Weights, optimizers, schedulers, precision, callbacks, datamodule, hyperparameters, loop state.

    Callbacks' ``on_save_checkpoint`` and then the module's may edit the dict before it is written.
    ``weights_only``: no optimizer, scheduler, precision or callback state, and no callback hooks
    (the module's hook runs, the hyperparameters and loop state are kept), as Lightning 2.6 writes it.
    The keys Lightning 2.6 reads are there too (``pytorch-lightning_version``, ``loops``, the precision
    state under the precision class's name), so Lightning resumes the file at the same epoch and step.
    """
    strategy, state = trainer.strategy, trainer.state
    module = strategy.module
    hparams = dict(getattr(module, "hparams", {}))
    precision = strategy.precision.state_dict()
    checkpoint: dict[str, Any] = {
        "epoch": state.epoch + 1 if state.epoch_done else state.epoch,
        "global_step": state.global_step,
        _OWN_KEY: 0 if state.epoch_done else state.step_in_epoch,
        "pytorch-lightning_version": LIGHTNING_FORMAT,
        "state_dict": strategy.module_state_dict(),
        "loops": loops_state(
            state.epoch, state.step_in_epoch, state.global_step, state.epoch_done, trainer.num_training_batches
        ),
        # `trainer.optimizers`: after `fit` the strategy is torn down, and a checkpoint saved then
        # keeps the last fit's optimizers and schedulers, as Lightning's does (else a resume from it
        # would start them afresh, in silence)
        "optimizer_states": [opt.state_dict() for opt in trainer.optimizers],
        "lr_schedulers": [config["scheduler"].state_dict() for config in trainer.lr_scheduler_configs],
        "precision": precision,
        # only the callbacks with a state, as Lightning (which warns about each other key it finds)
        "callbacks": {cb.state_key: saved for cb in trainer.callbacks if (saved := cb.state_dict())},
    }
    if weights_only:
        for key in ("optimizer_states", "lr_schedulers", "precision", "callbacks"):
            del checkpoint[key]
    # Only what has a value, as Lightning 2.6 writes them (a reader that compares the keys sees the same)
    if precision and not weights_only:
        checkpoint["precision"] = precision
        checkpoint[type(strategy.precision).__qualname__] = precision
    if hparams:
        checkpoint["hyper_parameters"] = hparams
        checkpoint["hparams_name"] = "kwargs"
    if trainer.datamodule is not None and (datamodule_state := trainer.datamodule.state_dict()):
        checkpoint[type(trainer.datamodule).__qualname__] = datamodule_state
        datamodule_hparams = _plain(dict(getattr(trainer.datamodule, "hparams", {})))
        if datamodule_hparams:  # as Lightning 2.6 writes them
            checkpoint["datamodule_hyper_parameters"] = datamodule_hparams
            checkpoint["datamodule_hparams_name"] = "kwargs"
    for callback in () if weights_only else trainer.callbacks:
        trainer._call("callback", callback, "on_save_checkpoint", trainer, module, checkpoint)
    trainer._call_module("on_save_checkpoint", checkpoint)
    return checkpoint


def restore_checkpoint(trainer: Trainer, path: Any) -> None:
    """Load a checkpoint after ``strategy.setup`` (``weights_only=True``); loop state only for ``fit``.

    Any format ``upgrade`` reads: this library's, Lightning 2.x's (resumed where Lightning 2.6 resumes
    it) and Lightning 1.2-1.5's (resumed where 1.x resumed it).
    """
    strategy = trainer.strategy
    trainer._record("strategy.load_checkpoint")
    weights_only = not unsafe_load_requested()
    try:
        with legacy_globals():
            loaded = strategy.load_checkpoint(path, weights_only=weights_only)
    except pickle.UnpicklingError as err:
        raise CheckpointError(_load_error(path, err, weights_only)) from None
    except ModuleNotFoundError as err:  # unpickling in full (the env var), a class of an absent package
        raise CheckpointError(
            f"{path} refers to `{err.name}`, which is not installed. Convert the file once with "
            f"`{_UPGRADE} --trust {path}`: it reads 1.x files without `pytorch_lightning` installed."
        ) from None
    checkpoint = upgrade(loaded)
    trainer._call_module("on_load_checkpoint", checkpoint)
    strategy.load_module_state_dict(checkpoint["state_dict"])
    datamodule = trainer.datamodule
    if datamodule is not None and type(datamodule).__qualname__ in checkpoint:
        datamodule.load_state_dict(checkpoint[type(datamodule).__qualname__])
    saved_callbacks = checkpoint["callbacks"]
    for callback in trainer.callbacks:
        trainer._call("callback", callback, "on_load_checkpoint", trainer, strategy.module, checkpoint)
        callback.load_state_dict(callback_state(saved_callbacks, callback))
    if trainer.state.stage == "fit":
        _restore_training_state(trainer, checkpoint)


def _restore_training_state(trainer: Trainer, checkpoint: dict[str, Any]) -> None:
    """Optimizers, schedulers, the grad scaler, and the loop position ``resume_point`` reads."""
    strategy, state = trainer.strategy, trainer.state
    for optimizer, saved in zip(strategy.optimizers, checkpoint.get("optimizer_states", []), strict=False):
        optimizer.load_state_dict(saved)
    for config, saved in zip(strategy.lr_scheduler_configs, checkpoint.get("lr_schedulers", []), strict=False):
        config["scheduler"].load_state_dict(saved)
    strategy.precision.load_state_dict(checkpoint.get("precision", {}))
    state.epoch, state.step_in_epoch, state.global_step = resume_point(checkpoint)


def accepted_by(cls: type[Any], arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The ``arguments`` that ``cls.__init__`` takes: all of them when it takes ``**kwargs``."""
    parameters = inspect.signature(cls.__init__).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return dict(arguments)
    return {k: v for k, v in arguments.items() if k in parameters and k != "self"}


def load_module(
    cls: type[TrainModule],
    checkpoint_path: str | os.PathLike[str],
    map_location: Any = None,
    strict: bool | None = True,
    weights_only: bool | None = None,
    hparams: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> TrainModule:
    """``cls`` built from a checkpoint's hyperparameters (``kwargs`` win) with the checkpoint's weights.

    As Lightning's ``load_from_checkpoint`` (1.x and 2.6 alike): the saved ``hyper_parameters`` (under
    the ``hparams_name`` argument when ``__init__`` has one of that name, as 1.x's ``hparams``), or
    ``hparams`` instead of them (an ``hparams_file``'s), and ``kwargs`` go to ``__init__`` (only the
    names it takes, unless it takes ``**kwargs``), then ``on_load_checkpoint(checkpoint)``, then
    ``load_state_dict(state_dict, strict)`` (``strict=None``: the module's ``strict_loading``).
    """
    location = "cpu" if map_location is None else map_location
    checkpoint = upgrade(read_file(checkpoint_path, map_location=location, weights_only=weights_only))
    if hparams is None:
        hparams = checkpoint.get("hyper_parameters") or {}
    hparams = dict(hparams)
    parameters = inspect.signature(cls.__init__).parameters
    name = checkpoint.get("hparams_name")
    if name and name in parameters and name != "kwargs":
        hparams = {name: hparams}
    module = cast("TrainModule", _build(cls, {**hparams, **kwargs}))
    module.on_load_checkpoint(checkpoint)
    if strict is None:
        strict = bool(getattr(module, "strict_loading", True))
    module.load_state_dict(checkpoint["state_dict"], strict=strict)
    return module


#: The instantiators a checkpoint may name (``LightningCLI``'s: this library's and Lightning's).
_INSTANTIATORS = {
    "strategies.cli.instantiate_module",
    "lightning.pytorch.cli.instantiate_module",
    "pytorch_lightning.cli.instantiate_module",
}


def _build(cls: type[Any], hparams: dict[str, Any]) -> Any:
    """``cls(**hparams)``, or, for hyperparameters ``LightningCLI`` saved, its ``instantiate_module``.

    As Lightning 2.6, a checkpoint cannot make this run code: the instantiator must be one of
    ``_INSTANTIATORS`` and a ``_class_path`` must name an already imported subclass of ``cls``.
    """
    named = hparams.pop("_instantiator", None)
    if named is None:
        return cls(**accepted_by(cls, hparams))
    if not isinstance(named, str) or named not in _INSTANTIATORS:
        raise ValueError(
            f"The checkpoint names the instantiator {named!r}, which is not one of {sorted(_INSTANTIATORS)}: "
            "it is not run (a checkpoint must not choose code to execute). If you trust the file, drop "
            "`_instantiator` from its `hyper_parameters`, or add the name to "
            "`strategies._checkpoint._INSTANTIATORS`."
        )
    class_path = hparams.get("_class_path")
    if class_path is not None:
        module_name, _, name = str(class_path).rpartition(".")
        target = getattr(sys.modules.get(module_name), name, None)
        if not (isinstance(target, type) and issubclass(target, cls)):
            raise ValueError(
                f"The checkpoint asks for the class {class_path!r}, which is not an imported subclass of "
                f"{cls.__name__}: it is not built. Import the module that defines it first, if you trust the file."
            )
    from strategies.cli import instantiate_module  # the `cli` extra (jsonargparse), as for the run that saved it

    if class_path is None:  # a subclass's arguments are its own: the parser checks them
        hparams = accepted_by(cls, hparams)
    return instantiate_module(cls, hparams)


def load_datamodule(
    cls: type[DataModule],
    checkpoint_path: str | os.PathLike[str],
    map_location: Any = None,
    weights_only: bool | None = None,
    hparams: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> DataModule:
    """``cls`` built from a checkpoint's ``datamodule_hyper_parameters`` (``kwargs`` win), then its state.

    As Lightning 2.6's ``LightningDataModule.load_from_checkpoint``: ``hparams`` (an
    ``hparams_file``'s) replace the saved ones; ``load_state_dict`` gets the state saved under the
    class's qualified name, when there is one.
    """
    location = "cpu" if map_location is None else map_location
    checkpoint = read_file(checkpoint_path, map_location=location, weights_only=weights_only)
    if hparams is None:
        hparams = checkpoint.get("datamodule_hyper_parameters") or {}
    datamodule = cast("DataModule", _build(cls, {**_plain(dict(hparams)), **kwargs}))
    if cls.__qualname__ in checkpoint:
        datamodule.load_state_dict(checkpoint[cls.__qualname__])
    return datamodule


def resolve_last(trainer: Trainer, stage: str) -> str | None:
    """``ckpt_path="last"`` as in Lightning 2.6: the newest last checkpoint of the ``ModelCheckpoint`` callbacks.

    Rank 0 looks (``<dirpath>/last*.ckpt``, and the last one a callback wrote in this process) and every
    rank gets its answer. None, with a warning, when there is none yet: so ``fit(ckpt_path="last")`` can
    stay in a script that torchrun restarts (``--max-restarts``), starting from scratch the first time
    and resuming from the last checkpoint after a failure.
    """
    from strategies.model_checkpoint import ModelCheckpoint

    found: str | None = None
    if trainer.is_global_zero:
        candidates: set[str] = set()
        for callback in trainer.callbacks:
            if isinstance(callback, ModelCheckpoint):
                candidates |= callback._find_last_checkpoints(trainer)
        if candidates:
            found = max(candidates, key=os.path.getmtime)
    found = cast("str | None", trainer.strategy.broadcast(found))
    if found is None:
        warnings.warn(
            f'`.{stage}(ckpt_path="last")` is set, but there is no last checkpoint available. No checkpoint will be '
            "loaded. HINT: Set `ModelCheckpoint(..., save_last=True)` (with a fixed `dirpath`, so that a restarted "
            "run looks in the same folder).",
            UserWarning,
            stacklevel=2,
        )
    return found


def select_ckpt_path(trainer: Trainer, stage: str, ckpt_path: Any, model_provided: bool) -> Any:
    """What ``validate``/``test``/``predict`` load, as Lightning 2.6 chooses it.

    A model passed with no ``ckpt_path`` runs with its weights as they are. With no model (the
    module of the previous run is used) and no ``ckpt_path``, the best checkpoint of that run is
    loaded, with a warning saying so. ``"best"`` is the first ``ModelCheckpoint``'s
    ``best_model_path`` (an error when there is none, or no callback); ``"last"`` is resolved
    once the ranks can agree on it (``resolve_last``); any other value is a path.
    """
    if ckpt_path is None:
        if model_provided:
            return None
        ckpt_path = "best"
        warnings.warn(
            f"`.{stage}(ckpt_path=None)` was called without a model: the best model of the previous `fit` is "
            f"loaded. Pass `.{stage}(ckpt_path='best')` for the best model or `.{stage}(ckpt_path='last')` for "
            "the last one; passing a value silences this warning.",
            UserWarning,
            stacklevel=3,
        )
    if ckpt_path != "best":
        return ckpt_path
    callbacks = trainer.checkpoint_callbacks
    if len(callbacks) > 1:
        warnings.warn(
            f'`.{stage}(ckpt_path="best")` with several `ModelCheckpoint` callbacks: the first one\'s best '
            "checkpoint is used.",
            UserWarning,
            stacklevel=3,
        )
    if not callbacks:
        raise ValueError(f'`.{stage}(ckpt_path="best")` is set but no `ModelCheckpoint` is configured.')
    best = callbacks[0].best_model_path
    if not best:
        raise ValueError(
            f'`.{stage}(ckpt_path="best")` is set but `ModelCheckpoint` has saved no best model yet (run `fit` '
            f"with it first, or pass a path: `.{stage}(ckpt_path=PATH)`)."
        )
    return best
