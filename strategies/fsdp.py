"""Fully sharded data parallel on torch's FSDP2 (``torch.distributed.fsdp.fully_shard``)."""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Callable, Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import torch
from torch import nn
from typing_extensions import override

from strategies import _atomic, _fsdp, _watch
from strategies.parallel import ParallelStrategy, _StepRedirect, split_parallel_kwargs

if TYPE_CHECKING:
    from strategies.registry import StrategyRegistry

# Where a sharded module keeps its FSDP root, so a second run (fit then test) reuses the sharding.
_ROOT_ATTR = "_strategy_compat_fsdp_root"


class FSDPStrategy(ParallelStrategy):
    """Fully sharded data parallel: every rank keeps 1/N of each parameter, gradient and optimizer state.

    Built on FSDP2 (``fully_shard``): torch >= 2.6 (tested on 2.13); on torch 2.4-2.5 the private
    ``torch.distributed._composable.fsdp`` is used (untested). FSDP1 (``FullyShardedDataParallel``)
    is not used. Processes are started like ``"ddp"`` (the script runs again for each extra local
    rank), or by torchrun/SLURM.

    Lifecycle: ``configure_model`` runs inside ``model_sharded_context``, where new
    parameters are created on the meta device (no memory); ``setup`` shards the module
    (``fully_shard`` per submodule picked by ``auto_wrap_policy``, then the root), allocates only
    each rank's shard and calls ``reset_parameters()`` on the modules that were on meta; then the
    optimizers are built on the sharded parameters. ``model_to_device`` does nothing (FSDP places
    the parameters). Layers created in ``__init__``/``setup`` are real: rank 0's values are
    broadcast (``sync_module_states``) and then sharded.

    Args:
        auto_wrap_policy: which submodules become their own FSDP unit (all-gathered one at a time,
            so peak memory stays low): a module class, a set of classes, or ``policy(module) -> bool``.
            ``None``: one unit for the whole model (parameters are still sharded).
        reshard_after_forward: free the gathered parameters after each unit's forward (ZeRO-3); ``False``
            keeps them until backward (ZeRO-2-like, more memory, fewer all-gathers).
        mixed_precision: an FSDP2 ``MixedPrecisionPolicy``; by default derived from the Trainer's
            precision (``"bf16-mixed"``: bf16 parameters for compute, fp32 gradient reduction).
        cpu_offload: keep the sharded parameters, gradients and optimizer state on the CPU
            (FSDP2 ``CPUOffloadPolicy``). Needs an accelerator: on a CPU-only run it is an error.
        state_dict_type: ``"full"`` (default, as Lightning's Trainer): ``module_state_dict`` is the
            full state dict (on rank 0) and ``save_checkpoint(path)`` writes one file from rank 0 with the
            full state, loadable by a single-device run; ``"sharded"``: a directory written through
            ``torch.distributed.checkpoint``, one shard per rank (no gather: for models too big for one
            process), and ``module_state_dict`` returns each rank's DTensor shards. Loading accepts
            either (a directory is read as sharded, a file as full).
        meta_init: create the parameters of ``configure_model`` on the meta device (default). ``False``
            creates them for real on every rank (bit-equal init with a seed, more memory).
        sync_module_states: broadcast rank 0's real (non-meta) parameters and buffers before sharding.
        *args: ``ParallelStrategy``'s positional arguments.
        **kwargs: ``ParallelStrategy``'s arguments (``timeout``, ``num_nodes``, ...);
            every other keyword is passed to every ``fully_shard`` call.
    """

    strategy_name = "fsdp"

    def __init__(
        self,
        *args: Any,
        auto_wrap_policy: set[type[nn.Module]] | type[nn.Module] | Callable[[nn.Module], bool] | None = None,
        reshard_after_forward: bool = True,
        mixed_precision: Any = None,
        cpu_offload: bool = False,
        state_dict_type: Literal["sharded", "full"] = "full",
        meta_init: bool = True,
        sync_module_states: bool = True,
        **kwargs: Any,
    ) -> None:
        self._api = _fsdp.fsdp_api()  # raises when this torch has no FSDP2
        parallel_kwargs, fully_shard_kwargs = split_parallel_kwargs(kwargs)
        super().__init__(*args, **parallel_kwargs)
        if state_dict_type not in ("sharded", "full"):
            raise ValueError(f"`state_dict_type={state_dict_type!r}`: use 'sharded' or 'full'.")
        self._policy = _fsdp.wrap_policy(auto_wrap_policy)
        self.reshard_after_forward = reshard_after_forward
        self.mixed_precision = mixed_precision
        self.cpu_offload = cpu_offload
        self.state_dict_type = state_dict_type
        self.meta_init = meta_init
        self.sync_module_states = sync_module_states
        self._fully_shard_kwargs = fully_shard_kwargs
        self._mesh: Any = None
        self._loaded_in_place = False

    # -- construction -------------------------------------------------------------------------

    @override
    def _configure_launcher(self) -> None:
        """Called by the Trainer once the devices are known: bad combinations fail here, early."""
        if self.cpu_offload and self.root_device.type == "cpu":
            raise ValueError(
                "`FSDPStrategy(cpu_offload=True)` needs an accelerator: FSDP2's `CPUOffloadPolicy` keeps the "
                "shards on the CPU and copies them to the accelerator for compute, and on a CPU-only run the "
                "parameters already live on the CPU (torch raises 'Cannot access accelerator device when none "
                "is available'). Drop `cpu_offload=True`, or run with `accelerator='cuda'`."
            )
        super()._configure_launcher()

    def mixed_precision_policy(self) -> Any:
        """The ``MixedPrecisionPolicy`` for this run: the explicit one, else from the Trainer's precision."""
        if self.mixed_precision is not None:
            return self.mixed_precision
        dtype = {"bf16-mixed": torch.bfloat16, "16-mixed": torch.float16}.get(self.precision.precision)
        if dtype is None:
            return self._api.MixedPrecisionPolicy()
        return self._api.MixedPrecisionPolicy(param_dtype=dtype, reduce_dtype=torch.float32)

    @property
    def device_mesh(self) -> Any:
        """The 1-D device mesh over all ranks (created on first use, after the process group)."""
        if self._mesh is None:
            from torch.distributed.device_mesh import init_device_mesh

            self._mesh = init_device_mesh(self.root_device.type, (self.world_size,))
        return self._mesh

    # -- lifecycle ----------------------------------------------------------------------------

    @override
    @contextlib.contextmanager
    def model_sharded_context(self) -> Generator[None, None, None]:
        """``configure_model`` runs here: new parameters go on the meta device (``meta_init=True``)."""
        self._recorder("strategy.model_sharded_context.enter")
        with torch.device("meta") if self.meta_init else contextlib.nullcontext():
            yield
        self._recorder("strategy.model_sharded_context.exit")

    @override
    def model_to_device(self) -> None:
        """Nothing: ``fully_shard`` moves each rank's shard to ``root_device``."""

    @override
    def _setup_model(self, module: nn.Module) -> nn.Module:
        root: nn.Module | None = module.__dict__.get(_ROOT_ATTR)
        if root is not None:
            if root.module is module and getattr(root, "_strategy_compat_world", None) == self.world_size:
                return root  # sharded by an earlier run in this process (fit, then test): reuse it
            raise RuntimeError(
                f"`{type(module).__name__}` was sharded by an earlier FSDP run with a different world size; "
                "build a new module (or load a full checkpoint into one)."
            )
        params = list(module.parameters())
        if not params:
            raise ValueError(
                f"FSDP found no parameters in `{type(module).__name__}`: nothing to shard. Create the layers in "
                "`__init__` or in `configure_model` (which runs inside `strategy.model_sharded_context()`); a "
                "`configure_model` that only returns, or assigns layers to a local variable, creates none."
            )
        if any(_fsdp.is_dtensor(p) for p in params):
            raise RuntimeError(
                f"`{type(module).__name__}` already has sharded (DTensor) parameters that this strategy did not "
                "create: do not call `fully_shard` yourself in `configure_model` with `FSDPStrategy`; use "
                "`auto_wrap_policy` to choose the units."
            )
        if self.sync_module_states and self.world_size > 1:
            _fsdp.broadcast_module_states(module)
        kwargs: dict[str, Any] = {
            "mesh": self.device_mesh,
            "reshard_after_forward": self.reshard_after_forward,
            "mp_policy": self.mixed_precision_policy(),
            **self._fully_shard_kwargs,
        }
        if self.cpu_offload:
            kwargs["offload_policy"] = self._api.CPUOffloadPolicy()
        root = _StepRedirect(module)
        _fsdp.shard_module(module, root, self._policy, self._api.fully_shard, **kwargs)
        if _fsdp.has_meta_tensors(root):
            _fsdp.materialize_meta(root, torch.device("cpu") if self.cpu_offload else self.root_device)
            self._recorder("strategy.materialize_meta")
        root._strategy_compat_world = self.world_size
        module.__dict__[_ROOT_ATTR] = root  # not a registered submodule: no cycle in `modules()`
        return root

    @override
    def teardown(self) -> None:
        # The module stays sharded (its parameters are DTensors owned by FSDP): it is not moved back
        # to the CPU. Get the full weights with `module_state_dict()` / a "full" checkpoint.
        _watch.PROGRESS.stop()
        self._model = None
        self.optimizers = []
        self.lr_scheduler_configs = []
        self.precision.teardown()
        self.accelerator.teardown()
        gc.collect()

    # -- steps --------------------------------------------------------------------------------

    @override
    def clip_gradients(self, optimizer: torch.optim.Optimizer, max_norm: float) -> torch.Tensor:
        """Clip by the norm over all ranks' gradient shards (every rank must call this)."""
        self.precision.unscale_gradients(optimizer)
        params = [p for group in optimizer.param_groups for p in group["params"]]
        return _fsdp.clip_grad_norm(params, max_norm)

    # -- checkpoints --------------------------------------------------------------------------

    def _is_sharded(self) -> bool:
        # Sharded by `setup` (also after `teardown`: the module stays sharded).
        return self._module is not None and _ROOT_ATTR in self._module.__dict__

    @override
    def module_state_dict(self) -> dict[str, Any]:
        """``"full"`` (default): the full state dict on rank 0 (``{}`` on the others); ``"sharded"``: this
        rank's DTensor shards. Every rank must call it (it is a collective)."""
        if not self._is_sharded():
            return self.module.state_dict()
        return _fsdp.model_state_dict(self.module, full=self.state_dict_type == "full")

    def full_state_dict(self) -> dict[str, Any]:
        """The full, unsharded weights on rank 0 (``{}`` on the others); every rank must call it."""
        if not self._is_sharded():
            return self.module.state_dict()
        return _fsdp.model_state_dict(self.module, full=True)

    @override
    def save_checkpoint(self, checkpoint: dict[str, Any], path: str | os.PathLike[str]) -> None:
        """Every rank calls this. ``"sharded"``: a directory (torch.distributed.checkpoint); ``"full"``: a file
        from rank 0 with plain tensors and ``Optimizer.state_dict()``-form optimizer states."""
        if not self._is_sharded():
            return super().save_checkpoint(checkpoint, path)
        if self.state_dict_type == "sharded":
            _fsdp.save_sharded(self.module, self.optimizers, checkpoint, Path(path), self.is_global_zero)
            return None
        checkpoint = dict(checkpoint)
        checkpoint["optimizer_states"] = _fsdp.optimizer_state_dicts(self.module, self.optimizers, full=True)
        return super().save_checkpoint(checkpoint, path)

    @override
    def load_checkpoint(self, path: str | os.PathLike[str], weights_only: bool = True) -> dict[str, Any]:
        """After ``setup``: load weights and optimizer states in place, from a sharded directory or a
        full file, and return the rest (loop state, schedulers, ...). Before ``setup``: read the file.
        A sharded ``path`` that a kill in the middle of a save's swap left missing is read from the
        complete old checkpoint the swap had renamed aside."""
        path = _atomic.complete_checkpoint(Path(path))
        if not self._is_sharded():
            if path.is_dir():
                raise ValueError(
                    f"{path} is a sharded checkpoint: it can only be loaded into a module sharded the same way "
                    "(FSDP, same world size). Save with `FSDPStrategy(state_dict_type='full')` for a single-file "
                    "checkpoint."
                )
            return super().load_checkpoint(path, weights_only=weights_only)
        if path.is_dir():
            rest = _fsdp.load_sharded(self.module, self.optimizers, path, weights_only=weights_only)
        else:
            checkpoint = super().load_checkpoint(path, weights_only=weights_only)
            _fsdp.load_full(self.module, self.optimizers, checkpoint)
            rest = {k: v for k, v in checkpoint.items() if k not in ("state_dict", "optimizer_states")}
        self._loaded_in_place = True
        rest["state_dict"] = {}
        return rest

    @override
    def load_module_state_dict(self, state_dict: dict[str, Any], strict: bool = True) -> None:
        """Load a full state dict into the (sharded) module; a no-op right after ``load_checkpoint``."""
        if self._loaded_in_place:
            self._loaded_in_place = False
            return
        if not self._is_sharded():
            return super().load_module_state_dict(state_dict, strict=strict)
        _fsdp.load_full(self.module, [], {"state_dict": state_dict}, strict=strict)
        return None

    @classmethod
    @override
    def register_strategies(cls, registry: StrategyRegistry) -> None:
        """Add ``"fsdp"`` and ``"fsdp_cpu_offload"`` to the registry."""
        registry.register("fsdp", cls, "Fully sharded data parallel (FSDP2 `fully_shard`); script re-run per rank.")
        registry.register(
            "fsdp_cpu_offload",
            cls,
            "`fsdp` with parameters, gradients and optimizer state on the CPU.",
            cpu_offload=True,
        )
