"""Helpers of ``FSDPStrategy``: the FSDP2 import, sharding, materialisation,
clipping, and the two checkpoint formats (full on rank 0, sharded through torch.distributed.checkpoint)."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, TypeGuard, cast

import torch
import torch.distributed as dist
from torch import nn

from strategies import _atomic

if TYPE_CHECKING:
    from torch.distributed.tensor import DTensor

SHARDED_META_FILE = "meta.pt"
"""The file in a sharded checkpoint directory that holds everything but weights and optimizer states."""

_FSDP_MISSING = (
    "`FSDPStrategy` needs FSDP2 (`torch.distributed.fsdp.fully_shard`, torch >= 2.6; torch 2.4-2.5 have it as "
    "`torch.distributed._composable.fsdp`), but the installed torch {version} has neither{reason}. "
    "Upgrade torch (`pip install -U 'torch>=2.6'`), or use `strategy='ddp'`."
)


def fsdp_api() -> SimpleNamespace:
    """``fully_shard``, ``MixedPrecisionPolicy``, ``CPUOffloadPolicy``, ``FSDPModule`` from this torch.

    Raises ``RuntimeError`` naming the fix when this torch has no FSDP2 (or no torch.distributed).
    """
    if not dist.is_available():
        raise RuntimeError(_FSDP_MISSING.format(version=torch.__version__, reason=" (torch.distributed is off)"))
    try:
        from torch.distributed.fsdp import CPUOffloadPolicy, FSDPModule, MixedPrecisionPolicy, fully_shard
    except ImportError:
        try:  # torch 2.4 / 2.5 (not tested here)
            from torch.distributed._composable.fsdp import (
                CPUOffloadPolicy,
                FSDPModule,
                MixedPrecisionPolicy,
                fully_shard,
            )
        except ImportError as err:
            raise RuntimeError(_FSDP_MISSING.format(version=torch.__version__, reason="")) from err
    return SimpleNamespace(
        fully_shard=fully_shard,
        MixedPrecisionPolicy=MixedPrecisionPolicy,
        CPUOffloadPolicy=CPUOffloadPolicy,
        FSDPModule=FSDPModule,
    )


def is_dtensor(tensor: Any) -> TypeGuard[DTensor]:
    """Whether ``tensor`` is a ``DTensor`` (a sharded FSDP2 parameter or gradient)."""
    return hasattr(tensor, "_local_tensor") and hasattr(tensor, "placements")


def _is_meta(tensor: torch.Tensor) -> bool:
    local = tensor._local_tensor if is_dtensor(tensor) else tensor
    return local.is_meta


def has_meta_tensors(module: nn.Module, recurse: bool = True) -> bool:
    """Whether any parameter or buffer of ``module`` is still on the meta device."""
    tensors = [*module.parameters(recurse=recurse), *module.buffers(recurse=recurse)]
    return any(_is_meta(t) for t in tensors)


def wrap_policy(policy: Any) -> Callable[[nn.Module], bool] | None:
    """Normalise ``auto_wrap_policy``: a module class, a set/list of classes, or ``callable(module) -> bool``."""
    if policy is None:
        return None
    if isinstance(policy, type):
        policy = {policy}
    if isinstance(policy, (set, frozenset, list, tuple)):
        classes = tuple(policy)
        bad = [c for c in classes if not (isinstance(c, type) and issubclass(c, nn.Module))]
        if bad:
            raise TypeError(f"`auto_wrap_policy` takes `nn.Module` subclasses; got {bad!r}.")
        return lambda module: isinstance(module, classes)
    if callable(policy):
        return cast("Callable[[nn.Module], bool]", policy)
    raise TypeError(
        f"`auto_wrap_policy={policy!r}`: pass a set of module classes (e.g. `{{nn.TransformerEncoderLayer}}`) "
        "or a function `policy(module) -> bool`."
    )


def broadcast_module_states(module: nn.Module, src: int = 0) -> None:
    """Give every rank rank ``src``'s values of the materialised parameters and buffers (like DDP does)."""
    with torch.no_grad():
        for tensor in [*module.parameters(), *module.buffers()]:
            if not _is_meta(tensor) and not is_dtensor(tensor):
                dist.broadcast(tensor.data, src=src)


def shard_module(
    module: nn.Module,
    root: nn.Module,
    policy: Callable[[nn.Module], bool] | None,
    fully_shard: Callable[..., Any],
    **kwargs: Any,
) -> int:
    """``fully_shard`` every submodule of ``module`` the policy picks (children first), then ``root``.

    ``module`` itself is never a unit of its own: its direct parameters belong to ``root`` (the
    step redirect), whose forward runs the step. Returns the number of units.
    """
    units = 0
    if policy is not None:
        for _name, sub in reversed(list(module.named_modules())):
            if sub is not module and policy(sub):
                fully_shard(sub, **kwargs)
                units += 1
    fully_shard(root, **kwargs)
    return units + 1


def materialize_meta(root: nn.Module, device: torch.device) -> list[str]:
    """Allocate the meta tensors on ``device`` (sharded) and run ``reset_parameters()`` on their modules.

    Returns the names of the modules that were materialised. A module with meta tensors but no
    ``reset_parameters`` (or ``_reset_parameters``) is an error (its values would be garbage).
    """
    done, missing = [], []
    # Children first, as in eager construction: a parent's reset (e.g. MultiheadAttention zeroing
    # `out_proj.bias`) then runs after its children's own and has the last word.
    for name, sub in reversed(list(root.named_modules())):
        if not has_meta_tensors(sub, recurse=False):
            continue
        # `_reset_parameters`: nn.MultiheadAttention and nn.Transformer name it so.
        reset = getattr(sub, "reset_parameters", None) or getattr(sub, "_reset_parameters", None)
        if not callable(reset):
            missing.append(f"{name or '<root>'} ({type(sub).__name__})")
            continue
        sub.to_empty(device=device, recurse=False)
        with torch.no_grad():
            reset()
        done.append(name)
    if missing:
        raise ValueError(
            "These modules got parameters or buffers on the meta device in `configure_model` but have no "
            f"`reset_parameters()` to initialise them after sharding: {', '.join(missing)}. Define "
            "`reset_parameters(self)` on them, or create them outside the sharded context (in `__init__`), "
            "or pass `FSDPStrategy(meta_init=False)`."
        )
    return done


@torch.no_grad()
def clip_grad_norm(parameters: Iterable[torch.Tensor], max_norm: float, norm_type: float = 2.0) -> torch.Tensor:
    """Clip the total gradient norm of sharded (DTensor) and plain parameters; return the total norm.

    Each rank holds a slice of every sharded gradient, so the per-rank sums of ``|g|^p`` are
    all-reduced before the root; plain (replicated) gradients count once.
    """
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return torch.tensor(0.0)
    sharded = [g._local_tensor for g in grads if is_dtensor(g)]
    plain = [g for g in grads if not is_dtensor(g)]
    device = (sharded or plain)[0].device
    if norm_type == math.inf:
        local = max((t.abs().max().float() for t in sharded), default=torch.tensor(0.0, device=device))
        if sharded and dist.is_initialized():
            dist.all_reduce(local, op=dist.ReduceOp.MAX)
        total = max([local, *(t.abs().max().float() for t in plain)])
    else:
        local = sum((t.float().norm(norm_type) ** norm_type for t in sharded), torch.tensor(0.0, device=device))
        if sharded and dist.is_initialized():
            dist.all_reduce(local)
        total = local + sum((t.float().norm(norm_type) ** norm_type for t in plain), torch.tensor(0.0, device=device))
        total = total ** (1.0 / norm_type)
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in grads:
        target = g._local_tensor if is_dtensor(g) else g
        target.mul_(coef.to(target.device, target.dtype))
    return total


# -- optimizer state formats ----------------------------------------------------------------------


def optimizer_fqns(module: nn.Module, optimizer: torch.optim.Optimizer) -> list[str]:
    """The parameter names of ``optimizer``'s params, in its own order (the order of the int keys)."""
    names = {id(p): n for n, p in module.named_parameters(remove_duplicate=False)}
    out = []
    for group in optimizer.param_groups:
        for p in group["params"]:
            if id(p) not in names:
                raise ValueError("An optimizer holds a parameter that is not in the module; FSDP cannot save it.")
            out.append(names[id(p)])
    return out


def fqn_to_indexed(state: dict[str, Any]) -> dict[str, Any]:
    """An FQN-keyed optimizer state dict (torch.distributed.checkpoint) in ``Optimizer.state_dict()`` form."""
    if not state:
        return state
    index: dict[str, int] = {}
    groups = []
    for group in state["param_groups"]:
        ids = []
        for name in group["params"]:
            index.setdefault(name, len(index))
            ids.append(index[name])
        groups.append({**group, "params": ids})
    return {"state": {index[n]: v for n, v in state["state"].items()}, "param_groups": groups}


def indexed_to_fqn(state: dict[str, Any], fqns: list[str]) -> dict[str, Any]:
    """``Optimizer.state_dict()`` form to FQN keys, using the live optimizer's parameter order."""
    ids = [i for group in state["param_groups"] for i in group["params"]]
    if len(ids) != len(fqns):
        raise ValueError(
            f"The checkpoint's optimizer has {len(ids)} parameters but the live one has {len(fqns)}: "
            "`configure_optimizers` must build the same optimizer as the run that saved it."
        )
    name = dict(zip(ids, fqns, strict=True))
    groups = [{**g, "params": [name[i] for i in g["params"]]} for g in state["param_groups"]]
    return {"state": {name[int(i)]: v for i, v in state["state"].items()}, "param_groups": groups}


# -- checkpoints ----------------------------------------------------------------------------------


def _sd_api() -> SimpleNamespace:
    from torch.distributed.checkpoint.state_dict import (
        StateDictOptions,
        get_model_state_dict,
        get_optimizer_state_dict,
        set_model_state_dict,
        set_optimizer_state_dict,
    )

    return SimpleNamespace(
        options=StateDictOptions,
        get_model=get_model_state_dict,
        get_optim=get_optimizer_state_dict,
        set_model=set_model_state_dict,
        set_optim=set_optimizer_state_dict,
    )


def model_state_dict(module: nn.Module, full: bool) -> dict[str, Any]:
    """Full (on rank 0, CPU; other ranks get ``{}``) or sharded (DTensor) model state. All ranks call it."""
    api = _sd_api()
    if not full:
        return cast("dict[str, Any]", api.get_model(module))
    state = api.get_model(module, options=api.options(full_state_dict=True, cpu_offload=True))
    # With one rank on the CPU the "gathered" tensors can be the live shards themselves: copy those.
    live = {t.untyped_storage().data_ptr() for t in _local_tensors(module)}
    return {
        k: v.detach().clone() if isinstance(v, torch.Tensor) and v.untyped_storage().data_ptr() in live else v
        for k, v in state.items()
    }


def _local_tensors(module: nn.Module) -> list[torch.Tensor]:
    tensors = [*module.parameters(), *module.buffers()]
    return [t._local_tensor if is_dtensor(t) else t for t in tensors]


def optimizer_state_dicts(
    module: nn.Module, optimizers: list[torch.optim.Optimizer], full: bool
) -> list[dict[str, Any]]:
    """Optimizer states: full in ``Optimizer.state_dict()`` form (rank 0), or sharded with FQN keys."""
    api = _sd_api()
    out: list[dict[str, Any]] = []
    for optimizer in optimizers:
        if full:
            state = api.get_optim(module, optimizer, options=api.options(full_state_dict=True, cpu_offload=True))
            out.append(fqn_to_indexed(state))
        else:
            out.append(api.get_optim(module, optimizer))
    return out


def load_full(
    module: nn.Module, optimizers: list[torch.optim.Optimizer], checkpoint: dict[str, Any], strict: bool = True
) -> None:
    """Load a full checkpoint (every rank read the file) into the sharded module and optimizers."""
    api = _sd_api()
    api.set_model(module, checkpoint["state_dict"], options=api.options(full_state_dict=True, strict=strict))
    for optimizer, saved in zip(optimizers, checkpoint.get("optimizer_states", []), strict=False):
        fqn_state = indexed_to_fqn(saved, optimizer_fqns(module, optimizer))
        api.set_optim(module, optimizer, fqn_state, options=api.options(full_state_dict=True))


def save_sharded(
    module: nn.Module,
    optimizers: list[torch.optim.Optimizer],
    checkpoint: dict[str, Any],
    path: Path,
    is_global_zero: bool,
) -> None:
    """Every rank writes its shards to directory ``path`` (torch.distributed.checkpoint); rank 0 adds
    ``meta.pt`` (loop state, schedulers, precision, callbacks). Written to a temporary directory beside
    ``path`` and swapped in (the old one renamed aside, the new one renamed in, the old one deleted), so
    a crash or a kill at any moment leaves a complete checkpoint (see `_atomic`)."""
    import torch.distributed.checkpoint as dcp

    if path.exists() and not (path.is_dir() and (path / SHARDED_META_FILE).exists()):
        raise FileExistsError(f"{path} exists and is not a sharded checkpoint directory; refusing to overwrite it.")
    owner = [os.getpid()]  # the temporary is named after rank 0, who swaps it in (and sweeps it if killed)
    dist.broadcast_object_list(owner, src=0)
    tmp = _atomic.temp_path(path, owner=owner[0])
    if is_global_zero:
        path.parent.mkdir(parents=True, exist_ok=True)
        _atomic.sweep(path.parent)
    dist.barrier()
    state = {
        "state_dict": checkpoint["state_dict"],
        "optimizer_states": {str(i): s for i, s in enumerate(optimizer_state_dicts(module, optimizers, False))},
    }
    with _atomic.writing(path, tmp, clean=is_global_zero):
        dcp.save(state, checkpoint_id=str(tmp))
        if is_global_zero:
            meta = {k: v for k, v in checkpoint.items() if k not in ("state_dict", "optimizer_states")}
            meta["num_optimizers"] = len(optimizers)
            torch.save(meta, tmp / SHARDED_META_FILE)
            _atomic.swap_into_place(tmp, path)
    dist.barrier()


def load_sharded(
    module: nn.Module, optimizers: list[torch.optim.Optimizer], path: Path, weights_only: bool = True
) -> dict[str, Any]:
    """Load a sharded checkpoint directory in place (same world size); return the rest of it."""
    import torch.distributed.checkpoint as dcp

    api = _sd_api()
    meta: dict[str, Any] = torch.load(path / SHARDED_META_FILE, map_location="cpu", weights_only=weights_only)
    saved_optimizers = meta.pop("num_optimizers", 0)
    state: dict[str, Any] = {"state_dict": api.get_model(module)}
    count = min(len(optimizers), saved_optimizers)
    if count:
        state["optimizer_states"] = {str(i): api.get_optim(module, optimizers[i]) for i in range(count)}
    dcp.load(state, checkpoint_id=str(path))
    api.set_model(module, state["state_dict"])
    for i in range(count):
        api.set_optim(module, optimizers[i], state["optimizer_states"][str(i)])
    return meta
