"""``compat.Trainer``'s old keyword arguments, translated in one pass from the rename table.

Each keyword ``name=value`` given to ``compat.Trainer`` is, in this order:

1. an old *value* (an ``ARGUMENT_VALUE`` entry for ``name`` and ``str(value)``:
   ``accelerator="ddp"``): the entry's target keywords, when the entry is automatic (no person
   needs to decide); otherwise refused with the entry's hint;
2. an old *argument* (an ``ARGUMENT`` entry for ``name``: ``gpus=2``): a handler below when the
   meaning is not keyword arguments (``plugins``, ``resume_from_checkpoint``), else the
   entry's target (a renamed keyword, or ``key=value, ...`` with the old value for ``...``);
   an entry with no target is refused with its hint;
3. a keyword ``strategies.Trainer`` takes: passed on;
4. anything else: refused.

What the old keywords become is merged with the new ones given: the same keyword with another
value is refused ("got both"). A resulting keyword ``strategies.Trainer`` does not take is
refused, unless its value is what ``strategies.Trainer`` does anyway (``_IMPLIED``). Every
problem is collected; ``compat.Trainer`` raises them together (``TrainerArgumentsError``).
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from compat import _warnings
from compat._warnings import deprecation_message
from compat.renames import OLD_VALUE, Kind, Rename, lookup

__all__ = ["TrainerArgumentsError", "Translation", "check_gpus_here", "parse_gpus", "translate"]

TRAINER = "pytorch_lightning.Trainer"


class TrainerArgumentsError(TypeError, ValueError):
    """Arguments ``compat.Trainer`` cannot run with, all listed in one message.

    A ``TypeError`` (unknown or clashing keywords) and a ``ValueError`` (values with no
    equivalent), so code catching either for a bad ``Trainer(...)`` keeps working.
    """


def parse_gpus(gpus: Any) -> Any:
    """Lightning 1.x's ``gpus``: ``"0,1"`` is indices, ``"2"`` a count, ``"-1"`` all."""
    if isinstance(gpus, str):
        text = gpus.strip()
        if text == "-1":
            return -1
        if "," in text:
            return [int(i) for i in text.split(",") if i.strip()]
        return int(text) if text else 0
    return gpus


# The old value put where the table's target has ``...``.
_CONVERT: dict[str, Callable[[Any], Any]] = {
    "gpus": parse_gpus,
    "progress_bar_refresh_rate": lambda rate: bool(rate),
    "weights_summary": lambda mode: mode is not None,
    "reload_dataloaders_every_epoch": lambda flag: int(bool(flag)),
}
# Old values that mean something other than the table's target (``None``: not special).
_SPECIAL: dict[str, Callable[[Any], dict[str, Any] | None]] = {
    "gpus": lambda gpus: {"accelerator": "cpu"} if parse_gpus(gpus) in (0, []) else None,  # 1.x: no GPU
    "tpu_cores": lambda cores: {} if not cores else None,
    "amp_backend": lambda backend: {} if backend == "native" else None,  # precision= chooses native AMP
}
# Old arguments whose ``None`` is a choice (elsewhere ``None`` was 1.x's default: not given).
_NONE_IS_A_CHOICE = {"weights_summary"}
# Lightning arguments strategies.Trainer may not take, and the value it behaves as.
_IMPLIED: dict[str, Any] = {"enable_checkpointing": False, "enable_model_summary": False}
_DEVICE_ALIASES = {"gpu": "cuda"}


@dataclass
class Translation:
    """What the arguments became.

    Attributes:
        kwargs: the arguments for ``strategies.Trainer``.
        messages: one deprecation message per old name used.
        problems: every argument that cannot run, each naming its replacement.
        ckpt_path: ``resume_from_checkpoint``: the default ``ckpt_path`` of ``fit``.
        weights_save_path: 1.x's root of the ``ModelCheckpoint`` folders that have no ``dirpath``.
        container: an old ``Accelerator(precision_plugin, training_type_plugin)`` given as
            ``accelerator=``.
        explicit: the new arguments given as they are (not translated).
    """

    kwargs: dict[str, Any] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    ckpt_path: Any = None
    container: Any = None
    explicit: frozenset[str] = frozenset()
    weights_save_path: Any = None
    _sources: dict[str, str] = field(default_factory=dict)

    def put(self, key: str, value: Any, source: str, explicit: frozenset[str]) -> None:
        """Set ``key`` from the old argument ``source`` unless it clashes with what is there."""
        if key in self.kwargs and not _same(key, self.kwargs[key], value):
            given = f"`{key}={self.kwargs[key]!r}`" if key in explicit else f"`{self._sources[key]}`"
            self.problems.append(
                f"`Trainer` got both `{source}` (old: `{key}={value!r}`) and {given}; pass only `{key}=`."
            )
            return
        self.kwargs.setdefault(key, value)
        self._sources.setdefault(key, source)


def _same(key: str, a: Any, b: Any) -> bool:
    if key == "accelerator" and isinstance(a, str) and isinstance(b, str):
        return _DEVICE_ALIASES.get(a.lower(), a.lower()) == _DEVICE_ALIASES.get(b.lower(), b.lower())
    return a is b or (type(a) is type(b) and a == b)


def target_kwargs(target: str, value: Any) -> dict[str, Any]:
    """``"accelerator='cuda', devices=..."`` with ``value`` for ``...`` -> a dict."""
    if target.isidentifier():
        return {target: value}
    call = ast.parse(f"f({target})", mode="eval").body
    assert isinstance(call, ast.Call)
    out = {}
    for kw in call.keywords:
        literal = ast.literal_eval(kw.value)
        out[str(kw.arg)] = value if literal is Ellipsis else literal
    return out


def _value_entry(name: str, value: Any) -> Rename | None:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    return lookup(TRAINER, name, kind=Kind.ARGUMENT_VALUE, value=str(value))


def _display(name: str, value: Any) -> str:
    shown = repr(value) if isinstance(value, (str, int, float, bool, type(None))) else OLD_VALUE
    return f"Trainer({name}={shown})"


def _refusal(name: str, value: Any, entry: Rename) -> str:
    hint = entry.hint or "it has no equivalent in strategies.Trainer"
    return f"`{_display(name, value)}` has no equivalent here: {hint.rstrip('.')}."


def _warn_text(name: str, value: Any, entry: Rename) -> str:
    if name == "checkpoint_callback" and _is_model_checkpoint(value):
        return deprecation_message(
            TRAINER,
            None,
            member=name,
            old_display="Trainer(checkpoint_callback=ModelCheckpoint(...))",
            replacement="Trainer(callbacks=[ModelCheckpoint(...)])",
            hint="compat.Trainer adds it to the callbacks, as Lightning 1.x did; checkpointing stays enabled",
        )
    if entry.kind is Kind.ARGUMENT_VALUE:
        return deprecation_message(TRAINER, f"Trainer({entry.strategies})", member=name, value=entry.value)
    new = f"Trainer({entry.strategies})" if entry.strategies else None
    return deprecation_message(TRAINER, new, member=name, old_display=f"Trainer({name}=...)")


def translate(given: dict[str, Any], accepted: set[str]) -> Translation:
    """Translate ``compat.Trainer(**given)`` for a ``strategies.Trainer`` taking ``accepted``."""
    out = Translation()
    olds: list[tuple[str, Any, Rename]] = []
    for name, value in given.items():
        entry = _value_entry(name, value) or lookup(TRAINER, name, kind=Kind.ARGUMENT)
        if name == "accelerator" and _is_container(value):
            out.container = value
        elif entry is not None:
            olds.append((name, value, entry))
        elif name in accepted:
            out.kwargs[name] = value
        else:
            _removed_argument(out, name, value)
    explicit = frozenset(out.kwargs)
    for name, value, entry in sorted(olds, key=lambda old: old[0] == "plugins"):  # plugins last: they win
        if value is None and name not in _NONE_IS_A_CHOICE and entry.kind is Kind.ARGUMENT:
            continue
        out.messages.append(_warn_text(name, value, entry))
        handler = _HANDLERS.get(name)
        if handler is not None:
            handler(out, value, explicit)
            continue
        special = _SPECIAL.get(name, lambda _: None)(value)
        if special is not None:
            for key, new in special.items():
                out.put(key, new, f"{name}={value!r}", explicit)
        elif entry.strategies is None or (entry.kind is Kind.ARGUMENT_VALUE and not entry.automatic):
            out.problems.append(_refusal(name, value, entry))
        else:
            converted = _CONVERT.get(name, lambda v: v)(value)
            for key, new in target_kwargs(entry.strategies, converted).items():
                out.put(key, new, f"{name}={value!r}", explicit)
    _spawn_cpu_processes(out, given)
    _check_accepted(out, accepted)
    out.explicit = explicit
    return out


def check_gpus_here(out: Translation, given: dict[str, Any]) -> None:
    """``gpus=N`` where no CUDA device is: a problem about ``gpus=``, which the user wrote.

    Left to ``strategies.Trainer`` it would be about ``accelerator='cuda'``, the translation. As in
    Lightning 1.x (``MisconfigurationException``), any request for GPUs fails when there are none.
    Checked by ``compat.Trainer`` on this machine; ``translate`` itself does not look at it.
    """
    try:
        requested = parse_gpus(given.get("gpus"))
    except ValueError:
        return
    if requested in (None, 0, []):
        return
    import torch

    if torch.cuda.is_available():
        return
    for key in [k for k, source in out._sources.items() if source.startswith("gpus=") and k not in out.explicit]:
        out.kwargs.pop(key, None)
        del out._sources[key]
    out.problems.append(
        f"`{_display('gpus', given['gpus'])}` asks for CUDA devices, and no CUDA device is available here "
        "(`torch.cuda.is_available()` is False): pass `gpus=0` (or leave `gpus` out) to train on the CPU, or "
        '`accelerator="cpu", devices=N` for N CPU processes.'
    )


def _spawn_cpu_processes(out: Translation, given: dict[str, Any]) -> None:
    """1.x ran ``num_processes=N`` (N > 1) with no backend chosen as ``ddp_spawn`` on the CPU.

    Its accelerator connector picked ``DDP_SPAWN`` for several CPU processes when neither
    ``distributed_backend`` nor ``accelerator`` named one; the codemods write the same.
    """
    count = given.get("num_processes")
    chosen = "strategy" in out.kwargs or out.container is not None  # a plugin or a container names the launch
    if isinstance(count, int) and count > 1 and not chosen:
        out.put("strategy", "ddp_spawn", f"num_processes={count!r}", frozenset())


def _check_accepted(out: Translation, accepted: set[str]) -> None:
    for key in [k for k in out.kwargs if k not in accepted]:
        value = out.kwargs.pop(key)
        if key in _IMPLIED and _IMPLIED[key] == value:
            continue
        out.problems.append(
            f"`{out._sources.get(key, key)}` means `{key}={value!r}`, which strategies.Trainer does not take "
            "(see docs/compat.md for what runs)."
        )


def accepted_arguments(cls: type) -> set[str]:
    """The keyword arguments ``cls.__init__`` takes."""
    params = inspect.signature(cls).parameters
    return {n for n, p in params.items() if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}


# -- handlers: old arguments whose meaning is not keyword arguments ------------------------------------


def _is_container(value: Any) -> bool:
    from strategies.accelerators import Accelerator

    return isinstance(value, Accelerator) and hasattr(value, "_training_type_plugin")


def _is_model_checkpoint(value: Any) -> bool:
    from strategies.model_checkpoint import ModelCheckpoint

    return isinstance(value, ModelCheckpoint)


def _checkpoint_callback(out: Translation, value: Any, explicit: frozenset[str]) -> None:
    """``checkpoint_callback=``: a bool is ``enable_checkpointing``; a ``ModelCheckpoint`` joins the callbacks.

    Lightning 1.2's callback connector appended a ``ModelCheckpoint`` given here to
    ``trainer.callbacks`` (deprecated since 1.1), so its ``monitor``/``save_top_k`` were honoured
    and no default checkpoint was added; compat does the same.
    """
    source = f"checkpoint_callback={value!r}" if isinstance(value, bool) else "checkpoint_callback=ModelCheckpoint(...)"
    if isinstance(value, bool):
        out.put("enable_checkpointing", value, source, explicit)
    elif _is_model_checkpoint(value):
        out.kwargs["callbacks"] = [*_as_list(out.kwargs.get("callbacks")), value]
        out.put("enable_checkpointing", True, source, explicit)
    else:
        out.problems.append(
            f"`{_display('checkpoint_callback', value)}` must be True, False "
            f"or a `ModelCheckpoint` (got a {type(value).__name__}): pass `enable_checkpointing=True/False`, or "
            "your callback in `callbacks=[...]`."
        )


def _refresh_rate(out: Translation, value: Any, explicit: frozenset[str]) -> None:
    """``progress_bar_refresh_rate=``: 0 hides the bar; a rate N shows 1.x's bar at that rate
    (``TQDMProgressBar(refresh_rate=N)`` added to the callbacks, as the codemod writes it); ``None``
    (1.5's default) is the default bar."""
    source = f"progress_bar_refresh_rate={value!r}"
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        out.problems.append(f"`{_display('progress_bar_refresh_rate', value)}` must be a rate: 0 (no bar) or N > 0.")
        return
    out.put("enable_progress_bar", value > 0, source, explicit)
    given = out.kwargs.get("callbacks")
    if value > 0 and not any(type(c).__name__ == "TQDMProgressBar" for c in _as_list(given)):
        from strategies import TQDMProgressBar

        out.kwargs["callbacks"] = [*_as_list(given), TQDMProgressBar(refresh_rate=value)]


def _as_list(given: Any) -> list[Any]:
    return [] if given is None else list(given) if isinstance(given, (list, tuple)) else [given]


def _resume(out: Translation, value: Any, explicit: frozenset[str]) -> None:
    out.ckpt_path = value


def _plugins(out: Translation, value: Any, explicit: frozenset[str]) -> None:
    """``plugins=[DDPPlugin(), env]``: the training-type plugin (object or name) is the strategy."""
    from strategies.strategy import Strategy

    rest = []
    for plugin in list(value or []):
        if isinstance(plugin, str):
            entry = lookup(TRAINER, "accelerator", kind=Kind.ARGUMENT_VALUE, value=plugin)
            if entry is None:  # a strategy name in plugins= means what it meant in accelerator=
                rest.append(plugin)
            elif entry.strategies is None or not entry.automatic:
                out.problems.append(_refusal("plugins", [plugin], entry))
            else:
                for key, new in target_kwargs(entry.strategies, None).items():
                    out.put(key, new, f"plugins=[{plugin!r}]", explicit)
        elif isinstance(plugin, Strategy):
            _plugin_strategy(out, plugin, explicit)
        else:
            rest.append(plugin)
    if rest:
        out.kwargs["plugins"] = rest


def _plugin_strategy(out: Translation, plugin: Any, explicit: frozenset[str]) -> None:
    import strategies

    current = out.kwargs.get("strategy")
    source = f"plugins=[{type(plugin).__name__}()]"
    if isinstance(current, str) and "strategy" not in explicit:
        try:  # the registry only builds; an instance tells the class the name stands for
            named = type(strategies.Trainer.registry.create(current))
        except (ValueError, ImportError, RuntimeError):  # strategies.Trainer reports a bad name itself
            named = type(plugin)
        if not isinstance(plugin, named) and out._sources["strategy"].startswith(_BACKEND_SOURCES):
            # 1.x's accelerator connector took a training-type plugin given in plugins= as the
            # strategy, whatever distributed backend accelerator= named (that name still chose
            # the device: ``ddp_cpu`` ran the user's DDPPlugin on CPU processes).
            same = out._sources.get("accelerator") == out._sources["strategy"]
            device = f", accelerator={out.kwargs['accelerator']!r}" if same and "accelerator" in out.kwargs else ""
            out.messages.append(
                deprecation_message(
                    TRAINER,
                    None,
                    member="plugins",
                    old_display=f"Trainer({out._sources['strategy']}, {source})",
                    replacement=f"Trainer(strategy={type(plugin).__name__}(...){device})",
                    hint=(
                        f"the plugin is the strategy, as in Lightning 1.x: `{out._sources['strategy']}` "
                        f"names {named.__name__}, which is not used"
                    ),
                )
            )
            out.kwargs["strategy"] = plugin
            out._sources["strategy"] = source
            return
        if not isinstance(plugin, named):
            out.problems.append(
                f"`{out._sources['strategy']}` and `{source}` disagree: pass only the plugin as `strategy=`."
            )
            return
        out.kwargs["strategy"] = plugin  # the instance names the same strategy, configured
        out._sources["strategy"] = source
        return
    out.put("strategy", plugin, source, explicit)


#: Where an old argument named the distributed backend, which a plugin instance overrides.
_BACKEND_SOURCES = ("accelerator=", "distributed_backend=")

_HANDLERS: dict[str, Callable[[Translation, Any, frozenset[str]], None]] = {
    "resume_from_checkpoint": _resume,
    "plugins": _plugins,
    "checkpoint_callback": _checkpoint_callback,
    "progress_bar_refresh_rate": _refresh_rate,
}


# 1.x Trainer arguments that are gone with no rename (the rest of the catalog's 1.x arguments are
# strategies.Trainer's or in the rename table): what a value other than the 1.x default needs.
_REMOVED: dict[str, str] = {
    "auto_select_gpus": "pick the devices yourself (`devices=[...]`; Lightning 2.x: `find_usable_cuda_devices(n)`)",
    "ipus": "IPUs are not supported",
    "log_gpu_memory": "add `callbacks=[DeviceStatsMonitor()]`",
    "track_grad_norm": "log `strategies.utilities.grad_norm(self, norm_type)` in `on_before_optimizer_step`",
    "auto_lr_find": "run a learning-rate search yourself before `fit` (Lightning 2.x: `Tuner(trainer).lr_find(model)`)",
    "auto_scale_batch_size": "set the batch size yourself (Lightning 2.x: `Tuner(trainer).scale_batch_size(model)`)",
    "prepare_data_per_node": "set `prepare_data_per_node` on the module or data module (an attribute in 2.x)",
    "multiple_trainloader_mode": "combine the loaders yourself (Lightning 2.x: `CombinedLoader(loaders, mode)`)",
    "stochastic_weight_avg": "add `callbacks=[StochasticWeightAveraging(swa_lrs=...)]`",
    "terminate_on_nan": "check the loss in `training_step` (`torch.isfinite`) and raise",
    "truncated_bptt_steps": "truncated back-propagation through time was removed: split the sequence yourself",
    "automatic_optimization": "set `self.automatic_optimization = False` in the module's `__init__`",
}
# ... and those whose value changes nothing a run produces: taken with a warning, whatever it is.
_NO_EFFECT: dict[str, str] = {
    "process_position": "the progress bar's line: the bar stays where it is",
    "move_metrics_to_cpu": "where logged tensors are kept: the values are the same",
    "enable_pl_optimizer": "1.1-1.2's optimizer wrapper is always on",
}


def _removed_argument(out: Translation, name: str, value: Any) -> None:
    """A 1.x Trainer argument strategies.Trainer does not have and the rename table does not
    cover: taken at any 1.x release's default (the catalog's), with a warning; refused otherwise,
    saying what to do."""
    from compat._argparse import is_1x_default

    display = _display(name, value)
    if name == "weights_save_path":
        if value is not None:
            out.messages.append(
                deprecation_message(
                    TRAINER,
                    "ModelCheckpoint(dirpath=...)",
                    member=name,
                    old_display=display,
                    hint="compat puts the checkpoints of every ModelCheckpoint without a dirpath under it, as 1.x did",
                )
            )
            out.weights_save_path = value
        return
    if name in _NO_EFFECT:
        out.messages.append(
            deprecation_message(TRAINER, None, member=name, old_display=display, detail=f"ignored: {_NO_EFFECT[name]}")
        )
        return
    if is_1x_default(name, value):
        out.messages.append(
            deprecation_message(
                TRAINER,
                None,
                member=name,
                old_display=display,
                detail="1.x's default, which is what strategies.Trainer does",
                hint="drop it",
            )
        )
        return
    if name in _REMOVED:
        out.problems.append(f"`{display}` has no equivalent here: {_REMOVED[name]}.")
        return
    out.problems.append(
        f"`{name}=` is not an argument of strategies.Trainer (Lightning 1.x removed it, or strategies "
        "does not have it): drop it or see docs/compat.md."
    )


def raise_problems(problems: list[str]) -> None:
    """Raise every problem in one ``TrainerArgumentsError``."""
    if not problems:
        return
    lines = "\n".join(f"  - {p}" for p in problems)
    raise TrainerArgumentsError(
        f"`compat.Trainer` cannot run with these arguments ({len(problems)} "
        f"problem{'s' if len(problems) > 1 else ''}):\n{lines}\n"
        f"Run `{_warnings.MIGRATE_COMMAND}` to rewrite what can be rewritten."
    )
