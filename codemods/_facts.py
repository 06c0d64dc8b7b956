"""What the rules know about the old and new APIs beyond names: signatures, hierarchy, hooks.

The rules ask the functions here, never the data. Old constructor signatures and the new class
hierarchy come from the catalog (``compat._catalog``: the 1.2-1.5 wheels, ``strategies`` and
Lightning 2.6). Still data here, to move to the catalog: the new constructors' keywords as the
rules need them (following ``*args``/``**kwargs`` passthroughs such as ``DDPSpawnStrategy``'s),
the hooks each Trainer calls, and the behaviour facts of the 1.x accelerator connector.
Old names are keyed by the table's ``pytorch_lightning.`` path, new ones by their qualified name
in the table's target columns.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from compat import _catalog
from compat.renames import ClassHelper, class_helper

__all__ = [
    "CONFIG_NAMES",
    "HOLD_TRAINER",
    "OLD_CALLBACK",
    "OLD_MODULE",
    "OLD_TRAINER",
    "OLD_ONLY_MEMBERS",
    "STRATEGY_HOOK_MOVES",
    "HOOKS_THAT_RUN",
    "LAUNCH_KEYWORDS",
    "PURE_FUNCTIONS",
    "PURE_METHODS",
    "COMMON_MEMBER_NAMES",
    "TORCH_MODULE_METHODS",
    "NewSignature",
    "attribute_types",
    "cpu_count_default",
    "new_hierarchy_known",
    "new_is_subclass",
    "new_signature",
    "old_keywords",
    "missing_member",
    "old_positional", "removed_classmethod",
    "spawn_strategy",
    "spawns_by_count",
    "subclassed_by_libraries",
    "super_required",
    "trainer",
    "trainer_flag_changes",
]  # fmt: skip


@dataclass(frozen=True)
class NewSignature:
    """The keyword parameters a new class takes.

    Attributes:
        params: the named parameters (``self`` aside).
        forwards: where ``**kwargs`` go (``"DistributedDataParallel"``), ``""`` without them.
    """

    params: frozenset[str]
    forwards: str = ""


_S_PARALLEL = ("accelerator", "parallel_devices", "cluster_environment", "precision", "num_nodes",
               "process_group_backend", "timeout", "stall_warning")  # fmt: skip
_L_PARALLEL = ("accelerator", "parallel_devices", "cluster_environment", "checkpoint_io", "precision_plugin")
_L_DDP = (*_L_PARALLEL, "ddp_comm_state", "ddp_comm_hook", "ddp_comm_wrapper", "model_averaging_period",
          "process_group_backend", "timeout", "start_method")  # fmt: skip

_NEW: dict[str, NewSignature] = {
    "strategies.Strategy": NewSignature(frozenset(("accelerator", "precision"))),
    "strategies.ParallelStrategy": NewSignature(frozenset(_S_PARALLEL)),
    "strategies.SingleDeviceStrategy": NewSignature(frozenset(("device", "accelerator", "precision"))),
    "strategies.DDPStrategy": NewSignature(frozenset(_S_PARALLEL), "DistributedDataParallel"),
    "strategies.DDPSpawnStrategy": NewSignature(frozenset((*_S_PARALLEL, "start_method")), "DistributedDataParallel"),
    "strategies.DeepSpeedStrategy": NewSignature(
        frozenset((*_S_PARALLEL, "config", "stage", "offload_optimizer", "offload_parameters")),
        "the DeepSpeed zero_optimization config",
    ),
    "strategies.DataParallelStrategy": NewSignature(frozenset(("accelerator", "parallel_devices", "precision"))),
    "lightning.pytorch.strategies.Strategy": NewSignature(
        frozenset(("accelerator", "checkpoint_io", "precision_plugin"))
    ),
    "lightning.pytorch.strategies.ParallelStrategy": NewSignature(frozenset(_L_PARALLEL)),
    "lightning.pytorch.strategies.SingleDeviceStrategy": NewSignature(
        frozenset(("device", "accelerator", "checkpoint_io", "precision_plugin"))
    ),
    "lightning.pytorch.strategies.DDPStrategy": NewSignature(frozenset(_L_DDP), "DistributedDataParallel"),
    "lightning.pytorch.strategies.DeepSpeedStrategy": NewSignature(
        frozenset(
            (
                "accelerator",
                "zero_optimization",
                "stage",
                "remote_device",
                "offload_optimizer",
                "offload_parameters",
                "offload_params_device",
                "nvme_path",
                "params_buffer_count",
                "params_buffer_size",
                "max_in_cpu",
                "offload_optimizer_device",
                "optimizer_buffer_count",
                "block_size",
                "queue_depth",
                "single_submit",
                "overlap_events",
                "thread_count",
                "pin_memory",
                "sub_group_size",
                "contiguous_gradients",
                "overlap_comm",
                "allgather_partitions",
                "reduce_scatter",
                "allgather_bucket_size",
                "reduce_bucket_size",
                "zero_allow_untested_optimizer",
                "logging_batch_size_per_gpu",
                "config",
                "logging_level",
                "parallel_devices",
                "cluster_environment",
                "loss_scale",
                "initial_scale_power",
                "loss_scale_window",
                "hysteresis",
                "min_loss_scale",
                "partition_activations",
                "cpu_checkpointing",
                "contiguous_memory_optimization",
                "synchronize_checkpoint_boundary",
                "load_full_weights",
                "precision_plugin",
                "process_group_backend",
                "timeout",
                "exclude_frozen_parameters",
            )
        )
    ),
    "lightning.pytorch.Trainer": NewSignature(
        frozenset(
            (
                "accelerator",
                "strategy",
                "devices",
                "num_nodes",
                "precision",
                "logger",
                "callbacks",
                "fast_dev_run",
                "max_epochs",
                "min_epochs",
                "max_steps",
                "min_steps",
                "max_time",
                "limit_train_batches",
                "limit_val_batches",
                "limit_test_batches",
                "limit_predict_batches",
                "overfit_batches",
                "val_check_interval",
                "check_val_every_n_epoch",
                "num_sanity_val_steps",
                "log_every_n_steps",
                "enable_checkpointing",
                "enable_progress_bar",
                "enable_model_summary",
                "accumulate_grad_batches",
                "gradient_clip_val",
                "gradient_clip_algorithm",
                "deterministic",
                "benchmark",
                "inference_mode",
                "use_distributed_sampler",
                "profiler",
                "detect_anomaly",
                "barebones",
                "plugins",
                "sync_batchnorm",
                "reload_dataloaders_every_n_epochs",
                "default_root_dir",
                "enable_autolog_hparams",
                "model_registry",
            )
        )
    ),
}


def _old_signatures(canon: str) -> list[_catalog.Signature]:
    """The constructor of ``canon`` in each old release that has it (through ``*args`` passthroughs)."""
    found = []
    for name in _catalog.OLD:
        catalog = _catalog.load(name)
        for cls in catalog.mro(canon) if catalog.has(canon) else ():
            signature = catalog.signature(cls)
            if signature is not None and (signature.keywords() or not signature.var_positional):
                found.append(signature)
                break
    return found


@functools.cache  # a walk of five catalogs' class hierarchies, asked again for every call site
def old_positional(canon: str) -> tuple[frozenset[str], ...] | None:
    """For each position of the old constructor, the parameter names the releases 1.2-1.5 give it.

    ``None`` when the class's signature is not known; a position beyond a release's parameters
    counts as ``"*"`` (that release would have rejected or swallowed the argument).
    """
    releases = [s.positional() for s in _old_signatures(canon)]
    if not releases:
        return None
    width = max(len(r) for r in releases)
    return tuple(frozenset(r[i] if i < len(r) else "*" for r in releases) for i in range(width))


@functools.cache
def old_keywords(canon: str) -> frozenset[str]:
    """Every named parameter of the old constructor in some release (empty when not known)."""
    return frozenset(name for s in _old_signatures(canon) for name in s.keywords())


def new_signature(qualname: str) -> NewSignature | None:
    """The keyword parameters of a new class (``None`` when not known)."""
    if qualname == "strategies.Trainer":  # explicit keywords: read from the catalog, never stale
        signature = _catalog.target("strategies").signature(qualname)
        return NewSignature(frozenset(signature.keywords())) if signature is not None else None
    return _NEW.get(qualname)


def _target_catalog(qualname: str) -> _catalog.Catalog:
    return _catalog.target("strategies" if qualname.startswith("strategies.") else "lightning")


def new_hierarchy_known(qualname: str) -> bool:
    """Whether the new class's place in the hierarchy is known (see ``new_is_subclass``)."""
    return _target_catalog(qualname).has(qualname)


def new_is_subclass(qualname: str, base: str) -> bool:
    """Whether the new class ``qualname`` is ``base`` or derives from it."""
    catalog = _target_catalog(qualname)
    return qualname == base or (catalog.has(qualname) and catalog.has(base) and catalog.is_subclass(qualname, base))


#: The old Trainer, and the old classes whose ``self.trainer`` is the running one.
OLD_TRAINER = "pytorch_lightning.Trainer"
#: The old bases whose hook parameters hold the running objects (``trainer``, ``pl_module``).
OLD_CALLBACK = "pytorch_lightning.Callback"
OLD_MODULE = "pytorch_lightning.LightningModule"
HOLD_TRAINER = frozenset({"pytorch_lightning.LightningModule", "pytorch_lightning.LightningDataModule"})


def trainer(target: str) -> str:
    """The qualified name of the target's ``Trainer`` (where some strategy arguments went)."""
    return {"strategies": "strategies.Trainer", "lightning": "lightning.pytorch.Trainer"}[target]


# How the 1.x accelerator connector (1.2.10-1.5.10, ``set_distributed_mode`` and
# ``select_training_type_plugin``) launched processes on CPU, where the new default differs.
#: Trainer arguments that together chose how 1.x launched processes (a dict of Trainer keywords
#: is read as part of the call only when these are all in one place: ``_keyword_dicts``).
LAUNCH_KEYWORDS = frozenset({
    "gpus", "num_processes", "tpu_cores", "ipus", "devices", "accelerator", "distributed_backend",
    "strategy", "plugins", "num_nodes", "auto_select_gpus",
})  # fmt: skip
#: Functions and methods whose call has no effect and gives the same value each time, so that a
#: condition made of them may be evaluated once per rewritten keyword (``gpus=1 if
#: torch.cuda.is_available() else 0`` -> ``accelerator="cuda" if torch.cuda.is_available() else
#: "cpu", devices=...``).
PURE_FUNCTIONS = frozenset({
    "torch.cuda.is_available", "torch.cuda.device_count", "torch.backends.mps.is_available",
    "str", "len", "int", "bool", "float", "min", "max", "abs", "isinstance",
})  # fmt: skip
PURE_METHODS = frozenset({"startswith", "endswith", "lower", "upper", "strip"})
#: Trainer keywords that set how many processes run.
_PROCESS_COUNTS = frozenset({"num_processes", "gpus", "tpu_cores", "devices"})
#: Values that, without a process count, started ``os.cpu_count()`` processes.
_CPU_COUNT_VALUES = frozenset({"ddp_cpu"})
#: The count that, above one and with no launch chosen, ran DDP on CPU with the spawn plugin.
_SPAWNING_COUNT = "num_processes"
#: Keywords that chose the launch instead.
_LAUNCH_CHOICES = frozenset({"accelerator", "distributed_backend", "strategy", "plugins", "gpus", "tpu_cores"})


def cpu_count_default(value: str, keywords: frozenset[str]) -> bool:
    """Whether 1.x started one process per CPU for ``value`` in a call passing ``keywords``."""
    return value in _CPU_COUNT_VALUES and not keywords & _PROCESS_COUNTS


def spawns_by_count(keyword: str, keywords: frozenset[str]) -> bool:
    """Whether 1.x spawned the processes ``keyword`` counts, in a call passing ``keywords``."""
    return keyword == _SPAWNING_COUNT and not keywords & _LAUNCH_CHOICES


def spawn_strategy(target: str) -> str:
    """The registry name of the spawning DDP strategy on ``target``."""
    return "ddp_spawn"


#: New methods that do more than the old ones renamed onto them, so an override must call super().
_SUPER_REQUIRED = {
    "setup_distributed": (
        "`setup_distributed` now also sets the ranks from the cluster environment before the "
        "process group exists; without `super().setup_distributed()` this override runs with rank 0 "
        "in every process: call it, or set the ranks yourself"
    ),
}


def super_required(new_member: str) -> str | None:
    """Why an override of ``new_member`` must call ``super()`` (``None``: it need not)."""
    return _SUPER_REQUIRED.get(new_member)


#: Member names that only the old API used (no new class and no common library has them): a use
#: on any receiver is worth a TODO, also in files that do not import Lightning
#: (``self._trainer.training_type_plugin``, ``obj.accelerator_backend``).
OLD_ONLY_MEMBERS = frozenset({
    "training_type_plugin", "accelerator_backend", "distributed_backend", "num_gpus", "root_gpu",
    "use_ddp", "use_ddp2", "use_dp", "use_horovod", "use_single_gpu", "use_tpu",
})  # fmt: skip

#: Names of configuration objects: ``cfg.trainer`` is likely a config section, not a Trainer.
CONFIG_NAMES = frozenset(
    {"cfg", "conf", "config", "configs", "args", "hparams", "opt", "opts", "options", "params", "settings"}
)


#: Classmethods that 1.x let code call on an instance (returning a new object, which code often
#: dropped, believing the instance loaded) and that both targets refuse there with ``TypeError``
#: (Lightning 2.x's ``_restricted_classmethod``; ``strategies``' ``TrainModule`` does the same).
CLASS_ONLY_METHODS = {
    "load_from_checkpoint": (
        "`load_from_checkpoint` is a classmethod that raises TypeError on an instance in 2.x (1.x returned a "
        "new module, which this line may drop): call it on the class and use what it returns "
        "(`model = Model.load_from_checkpoint(path)`)"
    ),
}


@functools.cache
def trainer_flag_changes(target: str) -> dict[str, str]:
    """The 1.x Trainer's command-line flags (``add_argparse_args``: arguments annotated with
    ``str``/``int``/``float``/``bool``) that the target's Trainer lacks or defaults differently:
    ``{name: what changed}`` (``"gone"``, ``"default -1 now, None in 1.x"``), from the catalogs."""
    import re

    new = _catalog.target(target).signature(trainer(target))
    if new is None:
        return {}
    defaults: dict[str, list[str]] = {}
    for release in _catalog.OLD:
        catalog = _catalog.load(release)
        signature, annotations = catalog.signature(catalog.trainer), catalog.init_annotations(catalog.trainer)
        for param in signature.params if signature is not None else ():
            if re.search(r"\b(str|int|float|bool)\b", annotations.get(param.name, "")):
                seen = defaults.setdefault(param.name, [])
                if param.default is not None and param.default not in seen:
                    seen.append(param.default)
    changes = {}
    for name, olds in defaults.items():
        now = new.get(name)
        if now is None:
            changes[name] = "gone"
        elif any(d != now.default for d in olds):
            changes[name] = f"default {now.default} now, {' or '.join(olds)} in 1.x"
    return changes


def removed_classmethod(canon: str, name: str) -> ClassHelper | None:
    """The entry of ``OldClass.name`` when it is a class helper no class has now (``None``: it
    is not one of those)."""
    return class_helper(canon, name)


def _hooks(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Hooks of the 1.5.10 bases (ModelHooks, DataHooks, CheckpointHooks, LightningModule, Callback),
# and the hooks each target's Trainer calls (strategies: TrainModule/Callback; Lightning 2.6).
_STEP_ENDS = (
    "training_epoch_end validation_epoch_end test_epoch_end training_step_end validation_step_end test_step_end"
)
_EVERY_RUN = (
    "on_fit_end on_fit_start on_test_batch_end on_test_batch_start on_test_end on_test_epoch_end "
    "on_test_epoch_start on_test_start on_train_batch_end on_train_batch_start on_train_end "
    "on_train_epoch_end on_train_epoch_start on_train_start on_validation_batch_end "
    "on_validation_batch_start on_validation_end on_validation_epoch_end on_validation_epoch_start "
    "on_validation_start on_predict_batch_end on_predict_batch_start on_predict_end "
    "on_predict_epoch_end on_predict_epoch_start on_predict_start on_after_backward on_before_backward "
    "on_before_optimizer_step on_before_zero_grad on_load_checkpoint on_save_checkpoint"
)
_OLD_HOOKS = {
    "pytorch_lightning.LightningModule": _hooks(
        f"{_EVERY_RUN} {_STEP_ENDS} on_after_batch_transfer on_before_batch_transfer on_epoch_end "
        "on_epoch_start on_post_move_to_device on_predict_dataloader on_predict_model_eval "
        "on_pretrain_routine_end on_pretrain_routine_start on_test_dataloader on_test_model_eval "
        "on_test_model_train on_train_dataloader on_val_dataloader on_validation_model_eval "
        "on_validation_model_train"
    ),
    "pytorch_lightning.Callback": _hooks(
        f"{_EVERY_RUN} on_batch_end on_batch_start on_before_accelerator_backend_setup "
        "on_configure_sharded_model on_epoch_end on_epoch_start on_exception on_init_end on_init_start "
        "on_keyboard_interrupt on_pretrain_routine_end on_pretrain_routine_start on_sanity_check_end "
        "on_sanity_check_start"
    ),
}
# The strategies Trainer's hooks are read from its catalog (what its code calls), never listed
# here: a hand-written list went stale when the Trainer learnt every Lightning 2.6 hook.
_NEW_HOOKS = {
    "lightning.pytorch.LightningModule": _hooks(
        f"{_EVERY_RUN} on_after_batch_transfer on_before_batch_transfer on_predict_model_eval "
        "on_test_model_eval on_test_model_train on_validation_model_eval on_validation_model_train "
        "on_validation_model_zero_grad"
    ),
    "lightning.pytorch.Callback": _hooks(f"{_EVERY_RUN} on_exception on_sanity_check_end on_sanity_check_start"),
}
#: Where the code of an old hook goes when the new base has no hook of that name.
_HOOK_MOVES = {
    "training_epoch_end": "on_train_epoch_end",
    "validation_epoch_end": "on_validation_epoch_end",
    "test_epoch_end": "on_test_epoch_end",
    "training_step_end": "training_step",
    "validation_step_end": "validation_step",
    "test_step_end": "test_step",
    "on_epoch_start": "on_train_epoch_start",
    "on_epoch_end": "on_train_epoch_end",
    "on_batch_start": "on_train_batch_start",
    "on_batch_end": "on_train_batch_end",
    "on_pretrain_routine_start": "on_fit_start",
    "on_pretrain_routine_end": "on_fit_start",
    "on_keyboard_interrupt": "on_exception",
    "on_post_move_to_device": "configure_model",
    "on_train_start": "on_fit_start",
    "on_train_end": "on_fit_end",
}
#: Where the code of a strategy/plugin hook goes when the new strategy never calls it, by the
#: new method that takes over (used only when the target's class calls that method).
STRATEGY_HOOK_MOVES = {
    "configure_ddp": "_setup_model",
    "pre_configure_ddp": "_setup_model",
    "determine_ddp_device_ids": "_setup_model",
    "set_world_ranks": "setup_environment",
    "pre_dispatch": "setup",
    "dispatch": "setup",
    "post_dispatch": "teardown",
    "model_to_device": "setup",
    "on_save": "save_checkpoint",
}
#: Hooks a TODO offers for the code of an override no new base calls, when the base calls them.
HOOKS_THAT_RUN = ("setup_environment", "setup", "_setup_model", "teardown", "on_fit_start", "on_train_start")
#: Old-only names that other code uses too (torch's ``DistributedDataParallel.process_group``,
#: ``nn.RNN.flatten_parameters``, apex's ``master_params``, everyday flags such as ``use_gpu``):
#: on a receiver of unknown class they say nothing about the Lightning API.
COMMON_MEMBER_NAMES = frozenset({
    "process_group", "flatten_parameters", "master_params", "use_amp", "use_gpu", "use_cpu",
    "use_cuda", "get_model", "to_disk", "running_loss", "num_values", "min_len", "window_length",
    "current_idx", "last_idx", "has_tensor", "register_key", "set_metrics", "step_metrics",
    "num_optimizers", "optimizer_idx", "split_idx", "worker_id", "compute_dtype", "batch_indices",
    "wrapped_model", "has_gpu", "has_cpu", "detach_data", "reset_model", "init_optimizers",
    "num_predictions", "store_predictions", "write_prediction", "update_learning_rates",
})  # fmt: skip
#: ``torch.nn.Module``'s own methods: both targets' modules are ``nn.Module``s (outside the
#: catalogs), and torch calls these (``forward`` through ``module(x)``) whatever the base.
TORCH_MODULE_METHODS = frozenset({
    "forward", "state_dict", "load_state_dict", "train", "eval", "to", "cuda", "cpu", "type",
    "float", "double", "half", "apply", "zero_grad", "parameters", "named_parameters", "buffers",
    "modules", "children", "extra_repr", "register_buffer", "requires_grad_",
})  # fmt: skip
_EPOCH_OUTPUTS = frozenset({"training_epoch_end", "validation_epoch_end", "test_epoch_end"})


#: 1.x ``*_epoch_end(outputs)`` -> (its step, its ``*_step_end``, the 2.x hook, the list on ``self``,
#: whether 1.x kept training outputs: a dict with its ``"loss"`` detached). CM011 rewrites them.
EPOCH_END_HOOKS = {
    "training_epoch_end": ("training_step", "training_step_end", "on_train_epoch_end", "training_step_outputs", True),
    "validation_epoch_end": (
        "validation_step", "validation_step_end", "on_validation_epoch_end", "validation_step_outputs", False),
    "test_epoch_end": ("test_step", "test_step_end", "on_test_epoch_end", "test_step_outputs", False),
}  # fmt: skip


def _new_hooks(new_base: str) -> frozenset[str] | None:
    if new_base.startswith("strategies."):
        catalog = _catalog.target("strategies")
        return catalog.hooks(new_base) if catalog.has(new_base) else None
    return _NEW_HOOKS.get(new_base)


@functools.cache  # walks four catalogs' hierarchies; asked for every method of every class
def _old_hook_root(old_base: str) -> str | None:
    """The ``_OLD_HOOKS`` class that ``old_base`` is or derives from in a 1.x release, or None.

    A subclass of any 1.x callback (``ProgressBarBase``, ``EarlyStopping``) gets the hooks of
    ``Callback``: the hierarchy comes from the releases' catalogs, not from a list here.
    """
    if old_base in _OLD_HOOKS:
        return old_base
    roots = {_catalog.load(_catalog.OLD[-1]).resolve(root) or root: root for root in _OLD_HOOKS}
    for release in reversed(_catalog.OLD):
        catalog = _catalog.load(release)
        if catalog.has(old_base):
            root = next((roots[c] for c in catalog.mro(old_base) if c in roots), None)
            if root is not None:
                return root
    return None


def is_old_hook(old_base: str, name: str) -> bool:
    """Whether ``name`` is a hook of the old base class (the Trainer called it)."""
    root = _old_hook_root(old_base)
    return root is not None and name in _OLD_HOOKS[root]


def uncalled_hook(old_base: str, new_base: str, name: str) -> str | None:
    """Where the code of the old hook ``name`` goes when ``new_base``'s Trainer never calls it.

    ``None`` when the hook is still called (or either base is not known here).
    """
    root = _old_hook_root(old_base)
    old, new = _OLD_HOOKS.get(root) if root else None, _new_hooks(new_base)
    if old is None or new is None or name not in old or name in new:
        return None
    short = new_base.rpartition(".")[2]
    moved = _HOOK_MOVES.get(name)
    steps = {"training_step", "validation_step", "test_step", "configure_model"}
    where = (
        f"move its code to `{moved}`"
        if moved and moved in new | steps
        else "move its code to a hook that still runs, or drop it"
    )
    if name in _EPOCH_OUTPUTS:
        where += (
            " (without `outputs`: the step appends what it returns to a list on `self`,"
            " the epoch-end hook reads and clears it)"
        )
    return f"`{name}` is never called on a `{short}`: {where}"


def override_arity(fn: Any, old_base: str, new_base: str, name: str) -> str | None:
    """``hook_arity`` for ``fn`` (a ``libcst.FunctionDef``), an override of an old hook the new base
    still calls (plain methods only)."""
    import libcst as cst

    if fn.decorators or not is_old_hook(old_base, name):
        return None
    params = fn.params
    positional = [*params.posonly_params, *params.params][1:]  # after `self`
    required = sum(1 for p in positional if p.default is None)
    accepted = None if isinstance(params.star_arg, cst.Param) else len(positional)
    return hook_arity(new_base, name, required, accepted)


def dropped_defaults(fn: Any, old_base: str, new_base: str, name: str) -> list[tuple[int, str]] | None:
    """For an override that requires more arguments than ``new_base``'s Trainer passes to ``name``:
    ``[(index after self, default), ...]`` that make it fit, when each extra parameter sits where
    the new hook has a default (``on_validation_batch_end(..., dataloader_idx=0)``, passed only
    with several loaders) or the newest 1.x release that has the hook gave its parameter one
    (1.5's ``on_train_batch_end(..., unused=0)``: the ``dataloader_idx`` 1.x passed, always 0 in
    training); ``None`` otherwise (the catalogs say nothing about that value)."""
    import libcst as cst

    root = _old_hook_root(old_base)
    target = "strategies" if new_base.startswith("strategies.") else "lightning"
    catalog = _catalog.target(target)
    new = catalog.signature(new_base, name) if catalog.has(new_base) and root else None
    if root is None or new is None or new.var_positional or isinstance(fn.params.star_arg, cst.Param):
        return None
    olds = [s for c in _catalog.old_with(root) if (s := c.signature(c.resolve(root) or root, name)) is not None]
    if fn.decorators or not olds:
        return None
    old = [p for p in olds[-1].params if p.name in olds[-1].positional()]
    positional = [*fn.params.posonly_params, *fn.params.params][1:]
    news = [p for p in new.params if p.name in new.positional()]
    passed = sum(1 for p in news if p.default is None)  # what the Trainer always passes
    found = []
    for index, param in enumerate(positional[passed:], start=passed):
        if param.default is not None:
            continue
        # the new hook's own default where it has that parameter (`dataloader_idx=0`: passed only
        # with several loaders), else the one the newest 1.x release gave it
        value = news[index].default if index < len(news) else None
        value = value if value is not None else (old[index].default if index < len(old) else None)
        if value is None:
            return None
        found.append((index, value))
    return found or None


def hook_arity(new_base: str, name: str, required: int, accepted: int | None) -> str | None:
    """Why an override of the hook ``name`` cannot take the arguments ``new_base``'s Trainer passes.

    ``required``/``accepted``: the override's positional parameters after ``self`` without a default,
    and all of them (``None`` with ``*args``). The new hook's signature (read from the target's
    catalog) says what the Trainer passes: a 1.x ``on_train_batch_end(..., dataloader_idx)`` needs one
    argument more than 2.x gives it, and fails at the first batch. ``None`` when it fits, or when the
    hook is not known here.
    """
    target = "strategies" if new_base.startswith("strategies.") else "lightning"
    catalog = _catalog.target(target)
    signature = catalog.signature(new_base, name) if catalog.has(new_base) else None
    if signature is None or signature.var_positional:
        return None
    positional = signature.positional()
    # a parameter with a default may not be passed (`dataloader_idx`: only with several loaders)
    passed = [p.name for p in signature.params if p.name in positional and p.default is None]
    least = len(passed)
    short = new_base.rpartition(".")[2]
    called = f"a `{short}`'s `{name}` is called with ({', '.join(passed)}) now"
    if required > len(passed):
        extra = "give the extra ones defaults or drop them"
        plural = "s" if required != 1 else ""
        return f"{called}: this override requires {required} argument{plural} after `self`; {extra}"
    if accepted is not None and accepted < least:
        return f"{called}: this override takes only {accepted} after `self`; add the missing parameters"
    return None


#: What an old attribute the table renames held, and what its new name holds on each target's
#: Trainer (``trainer.training_type_plugin`` -> ``trainer.strategy``): members used on the result
#: must exist on the new class. The catalog records member names, not their types.
_ATTRIBUTE_TYPES = {
    ("pytorch_lightning.Trainer", "training_type_plugin"): "pytorch_lightning.plugins.TrainingTypePlugin",
    ("pytorch_lightning.Trainer", "accelerator_backend"): "pytorch_lightning.accelerators.Accelerator",
}
_NEW_ATTRIBUTE_TYPES = {
    ("strategies", "strategy"): "strategies.Strategy",
    ("lightning", "strategy"): "lightning.pytorch.strategies.Strategy",
}


def attribute_types(owner: str, member: str, new_member: str, target: str) -> tuple[str, str] | None:
    """``(old class, new class)`` of what ``owner.member`` (renamed to ``new_member``) holds.

    ``None`` when either is not known here.
    """
    old = _ATTRIBUTE_TYPES.get((owner, member))
    new = _NEW_ATTRIBUTE_TYPES.get((target, new_member))
    return (old, new) if old and new else None


def _short(path: str) -> str:
    return path.rpartition(".")[2]


def missing_member(old_cls: str, new_cls: str, name: str, exact: bool) -> str | None:
    """Why ``name``, used on an old ``old_cls`` now a ``new_cls``, is no member of the new class.

    ``None`` when the new class (or a base) has it, when the old releases did not have it
    either (the user's own attribute), or when either class is not in the catalogs. With
    ``exact`` false the object may be any subclass of ``new_cls`` (``trainer.strategy``), so a
    member that some subclass in the target defines counts as present.
    """
    if name.startswith("__") and name.endswith("__"):
        return None
    olds = _catalog.old_with(old_cls, name)
    catalog = _target_catalog(new_cls)
    if not olds or not catalog.has(new_cls) or catalog.has_member(new_cls, name):
        return None
    if not exact and catalog.subclasses_defining(new_cls, name):
        return None
    where = olds[-1].defined_in(old_cls, name) or old_cls
    versions = olds[0].version if len(olds) == 1 else f"{olds[0].version}-{olds[-1].version}"
    return (
        f"`{_short(new_cls)}` has no `{name}` (it was on `{_short(where)}` in {versions}): "
        "find what replaces it on the target, or drop it"
    )


#: Old base classes that libraries built on the old API subclass (bolts, flash, NeMo models and
#: callbacks). Their objects and classes derive from the OLD class, not from its new name, so an
#: ``isinstance``/``issubclass`` check against the new name no longer matches them.
_LIBRARY_BASES = frozenset({
    "pytorch_lightning.LightningModule", "pytorch_lightning.LightningDataModule", "pytorch_lightning.Callback",
})  # fmt: skip


def subclassed_by_libraries(old_cls: str) -> bool:
    """Whether third-party libraries subclass the old class ``old_cls`` (see ``_LIBRARY_BASES``)."""
    return old_cls in _LIBRARY_BASES
