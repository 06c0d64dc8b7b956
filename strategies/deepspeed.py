"""DeepSpeed ZeRO (stages 0-3) on the same lifecycle; ``deepspeed`` is an optional extra, imported lazily."""

from __future__ import annotations

import contextlib
import copy
import gc
import json
import os
import sys
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import torch
from typing_extensions import override

from strategies import _watch
from strategies._data import apply_to_tensors
from strategies._distributed import RENDEZVOUS
from strategies._optimizers import parse_optimizers
from strategies.parallel import ParallelStrategy, _StepRedirect, split_parallel_kwargs

if TYPE_CHECKING:
    from strategies.module import TrainModule
    from strategies.registry import StrategyRegistry
    from strategies.trainer import Trainer

ZERO_STAGES = (0, 1, 2, 3)
_CHECKPOINT_TAG = "checkpoint"
_MISSING = (
    "`DeepSpeedStrategy` (strategy={name!r}) needs the `deepspeed` package, which is not installed here. "
    'Install the extra: pip install "strategy-compat[deepspeed]" (or `pip install deepspeed`), or use '
    "`strategy='fsdp'`, which needs only torch."
)


def import_deepspeed(name: str = "deepspeed") -> Any:
    """``import deepspeed``, or a ``ModuleNotFoundError`` naming the extra to install."""
    try:
        import deepspeed
    except ImportError as err:
        raise ModuleNotFoundError(_MISSING.format(name=name), name="deepspeed") from err
    return deepspeed


def build_config(
    config: dict[str, Any] | str | os.PathLike[str] | None = None,
    stage: int | None = None,
    offload_optimizer: bool = False,
    offload_parameters: bool = False,
    **zero_kwargs: Any,
) -> dict[str, Any]:
    """The DeepSpeed config: a dict, a JSON file, or built from ``stage=`` and the offload shortcuts.

    A given config wins over the shortcuts except where a shortcut is passed explicitly (``stage``).
    Defaults added when missing: ``train_micro_batch_size_per_gpu=1``, ``gradient_accumulation_steps=1``,
    ``zero_allow_untested_optimizer=True`` (your torch optimizer from ``configure_optimizers`` is used)
    and no periodic step printing. Raises ``ValueError`` for an unknown ZeRO stage.
    """
    if config is None:
        result: dict[str, Any] = {}
    elif isinstance(config, dict):
        result = copy.deepcopy(config)
    elif isinstance(config, (str, os.PathLike)):
        path = Path(config)
        if not path.is_file():
            raise FileNotFoundError(f"DeepSpeed config {str(path)!r} does not exist; pass a dict or a JSON file path.")
        result = json.loads(path.read_text())
    else:
        raise TypeError(f"`config` must be a dict or a JSON file path; got `{type(config).__name__}`.")
    zero = dict(result.get("zero_optimization", {}))
    if stage is not None:
        zero["stage"] = stage
    zero.setdefault("stage", 2)
    if zero["stage"] not in ZERO_STAGES or isinstance(zero["stage"], bool):
        raise ValueError(
            f"Unknown DeepSpeed ZeRO stage {zero['stage']!r}: valid stages are 0, 1, 2 and 3 "
            "(registry names 'deepspeed' (stage 2), 'deepspeed_stage_1', 'deepspeed_stage_2', 'deepspeed_stage_3')."
        )
    if offload_optimizer:
        if zero["stage"] == 0:
            raise ValueError("`offload_optimizer=True` needs ZeRO stage 1, 2 or 3.")
        zero.setdefault("offload_optimizer", {"device": "cpu", "pin_memory": True})
    if offload_parameters:
        if zero["stage"] != 3:
            raise ValueError(f"`offload_parameters=True` needs ZeRO stage 3 (got stage {zero['stage']}).")
        zero.setdefault("offload_param", {"device": "cpu", "pin_memory": True})
    zero.update(zero_kwargs)
    result["zero_optimization"] = zero
    result.setdefault("train_micro_batch_size_per_gpu", 1)
    result.setdefault("gradient_accumulation_steps", 1)
    result.setdefault("zero_allow_untested_optimizer", True)
    result.setdefault("steps_per_print", 2**31 - 1)
    result.setdefault("wall_clock_breakdown", False)
    return result


class DeepSpeedStrategy(ParallelStrategy):
    """DeepSpeed's ZeRO: optimizer state (stage 1), gradients (2) and parameters (3) partitioned over ranks.

    Processes are started like ``"ddp"`` (the script runs again for each extra local rank), or by
    torchrun/SLURM. ``setup_distributed`` initialises our process group and hands it to
    ``deepspeed.init_distributed`` (DeepSpeed reuses it); ``configure_model`` runs under
    ``deepspeed.zero.Init`` for stage 3 (parameters are partitioned as they are created);
    ``setup`` builds the optimizer from ``configure_optimizers`` and then the engine
    (``deepspeed.initialize``), which owns backward, the optimizer step and gradient clipping
    (``Trainer(gradient_clip_val=...)`` becomes ``"gradient_clipping"``). Checkpoints are
    DeepSpeed checkpoint directories written and read by the engine (every rank writes its
    partition). Precision: ``"bf16-mixed"`` -> ``{"bf16": {"enabled": true}}``, ``"16-mixed"`` ->
    ``{"fp16": {"enabled": true}}`` unless the config says otherwise.

    Args:
        config: a DeepSpeed config dict or a JSON file path.
        stage: the ZeRO stage (0-3); overrides the config's.
        offload_optimizer: ZeRO-Offload of the optimizer state to the CPU (stage >= 1).
        offload_parameters: ZeRO-Infinity parameter offload to the CPU (stage 3).
        *args: ``ParallelStrategy``'s positional arguments.
        **kwargs: ``ParallelStrategy``'s arguments (``timeout``, ``num_nodes``, ...);
            every other keyword is a ``zero_optimization`` key (e.g. ``reduce_bucket_size=5e8``).

    Raises:
        ModuleNotFoundError: ``deepspeed`` is not installed (``pip install "strategy-compat[deepspeed]"``).
        ValueError: an unknown stage.
    """

    def __init__(
        self,
        *args: Any,
        config: dict[str, Any] | str | os.PathLike[str] | None = None,
        stage: int | None = None,
        offload_optimizer: bool = False,
        offload_parameters: bool = False,
        **kwargs: Any,
    ) -> None:
        parallel_kwargs, zero_kwargs = split_parallel_kwargs(kwargs)
        self.config = build_config(config, stage, offload_optimizer, offload_parameters, **zero_kwargs)
        name = "deepspeed" if stage is None else f"deepspeed_stage_{stage}"
        self._deepspeed = import_deepspeed(name)
        super().__init__(*args, **parallel_kwargs)
        self._loaded_in_place = False
        self._added_env: list[str] = []

    @property
    def zero_stage(self) -> int:
        """The ZeRO stage of ``config``."""
        return int(self.config["zero_optimization"]["stage"])

    def _set_rank_variables(self) -> None:
        """DeepSpeed reads ``LOCAL_RANK``/``RANK``/``WORLD_SIZE`` from the environment during the whole run,
        and rank 0 of our launcher has none: set the missing ones until ``teardown`` (a lasting
        ``LOCAL_RANK`` would make this process look like a launched child to the next Trainer)."""
        wanted = {"LOCAL_RANK": str(self.local_rank), "RANK": str(self.global_rank), "WORLD_SIZE": str(self.world_size)}
        added = [k for k in wanted if k not in os.environ]
        os.environ.update({k: wanted[k] for k in added})
        self._added_env.extend(added)

    def _restore_rank_variables(self) -> None:
        while self._added_env:
            os.environ.pop(self._added_env.pop(), None)

    @override
    def setup_distributed(self) -> None:
        """Initialise (or reuse) our process group, then let DeepSpeed adopt it."""
        if _StaleGroups.reason is not None:
            raise RuntimeError(_StaleGroups.reason)
        super().setup_distributed()
        self._set_rank_variables()
        self._deepspeed.init_distributed(
            dist_backend=self.process_group_backend,
            auto_mpi_discovery=False,
            timeout=self.timeout,
            verbose=False,
            dist_init_required=False,
        )
        self._recorder("deepspeed.init_distributed")

    def _final_config(self, trainer: Trainer | None) -> dict[str, Any]:
        config = copy.deepcopy(self.config)
        precision = self.precision.precision
        if precision == "bf16-mixed" and "fp16" not in config:
            config.setdefault("bf16", {"enabled": True})
        elif precision == "16-mixed" and "bf16" not in config:
            config.setdefault("fp16", {"enabled": True})
        if trainer is not None and trainer.gradient_clip_val is not None:
            config.setdefault("gradient_clipping", float(trainer.gradient_clip_val))
        return config

    @override
    @contextlib.contextmanager
    def model_sharded_context(self) -> Generator[None, None, None]:
        """Stage 3: ``configure_model`` runs under ``deepspeed.zero.Init`` (parameters partitioned on creation)."""
        self._recorder("strategy.model_sharded_context.enter")
        if self.zero_stage == 3:
            with self._deepspeed.zero.Init(config_dict_or_path=self._final_config(None), enabled=True):
                yield
        else:
            yield
        self._recorder("strategy.model_sharded_context.exit")

    @override
    def model_to_device(self) -> None:
        if self.zero_stage < 3:
            self.module.to(self.root_device)

    @override
    def setup(self, trainer: Trainer) -> None:
        """Move the module, build the optimizer from ``configure_optimizers``, then the DeepSpeed engine."""
        module = cast("TrainModule", self.module)  # the Trainer connects TrainModules
        if not any(True for _ in module.parameters()):
            raise ValueError(
                f"DeepSpeed found no parameters in `{type(module).__name__}`: create the layers in `__init__` or "
                "in `configure_model` before the engine is built."
            )
        self._recorder("strategy.model_to_device")
        self.model_to_device()
        optimizer = None
        if trainer.state.stage == "fit":
            optimizers, self.lr_scheduler_configs = parse_optimizers(trainer.hooks.module("configure_optimizers"))
            if len(optimizers) != 1:
                raise ValueError(
                    f"DeepSpeed runs exactly one optimizer; `configure_optimizers` returned {len(optimizers)}."
                )
            optimizer = optimizers[0]
        config = self._final_config(trainer)
        if optimizer is None and self.zero_stage < 3:
            # validate/test/predict: ZeRO 1-2 partition optimizer state and gradients, which an
            # evaluation has none of, and DeepSpeed refuses them without an optimizer (Lightning
            # builds its inference engine the same way); stage 3 keeps its parameter partitioning.
            config["zero_optimization"] = {"stage": 0}
        engine, ds_optimizer, _, _ = self._deepspeed.initialize(
            model=_StepRedirect(module),
            optimizer=optimizer,
            model_parameters=None if optimizer is not None else list(module.parameters()),
            config=config,
            dist_init_required=False,
        )
        self._model = engine
        self._recorder("strategy.wrap")
        self.optimizers = [ds_optimizer] if ds_optimizer is not None else []

    @override
    def teardown(self) -> None:
        _watch.PROGRESS.stop()
        engine: Any = self._model  # a DeepSpeedEngine (deepspeed ships no types)
        self._model = None
        if engine is not None and hasattr(engine, "destroy"):
            engine.destroy()
        del engine
        self.optimizers = []
        self.lr_scheduler_configs = []
        if self._module is not None and self.zero_stage < 3:
            self._module.to("cpu")
        self.precision.teardown()
        self.accelerator.teardown()
        gc.collect()
        self._restore_rank_variables()

    @override
    def close(self) -> None:
        """Teardown, then destroy the process group (if this package made it) through DeepSpeed, so that
        DeepSpeed also forgets the groups it cached on it and a later engine in this process works."""
        self.teardown()
        if RENDEZVOUS.owns_group:
            gc.collect()
            self._deepspeed.comm.destroy_process_group()
            groups = sys.modules.get("deepspeed.utils.groups")
            if getattr(groups, "_WORLD_GROUP", None) is not None:
                version = getattr(self._deepspeed, "__version__", "?")
                _StaleGroups.reason = _STALE_GROUPS.format(version=version)
        super().close()

    # -- steps (the engine owns precision, backward, step and clipping) ----------------------

    @override
    def _step(self, name: str, *args: Any, **kwargs: Any) -> Any:
        # With "bf16"/"fp16" enabled the engine holds low-precision weights and runs no autocast:
        # floating-point inputs are cast to that dtype (as Lightning's DeepSpeed precision does).
        if self._model is None:
            return super()._step(name, *args, **kwargs)
        dtype = _engine_dtype(self._model)
        if dtype is not None:
            args, kwargs = _cast_floats(args, dtype), _cast_floats(kwargs, dtype)
        return self._model(name, *args, **kwargs)

    @override
    def backward(self, loss: torch.Tensor) -> None:
        engine: Any = self._model  # a DeepSpeedEngine (deepspeed ships no types)
        engine.backward(loss)

    @override
    def optimizer_step(self, optimizer: torch.optim.Optimizer) -> Any:
        engine: Any = self._model  # a DeepSpeedEngine (deepspeed ships no types)
        return engine.step()

    @override
    def clip_gradients(self, optimizer: torch.optim.Optimizer, max_norm: float) -> torch.Tensor:
        """The engine clips in ``step`` (``"gradient_clipping"`` in the config); nothing to do here."""
        return torch.tensor(0.0)

    # -- checkpoints --------------------------------------------------------------------------

    @override
    def module_state_dict(self) -> dict[str, Any]:
        """The full weights; stage 3 gathers the partitions (every rank must call it)."""
        if self.zero_stage == 3 and self._model is not None:
            params = list(self.module.parameters())
            with self._deepspeed.zero.GatheredParameters(params, modifier_rank=None):
                return {k: v.detach().cpu().clone() for k, v in self.module.state_dict().items()}
        return self.module.state_dict()

    @override
    def save_checkpoint(self, checkpoint: dict[str, Any], path: str | os.PathLike[str]) -> None:
        """Every rank calls this: the engine writes a checkpoint directory (each rank its partition);
        loop state, schedulers and callbacks go in its client state."""
        if self._model is None:
            return super().save_checkpoint(checkpoint, path)
        client_state = {k: v for k, v in checkpoint.items() if k not in ("state_dict", "optimizer_states")}
        engine: Any = self._model  # a DeepSpeedEngine (deepspeed ships no types)
        engine.save_checkpoint(str(path), tag=_CHECKPOINT_TAG, client_state=client_state)
        return None

    @override
    def load_checkpoint(self, path: str | os.PathLike[str], weights_only: bool = True) -> dict[str, Any]:
        """After ``setup``: the engine loads weights and optimizer partitions in place; the rest is returned."""
        if self._model is None:
            return super().load_checkpoint(path, weights_only=weights_only)
        engine: Any = self._model  # a DeepSpeedEngine (deepspeed ships no types)
        load_path, client_state = engine.load_checkpoint(
            str(path),
            tag=_CHECKPOINT_TAG,
            load_optimizer_states=bool(self.optimizers),
            load_lr_scheduler_states=False,
        )
        if load_path is None:
            raise FileNotFoundError(f"No DeepSpeed checkpoint (tag {_CHECKPOINT_TAG!r}) under {path}.")
        self._loaded_in_place = True
        return {**(client_state or {}), "state_dict": {}}

    @override
    def load_module_state_dict(self, state_dict: dict[str, Any], strict: bool = True) -> None:
        if self._loaded_in_place:
            self._loaded_in_place = False
            return
        super().load_module_state_dict(state_dict, strict=strict)

    @classmethod
    @override
    def register_strategies(cls, registry: StrategyRegistry) -> None:
        """Add ``"deepspeed"`` (stage 2) and ``"deepspeed_stage_{1,2,3}"`` (+ ``_offload``) to the registry."""
        registry.register("deepspeed", cls, "DeepSpeed ZeRO stage 2 (needs the deepspeed extra).")
        for stage in (1, 2, 3):
            registry.register(f"deepspeed_stage_{stage}", cls, f"DeepSpeed ZeRO stage {stage}.", stage=stage)
        registry.register(
            "deepspeed_stage_2_offload",
            cls,
            "DeepSpeed ZeRO stage 2, optimizer on the CPU.",
            stage=2,
            offload_optimizer=True,
        )
        registry.register(
            "deepspeed_stage_3_offload",
            cls,
            "DeepSpeed ZeRO stage 3, optimizer and parameters on the CPU.",
            stage=3,
            offload_optimizer=True,
            offload_parameters=True,
        )


class _StaleGroups:
    """Set when this DeepSpeed kept its groups on a destroyed process group: no engine can be built again."""

    reason: str | None = None


_STALE_GROUPS = (
    "DeepSpeed {version} kept its own groups on the process group that `strategy.close()` destroyed, so a new "
    "DeepSpeed engine in this process would fail inside DeepSpeed ('Group ... is not registered'). Upgrade "
    "deepspeed (0.19.8 releases them in `deepspeed.comm.destroy_process_group`), run each DeepSpeed job in its "
    "own process, or do not call `strategy.close()` between the runs (a following Trainer reuses the group)."
)


def _engine_dtype(engine: Any) -> torch.dtype | None:
    """The dtype of a DeepSpeed engine's weights when it runs in bf16/fp16, else None."""
    if getattr(engine, "bfloat16_enabled", lambda: False)():
        return torch.bfloat16
    if getattr(engine, "fp16_enabled", lambda: False)():
        return torch.float16
    return None


def _cast_floats(data: Any, dtype: torch.dtype) -> Any:
    """``data`` with every floating-point tensor in it cast to ``dtype``."""
    return apply_to_tensors(data, lambda t: t.to(dtype) if t.is_floating_point() else t)
