"""The one table of old -> new names.

Pure data, standard library only: the runtime shims (``compat.*``), the codemods
(``codemods/``), ``docs/migration.md`` and the coverage tests are all derived from it.

Every entry names an old object by its ``pytorch_lightning.`` qualified path; the same object
under ``compat.`` (``compat.plugins.DDPPlugin``) is derived by ``compat_path``, and deep
module paths a user may have imported from are listed in ``aliases``.

Member kinds (method, property, hook, argument, argument value, attribute) name their owner in
``old`` and the member in ``member``; their ``strategies``/``lightning`` targets are bare member
names (or, for argument values, the new keyword arguments written as ``key=value, ...``).
A member target lives on the owner's replacement (the ``CLASS`` entry of the owner). When a
member moved to another object (``Accelerator.barrier`` is now ``trainer.strategy.barrier``),
the target is ``None``, ``automatic`` is false and the hint says where it went.

An ``ARGUMENT`` target is either a bare keyword name (the keyword is renamed, its value is kept)
or keyword arguments written as ``key=value, ...`` in which ``OLD_VALUE`` (``...``) stands
for the old argument's value: ``Trainer(gpus=2)`` -> ``accelerator='cuda', devices=...`` ->
``Trainer(accelerator='cuda', devices=2)``. A literal value of an argument that also has
``ARGUMENT_VALUE`` entries is matched against those first.

``renamed_in`` is a Lightning version, or ``NOT_RENAMED`` (``"-"``) where Lightning kept the
name and only ``strategies`` renames it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

__all__ = [
    "ASSIGNED_PROPERTIES",
    "CLASS_HELPERS",
    "ClassHelper",
    "Kind",
    "MEMBER_READS",
    "REMOVED_HOOK_PARAMETERS",
    "Rename",
    "RENAMES",
    "PACKAGE_REMOVAL",
    "NOT_RENAMED",
    "OLD_VALUE",
    "TARGETS",
    "class_helper",
    "compat_path",
    "lookup",
]

# The version of strategy-compat that removes every shim unless an entry says otherwise.
PACKAGE_REMOVAL = "1.0"

# ``renamed_in`` of an entry whose name Lightning kept (only ``strategies`` renames it).
NOT_RENAMED = "-"

# The migration targets, one column of the table each (``--target``).
TARGETS = ("strategies", "lightning")

# In an ``ARGUMENT`` target written as ``key=value, ...``: where the old argument's value goes.
OLD_VALUE = "..."


class Kind(str, enum.Enum):  # noqa: UP042 (a StrEnum would change str() and f-strings of a member)
    """What an entry renames."""

    MODULE = "module"
    CLASS = "class"
    FUNCTION = "function"
    METHOD = "method"
    PROPERTY = "property"
    ATTRIBUTE = "attribute"
    ARGUMENT = "argument"
    ARGUMENT_VALUE = "argument value"
    HOOK = "hook"


@dataclass(frozen=True)
class Rename:
    """One old name and where it went.

    Attributes:
        kind: what is renamed.
        old: ``pytorch_lightning.`` qualified path of the old object, or of the owner for member
            kinds (``pytorch_lightning.plugins.DDPPlugin`` for ``init_ddp_connection``).
        member: the old member name for member kinds, else ``None``.
        strategies: the new name in ``strategies`` (qualified for objects, bare for members);
            ``None`` when nothing replaces it there.
        lightning: the same for Lightning 2.x (``lightning.pytorch...``).
        renamed_in: the Lightning version that deprecated/renamed it (for the docs);
            ``NOT_RENAMED`` when Lightning kept the name.
        removed_in: the strategy-compat version that removes the shim.
        automatic: whether the codemods rewrite it without a person (for the default
            ``strategies`` target; ``lightning_automatic`` may differ for Lightning).
        hint: one line for a person when ``automatic`` is false (or when the change needs a look).
        aliases: other ``pytorch_lightning.`` paths of the same old object (deep module paths).
        row: the row of OLD_API.md §3 the entry comes from, when it comes from one.
        value: for ``ARGUMENT_VALUE``, the old string value (``"ddp_cpu"``).
        to_property: a method that became a property (``master_address()`` -> ``main_address``).
        params: for signature changes, old parameter name -> replacement expression
            (``("global_rank", "self.global_rank")``).
        lightning_automatic: ``automatic`` for ``--target lightning`` where it differs from the
            ``strategies`` target (``DDPSpawnPlugin`` needs ``start_method='spawn'`` there);
            ``None`` means the same as ``automatic``.
        bases: for ``CLASS`` entries, the direct bases of the old class in the 1.2-era hierarchy
            (``pytorch_lightning.`` paths of other ``CLASS`` entries), so that member entries of
            a base apply to its subclasses (``DDPSpawnPlugin`` is not a ``DDPPlugin``).
        old_types: for ``ARGUMENT`` entries, the types of value the old keyword took: ``"bool"``,
            ``"int"``, ``"str"``, ``"None"``, ``"list"``, or an old class path (an instance of it
            or of a subclass).
        new_types: the types the new keyword takes, in the same terms. A rename is only applied
            to a value of one of these types (or, when ``old_types`` are all among them, to a
            value whose type is not known).
        moves: ``(old class path, list keyword)``: where a value of that class goes instead of
            the new keyword (``ModelCheckpoint`` instances join ``callbacks=[...]``).
        falsy: for ``ARGUMENT`` entries whose falsy values meant something else (``gpus=0`` or
            ``None``: the CPU), the new keywords for them on both targets (``"accelerator='cpu'"``):
            a value known only at run time becomes a conditional expression of both.
        as_callback: for ``ARGUMENT`` entries whose literal value (other than a falsy one) is the
            setting of a callback now, ``(callback class, its keyword)``: ``("TQDMProgressBar",
            "refresh_rate")`` makes ``progress_bar_refresh_rate=20``
            ``callbacks=[TQDMProgressBar(refresh_rate=20)]`` (the class where the target has it).
        truthy: with ``falsy``, for ``ARGUMENT`` entries where any true value meant one setting:
            its keywords (``reload_dataloaders_every_n_epochs=1``); the codemods then write
            ``=1`` for ``True``, ``=0`` for ``False`` and ``=1 if value else 0`` otherwise.
    """

    kind: Kind
    old: str
    strategies: str | None
    lightning: str | None
    renamed_in: str
    member: str | None = None
    removed_in: str = PACKAGE_REMOVAL
    automatic: bool = True
    hint: str = ""
    aliases: tuple[str, ...] = ()
    row: int | None = None
    value: str | None = None
    to_property: bool = False
    params: tuple[tuple[str, str], ...] = field(default=())
    lightning_automatic: bool | None = None
    bases: tuple[str, ...] = ()
    old_types: tuple[str, ...] = ()
    new_types: tuple[str, ...] = ()
    moves: tuple[tuple[str, str], ...] = ()
    falsy: str | None = None
    as_callback: tuple[str, str] | None = None
    truthy: str | None = None

    @property
    def old_name(self) -> str:
        """The old name as a user wrote it: ``DDPPlugin``, ``DDPPlugin.init_ddp_connection``."""
        short = self.old.rsplit(".", 1)[-1]
        if self.kind is Kind.ARGUMENT:
            return f"{short}({self.member}=...)"
        if self.kind is Kind.ARGUMENT_VALUE:
            return f"{short}({self.member}={self.value!r})"
        return f"{short}.{self.member}" if self.member else short

    def target(self, target: str) -> str | None:
        """The new name for ``target`` (``"strategies"`` or ``"lightning"``)."""
        if target not in TARGETS:
            raise ValueError(f"unknown target `{target}`: expected one of {', '.join(TARGETS)}")
        return self.strategies if target == "strategies" else self.lightning

    def automatic_for(self, target: str) -> bool:
        """Whether the codemods rewrite this entry without a person for ``target``."""
        if self.target(target) is None:
            return False
        if target == "lightning" and self.lightning_automatic is not None:
            return self.lightning_automatic
        return self.automatic


def compat_path(path: str) -> str:
    """The ``compat.`` path of a ``pytorch_lightning.`` path."""
    prefix = "pytorch_lightning"
    if path == prefix or path.startswith(prefix + "."):
        return "compat" + path[len(prefix) :]
    return path


# Grouped by kind, then ordered by OLD_API.md §3 row (entries without a row last).
RENAMES: tuple[Rename, ...] = (
    # -------------------- modules -------------------------------------------------------------
    Rename(
        Kind.MODULE,
        "pytorch_lightning.plugins.environments",
        strategies="strategies",
        lightning="lightning.pytorch.plugins.environments",
        renamed_in="1.8",
        row=84,
        automatic=False,
        lightning_automatic=True,
        hint=(
            "import each environment from `strategies` by name (LightningEnvironment is "
            "LocalEnvironment there; Kubeflow/LSF have no counterpart)"
        ),
    ),
    # -------------------- classes -------------------------------------------------------------
    Rename(
        Kind.CLASS,
        "pytorch_lightning.accelerators.Accelerator",
        strategies="strategies.Accelerator",
        lightning="lightning.pytorch.accelerators.Accelerator",
        renamed_in="1.6",
        row=24,
        automatic=False,
        aliases=("pytorch_lightning.accelerators.accelerator.Accelerator",),
        hint=(
            "Accelerator is device-only and takes no arguments: move training logic to a Strategy "
            "subclass and pass precision/strategy to the Trainer"
        ),
    ),
    Rename(
        Kind.CLASS,
        "pytorch_lightning.plugins.Plugin",
        strategies=None,
        lightning=None,
        renamed_in="1.5",
        row=53,
        automatic=False,
        aliases=("pytorch_lightning.plugins.base_plugin.Plugin",),
        hint=(
            "there is no common plugin base any more: subclass Strategy for training logic or Precision for numerics"
        ),
    ),
    Rename(
        Kind.CLASS,
        "pytorch_lightning.plugins.TrainingTypePlugin",
        strategies="strategies.Strategy",
        lightning="lightning.pytorch.strategies.Strategy",
        renamed_in="1.6",
        row=54,
        bases=("pytorch_lightning.plugins.Plugin",),
        aliases=(
            "pytorch_lightning.plugins.training_type.TrainingTypePlugin",
            "pytorch_lightning.plugins.training_type.training_type_plugin.TrainingTypePlugin",
        ),
    ),
    Rename(
        Kind.CLASS,
        "pytorch_lightning.plugins.ParallelPlugin",
        strategies="strategies.ParallelStrategy",
        lightning="lightning.pytorch.strategies.ParallelStrategy",
        renamed_in="1.6",
        row=55,
        bases=("pytorch_lightning.plugins.TrainingTypePlugin",),
        aliases=(
            "pytorch_lightning.plugins.training_type.ParallelPlugin",
            "pytorch_lightning.plugins.training_type.parallel.ParallelPlugin",
        ),
    ),
    Rename(
        Kind.CLASS,
        "pytorch_lightning.plugins.SingleDevicePlugin",
        strategies="strategies.SingleDeviceStrategy",
        lightning="lightning.pytorch.strategies.SingleDeviceStrategy",
        renamed_in="1.6",
        row=56,
        bases=("pytorch_lightning.plugins.TrainingTypePlugin",),
        aliases=(
            "pytorch_lightning.plugins.training_type.SingleDevicePlugin",
            "pytorch_lightning.plugins.training_type.single_device.SingleDevicePlugin",
        ),
    ),
    Rename(
        Kind.CLASS,
        "pytorch_lightning.plugins.DDPPlugin",
        strategies="strategies.DDPStrategy",
        lightning="lightning.pytorch.strategies.DDPStrategy",
        renamed_in="1.6",
        row=57,
        bases=("pytorch_lightning.plugins.ParallelPlugin",),
        aliases=(
            "pytorch_lightning.plugins.training_type.DDPPlugin",
            "pytorch_lightning.plugins.training_type.ddp.DDPPlugin",
        ),
    ),
    Rename(
        Kind.CLASS,
        "pytorch_lightning.plugins.DDPSpawnPlugin",
        strategies="strategies.DDPSpawnStrategy",
        lightning="lightning.pytorch.strategies.DDPStrategy",
        renamed_in="1.6",
        row=58,
        lightning_automatic=False,
        bases=("pytorch_lightning.plugins.ParallelPlugin",),
        aliases=(
            "pytorch_lightning.plugins.training_type.DDPSpawnPlugin",
            "pytorch_lightning.plugins.training_type.ddp_spawn.DDPSpawnPlugin",
        ),
        hint=(
            "Lightning 2.x has no DDPSpawnStrategy: pass start_method='spawn' to DDPStrategy to keep spawning workers"
        ),
    ),
    Rename(
        Kind.CLASS,
        "pytorch_lightning.plugins.DDP2Plugin",
        strategies=None,
        lightning=None,
        renamed_in="1.6",
        row=59,
        automatic=False,
        bases=("pytorch_lightning.plugins.DDPPlugin",),
        aliases=(
            "pytorch_lightning.plugins.training_type.DDP2Plugin",
            "pytorch_lightning.plugins.training_type.ddp2.DDP2Plugin",
        ),
        hint=(
            "DDP2 was removed (broken on torch>=1.9): use DDPStrategy and all-gather where you "
            "relied on one batch per node"
        ),
    ),
    Rename(
        Kind.CLASS,
        "pytorch_lightning.plugins.DDPShardedPlugin",
        strategies="strategies.FSDPStrategy",
        lightning="lightning.pytorch.strategies.FSDPStrategy",
        renamed_in="1.9",
        row=60,
        automatic=False,
        bases=("pytorch_lightning.plugins.DDPPlugin",),
        aliases=(
            "pytorch_lightning.plugins.training_type.DDPShardedPlugin",
            "pytorch_lightning.plugins.training_type.sharded.DDPShardedPlugin",
        ),
        hint=(
            "FairScale is gone: FSDPStrategy also shards parameters (new checkpoint layout); "
            "DeepSpeedStrategy with ZeRO stage 2 is the closest match"
        ),
    ),
    Rename(
        Kind.CLASS,
        "pytorch_lightning.plugins.DDPSpawnShardedPlugin",
        strategies="strategies.FSDPStrategy",
        lightning="lightning.pytorch.strategies.FSDPStrategy",
        renamed_in="1.9",
        row=60,
        automatic=False,
        bases=("pytorch_lightning.plugins.DDPSpawnPlugin",),
        aliases=(
            "pytorch_lightning.plugins.training_type.DDPSpawnShardedPlugin",
            "pytorch_lightning.plugins.training_type.sharded_spawn.DDPSpawnShardedPlugin",
        ),
        hint=(
            "FairScale is gone: FSDPStrategy also shards parameters (new checkpoint layout); "
            "DeepSpeedStrategy with ZeRO stage 2 is the closest match"
        ),
    ),
    Rename(
        Kind.CLASS,
        "pytorch_lightning.plugins.DDPFullyShardedPlugin",
        strategies="strategies.FSDPStrategy",
        lightning="lightning.pytorch.strategies.FSDPStrategy",
        renamed_in="1.9",
        row=61,
        automatic=False,
        bases=("pytorch_lightning.plugins.DDPPlugin",),
        aliases=(
            "pytorch_lightning.plugins.training_type.DDPFullyShardedPlugin",
            "pytorch_lightning.plugins.training_type.fully_sharded.DDPFullyShardedPlugin",
        ),
        hint=(
            "FairScale FSDP arguments (reshard_after_forward, flatten_parameters, ...) do not "
            "carry over: configure torch FSDP through FSDPStrategy and build layers in "
            "configure_model"
        ),
    ),
    Rename(
        Kind.CLASS,
        "pytorch_lightning.plugins.DeepSpeedPlugin",
        strategies="strategies.DeepSpeedStrategy",
        lightning="lightning.pytorch.strategies.DeepSpeedStrategy",
        renamed_in="1.6",
        row=62,
        bases=("pytorch_lightning.plugins.DDPPlugin",),
        aliases=(
            "pytorch_lightning.plugins.training_type.DeepSpeedPlugin",
            "pytorch_lightning.plugins.training_type.deepspeed.DeepSpeedPlugin",
        ),
        hint=(
            "check the constructor arguments: num_nodes moves to the Trainer and Lightning 1.4 "
            "renamed cpu_offload to offload_optimizer"
        ),
    ),
    Rename(
        Kind.CLASS,
        "pytorch_lightning.plugins.DataParallelPlugin",
        strategies="strategies.DataParallelStrategy",
        lightning=None,
        renamed_in="1.6",
        row=63,
        hint="Lightning 2.x has no DataParallel strategy: use DDPStrategy there (one process per device)",
        bases=("pytorch_lightning.plugins.ParallelPlugin",),
        aliases=(
            "pytorch_lightning.plugins.training_type.DataParallelPlugin",
            "pytorch_lightning.plugins.training_type.dp.DataParallelPlugin",
        ),
    ),
    Rename(
        Kind.CLASS,
        "pytorch_lightning.plugins.HorovodPlugin",
        strategies=None,
        lightning=None,
        renamed_in="1.9",
        row=64,
        automatic=False,
        bases=("pytorch_lightning.plugins.ParallelPlugin",),
        aliases=(
            "pytorch_lightning.plugins.training_type.HorovodPlugin",
            "pytorch_lightning.plugins.training_type.horovod.HorovodPlugin",
        ),
        hint=(
            "Horovod is not supported: launch with torchrun and use DDPStrategy (Lightning moved "
            "it to the external lightning-Horovod package)"
        ),
    ),
    Rename(
        Kind.CLASS,
        "pytorch_lightning.plugins.TPUSpawnPlugin",
        strategies=None,
        lightning="lightning.pytorch.strategies.XLAStrategy",
        renamed_in="1.6",
        row=65,
        automatic=False,
        bases=("pytorch_lightning.plugins.DDPSpawnPlugin",),
        aliases=(
            "pytorch_lightning.plugins.training_type.TPUSpawnPlugin",
            "pytorch_lightning.plugins.training_type.tpu_spawn.TPUSpawnPlugin",
        ),
        hint="strategies has no TPU/XLA support: keep Lightning (--target lightning) for TPUs",
    ),
    Rename(
        Kind.CLASS,
        "pytorch_lightning.plugins.SingleTPUPlugin",
        strategies=None,
        lightning="lightning.pytorch.strategies.SingleDeviceXLAStrategy",
        renamed_in="1.6",
        row=66,
        automatic=False,
        bases=("pytorch_lightning.plugins.SingleDevicePlugin",),
        aliases=(
            "pytorch_lightning.plugins.training_type.SingleTPUPlugin",
            "pytorch_lightning.plugins.training_type.single_tpu.SingleTPUPlugin",
        ),
        hint="strategies has no TPU/XLA support: keep Lightning (--target lightning) for TPUs",
    ),
    Rename(
        Kind.CLASS,
        "pytorch_lightning.plugins.RPCPlugin",
        strategies=None,
        lightning=None,
        renamed_in="1.4",
        row=67,
        automatic=False,
        bases=("pytorch_lightning.plugins.DDPPlugin",),
        aliases=(
            "pytorch_lightning.plugins.training_type.RPCPlugin",
            "pytorch_lightning.plugins.training_type.rpc.RPCPlugin",
        ),
        hint=(
            "removed in Lightning 1.4 with no replacement: use torch.distributed.rpc directly, or "
            "FSDPStrategy/DeepSpeedStrategy to fit large models"
        ),
    ),
    Rename(
        Kind.CLASS,
        "pytorch_lightning.plugins.RPCSequentialPlugin",
        strategies=None,
        lightning=None,
        renamed_in="1.4",
        row=67,
        automatic=False,
        bases=("pytorch_lightning.plugins.RPCPlugin",),
        aliases=(
            "pytorch_lightning.plugins.training_type.RPCSequentialPlugin",
            "pytorch_lightning.plugins.training_type.rpc_sequential.RPCSequentialPlugin",
        ),
        hint=(
            "pipeline parallelism was removed in Lightning 1.4 with no replacement: use "
            "FSDPStrategy or DeepSpeedStrategy to fit large models"
        ),
    ),
    Rename(
        Kind.CLASS,
        "pytorch_lightning.accelerators.GPUAccelerator",
        strategies="strategies.CUDAAccelerator",
        lightning="lightning.pytorch.accelerators.CUDAAccelerator",
        renamed_in="1.7",
        row=68,
        automatic=False,
        bases=("pytorch_lightning.accelerators.Accelerator",),
        aliases=("pytorch_lightning.accelerators.gpu.GPUAccelerator",),
        hint=(
            "`CUDAAccelerator()` takes no arguments now (it only picks devices): pass the precision and the "
            "strategy to the Trainer; training logic (setup, steps, collectives) belongs in a Strategy"
        ),
    ),
    Rename(
        Kind.CLASS,
        "pytorch_lightning.accelerators.TPUAccelerator",
        strategies=None,
        lightning="lightning.pytorch.accelerators.XLAAccelerator",
        renamed_in="2.1",
        row=69,
        automatic=False,
        bases=("pytorch_lightning.accelerators.Accelerator",),
        aliases=("pytorch_lightning.accelerators.tpu.TPUAccelerator",),
        hint="strategies has no TPU/XLA support: keep Lightning (--target lightning) for TPUs",
    ),
    Rename(
        Kind.CLASS,
        "pytorch_lightning.plugins.NativeMixedPrecisionPlugin",
        strategies="strategies.MixedPrecision",
        lightning="lightning.pytorch.plugins.precision.MixedPrecision",
        renamed_in="1.9",
        row=72,
        automatic=False,
        bases=("pytorch_lightning.plugins.MixedPrecisionPlugin",),
        aliases=(
            "pytorch_lightning.plugins.precision.NativeMixedPrecisionPlugin",
            "pytorch_lightning.plugins.precision.native_amp.NativeMixedPrecisionPlugin",
        ),
        hint=(
            "the new class needs the precision: drop the plugin and pass "
            "Trainer(precision='16-mixed') (or 'bf16-mixed')"
        ),
    ),
    Rename(
        Kind.CLASS,
        "pytorch_lightning.plugins.ApexMixedPrecisionPlugin",
        strategies=None,
        lightning=None,
        renamed_in="1.9",
        row=73,
        automatic=False,
        bases=("pytorch_lightning.plugins.MixedPrecisionPlugin",),
        aliases=(
            "pytorch_lightning.plugins.precision.ApexMixedPrecisionPlugin",
            "pytorch_lightning.plugins.precision.apex_amp.ApexMixedPrecisionPlugin",
        ),
        hint="apex AMP is not supported: use native AMP with Trainer(precision='16-mixed')",
    ),
    Rename(
        Kind.CLASS,
        "pytorch_lightning.plugins.ShardedNativeMixedPrecisionPlugin",
        strategies=None,
        lightning="lightning.pytorch.plugins.precision.FSDPPrecision",
        renamed_in="1.9",
        row=74,
        automatic=False,
        bases=("pytorch_lightning.plugins.NativeMixedPrecisionPlugin",),
        aliases=(
            "pytorch_lightning.plugins.precision.ShardedNativeMixedPrecisionPlugin",
            ("pytorch_lightning.plugins.precision.sharded_native_amp.ShardedNativeMixedPrecisionPlugin"),
        ),
        hint=(
            "drop the plugin and use Trainer(strategy='fsdp', precision='16-mixed'): the strategy "
            "picks its mixed-precision handling"
        ),
    ),
    Rename(
        Kind.CLASS,
        "pytorch_lightning.plugins.FullyShardedNativeMixedPrecisionPlugin",
        strategies=None,
        lightning="lightning.pytorch.plugins.precision.FSDPPrecision",
        renamed_in="1.9",
        row=74,
        automatic=False,
        bases=("pytorch_lightning.plugins.NativeMixedPrecisionPlugin",),
        aliases=(
            "pytorch_lightning.plugins.precision.FullyShardedNativeMixedPrecisionPlugin",
            ("pytorch_lightning.plugins.precision.fully_sharded_native_amp.FullyShardedNativeMixedPrecisionPlugin"),
        ),
        hint=(
            "drop the plugin and use Trainer(strategy='fsdp', precision='16-mixed'): the strategy "
            "picks its mixed-precision handling"
        ),
    ),
    Rename(
        Kind.CLASS,
        "pytorch_lightning.plugins.TPUHalfPrecisionPlugin",
        strategies=None,
        lightning="lightning.pytorch.plugins.precision.XLAPrecision",
        renamed_in="1.5",
        row=75,
        automatic=False,
        bases=("pytorch_lightning.plugins.PrecisionPlugin",),
        aliases=(
            "pytorch_lightning.plugins.precision.TPUHalfPrecisionPlugin",
            "pytorch_lightning.plugins.precision.tpu_bfloat.TPUHalfPrecisionPlugin",
        ),
        hint="strategies has no TPU/XLA support: keep Lightning (--target lightning) for TPUs",
    ),
    Rename(
        Kind.CLASS,
        "pytorch_lightning.Trainer",
        strategies="strategies.Trainer",
        lightning="lightning.pytorch.Trainer",
        renamed_in="-",
        aliases=(
            "pytorch_lightning.trainer.Trainer",
            "pytorch_lightning.trainer.trainer.Trainer",
        ),
        hint=(
            "compat.Trainer translates the old arguments and refuses, in one error at construction, "
            "every one strategies.Trainer cannot run (docs/compat.md lists them)"
        ),
    ),
    Rename(
        Kind.CLASS,
        "pytorch_lightning.LightningModule",
        strategies="strategies.TrainModule",
        lightning="lightning.pytorch.LightningModule",
        renamed_in="-",
        aliases=(
            "pytorch_lightning.core.LightningModule",
            "pytorch_lightning.core.lightning.LightningModule",
        ),
        hint=(
            "TrainModule is an nn.Module with Lightning 2.6's hooks and helpers (log, save_hyperparameters, "
            "load_from_checkpoint, freeze, to_torchscript, to_onnx, logger); not device_mesh, fabric or to_tensorrt"
        ),
    ),
    Rename(
        Kind.CLASS,
        "pytorch_lightning.LightningDataModule",
        strategies="strategies.DataModule",
        lightning="lightning.pytorch.LightningDataModule",
        renamed_in="-",
        aliases=(
            "pytorch_lightning.core.LightningDataModule",
            "pytorch_lightning.core.datamodule.LightningDataModule",
        ),
    ),
    Rename(
        Kind.CLASS,
        "pytorch_lightning.Callback",
        strategies="strategies.Callback",
        lightning="lightning.pytorch.Callback",
        renamed_in="-",
        aliases=(
            "pytorch_lightning.callbacks.Callback",
            "pytorch_lightning.callbacks.base.Callback",
        ),
    ),
    # The progress bars: 1.5 renamed the tqdm bar `ProgressBar` -> `TQDMProgressBar`, and 2.0 the
    # base `ProgressBarBase` -> `ProgressBar`, so the old `ProgressBar` is not the new one.
    Rename(
        Kind.CLASS,
        "pytorch_lightning.callbacks.ProgressBar",
        strategies="strategies.TQDMProgressBar",
        lightning="lightning.pytorch.callbacks.TQDMProgressBar",
        renamed_in="1.5",
        bases=("pytorch_lightning.callbacks.ProgressBarBase",),
        aliases=(
            "pytorch_lightning.callbacks.progress.ProgressBar",
            "pytorch_lightning.callbacks.progress.progress.ProgressBar",
        ),
    ),
    Rename(
        Kind.CLASS,
        "pytorch_lightning.callbacks.ProgressBarBase",
        strategies="strategies.ProgressBar",
        lightning="lightning.pytorch.callbacks.ProgressBar",
        renamed_in="2.0",
        bases=("pytorch_lightning.Callback",),
        aliases=(
            "pytorch_lightning.callbacks.progress.ProgressBarBase",
            "pytorch_lightning.callbacks.progress.base.ProgressBarBase",
        ),
        hint=(
            "the new base has no 1.x batch counters (`train_batch_idx`, `val_batch_idx`, ...): use the hooks' "
            "`batch_idx`, or `trainer.fit_loop.epoch_loop.batch_progress` in Lightning 2.x"
        ),
    ),
    Rename(
        Kind.CLASS,
        "pytorch_lightning.accelerators.CPUAccelerator",
        strategies="strategies.CPUAccelerator",
        lightning="lightning.pytorch.accelerators.CPUAccelerator",
        renamed_in="1.6",
        automatic=False,
        bases=("pytorch_lightning.accelerators.Accelerator",),
        aliases=("pytorch_lightning.accelerators.cpu.CPUAccelerator",),
        hint=(
            "`CPUAccelerator()` takes no arguments now (it only picks devices): pass the precision and the "
            "strategy to the Trainer; training logic (setup, steps, collectives) belongs in a Strategy"
        ),
    ),
    Rename(
        Kind.CLASS,
        "pytorch_lightning.plugins.PrecisionPlugin",
        strategies="strategies.Precision",
        lightning="lightning.pytorch.plugins.precision.Precision",
        renamed_in="2.1",
        bases=("pytorch_lightning.plugins.Plugin",),
        aliases=(
            "pytorch_lightning.plugins.precision.PrecisionPlugin",
            "pytorch_lightning.plugins.precision.precision_plugin.PrecisionPlugin",
        ),
    ),
    Rename(
        Kind.CLASS,
        "pytorch_lightning.plugins.MixedPrecisionPlugin",
        strategies="strategies.MixedPrecision",
        lightning="lightning.pytorch.plugins.precision.MixedPrecision",
        renamed_in="2.1",
        automatic=False,
        bases=("pytorch_lightning.plugins.PrecisionPlugin",),
        aliases=(
            "pytorch_lightning.plugins.precision.MixedPrecisionPlugin",
            "pytorch_lightning.plugins.precision.mixed.MixedPrecisionPlugin",
        ),
        hint=(
            "was an empty marker base class; MixedPrecision is the native AMP implementation: "
            "check isinstance checks and prefer Trainer(precision='16-mixed')"
        ),
    ),
    Rename(
        Kind.CLASS,
        "pytorch_lightning.plugins.DeepSpeedPrecisionPlugin",
        strategies=None,
        lightning="lightning.pytorch.plugins.precision.DeepSpeedPrecision",
        renamed_in="2.1",
        automatic=False,
        bases=("pytorch_lightning.plugins.PrecisionPlugin",),
        aliases=(
            "pytorch_lightning.plugins.precision.DeepSpeedPrecisionPlugin",
            "pytorch_lightning.plugins.precision.deepspeed_precision.DeepSpeedPrecisionPlugin",
        ),
        hint=(
            "DeepSpeedStrategy handles precision itself: drop the plugin and pass "
            "Trainer(strategy='deepspeed', precision='16-mixed')"
        ),
    ),
    Rename(
        Kind.CLASS,
        "pytorch_lightning.plugins.ClusterEnvironment",
        strategies="strategies.ClusterEnvironment",
        lightning="lightning.pytorch.plugins.environments.ClusterEnvironment",
        renamed_in="-",
        aliases=(
            "pytorch_lightning.plugins.environments.ClusterEnvironment",
            "pytorch_lightning.plugins.environments.cluster_environment.ClusterEnvironment",
        ),
    ),
    Rename(
        Kind.CLASS,
        "pytorch_lightning.plugins.LightningEnvironment",
        strategies="strategies.LocalEnvironment",
        lightning="lightning.pytorch.plugins.environments.LightningEnvironment",
        renamed_in="-",
        bases=("pytorch_lightning.plugins.ClusterEnvironment",),
        aliases=(
            "pytorch_lightning.plugins.environments.LightningEnvironment",
            "pytorch_lightning.plugins.environments.lightning_environment.LightningEnvironment",
        ),
    ),
    Rename(
        Kind.CLASS,
        "pytorch_lightning.plugins.TorchElasticEnvironment",
        strategies="strategies.TorchElasticEnvironment",
        lightning="lightning.pytorch.plugins.environments.TorchElasticEnvironment",
        renamed_in="-",
        bases=("pytorch_lightning.plugins.ClusterEnvironment",),
        aliases=(
            "pytorch_lightning.plugins.environments.TorchElasticEnvironment",
            ("pytorch_lightning.plugins.environments.torchelastic_environment.TorchElasticEnvironment"),
        ),
    ),
    Rename(
        Kind.CLASS,
        "pytorch_lightning.plugins.SLURMEnvironment",
        strategies="strategies.SLURMEnvironment",
        lightning="lightning.pytorch.plugins.environments.SLURMEnvironment",
        renamed_in="-",
        bases=("pytorch_lightning.plugins.ClusterEnvironment",),
        aliases=(
            "pytorch_lightning.plugins.environments.SLURMEnvironment",
            "pytorch_lightning.plugins.environments.slurm_environment.SLURMEnvironment",
        ),
    ),
    # -------------------- methods -------------------------------------------------------------
    Rename(
        Kind.METHOD,
        "pytorch_lightning.Trainer",
        member="call_setup_hook",
        strategies=None,
        lightning=None,
        renamed_in="1.4",
        row=21,
        automatic=False,
        hint=("internal to the Trainer now: call trainer.fit/validate/test/predict, which run these steps in order"),
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.Trainer",
        member="call_configure_sharded_model",
        strategies=None,
        lightning=None,
        renamed_in="1.4",
        row=21,
        automatic=False,
        hint=("internal to the Trainer now: call trainer.fit/validate/test/predict, which run these steps in order"),
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.Trainer",
        member="pre_dispatch",
        strategies=None,
        lightning=None,
        renamed_in="1.4",
        row=21,
        automatic=False,
        hint=("internal to the Trainer now: call trainer.fit/validate/test/predict, which run these steps in order"),
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.Trainer",
        member="dispatch",
        strategies=None,
        lightning=None,
        renamed_in="1.4",
        row=21,
        automatic=False,
        hint=("internal to the Trainer now: call trainer.fit/validate/test/predict, which run these steps in order"),
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.Trainer",
        member="post_dispatch",
        strategies=None,
        lightning=None,
        renamed_in="1.4",
        row=21,
        automatic=False,
        hint=("internal to the Trainer now: call trainer.fit/validate/test/predict, which run these steps in order"),
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.Trainer",
        member="call_teardown_hook",
        strategies=None,
        lightning=None,
        renamed_in="1.4",
        row=21,
        automatic=False,
        hint=("internal to the Trainer now: call trainer.fit/validate/test/predict, which run these steps in order"),
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.Trainer",
        member="run_train",
        strategies=None,
        lightning=None,
        renamed_in="1.4",
        row=21,
        automatic=False,
        hint=("internal to the Trainer now: call trainer.fit/validate/test/predict, which run these steps in order"),
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.Trainer",
        member="run_test",
        strategies=None,
        lightning=None,
        renamed_in="1.4",
        row=21,
        automatic=False,
        hint=("internal to the Trainer now: call trainer.fit/validate/test/predict, which run these steps in order"),
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.Trainer",
        member="run_predict",
        strategies=None,
        lightning=None,
        renamed_in="1.4",
        row=21,
        automatic=False,
        hint=("internal to the Trainer now: call trainer.fit/validate/test/predict, which run these steps in order"),
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.accelerators.Accelerator",
        member="connect_training_type_plugin",
        strategies=None,
        lightning=None,
        renamed_in="1.3",
        row=25,
        automatic=False,
        hint=("the Trainer calls strategy.connect(module) itself: drop the call, or override Strategy.connect"),
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.accelerators.Accelerator",
        member="connect_precision_plugin",
        strategies=None,
        lightning=None,
        renamed_in="1.3",
        row=26,
        automatic=False,
        hint=("the strategy sets up its precision inside setup(trainer): drop the call, or override Strategy.setup"),
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.accelerators.Accelerator",
        member="setup",
        strategies=None,
        lightning="setup",
        renamed_in="1.5",
        row=27,
        automatic=False,
        hint=(
            "device work goes to setup_device(device); model and optimizer work to "
            "Strategy.setup(trainer), which runs after the user's setup hooks"
        ),
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.plugins.TrainingTypePlugin",
        member="setup",
        strategies="setup",
        lightning="setup",
        renamed_in="1.6",
        row=28,
        automatic=False,
        hint=(
            "now setup(trainer), called after the setup hooks with the module in self.module; "
            "child launching moved to the launcher, the process group to setup_distributed()"
        ),
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.accelerators.Accelerator",
        member="connect",
        strategies=None,
        lightning=None,
        renamed_in="1.5",
        row=29,
        automatic=False,
        hint=("call trainer.strategy.connect(module); the Trainer already does it before the setup hooks"),
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.accelerators.Accelerator",
        member="setup_environment",
        strategies="setup_device",
        lightning="setup_device",
        renamed_in="1.8",
        row=30,
        automatic=False,
        hint=(
            "device selection goes to setup_device(device); process-group work to "
            "Strategy.setup_environment()/setup_distributed()"
        ),
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.accelerators.Accelerator",
        member="start_training",
        strategies=None,
        lightning=None,
        renamed_in="1.5",
        row=31,
        automatic=False,
        hint=(
            "the Trainer runs each stage itself: put per-run setup in Strategy.setup(trainer) and "
            "customise strategy.launcher to change how processes start"
        ),
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.accelerators.Accelerator",
        member="start_evaluating",
        strategies=None,
        lightning=None,
        renamed_in="1.5",
        row=31,
        automatic=False,
        hint=(
            "the Trainer runs each stage itself: put per-run setup in Strategy.setup(trainer) and "
            "customise strategy.launcher to change how processes start"
        ),
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.accelerators.Accelerator",
        member="start_predicting",
        strategies=None,
        lightning=None,
        renamed_in="1.5",
        row=31,
        automatic=False,
        hint=(
            "the Trainer runs each stage itself: put per-run setup in Strategy.setup(trainer) and "
            "customise strategy.launcher to change how processes start"
        ),
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.plugins.TrainingTypePlugin",
        member="start_training",
        strategies=None,
        lightning=None,
        renamed_in="1.6",
        row=32,
        automatic=False,
        hint=(
            "no dispatch step any more: strategy.launcher starts the processes and the Trainer "
            "runs the loop; move per-process code to setup_environment() or setup(trainer)"
        ),
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.plugins.TrainingTypePlugin",
        member="start_evaluating",
        strategies=None,
        lightning=None,
        renamed_in="1.6",
        row=32,
        automatic=False,
        hint=(
            "no dispatch step any more: strategy.launcher starts the processes and the Trainer "
            "runs the loop; move per-process code to setup_environment() or setup(trainer)"
        ),
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.plugins.TrainingTypePlugin",
        member="start_predicting",
        strategies=None,
        lightning=None,
        renamed_in="1.6",
        row=32,
        automatic=False,
        hint=(
            "no dispatch step any more: strategy.launcher starts the processes and the Trainer "
            "runs the loop; move per-process code to setup_environment() or setup(trainer)"
        ),
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.accelerators.Accelerator",
        member="start_testing",
        strategies=None,
        lightning=None,
        renamed_in="1.3",
        row=33,
        automatic=False,
        hint="the Trainer runs validate/test itself: put per-run setup in Strategy.setup(trainer)",
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.plugins.TrainingTypePlugin",
        member="start_testing",
        strategies=None,
        lightning=None,
        renamed_in="1.3",
        row=33,
        automatic=False,
        hint=(
            "no dispatch step any more: strategy.launcher starts the processes and the Trainer "
            "runs the loop; move per-process code to setup_environment() or setup(trainer)"
        ),
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.accelerators.Accelerator",
        member="predict",
        strategies=None,
        lightning=None,
        renamed_in="1.3",
        row=34,
        automatic=False,
        hint="Accelerator is device-only now: use trainer.strategy.predict_step(...)",
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.plugins.TrainingTypePlugin",
        member="predict",
        strategies="predict_step",
        lightning="predict_step",
        renamed_in="1.3",
        row=34,
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.accelerators.Accelerator",
        member="pre_dispatch",
        strategies=None,
        lightning=None,
        renamed_in="1.6",
        row=35,
        automatic=False,
        hint="move the code to Strategy.setup(trainer), which runs after the setup hooks",
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.accelerators.Accelerator",
        member="dispatch",
        strategies=None,
        lightning=None,
        renamed_in="1.6",
        row=35,
        automatic=False,
        hint="no dispatch step any more: the Trainer runs the loop after Strategy.setup(trainer)",
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.accelerators.Accelerator",
        member="post_dispatch",
        strategies=None,
        lightning=None,
        renamed_in="1.6",
        row=35,
        automatic=False,
        hint="move the code to Strategy.teardown()",
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.plugins.TrainingTypePlugin",
        member="pre_dispatch",
        strategies="setup",
        lightning="setup",
        renamed_in="1.6",
        row=36,
        automatic=False,
        hint=("merge the body into setup(self, trainer) after super().setup(trainer), which moves and wraps the model"),
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.plugins.TrainingTypePlugin",
        member="dispatch",
        strategies=None,
        lightning=None,
        renamed_in="2.0",
        row=37,
        automatic=False,
        hint=(
            "removed: the Trainer runs the loop after setup(trainer); move the code there or to an on_fit_start hook"
        ),
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.plugins.PrecisionPlugin",
        member="dispatch",
        strategies=None,
        lightning=None,
        renamed_in="2.0",
        row=37,
        automatic=False,
        hint="removed: drop the override (the Trainer runs the loop)",
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.plugins.TrainingTypePlugin",
        member="post_dispatch",
        strategies="teardown",
        lightning="teardown",
        renamed_in="1.6",
        row=38,
        automatic=False,
        hint=(
            "move the body into teardown(), which takes no trainer and runs after the loops on "
            "every process (the DDP-spawn parent gets results back from fit)"
        ),
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.plugins.PrecisionPlugin",
        member="pre_dispatch",
        strategies=None,
        lightning=None,
        renamed_in="1.6",
        row=39,
        automatic=False,
        hint="removed: do the work in __init__, or in the strategy's setup(trainer)",
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.plugins.DDPSpawnPlugin",
        member="new_process",
        strategies=None,
        lightning=None,
        renamed_in="1.6",
        row=40,
        automatic=False,
        hint=(
            "per-worker code goes to setup_environment() or setup(trainer), which run inside each "
            "spawned worker; MultiprocessingLauncher does the spawning"
        ),
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.plugins.DDPSpawnPlugin",
        member="get_mp_spawn_kwargs",
        strategies=None,
        lightning=None,
        renamed_in="1.6",
        row=41,
        automatic=False,
        hint="spawn options belong to MultiprocessingLauncher (strategy.launcher)",
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.plugins.DDPSpawnPlugin",
        member="transfer_distrib_spawn_state_on_fit_end",
        strategies=None,
        lightning=None,
        renamed_in="1.6",
        row=41,
        automatic=False,
        hint=("the launcher sends rank 0's weights and metrics back to the parent: drop the override"),
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.plugins.DDPPlugin",
        member="init_ddp_connection",
        strategies="setup_distributed",
        lightning="setup_distributed",
        renamed_in="1.5",
        row=42,
        params=(
            ("global_rank", "self.global_rank"),
            ("world_size", "self.world_size"),
        ),
        hint=(
            "now runs inside setup_environment(), before the setup hooks, and must reuse an "
            "existing process group; ranks come from self.global_rank/self.world_size"
        ),
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.plugins.DDPSpawnPlugin",
        member="init_ddp_connection",
        strategies="setup_distributed",
        lightning="setup_distributed",
        renamed_in="1.5",
        row=42,
        params=(
            ("global_rank", "self.global_rank"),
            ("world_size", "self.world_size"),
        ),
        hint=(
            "now runs inside setup_environment(), before the setup hooks, and must reuse an "
            "existing process group; ranks come from self.global_rank/self.world_size"
        ),
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.plugins.TrainingTypePlugin",
        member="init_optimizers",
        strategies="setup_optimizers",
        lightning="setup_optimizers",
        renamed_in="1.6",
        row=47,
        automatic=False,
        hint=(
            "setup_optimizers(trainer) stores self.optimizers instead of returning them and takes "
            "the module from self.module: call super() and adjust"
        ),
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.accelerators.Accelerator",
        member="barrier",
        strategies=None,
        lightning=None,
        renamed_in="1.5",
        row=50,
        automatic=False,
        hint="Accelerator is device-only now: use trainer.strategy.barrier(...)",
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.accelerators.Accelerator",
        member="broadcast",
        strategies=None,
        lightning=None,
        renamed_in="1.5",
        row=50,
        automatic=False,
        hint="Accelerator is device-only now: use trainer.strategy.broadcast(...)",
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.accelerators.Accelerator",
        member="all_gather",
        strategies=None,
        lightning=None,
        renamed_in="1.5",
        row=50,
        automatic=False,
        hint="Accelerator is device-only now: use trainer.strategy.all_gather(...)",
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.accelerators.Accelerator",
        member="training_step",
        strategies=None,
        lightning=None,
        renamed_in="1.5",
        row=50,
        automatic=False,
        hint="Accelerator is device-only now: use trainer.strategy.training_step(...)",
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.accelerators.Accelerator",
        member="validation_step",
        strategies=None,
        lightning=None,
        renamed_in="1.5",
        row=50,
        automatic=False,
        hint="Accelerator is device-only now: use trainer.strategy.validation_step(...)",
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.accelerators.Accelerator",
        member="test_step",
        strategies=None,
        lightning=None,
        renamed_in="1.5",
        row=50,
        automatic=False,
        hint="Accelerator is device-only now: use trainer.strategy.test_step(...)",
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.accelerators.Accelerator",
        member="backward",
        strategies=None,
        lightning=None,
        renamed_in="1.5",
        row=50,
        automatic=False,
        hint="Accelerator is device-only now: use trainer.strategy.backward(...)",
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.accelerators.Accelerator",
        member="optimizer_step",
        strategies=None,
        lightning=None,
        renamed_in="1.5",
        row=50,
        automatic=False,
        hint="Accelerator is device-only now: use trainer.strategy.optimizer_step(...)",
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.accelerators.Accelerator",
        member="setup_optimizers",
        strategies=None,
        lightning=None,
        renamed_in="1.6",
        row=50,
        automatic=False,
        hint="override Strategy.setup_optimizers(trainer) instead (Accelerator is device-only)",
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.accelerators.Accelerator",
        member="model_sharded_context",
        strategies=None,
        lightning=None,
        renamed_in="1.6",
        row=51,
        automatic=False,
        hint="Accelerator is device-only now: use trainer.strategy.model_sharded_context()",
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.plugins.PrecisionPlugin",
        member="master_params",
        strategies="main_params",
        lightning="main_params",
        renamed_in="1.5",
        row=70,
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.plugins.PrecisionPlugin",
        member="on_save_checkpoint",
        strategies="state_dict",
        lightning="state_dict",
        renamed_in="1.6",
        row=71,
        automatic=False,
        hint=("return the plugin's own state from state_dict() instead of writing it into the checkpoint dict"),
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.plugins.PrecisionPlugin",
        member="on_load_checkpoint",
        strategies="load_state_dict",
        lightning="load_state_dict",
        renamed_in="1.6",
        row=71,
        automatic=False,
        hint=("restore in load_state_dict(state_dict), which receives only what state_dict() returned"),
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.plugins.ClusterEnvironment",
        member="creates_children",
        strategies="creates_processes_externally",
        lightning="creates_processes_externally",
        renamed_in="1.5",
        row=80,
        to_property=True,
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.plugins.ClusterEnvironment",
        member="master_address",
        strategies="main_address",
        lightning="main_address",
        renamed_in="1.6",
        row=81,
        to_property=True,
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.plugins.ClusterEnvironment",
        member="master_port",
        strategies="main_port",
        lightning="main_port",
        renamed_in="1.6",
        row=81,
        to_property=True,
    ),
    Rename(
        Kind.METHOD,
        "pytorch_lightning.plugins.TorchElasticEnvironment",
        member="is_using_torchelastic",
        strategies="detect",
        lightning="detect",
        renamed_in="1.6",
        row=82,
    ),
    # -------------------- properties ----------------------------------------------------------
    Rename(
        Kind.PROPERTY,
        "pytorch_lightning.plugins.ParallelPlugin",
        member="torch_distributed_backend",
        strategies="process_group_backend",
        lightning="process_group_backend",
        renamed_in="1.6",
        row=23,
        automatic=False,
        hint=(
            "pass DDPStrategy(process_group_backend=...) instead of setting "
            "PL_TORCH_DISTRIBUTED_BACKEND (default: nccl on CUDA, gloo on CPU); in Lightning only "
            "DDP/FSDP strategies have it"
        ),
    ),
    Rename(
        Kind.PROPERTY,
        "pytorch_lightning.plugins.DDPSpawnPlugin",
        member="mp_spawn_kwargs",
        strategies=None,
        lightning=None,
        renamed_in="1.6",
        row=41,
        automatic=False,
        hint="spawn options belong to MultiprocessingLauncher (strategy.launcher)",
    ),
    Rename(
        Kind.PROPERTY,
        "pytorch_lightning.plugins.TrainingTypePlugin",
        member="on_gpu",
        strategies=None,
        lightning=None,
        renamed_in="1.6",
        row=46,
        automatic=False,
        hint=("check self.root_device.type == 'cuda' (or isinstance(self.accelerator, CUDAAccelerator))"),
    ),
    Rename(
        Kind.PROPERTY,
        "pytorch_lightning.plugins.TrainingTypePlugin",
        member="on_tpu",
        strategies=None,
        lightning=None,
        renamed_in="1.6",
        row=46,
        automatic=False,
        hint=("strategies has no TPU support: drop the branch (Lightning: self.root_device.type == 'xla')"),
    ),
    Rename(
        Kind.PROPERTY,
        "pytorch_lightning.plugins.TrainingTypePlugin",
        member="setup_optimizers_in_pre_dispatch",
        strategies=None,
        lightning=None,
        renamed_in="1.6",
        row=48,
        automatic=False,
        hint=("override setup(trainer) and create the optimizers after wrapping the model, as DeepSpeedStrategy does"),
    ),
    Rename(
        Kind.PROPERTY,
        "pytorch_lightning.accelerators.Accelerator",
        member="results",
        strategies=None,
        lightning=None,
        renamed_in="1.5",
        row=49,
        automatic=False,
        hint="use the value returned by trainer.fit/validate/test/predict",
    ),
    Rename(
        Kind.PROPERTY,
        "pytorch_lightning.plugins.TrainingTypePlugin",
        member="results",
        strategies=None,
        lightning=None,
        renamed_in="1.5",
        row=49,
        automatic=False,
        hint="use the value returned by trainer.fit/validate/test/predict",
    ),
    Rename(
        Kind.PROPERTY,
        "pytorch_lightning.accelerators.Accelerator",
        member="model",
        strategies=None,
        lightning=None,
        renamed_in="1.5",
        row=50,
        automatic=False,
        hint="Accelerator is device-only now: use trainer.strategy.model",
    ),
    Rename(
        Kind.PROPERTY,
        "pytorch_lightning.accelerators.Accelerator",
        member="lightning_module",
        strategies=None,
        lightning=None,
        renamed_in="1.5",
        row=50,
        automatic=False,
        hint=("Accelerator is device-only now: use trainer.strategy.module (Lightning: trainer.lightning_module)"),
    ),
    Rename(
        Kind.PROPERTY,
        "pytorch_lightning.accelerators.Accelerator",
        member="root_device",
        strategies=None,
        lightning=None,
        renamed_in="1.5",
        row=50,
        automatic=False,
        hint="Accelerator is device-only now: use trainer.strategy.root_device",
    ),
    Rename(
        Kind.PROPERTY,
        "pytorch_lightning.accelerators.Accelerator",
        member="call_configure_sharded_model_hook",
        strategies=None,
        lightning=None,
        renamed_in="1.5",
        row=52,
        automatic=False,
        hint="removed: configure_model is always called; guard against a second call inside it",
    ),
    Rename(
        Kind.PROPERTY,
        "pytorch_lightning.plugins.TrainingTypePlugin",
        member="call_configure_sharded_model_hook",
        strategies=None,
        lightning=None,
        renamed_in="1.5",
        row=52,
        automatic=False,
        hint="removed: configure_model is always called; guard against a second call inside it",
    ),
    Rename(
        Kind.PROPERTY,
        "pytorch_lightning.trainer.connectors.accelerator_connector.AcceleratorConnector",
        member="is_using_torchelastic",
        strategies=None,
        lightning=None,
        renamed_in="1.3",
        row=83,
        automatic=False,
        hint=("call TorchElasticEnvironment.detect() (strategies, or lightning.pytorch.plugins.environments)"),
    ),
    Rename(
        Kind.PROPERTY,
        "pytorch_lightning.plugins.TrainingTypePlugin",
        member="lightning_module",
        strategies="module",
        lightning="lightning_module",
        renamed_in="-",
    ),
    # -------------------- attributes ----------------------------------------------------------
    Rename(
        Kind.ATTRIBUTE,
        "pytorch_lightning.Trainer",
        member="accelerator_backend",
        strategies="strategy",
        lightning="strategy",
        renamed_in="1.2",
        row=13,
        hint=(
            "Lightning 1.4 renamed it to trainer.accelerator, but what it did (model, collectives,"
            " steps) is on trainer.strategy now"
        ),
    ),
    Rename(
        Kind.ATTRIBUTE,
        "pytorch_lightning.Trainer",
        member="on_gpu",
        strategies=None,
        lightning=None,
        renamed_in="1.2",
        row=14,
        automatic=False,
        hint="check isinstance(trainer.accelerator, CUDAAccelerator)",
    ),
    Rename(
        Kind.ATTRIBUTE,
        "pytorch_lightning.Trainer",
        member="on_cpu",
        strategies=None,
        lightning=None,
        renamed_in="1.2",
        row=14,
        automatic=False,
        hint="check isinstance(trainer.accelerator, CPUAccelerator)",
    ),
    Rename(
        Kind.ATTRIBUTE,
        "pytorch_lightning.Trainer",
        member="on_tpu",
        strategies=None,
        lightning=None,
        renamed_in="1.2",
        row=14,
        automatic=False,
        hint=(
            "strategies has no TPU support: drop the branch (Lightning: "
            "isinstance(trainer.accelerator, XLAAccelerator))"
        ),
    ),
    Rename(
        Kind.ATTRIBUTE,
        "pytorch_lightning.Trainer",
        member="use_tpu",
        strategies=None,
        lightning=None,
        renamed_in="1.2",
        row=14,
        automatic=False,
        hint=(
            "strategies has no TPU support: drop the branch (Lightning: "
            "isinstance(trainer.accelerator, XLAAccelerator))"
        ),
    ),
    Rename(
        Kind.ATTRIBUTE,
        "pytorch_lightning.Trainer",
        member="use_dp",
        strategies=None,
        lightning=None,
        renamed_in="1.2",
        row=14,
        automatic=False,
        hint="check isinstance(trainer.strategy, DataParallelStrategy)",
    ),
    Rename(
        Kind.ATTRIBUTE,
        "pytorch_lightning.Trainer",
        member="use_ddp",
        strategies=None,
        lightning=None,
        renamed_in="1.2",
        row=14,
        automatic=False,
        hint=(
            "check isinstance(trainer.strategy, (DDPStrategy, DDPSpawnStrategy)) (Lightning: DDPStrategy covers spawn)"
        ),
    ),
    Rename(
        Kind.ATTRIBUTE,
        "pytorch_lightning.Trainer",
        member="use_ddp2",
        strategies=None,
        lightning=None,
        renamed_in="1.2",
        row=14,
        automatic=False,
        hint="DDP2 was removed: the check is always false; use DDPStrategy",
    ),
    Rename(
        Kind.ATTRIBUTE,
        "pytorch_lightning.Trainer",
        member="accelerator_connector",
        strategies=None,
        lightning=None,
        renamed_in="1.6",
        automatic=False,
        hint=(
            "the connector is internal now: read what it held from trainer.strategy (accelerator, precision, "
            "cluster_environment, isinstance checks) and trainer.num_devices / trainer.num_nodes"
        ),
    ),
    Rename(
        Kind.ATTRIBUTE,
        "pytorch_lightning.Trainer",
        member="use_horovod",
        strategies=None,
        lightning=None,
        renamed_in="1.2",
        row=14,
        automatic=False,
        hint="Horovod is not supported: the check is always false",
    ),
    Rename(
        Kind.ATTRIBUTE,
        "pytorch_lightning.Trainer",
        member="use_single_gpu",
        strategies=None,
        lightning=None,
        renamed_in="1.2",
        row=14,
        automatic=False,
        hint=(
            "check isinstance(trainer.strategy, SingleDeviceStrategy) and trainer.strategy.root_device.type == 'cuda'"
        ),
    ),
    Rename(
        Kind.ATTRIBUTE,
        "pytorch_lightning.Trainer",
        member="training_type_plugin",
        strategies="strategy",
        lightning="strategy",
        renamed_in="1.6",
        row=15,
    ),
    Rename(
        Kind.ATTRIBUTE,
        "pytorch_lightning.accelerators.Accelerator",
        member="training_type_plugin",
        strategies=None,
        lightning=None,
        renamed_in="1.6",
        row=22,
        automatic=False,
        hint=(
            "the strategy owns the accelerator now: use trainer.strategy (and "
            "trainer.strategy.accelerator for the device)"
        ),
    ),
    Rename(
        Kind.ATTRIBUTE,
        "pytorch_lightning.accelerators.Accelerator",
        member="precision_plugin",
        strategies=None,
        lightning=None,
        renamed_in="1.6",
        row=22,
        automatic=False,
        hint="the strategy owns the precision now: use trainer.strategy.precision",
    ),
    Rename(
        Kind.ATTRIBUTE,
        "pytorch_lightning.plugins.DDPSpawnPlugin",
        member="mp_queue",
        strategies=None,
        lightning=None,
        renamed_in="1.6",
        row=41,
        automatic=False,
        hint=("the launcher carries results back to the parent: use what fit/test return instead of the queue"),
    ),
    Rename(
        Kind.ATTRIBUTE,
        "pytorch_lightning.plugins.DDPPlugin",
        member="task_idx",
        strategies="local_rank",
        lightning="local_rank",
        renamed_in="1.4",
        row=44,
        hint="local_rank is read-only: drop assignments (the cluster environment provides it)",
    ),
    # -------------------- arguments -----------------------------------------------------------
    Rename(
        Kind.ARGUMENT,
        "pytorch_lightning.Trainer",
        member="distributed_backend",
        strategies="strategy",
        lightning="strategy",
        renamed_in="1.4",
        row=1,
        automatic=False,
        hint=(
            "pass a strategy name as strategy= and the device type as accelerator= (literal values"
            " are rewritten automatically)"
        ),
    ),
    Rename(
        Kind.ARGUMENT,
        "pytorch_lightning.Trainer",
        member="plugins",
        strategies="strategy",
        lightning="strategy",
        renamed_in="1.5",
        row=3,
        automatic=False,
        hint=(
            "pass the training-type plugin (object or name) as strategy=...; use precision= for a "
            "precision plugin and the strategy's cluster_environment for an environment"
        ),
    ),
    Rename(
        Kind.ARGUMENT,
        "pytorch_lightning.Trainer",
        member="gpus",
        strategies="accelerator='cuda', devices=...",
        lightning="accelerator='gpu', devices=...",
        renamed_in="1.7",
        row=4,
        hint="gpus=0 or gpus=None meant CPU: use accelerator='cpu' there",
        falsy="accelerator='cpu'",
    ),
    Rename(
        Kind.ARGUMENT,
        "pytorch_lightning.Trainer",
        member="num_processes",
        strategies="accelerator='cpu', devices=...",
        lightning="accelerator='cpu', devices=...",
        renamed_in="1.7",
        row=5,
    ),
    Rename(
        Kind.ARGUMENT,
        "pytorch_lightning.plugins.DDPPlugin",
        member="num_nodes",
        strategies=None,
        lightning=None,
        renamed_in="1.4",
        row=45,
        automatic=False,
        hint="pass it to Trainer(num_nodes=...) instead of the strategy",
    ),
    Rename(
        Kind.ARGUMENT,
        "pytorch_lightning.plugins.DDPSpawnPlugin",
        member="num_nodes",
        strategies=None,
        lightning=None,
        renamed_in="1.4",
        row=45,
        automatic=False,
        hint="pass it to Trainer(num_nodes=...) instead of the strategy",
    ),
    Rename(
        Kind.ARGUMENT,
        "pytorch_lightning.plugins.DeepSpeedPlugin",
        member="num_nodes",
        strategies=None,
        lightning=None,
        renamed_in="1.4",
        row=45,
        automatic=False,
        hint="pass it to Trainer(num_nodes=...) instead of the strategy",
    ),
    Rename(
        Kind.ARGUMENT,
        "pytorch_lightning.plugins.DDPPlugin",
        member="sync_batchnorm",
        strategies=None,
        lightning=None,
        renamed_in="1.4",
        row=45,
        automatic=False,
        hint=(
            "convert the model yourself (torch.nn.SyncBatchNorm.convert_sync_batchnorm in "
            "configure_model); Lightning: Trainer(sync_batchnorm=True)"
        ),
    ),
    Rename(
        Kind.ARGUMENT,
        "pytorch_lightning.plugins.DDPSpawnPlugin",
        member="sync_batchnorm",
        strategies=None,
        lightning=None,
        renamed_in="1.4",
        row=45,
        automatic=False,
        hint=(
            "convert the model yourself (torch.nn.SyncBatchNorm.convert_sync_batchnorm in "
            "configure_model); Lightning: Trainer(sync_batchnorm=True)"
        ),
    ),
    Rename(
        Kind.ARGUMENT,
        "pytorch_lightning.Trainer",
        member="tpu_cores",
        strategies=None,
        lightning="accelerator='tpu', devices=...",
        renamed_in="1.7",
        automatic=False,
        hint="strategies has no TPU/XLA support: keep Lightning for TPUs (tpu_cores=None or 0 is accepted)",
    ),
    Rename(
        Kind.ARGUMENT,
        "pytorch_lightning.Trainer",
        member="checkpoint_callback",
        strategies="enable_checkpointing",
        lightning="enable_checkpointing",
        renamed_in="1.5",
        # 1.2-1.4 also took the checkpoint callback itself (the Trainer added it to its callbacks).
        old_types=("bool", "pytorch_lightning.callbacks.ModelCheckpoint"),
        new_types=("bool",),
        moves=(("pytorch_lightning.callbacks.ModelCheckpoint", "callbacks"),),
    ),
    Rename(
        Kind.ARGUMENT,
        "pytorch_lightning.Trainer",
        member="replace_sampler_ddp",
        strategies="use_distributed_sampler",
        lightning="use_distributed_sampler",
        renamed_in="2.0",
        old_types=("bool",),
        new_types=("bool",),
    ),
    Rename(
        Kind.ARGUMENT,
        "pytorch_lightning.Trainer",
        member="resume_from_checkpoint",
        strategies=None,
        lightning=None,
        renamed_in="1.5",
        automatic=False,
        hint=(
            "pass the path to trainer.fit(model, ckpt_path=...) instead (compat.Trainer does it for "
            "fit, and starts from scratch with a warning when the file does not exist, as 1.2 did)"
        ),
    ),
    Rename(
        Kind.ARGUMENT,
        "pytorch_lightning.Trainer",
        member="progress_bar_refresh_rate",
        strategies="enable_progress_bar=...",
        lightning="enable_progress_bar=...",
        renamed_in="1.5",
        automatic=False,
        falsy="enable_progress_bar=False",
        as_callback=("TQDMProgressBar", "refresh_rate"),
        hint=(
            "0 hides the bar (enable_progress_bar=False); a rate N > 0 is "
            "callbacks=[TQDMProgressBar(refresh_rate=N)] (written for you where N is a literal and callbacks= a list)"
        ),
    ),
    Rename(
        Kind.ARGUMENT,
        "pytorch_lightning.Trainer",
        member="reload_dataloaders_every_epoch",
        strategies="reload_dataloaders_every_n_epochs=...",
        lightning="reload_dataloaders_every_n_epochs=...",
        renamed_in="1.4",
        falsy="reload_dataloaders_every_n_epochs=0",
        truthy="reload_dataloaders_every_n_epochs=1",
        hint="True is reload_dataloaders_every_n_epochs=1, False is 0 (the default)",
    ),
    Rename(
        Kind.ARGUMENT,
        "pytorch_lightning.Trainer",
        member="weights_summary",
        strategies="enable_model_summary=...",
        lightning="enable_model_summary=...",
        renamed_in="1.5",
        automatic=False,
        hint=(
            "None is enable_model_summary=False; 'top'/'full' is enable_model_summary=True "
            "(Lightning: callbacks=[ModelSummary(max_depth=1 or -1)])"
        ),
    ),
    Rename(
        Kind.ARGUMENT,
        "pytorch_lightning.Trainer",
        member="amp_backend",
        strategies=None,
        lightning=None,
        renamed_in="1.9",
        automatic=False,
        hint=(
            "drop it: precision='16-mixed' is native AMP (amp_backend='native'); apex "
            "(amp_backend='apex') is not supported"
        ),
    ),
    Rename(
        Kind.ARGUMENT,
        "pytorch_lightning.Trainer",
        member="amp_level",
        strategies=None,
        lightning=None,
        renamed_in="1.9",
        automatic=False,
        hint="apex optimisation levels are not supported: drop amp_level and use precision='16-mixed'",
    ),
    Rename(
        Kind.ARGUMENT,
        "pytorch_lightning.Trainer",
        member="flush_logs_every_n_steps",
        strategies=None,
        lightning=None,
        renamed_in="1.5",
        automatic=False,
        hint="configure flushing on the logger: CSVLogger(flush_logs_every_n_steps=N)",
    ),
    # -------------------- argument values -----------------------------------------------------
    Rename(
        Kind.ARGUMENT_VALUE,
        "pytorch_lightning.Trainer",
        member="distributed_backend",
        value="ddp",
        strategies="strategy='ddp'",
        lightning="strategy='ddp'",
        renamed_in="1.4",
        row=1,
    ),
    Rename(
        Kind.ARGUMENT_VALUE,
        "pytorch_lightning.Trainer",
        member="distributed_backend",
        value="ddp_spawn",
        strategies="strategy='ddp_spawn'",
        lightning="strategy='ddp_spawn'",
        renamed_in="1.4",
        row=1,
    ),
    Rename(
        Kind.ARGUMENT_VALUE,
        "pytorch_lightning.Trainer",
        member="distributed_backend",
        value="dp",
        strategies="strategy='dp'",
        lightning=None,
        hint="Lightning 2.x has no 'dp' strategy: pass strategy='ddp' there (one process per device)",
        renamed_in="1.4",
        row=1,
    ),
    Rename(
        Kind.ARGUMENT_VALUE,
        "pytorch_lightning.Trainer",
        member="distributed_backend",
        value="ddp_cpu",
        strategies="strategy='ddp_spawn', accelerator='cpu'",
        lightning="strategy='ddp_spawn', accelerator='cpu'",
        renamed_in="1.4",
        row=1,
        hint="the number of processes comes from devices= (was num_processes=)",
    ),
    Rename(
        Kind.ARGUMENT_VALUE,
        "pytorch_lightning.Trainer",
        member="distributed_backend",
        value="ddp2",
        strategies=None,
        lightning=None,
        renamed_in="1.4",
        row=1,
        automatic=False,
        hint=(
            "DDP2 was removed (broken on torch>=1.9): use strategy='ddp' and all-gather where you "
            "relied on one batch per node"
        ),
    ),
    Rename(
        Kind.ARGUMENT_VALUE,
        "pytorch_lightning.Trainer",
        member="distributed_backend",
        value="ddp_sharded",
        strategies="strategy='fsdp'",
        lightning="strategy='fsdp'",
        renamed_in="1.4",
        row=1,
        automatic=False,
        hint=(
            "FairScale is gone: FSDPStrategy also shards parameters (new checkpoint layout); "
            "DeepSpeedStrategy with ZeRO stage 2 is the closest match"
        ),
    ),
    Rename(
        Kind.ARGUMENT_VALUE,
        "pytorch_lightning.Trainer",
        member="distributed_backend",
        value="deepspeed",
        strategies="strategy='deepspeed'",
        lightning="strategy='deepspeed'",
        renamed_in="1.4",
        row=1,
    ),
    Rename(
        Kind.ARGUMENT_VALUE,
        "pytorch_lightning.Trainer",
        member="distributed_backend",
        value="horovod",
        strategies=None,
        lightning=None,
        renamed_in="1.4",
        row=1,
        automatic=False,
        hint="Horovod is not supported: launch with torchrun and use strategy='ddp'",
    ),
    Rename(
        Kind.ARGUMENT_VALUE,
        "pytorch_lightning.Trainer",
        member="accelerator",
        value="ddp",
        strategies="strategy='ddp'",
        lightning="strategy='ddp'",
        renamed_in="1.5",
        row=2,
    ),
    Rename(
        Kind.ARGUMENT_VALUE,
        "pytorch_lightning.Trainer",
        member="accelerator",
        value="ddp_spawn",
        strategies="strategy='ddp_spawn'",
        lightning="strategy='ddp_spawn'",
        renamed_in="1.5",
        row=2,
    ),
    Rename(
        Kind.ARGUMENT_VALUE,
        "pytorch_lightning.Trainer",
        member="accelerator",
        value="dp",
        strategies="strategy='dp'",
        lightning=None,
        hint="Lightning 2.x has no 'dp' strategy: pass strategy='ddp' there (one process per device)",
        renamed_in="1.5",
        row=2,
    ),
    Rename(
        Kind.ARGUMENT_VALUE,
        "pytorch_lightning.Trainer",
        member="accelerator",
        value="ddp_cpu",
        strategies="strategy='ddp_spawn', accelerator='cpu'",
        lightning="strategy='ddp_spawn', accelerator='cpu'",
        renamed_in="1.5",
        row=2,
        hint="the number of processes comes from devices= (was num_processes=)",
    ),
    Rename(
        Kind.ARGUMENT_VALUE,
        "pytorch_lightning.Trainer",
        member="accelerator",
        value="ddp2",
        strategies=None,
        lightning=None,
        renamed_in="1.5",
        row=2,
        automatic=False,
        hint=(
            "DDP2 was removed (broken on torch>=1.9): use strategy='ddp' and all-gather where you "
            "relied on one batch per node"
        ),
    ),
    Rename(
        Kind.ARGUMENT_VALUE,
        "pytorch_lightning.Trainer",
        member="accelerator",
        value="ddp_sharded",
        strategies="strategy='fsdp'",
        lightning="strategy='fsdp'",
        renamed_in="1.5",
        row=2,
        automatic=False,
        hint=(
            "FairScale is gone: FSDPStrategy also shards parameters (new checkpoint layout); "
            "DeepSpeedStrategy with ZeRO stage 2 is the closest match"
        ),
    ),
    Rename(
        Kind.ARGUMENT_VALUE,
        "pytorch_lightning.Trainer",
        member="accelerator",
        value="deepspeed",
        strategies="strategy='deepspeed'",
        lightning="strategy='deepspeed'",
        renamed_in="1.5",
        row=2,
    ),
    Rename(
        Kind.ARGUMENT_VALUE,
        "pytorch_lightning.Trainer",
        member="accelerator",
        value="horovod",
        strategies=None,
        lightning=None,
        renamed_in="1.5",
        row=2,
        automatic=False,
        hint="Horovod is not supported: launch with torchrun and use strategy='ddp'",
    ),
    Rename(
        Kind.ARGUMENT_VALUE,
        "pytorch_lightning.Trainer",
        member="distributed_backend",
        value="ddp_sharded_spawn",
        strategies=None,
        lightning=None,
        renamed_in="1.4",
        automatic=False,
        hint=(
            "FairScale is gone: use strategy='fsdp' (it also shards parameters, new checkpoint "
            "layout) or strategy='deepspeed'"
        ),
    ),
    Rename(
        Kind.ARGUMENT_VALUE,
        "pytorch_lightning.Trainer",
        member="distributed_backend",
        value="tpu_spawn",
        strategies=None,
        lightning="strategy='xla'",
        renamed_in="1.4",
        automatic=False,
        hint="strategies has no TPU/XLA support: keep Lightning for TPUs",
    ),
    Rename(
        Kind.ARGUMENT_VALUE,
        "pytorch_lightning.Trainer",
        member="accelerator",
        value="ddp_sharded_spawn",
        strategies=None,
        lightning=None,
        renamed_in="1.5",
        automatic=False,
        hint=(
            "FairScale is gone: use strategy='fsdp' (it also shards parameters, new checkpoint "
            "layout) or strategy='deepspeed'"
        ),
    ),
    Rename(
        Kind.ARGUMENT_VALUE,
        "pytorch_lightning.Trainer",
        member="accelerator",
        value="ddp_fully_sharded",
        strategies="strategy='fsdp'",
        lightning="strategy='fsdp'",
        renamed_in="1.5",
        automatic=False,
        hint="FairScale's FSDP became torch FSDP: its arguments and checkpoint layout do not carry over",
    ),
    Rename(
        Kind.ARGUMENT_VALUE,
        "pytorch_lightning.Trainer",
        member="accelerator",
        value="fsdp",
        strategies="strategy='fsdp'",
        lightning="strategy='fsdp'",
        renamed_in="1.5",
    ),
    Rename(
        Kind.ARGUMENT_VALUE,
        "pytorch_lightning.Trainer",
        member="accelerator",
        value="tpu_spawn",
        strategies=None,
        lightning="strategy='xla'",
        renamed_in="1.5",
        automatic=False,
        hint="strategies has no TPU/XLA support: keep Lightning for TPUs",
    ),
    # -------------------- hooks ---------------------------------------------------------------
    Rename(
        Kind.HOOK,
        "pytorch_lightning.LightningModule",
        member="configure_sharded_model",
        strategies="configure_model",
        lightning="configure_model",
        renamed_in="2.1",
        row=85,
    ),
    Rename(
        Kind.HOOK,
        "pytorch_lightning.Callback",
        member="on_configure_sharded_model",
        strategies="setup",
        lightning="setup",
        renamed_in="1.6",
        row=86,
        automatic=False,
        hint=(
            "signatures differ: move the body to setup(trainer, module, stage), which also gets "
            "the stage and runs before configure_model"
        ),
    ),
    Rename(
        Kind.HOOK,
        "pytorch_lightning.Callback",
        member="on_before_accelerator_backend_setup",
        strategies="setup",
        lightning="setup",
        renamed_in="1.6",
        row=87,
        automatic=False,
        hint=(
            "signatures differ: merge the body into setup(trainer, module, stage), which also gets"
            " the stage and runs with torch.distributed initialised"
        ),
    ),
)


@dataclass(frozen=True)
class ClassHelper:
    """A class-level helper of an old class that no class has now.

    1.x's ``Trainer.add_argparse_args(parser)`` delegated to a function of
    ``pytorch_lightning.utilities.argparse`` with the class as its first argument; Lightning 2.0
    removed both. Where a target has such a function, ``compat.migrate`` writes
    ``function(Cls, ...)`` for ``Cls.member(...)`` (on the old class and on a subclass of it that
    does not define ``member``); elsewhere the call gets a TODO with ``hint``.

    Attributes:
        owner: the old class (``pytorch_lightning.`` path; subclasses are covered).
        member: the classmethod's name.
        strategies: the qualified function in ``strategies`` that takes the class first, or
            ``None``.
        lightning: the same for Lightning 2.x (``None``: it has none).
        hint: what to do where the target has no such function.
        constructs: whether it returns an instance of the class (``from_argparse_args``).
    """

    owner: str
    member: str
    strategies: str | None
    lightning: str | None
    hint: str
    constructs: bool = False

    def target(self, target: str) -> str | None:
        """The function for ``target`` (``"strategies"`` or ``"lightning"``)."""
        if target not in TARGETS:
            raise ValueError(f"unknown target `{target}`: expected one of {', '.join(TARGETS)}")
        return self.strategies if target == "strategies" else self.lightning


_ARGPARSE = "strategies.utilities.argparse"
_CLI_HINT = "Lightning 2.x has no argparse helpers: use `lightning.pytorch.cli.LightningCLI`, or "
CLASS_HELPERS: tuple[ClassHelper, ...] = tuple(
    ClassHelper(owner, member, f"{_ARGPARSE}.{member}", None, _CLI_HINT + hint, member == "from_argparse_args")
    for owner in ("pytorch_lightning.Trainer", "pytorch_lightning.LightningDataModule")
    for member, hint in (
        ("add_argparse_args", "add the arguments you use to the parser yourself"),
        (
            "from_argparse_args",
            "build the keywords yourself (`Cls(**{k: v for k, v in vars(args).items() if k in <the keywords you "
            "use>})`), with the new names (gpus -> accelerator/devices, ...)",
        ),
        ("parse_argparser", "parse with argparse directly"),
        ("get_init_arguments_and_types", "read `inspect.signature(Cls).parameters`"),
    )
    if owner == "pytorch_lightning.Trainer" or member != "parse_argparser"
)


def class_helper(owner: str, member: str) -> ClassHelper | None:
    """The ``CLASS_HELPERS`` entry of ``owner.member`` (``owner`` a canonical old path)."""
    return next((h for h in CLASS_HELPERS if h.owner == owner and h.member == member), None)


#: Properties that 1.x let a subclass assign and that both targets only read, with the method that
#: does what the assignment did: 1.x's ``hparams`` setter took a dict or ``argparse.Namespace`` as
#: the hyperparameters, as ``save_hyperparameters(args)`` does now (``self.hparams = args`` is
#: ``self.save_hyperparameters(args)``; a 1.2-1.4 DataModule's ``self.hparams = args`` was a plain
#: attribute, read the same way).
ASSIGNED_PROPERTIES: dict[tuple[str, str], str] = {
    ("pytorch_lightning.LightningModule", "hparams"): "save_hyperparameters",
    ("pytorch_lightning.LightningDataModule", "hparams"): "save_hyperparameters",
}


#: 1.x methods that returned an attribute a subclass sets itself, which neither target defines:
#: ``size(dim=None)`` returned ``self.dims`` (``self.dims[dim]`` with ``dim``). ``dm.size()``
#: becomes ``dm.dims`` (``dm.size(0)``: ``dm.dims[0]``) where the file's classes set ``dims``.
MEMBER_READS: dict[tuple[str, str], str] = {
    ("pytorch_lightning.LightningDataModule", "size"): "dims",
}


#: Parameters of a 1.x hook that stood for a feature both targets removed: an override that still
#: declares one is 1.x code the new Trainer runs differently, so it gets a TODO with the hint.
REMOVED_HOOK_PARAMETERS: dict[tuple[str, str, str], str] = {
    ("pytorch_lightning.LightningModule", "training_step", "optimizer_idx"): (
        "`training_step` is called without `optimizer_idx` now, and several optimizers need manual optimization: "
        "set `self.automatic_optimization = False` and step each optimizer in `training_step` "
        "(`opt_g, opt_d = self.optimizers()`, `self.manual_backward(loss)`, `opt.step()`, `opt.zero_grad()`)"
    ),
    ("pytorch_lightning.LightningModule", "training_step", "hiddens"): (
        "truncated back-propagation through time (`hiddens`, `truncated_bptt_steps`) is gone: split the "
        "sequence and carry the hidden state in `training_step` yourself (manual optimization)"
    ),
}


def _pl_path(path: str) -> str:
    """The ``pytorch_lightning.`` path of a ``compat.`` path (the inverse of compat_path)."""
    if path == "compat" or path.startswith("compat."):
        return "pytorch_lightning" + path[len("compat") :]
    return path


# Every path of an object entry (old, aliases) -> its canonical ``old`` path.
_CANONICAL: dict[str, str] = {
    path: entry.old for entry in RENAMES if entry.member is None for path in (entry.old, *entry.aliases)
}


def lookup(
    path: str,
    member: str | None = None,
    *,
    kind: Kind | None = None,
    value: str | None = None,
) -> Rename | None:
    """The entry for an old qualified path (``pytorch_lightning.``, ``compat.`` or an alias).

    Args:
        path: the old object, or the owner of ``member``, under any of its paths
            (``pytorch_lightning.plugins.training_type.ddp.DDPPlugin``,
            ``compat.plugins.DDPPlugin``, ...).
        member: the member name for member kinds.
        kind: only return an entry of this kind.
        value: for ``ARGUMENT_VALUE`` entries, the old string value; entries with a ``value``
            are only found when it is given.

    Returns:
        The matching entry, or ``None`` when the name is not in the table.
    """
    canonical = _CANONICAL.get(_pl_path(path), _pl_path(path))
    for entry in RENAMES:
        if entry.old != canonical or entry.member != member or entry.value != value:
            continue
        if kind is None or entry.kind is kind:
            return entry
    return None
