"""Integrity of the rename table (compat/renames.py), the contract shims, codemods, docs read."""

from __future__ import annotations

import ast
import keyword
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from packaging.version import InvalidVersion, Version

from compat.renames import (
    NOT_RENAMED,
    OLD_VALUE,
    RENAMES,
    Kind,
    Rename,
    compat_path,
    lookup,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
OBJECT_KINDS = {Kind.MODULE, Kind.CLASS, Kind.FUNCTION}
MEMBER_KINDS = set(Kind) - OBJECT_KINDS

# The rows of OLD_API.md §3 the table must cover, and the ones deliberately left out (with why).
REQUIRED_ROWS = {*range(1, 6), *range(13, 16), *range(21, 67), 68, 70, 71, 72, *range(80, 88)}
UNCOVERED_ROWS = {
    43: "DDPPlugin.setup_distributed keeps its name: an entry would make the shims warn about a valid name",
}

# Every class of OLD_API.md §1 (plus DDPFullyShardedPlugin, which the sharded rows need).
SECTION_1_CLASSES = {
    "Accelerator",
    "CPUAccelerator",
    "GPUAccelerator",
    "TPUAccelerator",
    "Plugin",
    "TrainingTypePlugin",
    "ParallelPlugin",
    "SingleDevicePlugin",
    "SingleTPUPlugin",
    "DDPPlugin",
    "DDP2Plugin",
    "DDPSpawnPlugin",
    "DDPShardedPlugin",
    "DDPSpawnShardedPlugin",
    "DDPFullyShardedPlugin",
    "DeepSpeedPlugin",
    "DataParallelPlugin",
    "HorovodPlugin",
    "TPUSpawnPlugin",
    "RPCPlugin",
    "RPCSequentialPlugin",
    "PrecisionPlugin",
    "MixedPrecisionPlugin",
    "NativeMixedPrecisionPlugin",
    "ApexMixedPrecisionPlugin",
    "ShardedNativeMixedPrecisionPlugin",
    "DeepSpeedPrecisionPlugin",
    "TPUHalfPrecisionPlugin",
    "ClusterEnvironment",
    "LightningEnvironment",
    "SLURMEnvironment",
    "TorchElasticEnvironment",
}

# The `strategies` contract: the only object names a target may use.
STRATEGIES_OBJECTS = {
    f"strategies.{name}"
    for name in (
        "Strategy",
        "ParallelStrategy",
        "SingleDeviceStrategy",
        "DDPStrategy",
        "DDPSpawnStrategy",
        "FSDPStrategy",
        "DeepSpeedStrategy",
        "DataParallelStrategy",
        "Accelerator",
        "CPUAccelerator",
        "CUDAAccelerator",
        "ClusterEnvironment",
        "LocalEnvironment",
        "TorchElasticEnvironment",
        "SLURMEnvironment",
        "Precision",
        "MixedPrecision",
        "SubprocessScriptLauncher",
        "MultiprocessingLauncher",
        "Trainer",
        "TrainModule",
        "DataModule",
        "Callback",
        "ProgressBar",
        "TQDMProgressBar",
    )
}
STRATEGY_MEMBERS = {
    "connect",
    "setup_environment",
    "setup_distributed",
    "model_sharded_context",
    "model_to_device",
    "setup",
    "teardown",
    "close",
    "barrier",
    "broadcast",
    "all_gather",
    "reduce",
    "reduce_boolean_decision",
    "training_step",
    "validation_step",
    "test_step",
    "predict_step",
    "backward",
    "optimizer_step",
    "module_state_dict",
    "save_checkpoint",
    "load_checkpoint",
    "setup_optimizers",
    "module",
    "model",
    "root_device",
    "global_rank",
    "local_rank",
    "node_rank",
    "world_size",
    "is_global_zero",
    "accelerator",
    "precision",
    "cluster_environment",
    "launcher",
    "distributed_sampler_kwargs",
    "process_group_backend",
}
ENVIRONMENT_MEMBERS = {
    "main_address",
    "main_port",
    "creates_processes_externally",
    "detect",
    "world_size",
    "global_rank",
    "local_rank",
    "node_rank",
}
TRAINER_KWARGS = {
    "strategy",
    "accelerator",
    "devices",
    "num_nodes",
    "precision",
    "enable_progress_bar",
    "use_distributed_sampler",
    "reload_dataloaders_every_n_epochs",
    # Lightning 2.x arguments compat maps old ones to; compat.Trainer refuses them (listing the old
    # argument) while strategies.Trainer does not take them, except for the value strategies implies.
    "enable_checkpointing",
    "enable_model_summary",
}
_STRATEGY_CLASSES = (
    "Strategy",
    "ParallelStrategy",
    "SingleDeviceStrategy",
    "DDPStrategy",
    "DDPSpawnStrategy",
    "FSDPStrategy",
    "DeepSpeedStrategy",
    "DataParallelStrategy",
)
_ENVIRONMENT_CLASSES = (
    "ClusterEnvironment",
    "LocalEnvironment",
    "TorchElasticEnvironment",
    "SLURMEnvironment",
)
ALLOWED_MEMBERS: dict[tuple[str, Kind], set[str]] = {
    **{(f"strategies.{c}", k): STRATEGY_MEMBERS for c in _STRATEGY_CLASSES for k in Kind},
    **{(f"strategies.{c}", k): ENVIRONMENT_MEMBERS for c in _ENVIRONMENT_CLASSES for k in Kind},
    **{
        (f"strategies.{c}", k): {"setup_device", "is_available", "auto_device_count"}
        for c in ("Accelerator", "CPUAccelerator", "CUDAAccelerator")
        for k in Kind
    },
    **{
        (f"strategies.{c}", k): {"main_params", "state_dict", "load_state_dict"}
        for c in ("Precision", "MixedPrecision")
        for k in Kind
    },
    ("strategies.Trainer", Kind.ATTRIBUTE): {"strategy", "accelerator"},
    ("strategies.Trainer", Kind.ARGUMENT): TRAINER_KWARGS,
    ("strategies.Trainer", Kind.ARGUMENT_VALUE): TRAINER_KWARGS,
    ("strategies.TrainModule", Kind.HOOK): {"configure_model"},
    ("strategies.Callback", Kind.HOOK): {"setup"},
}
# Values the `strategies` Trainer accepts (DESIGN.md: registry names, device types, precisions).
TRAINER_VALUES = {
    "strategy": {"single_device", "ddp", "ddp_spawn", "fsdp", "deepspeed", "dp", "auto"},
    "accelerator": {"cpu", "cuda", "auto"},
    "precision": {"32-true", "16-mixed", "bf16-mixed"},
}
# Member entries whose owner has no CLASS entry (it was internal and has no replacement).
OWNERS_WITHOUT_ENTRY = {"pytorch_lightning.trainer.connectors.accelerator_connector.AcceleratorConnector"}

OBJECTS = {entry.old: entry for entry in RENAMES if entry.kind in OBJECT_KINDS}


def _entry_id(entry: Rename) -> str:
    return f"{entry.kind.value}:{entry.old_name}"


def _keywords(text: str) -> dict[str, ast.expr]:
    """Parse ``key=value, ...`` target text into its keyword arguments."""
    call = ast.parse(f"f({text})", mode="eval").body
    assert isinstance(call, ast.Call) and not call.args, f"not keyword arguments: {text!r}"
    return {kw.arg: kw.value for kw in call.keywords if kw.arg is not None}


def _is_identifier(name: str) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name)


# ---------------------------------------------------------------------------- table-wide checks


def test_table_is_not_empty_and_holds_renames() -> None:
    assert len(RENAMES) > 100
    assert all(isinstance(entry, Rename) for entry in RENAMES)


def test_no_duplicate_old_names() -> None:
    keys = Counter((entry.old, entry.member, entry.value) for entry in RENAMES)
    assert [key for key, n in keys.items() if n > 1] == []
    names = Counter(entry.old_name for entry in RENAMES)
    assert [name for name, n in names.items() if n > 1] == []


def test_no_path_is_claimed_twice() -> None:
    paths = Counter(
        path for entry in OBJECTS.values() for old in (entry.old, *entry.aliases) for path in (old, compat_path(old))
    )
    assert [path for path, n in paths.items() if n > 1] == []


def test_entries_are_grouped_by_kind() -> None:
    kinds = [entry.kind for entry in RENAMES]
    order = list(Kind)
    assert kinds == sorted(kinds, key=order.index)


def test_every_required_row_is_covered() -> None:
    covered = {entry.row for entry in RENAMES if entry.row is not None}
    missing = REQUIRED_ROWS - set(UNCOVERED_ROWS) - covered
    assert not missing, f"OLD_API.md §3 rows without an entry: {sorted(missing)}"
    assert not covered & set(UNCOVERED_ROWS), "a row listed as uncovered has an entry now"


def test_every_section_1_class_has_a_class_entry() -> None:
    classes = {entry.old.rsplit(".", 1)[-1] for entry in RENAMES if entry.kind is Kind.CLASS}
    assert SECTION_1_CLASSES - classes == set()


def test_the_brief_counts_are_stable() -> None:
    # A tripwire: an entry lost in a merge shows up here, not only in the docs diff.
    counts = Counter(entry.kind for entry in RENAMES)
    assert counts[Kind.CLASS] >= len(SECTION_1_CLASSES)
    assert counts[Kind.ARGUMENT_VALUE] == 22
    assert counts[Kind.HOOK] == 3


# ---------------------------------------------------------------------------- per-entry checks
# One test per entry (its id names the entry); each helper asserts one aspect of it.


def _check_fields(entry: Rename) -> None:
    assert entry.old.startswith("pytorch_lightning.")
    if entry.kind in OBJECT_KINDS:
        assert entry.member is None
    else:
        assert entry.member is not None and _is_identifier(entry.member)
        assert entry.aliases == (), "aliases belong to the owner's CLASS entry"
    assert (entry.value is not None) == (entry.kind is Kind.ARGUMENT_VALUE)
    assert not entry.to_property or entry.kind is Kind.METHOD
    assert not entry.params or entry.kind in (Kind.METHOD, Kind.HOOK)
    for old, new in entry.params:
        assert _is_identifier(old)
        ast.parse(new, mode="eval")
    for alias in entry.aliases:
        assert alias.startswith("pytorch_lightning.") and alias != entry.old
        assert alias.rsplit(".", 1)[-1] == entry.old.rsplit(".", 1)[-1]
    assert not entry.bases or entry.kind is Kind.CLASS
    for base in entry.bases:
        assert base in OBJECTS and OBJECTS[base].kind is Kind.CLASS, f"unknown base {base}"


def _check_versions(entry: Rename) -> None:
    Version(entry.removed_in)
    if entry.renamed_in != NOT_RENAMED:
        try:
            Version(entry.renamed_in)
        except InvalidVersion:
            pytest.fail(f"renamed_in {entry.renamed_in!r} is not a version or {NOT_RENAMED!r}")


def _check_hint(entry: Rename) -> None:
    needs_person = not entry.automatic_for("strategies") or not entry.automatic_for("lightning")
    if needs_person:
        assert entry.hint, f"{entry.old_name} is not automatic but has no hint"
    assert "\n" not in entry.hint and entry.hint == entry.hint.strip()
    assert len(entry.hint) <= 200, "a hint is one line for a TODO comment"
    if entry.strategies is None:
        assert not entry.automatic, "nothing to rewrite to, so it cannot be automatic"


def _check_object_targets(entry: Rename) -> None:
    if entry.strategies is not None:
        allowed = {"strategies"} if entry.kind is Kind.MODULE else STRATEGIES_OBJECTS
        assert entry.strategies in allowed
    if entry.lightning is not None:
        assert entry.lightning.startswith("lightning.pytorch")
    if entry.kind is Kind.CLASS:
        parts = entry.old.split(".")
        if parts[1] in ("plugins", "accelerators", "callbacks"):
            assert len(parts) == 3, "plugins, accelerators and callbacks use their package path, not the file"
        else:
            assert len(parts) == 2, "Trainer & co use their top-level path"


def _target_names(entry: Rename, text: str) -> set[str]:
    if entry.kind in (Kind.ARGUMENT, Kind.ARGUMENT_VALUE) and "=" in text:
        return set(_keywords(text))
    return {text}


def _check_member_targets(entry: Rename) -> None:
    owner = OBJECTS.get(entry.old)
    if owner is None:
        assert entry.old in OWNERS_WITHOUT_ENTRY
        assert entry.strategies is None
    elif entry.strategies is not None:
        assert owner.strategies is not None, "a member target needs a new owner"
        allowed = ALLOWED_MEMBERS.get((owner.strategies, entry.kind), set())
        names = _target_names(entry, entry.strategies)
        outside = sorted(names - allowed)
        assert not outside, f"{outside} not in the {owner.strategies} contract"
    if entry.lightning is not None:
        assert all(_is_identifier(name) for name in _target_names(entry, entry.lightning))


def _check_argument_texts(entry: Rename) -> None:
    for text in (entry.strategies, entry.lightning):
        if text is None or "=" not in text:
            continue
        values = list(_keywords(text).values())
        assert all(isinstance(v, ast.Constant) for v in values), text
        kept = [v for v in values if v.value is Ellipsis]
        if entry.kind is Kind.ARGUMENT:
            assert len(kept) == 1, f"{text!r} must place the old value ({OLD_VALUE}) exactly once"
        else:
            assert not kept and all(isinstance(v.value, str) for v in values), text
    if entry.kind is Kind.ARGUMENT_VALUE and entry.strategies is not None:
        for name, value in _keywords(entry.strategies).items():
            assert value.value in TRAINER_VALUES[name], f"{name}={value.value!r}"


@pytest.mark.parametrize("entry", RENAMES, ids=_entry_id)
def test_entry_is_well_formed(entry: Rename) -> None:
    _check_fields(entry)
    _check_versions(entry)
    _check_hint(entry)
    if entry.kind in OBJECT_KINDS:
        _check_object_targets(entry)
    else:
        _check_member_targets(entry)
    if entry.kind in (Kind.ARGUMENT, Kind.ARGUMENT_VALUE):
        _check_argument_texts(entry)


# ---------------------------------------------------------------------------- semantic anchors


def _ancestors(path: str) -> list[str]:
    seen: list[str] = []
    todo = [path]
    while todo:
        current = todo.pop()
        assert current not in seen, f"cycle in bases through {current}"
        seen.append(current)
        todo.extend(OBJECTS[current].bases)
    return seen


@pytest.mark.parametrize(
    ("cls", "ancestor", "expected"),
    [
        ("DeepSpeedPlugin", "DDPPlugin", True),
        ("DDP2Plugin", "TrainingTypePlugin", True),
        ("TPUSpawnPlugin", "DDPSpawnPlugin", True),
        ("DDPSpawnPlugin", "DDPPlugin", False),
        ("SingleDevicePlugin", "ParallelPlugin", False),
        ("ShardedNativeMixedPrecisionPlugin", "PrecisionPlugin", True),
        ("SLURMEnvironment", "ClusterEnvironment", True),
        ("ClusterEnvironment", "Plugin", False),
    ],
)
def test_bases_follow_the_1_2_hierarchy(cls: str, ancestor: str, expected: bool) -> None:
    ancestors = _ancestors(f"pytorch_lightning.plugins.{cls}")
    assert (f"pytorch_lightning.plugins.{ancestor}" in ancestors) is expected


def test_bases_have_no_cycles() -> None:
    for entry in OBJECTS.values():
        _ancestors(entry.old)


def test_init_ddp_connection_becomes_setup_distributed() -> None:
    entry = lookup("pytorch_lightning.plugins.DDPPlugin", "init_ddp_connection")
    assert entry is not None and entry.automatic
    assert entry.strategies == entry.lightning == "setup_distributed"
    assert entry.params == (
        ("global_rank", "self.global_rank"),
        ("world_size", "self.world_size"),
    )


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("master_address", "main_address"),
        ("master_port", "main_port"),
        ("creates_children", "creates_processes_externally"),
    ],
)
def test_environment_methods_become_properties(old: str, new: str) -> None:
    entry = lookup("pytorch_lightning.plugins.ClusterEnvironment", old)
    assert entry is not None and entry.to_property and entry.automatic
    assert entry.strategies == new


@pytest.mark.parametrize(
    ("member", "strategies", "lightning"),
    [
        ("gpus", "accelerator='cuda', devices=...", "accelerator='gpu', devices=..."),
        ("num_processes", "accelerator='cpu', devices=...", "accelerator='cpu', devices=..."),
    ],
)
def test_device_count_arguments(member: str, strategies: str, lightning: str) -> None:
    entry = lookup("pytorch_lightning.Trainer", member, kind=Kind.ARGUMENT)
    assert entry is not None and entry.automatic
    assert (entry.strategies, entry.lightning) == (strategies, lightning)


@pytest.mark.parametrize("value", ["ddp2", "horovod"])
def test_accelerator_values_without_replacement_need_a_person(value: str) -> None:
    entry = lookup("pytorch_lightning.Trainer", "accelerator", value=value)
    assert entry is not None and not entry.automatic and entry.hint


def test_ddp_spawn_needs_a_look_only_for_lightning() -> None:
    entry = lookup("pytorch_lightning.plugins.DDPSpawnPlugin")
    assert entry is not None
    assert entry.automatic_for("strategies") and not entry.automatic_for("lightning")
    assert "start_method='spawn'" in entry.hint


def test_callback_hooks_are_not_automatic() -> None:
    for member in ("on_configure_sharded_model", "on_before_accelerator_backend_setup"):
        entry = lookup("pytorch_lightning.Callback", member, kind=Kind.HOOK)
        assert entry is not None and entry.strategies == "setup" and not entry.automatic
        assert "signature" in entry.hint


def test_automatic_for_rejects_unknown_targets() -> None:
    with pytest.raises(ValueError, match="strategies"):
        RENAMES[0].automatic_for("fabric")


# ---------------------------------------------------------------------------- compat_path, lookup


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("pytorch_lightning.plugins.DDPPlugin", "compat.plugins.DDPPlugin"),
        ("pytorch_lightning", "compat"),
        ("pytorch_lightning_bolts.models", "pytorch_lightning_bolts.models"),
        ("torch.nn.Module", "torch.nn.Module"),
    ],
)
def test_compat_path(path: str, expected: str) -> None:
    assert compat_path(path) == expected


@pytest.mark.parametrize(
    "path",
    [
        "pytorch_lightning.plugins.DDPPlugin",
        "compat.plugins.DDPPlugin",
        "pytorch_lightning.plugins.training_type.DDPPlugin",
        "pytorch_lightning.plugins.training_type.ddp.DDPPlugin",
        "compat.plugins.training_type.ddp.DDPPlugin",
    ],
)
def test_lookup_finds_a_class_under_every_path(path: str) -> None:
    entry = lookup(path)
    assert entry is not None and entry.strategies == "strategies.DDPStrategy"


@pytest.mark.parametrize(
    "path",
    [
        "pytorch_lightning.plugins.DDPPlugin",
        "compat.plugins.DDPPlugin",
        "pytorch_lightning.plugins.training_type.ddp.DDPPlugin",
        "compat.plugins.training_type.DDPPlugin",
    ],
)
def test_lookup_finds_a_member_through_its_owners_paths(path: str) -> None:
    entry = lookup(path, "init_ddp_connection")
    assert entry is not None and entry.old == "pytorch_lightning.plugins.DDPPlugin"


def test_lookup_finds_accelerator_aliases() -> None:
    entry = lookup("pytorch_lightning.accelerators.gpu.GPUAccelerator")
    assert entry is not None and entry.strategies == "strategies.CUDAAccelerator"


def test_lookup_distinguishes_argument_values() -> None:
    entry = lookup("compat.Trainer", "accelerator", value="ddp_cpu")
    assert entry is not None
    assert entry.strategies == "strategy='ddp_spawn', accelerator='cpu'"
    assert lookup("pytorch_lightning.Trainer", "accelerator") is None
    assert lookup("pytorch_lightning.Trainer", "accelerator", value="tpu") is None


def test_lookup_filters_by_kind() -> None:
    assert lookup("pytorch_lightning.Trainer", "gpus", kind=Kind.ARGUMENT) is not None
    assert lookup("pytorch_lightning.Trainer", "gpus", kind=Kind.ATTRIBUTE) is None


@pytest.mark.parametrize(
    ("path", "member"),
    [
        ("pytorch_lightning.plugins.DDPPlugin", "no_such_member"),
        ("pytorch_lightning.plugins.NoSuchPlugin", None),
        ("strategies.DDPStrategy", None),
        ("mypackage.DDPPlugin", None),
    ],
)
def test_lookup_misses(path: str, member: str | None) -> None:
    assert lookup(path, member) is None


def test_every_entry_is_found_by_lookup() -> None:
    for entry in RENAMES:
        assert lookup(entry.old, entry.member, kind=entry.kind, value=entry.value) is entry
        assert lookup(compat_path(entry.old), entry.member, value=entry.value) is entry


def test_renames_is_standard_library_only() -> None:
    code = (
        "import sys; import compat.renames; "
        "bad = sorted(m for m in ('torch', 'libcst', 'packaging') if m in sys.modules); "
        "print(bad); sys.exit(bool(bad))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=REPO_ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
