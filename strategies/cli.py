"""``LightningCLI``: a command line and config files for a module, a datamodule and the Trainer.

As Lightning 2.6's ``lightning.pytorch.cli``, built on jsonargparse (the ``cli`` extra:
``pip install 'strategy-compat[cli]'``). Every argument comes from a signature: the Trainer's
``__init__`` (``--trainer.max_epochs``), the module's and the datamodule's (``--model.lr``,
``--data.batch_size``), one optimizer and one learning-rate scheduler (``--optimizer Adam
--optimizer.lr 0.01``), and the Trainer method's own (``--ckpt_path``)::

    cli = LightningCLI(MyModule, MyDataModule)   # python train.py fit --trainer.max_epochs 3

    python train.py fit --config config.yaml --print_config   # the whole config, as YAML
    python train.py test --ckpt_path best.ckpt

With ``run=True`` (the default) the first argument is a subcommand, ``fit``, ``validate``,
``test`` or ``predict``; with ``run=False`` there is none, and the program calls
``cli.trainer.fit(cli.model)`` itself. ``SaveConfigCallback`` writes the parsed config to
``config.yaml`` in the Trainer's ``log_dir`` when the run starts (rank 0 only), and refuses to
overwrite one. Modules built by the CLI save the parsed config as their hyperparameters, so
``load_from_checkpoint`` rebuilds nested classes (``instantiate_module``).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import sys
import types
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch.optim import Optimizer
from torch.optim.lr_scheduler import LRScheduler

from strategies import module as _module
from strategies._checkpoint import read_file
from strategies.callbacks import Callback
from strategies.module import DataModule, TrainModule
from strategies.trainer import Trainer
from strategies.utilities.model_helpers import is_overridden

try:
    import jsonargparse
    from jsonargparse import ActionConfigFile, ArgumentParser, Namespace
except ModuleNotFoundError as _err:  # pragma: no cover - the extra's own test checks the message
    if _err.name != "jsonargparse":
        raise
    raise ModuleNotFoundError(
        "strategies.cli (LightningCLI) builds its command line with jsonargparse, which is not "
        "installed here: pip install 'strategy-compat[cli]' (or pip install 'jsonargparse[signatures]').",
        name="jsonargparse",
    ) from None

__all__ = [
    "LRSchedulerTypeTuple",
    "LightningArgumentParser",
    "LightningCLI",
    "ReduceLROnPlateau",
    "SaveConfigCallback",
    "instantiate_class",
    "instantiate_module",
]

#: Where ``load_from_checkpoint`` finds how to rebuild a module the CLI built.
INSTANTIATOR = "strategies.cli.instantiate_module"
_SUBCOMMANDS: dict[str, set[str]] = {
    "fit": {"model", "train_dataloaders", "val_dataloaders", "datamodule"},
    "validate": {"model", "dataloaders", "datamodule"},
    "test": {"model", "dataloaders", "datamodule"},
    "predict": {"model", "dataloaders", "datamodule"},
}
_LIGHTNING_CLASSES = (Trainer, TrainModule, DataModule, Callback)


class ReduceLROnPlateau(torch.optim.lr_scheduler.ReduceLROnPlateau):
    """torch's ``ReduceLROnPlateau`` that also names the metric it watches (``--lr_scheduler.monitor``)."""

    def __init__(self, optimizer: Optimizer, monitor: str, *args: Any, **kwargs: Any) -> None:
        super().__init__(optimizer, *args, **kwargs)
        self.monitor = monitor


LRSchedulerTypeTuple = (LRScheduler, ReduceLROnPlateau)
LRSchedulerTypeUnion = LRScheduler | ReduceLROnPlateau
LRSchedulerType = type[LRScheduler] | type[ReduceLROnPlateau]
ArgsType = list[str] | dict[str, Any] | Namespace | None


class LightningArgumentParser(ArgumentParser):
    """jsonargparse's ``ArgumentParser`` that knows the Trainer, modules, callbacks and optimizers.

    Environment variables are read only with ``default_env=True``: ``PL_TRAINER__MAX_EPOCHS``,
    or a whole config in ``PL_CONFIG`` (``env_prefix`` changes the ``PL``).
    """

    def __init__(
        self,
        *args: Any,
        description: str = "Lightning Trainer command line tool",
        env_prefix: str = "PL",
        default_env: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, description=description, env_prefix=env_prefix, default_env=default_env, **kwargs)
        #: The keys whose values are callbacks to add to the Trainer's.
        self.callback_keys: list[str] = []
        self._optimizers: dict[str, tuple[type | tuple[type, ...], str]] = {}
        self._lr_schedulers: dict[str, tuple[type | tuple[type, ...], str]] = {}

    def add_lightning_class_args(
        self,
        lightning_class: Callable[..., Any] | type,
        nested_key: str,
        subclass_mode: bool = False,
        required: bool = True,
    ) -> list[str]:
        """The arguments of a Trainer, module, datamodule or callback class (or a function returning one).

        ``subclass_mode``: any subclass, chosen with ``--key=ClassName`` or ``class_path``.
        Returns the names of the arguments added.
        """
        if callable(lightning_class) and not isinstance(lightning_class, type):
            lightning_class = jsonargparse.class_from_function(lightning_class)
        if not (isinstance(lightning_class, type) and issubclass(lightning_class, _LIGHTNING_CLASSES)):
            raise TypeError(
                f"Cannot add arguments from {lightning_class!r}: give a callable, or a subclass of Trainer, "
                "TrainModule (LightningModule), DataModule (LightningDataModule) or Callback."
            )
        if issubclass(lightning_class, Callback):
            self.callback_keys.append(nested_key)
        if subclass_mode:
            added = self.add_subclass_arguments(lightning_class, nested_key, fail_untyped=False, required=required)
        else:
            added = self.add_class_arguments(
                lightning_class,
                nested_key,
                fail_untyped=False,
                instantiate=not issubclass(lightning_class, Trainer),
                sub_configs=True,
            )
        return list(added or [])

    def add_optimizer_args(
        self,
        optimizer_class: type[Optimizer] | tuple[type[Optimizer], ...] = (Optimizer,),
        nested_key: str = "optimizer",
        link_to: str = "AUTOMATIC",
    ) -> None:
        """An optimizer's arguments under ``nested_key`` (a tuple: any subclass of those).

        ``link_to="AUTOMATIC"``: the CLI gives the module a ``configure_optimizers`` that builds it;
        else the key of an argument (``"model.optimizer"``) that receives its config.
        """
        self._add_unbuilt(optimizer_class, Optimizer, nested_key, "params")
        self._optimizers[nested_key] = (optimizer_class, link_to)

    def add_lr_scheduler_args(
        self,
        lr_scheduler_class: LRSchedulerType | tuple[LRSchedulerType, ...] = LRSchedulerTypeTuple,
        nested_key: str = "lr_scheduler",
        link_to: str = "AUTOMATIC",
    ) -> None:
        """A learning-rate scheduler's arguments under ``nested_key``, as ``add_optimizer_args``."""
        self._add_unbuilt(lr_scheduler_class, LRSchedulerTypeTuple, nested_key, "optimizer")
        self._lr_schedulers[nested_key] = (lr_scheduler_class, link_to)

    def _add_unbuilt(self, classes: Any, base: type | tuple[type, ...], key: str, skip: str) -> None:
        """Arguments of a class that needs an object first (parameters, an optimizer): kept as a config."""
        options = classes if isinstance(classes, tuple) else (classes,)
        wrong = [c for c in options if not (isinstance(c, type) and issubclass(c, base))]
        if wrong:
            raise TypeError(f"`{key}`: {wrong} are not subclasses of {base}.")
        kwargs: dict[str, Any] = {"instantiate": False, "fail_untyped": False, "skip": {skip}}
        if isinstance(classes, tuple):
            self.add_subclass_arguments(classes, key, **kwargs)
        else:
            self.add_class_arguments(classes, key, sub_configs=True, **kwargs)


class SaveConfigCallback(Callback):
    """Writes the CLI's parsed config to ``log_dir/config.yaml`` when the first stage is set up.

    Rank 0 writes; every rank raises ``RuntimeError`` if the file is already there, unless
    ``overwrite=True``. ``save_config(trainer, module, stage)`` runs on rank 0 after it, to store
    the config somewhere else too (a logger); with ``save_to_log_dir=False`` only it runs.
    """

    def __init__(
        self,
        parser: LightningArgumentParser,
        config: Namespace,
        config_filename: str = "config.yaml",
        overwrite: bool = False,
        multifile: bool = False,
        save_to_log_dir: bool = True,
    ) -> None:
        self.parser = parser
        self.config = config
        self.config_filename = config_filename
        self.overwrite = overwrite
        self.multifile = multifile
        self.save_to_log_dir = save_to_log_dir
        self.already_saved = False
        if not save_to_log_dir and not is_overridden("save_config", self, SaveConfigCallback):
            raise ValueError(
                "`save_to_log_dir=False` only makes sense in a subclass of SaveConfigCallback that "
                "implements `save_config`: nothing would be saved."
            )

    def setup(self, trainer: Trainer, module: TrainModule, stage: str) -> None:
        """Write the config once (the first of ``fit``/``validate``/... to run)."""
        if self.already_saved:
            return
        if self.save_to_log_dir:
            log_dir = trainer.strategy.broadcast(trainer.log_dir)
            path = os.path.join(log_dir, self.config_filename)
            exists = trainer.strategy.broadcast(os.path.isfile(path) if trainer.is_global_zero else False)
            if exists and not self.overwrite:
                raise RuntimeError(
                    f"{type(self).__name__} expected {path} not to exist: it stops here so as not to overwrite "
                    "the config of an earlier run. Delete that file, pass "
                    "`LightningCLI(save_config_callback=None)` to save no config, or "
                    '`LightningCLI(save_config_kwargs={"overwrite": True})` to overwrite it.'
                )
            if trainer.is_global_zero:
                os.makedirs(log_dir, exist_ok=True)
                self.parser.save(
                    self.config, path, skip_unset=False, overwrite=self.overwrite, multifile=self.multifile
                )
        if trainer.is_global_zero:
            self.save_config(trainer, module, stage)
            self.already_saved = True
        self.already_saved = trainer.strategy.broadcast(self.already_saved)

    def save_config(self, trainer: Trainer, module: TrainModule, stage: str) -> None:
        """Override to store the config elsewhere too; runs on rank 0 only (no collectives here).

        For example ``trainer.logger.log_hyperparams({"config": self.parser.dump(self.config)})``.
        """


class LightningCLI:
    """A command line (and config files) that builds the module, the datamodule and the Trainer, then runs.

    Arguments as Lightning 2.6's:

    - ``model_class``/``datamodule_class``: a class or a function returning one; ``None``:
      chosen on the command line (``--model=MyModel``) among the subclasses
      (``subclass_mode_model``/``subclass_mode_data`` allow subclasses of a given class too).
    - ``save_config_callback`` (``None``: no config file), ``save_config_kwargs``.
    - ``trainer_class``, ``trainer_defaults`` (new defaults; its ``callbacks`` are always added).
    - ``seed_everything_default``: an int, ``True`` (a random seed, written to the config) or
      ``False`` (no seeding).
    - ``parser_kwargs``: for the parsers (keys named after a subcommand: for that one only).
    - ``args``: what to parse instead of ``sys.argv[1:]`` (a list, a dict or a Namespace).
    - ``run``: parse a subcommand and run it; ``False``: build the objects only.
    - ``auto_configure_optimizers``: add ``--optimizer``/``--lr_scheduler``.
    - ``load_from_checkpoint_support``: modules keep the parsed config as hyperparameters.

    Override ``add_arguments_to_parser(parser)`` to add arguments or links, and the
    ``before_*``/``after_*`` methods (``before_fit``, ``after_instantiate_classes``, ...) to
    run code around the steps. The objects: ``cli.model``, ``cli.datamodule``, ``cli.trainer``,
    ``cli.config`` (parsed), ``cli.config_init`` (built), ``cli.subcommand``.
    """

    def __init__(
        self,
        model_class: type[TrainModule] | Callable[..., TrainModule] | None = None,
        datamodule_class: type[DataModule] | Callable[..., DataModule] | None = None,
        save_config_callback: type[SaveConfigCallback] | None = SaveConfigCallback,
        save_config_kwargs: dict[str, Any] | None = None,
        trainer_class: type[Trainer] | Callable[..., Trainer] = Trainer,
        trainer_defaults: dict[str, Any] | None = None,
        seed_everything_default: bool | int = True,
        parser_kwargs: dict[str, Any] | dict[str, dict[str, Any]] | None = None,
        parser_class: type[LightningArgumentParser] = LightningArgumentParser,
        subclass_mode_model: bool = False,
        subclass_mode_data: bool = False,
        args: ArgsType = None,
        run: bool = True,
        auto_configure_optimizers: bool = True,
        load_from_checkpoint_support: bool = True,
    ) -> None:
        self.save_config_callback = save_config_callback
        self.save_config_kwargs = save_config_kwargs or {}
        self.trainer_class = trainer_class
        self.trainer_defaults = trainer_defaults or {}
        self.seed_everything_default = seed_everything_default
        self.parser_kwargs = parser_kwargs or {}
        self.parser_class = parser_class
        self.auto_configure_optimizers = auto_configure_optimizers
        self.model_class = model_class
        self._model_class = model_class or TrainModule
        self.subclass_mode_model = model_class is None or subclass_mode_model
        self.datamodule_class = datamodule_class
        self._datamodule_class = datamodule_class or DataModule
        self.subclass_mode_data = datamodule_class is None or subclass_mode_data

        per_command = {k: v for k, v in self.parser_kwargs.items() if k in self.subcommands()}
        main = {k: v for k, v in self.parser_kwargs.items() if k not in per_command}
        self.setup_parser(run, main, per_command)
        self.parse_arguments(self.parser, args)
        self._ckpt_hyperparameters()
        self.subcommand: str | None = self.config["subcommand"] if run else None
        self._set_seed()
        #: What builds the module and datamodule (``save_hyperparameters`` keeps the parsed config).
        self.instantiators: list[tuple[Any, type, bool]] = []
        if load_from_checkpoint_support:
            self.instantiators = [
                (_Instantiator(self, "model"), _built_type(self._model_class), self.subclass_mode_model),
                (_Instantiator(self, "data"), _built_type(self._datamodule_class), self.subclass_mode_data),
            ]
        self.before_instantiate_classes()
        self.instantiate_classes()
        self.after_instantiate_classes()
        if self.subcommand is not None:
            self._run_subcommand(self.subcommand)

    # -- the parsers ----------------------------------------------------------------------------

    @staticmethod
    def subcommands() -> dict[str, set[str]]:
        """Each subcommand, and the arguments of its Trainer method that the CLI fills itself."""
        return {name: set(skipped) for name, skipped in _SUBCOMMANDS.items()}

    def init_parser(self, **kwargs: Any) -> LightningArgumentParser:
        """A parser with ``-c/--config``."""
        from strategies import __version__

        kwargs.setdefault("dump_header", [f"strategies=={__version__}"])
        parser = self.parser_class(**kwargs)
        parser.add_argument("-c", "--config", action=ActionConfigFile, help="A configuration file (YAML or JSON).")
        return parser

    def setup_parser(
        self, add_subcommands: bool, main_kwargs: dict[str, Any], subparser_kwargs: dict[str, Any]
    ) -> None:
        """``self.parser``: with a parser per subcommand, or with the arguments itself (``run=False``)."""
        self.parser = self.init_parser(**main_kwargs)
        if not add_subcommands:
            self._add_arguments(self.parser)
            return
        self._subcommand_method_arguments: dict[str, list[str]] = {}
        self._subcommand_parsers: dict[str, LightningArgumentParser] = {}
        trainer_class = self.trainer_class
        if not isinstance(trainer_class, type):
            trainer_class = jsonargparse.class_from_function(trainer_class)
        commands = self.parser.add_subcommands()
        for name, skipped in self.subcommands().items():
            description = _first_line(getattr(trainer_class, name))
            kwargs = dict(subparser_kwargs.get(name, {}))
            kwargs.setdefault("description", description)
            parser = self.init_parser(**kwargs)
            self._add_arguments(parser)
            self._subcommand_method_arguments[name] = parser.add_method_arguments(
                trainer_class, name, skip=set(skipped)
            )
            self._subcommand_parsers[name] = parser
            commands.add_subcommand(name, parser, help=description)

    def add_default_arguments_to_parser(self, parser: LightningArgumentParser) -> None:
        """``--seed_everything``."""
        parser.add_argument(
            "--seed_everything",
            type=bool | int,
            default=self.seed_everything_default,
            help="An int: seed_everything(value) before the classes are built; true: a random seed; false: none.",
        )

    def add_core_arguments_to_parser(self, parser: LightningArgumentParser) -> None:
        """``--trainer.*``, ``--model.*`` and ``--data.*`` (not required without ``datamodule_class``)."""
        parser.add_lightning_class_args(self.trainer_class, "trainer")
        parser.set_defaults({f"trainer.{k}": v for k, v in self.trainer_defaults.items() if k != "callbacks"})
        parser.add_lightning_class_args(self._model_class, "model", subclass_mode=self.subclass_mode_model)
        parser.add_lightning_class_args(
            self._datamodule_class,
            "data",
            subclass_mode=self.subclass_mode_data,
            required=self.datamodule_class is not None,
        )

    def add_arguments_to_parser(self, parser: LightningArgumentParser) -> None:
        """Override to add arguments (``parser.add_argument``, ``add_lightning_class_args``, links)."""

    def _add_arguments(self, parser: LightningArgumentParser) -> None:
        self.add_default_arguments_to_parser(parser)
        self.add_core_arguments_to_parser(parser)
        self.add_arguments_to_parser(parser)
        if self.auto_configure_optimizers:
            if not parser._optimizers:
                parser.add_optimizer_args((Optimizer,))
            if not parser._lr_schedulers:
                parser.add_lr_scheduler_args(LRSchedulerTypeTuple)
        self.link_optimizers_and_lr_schedulers(parser)

    @staticmethod
    def link_optimizers_and_lr_schedulers(parser: LightningArgumentParser) -> None:
        """Link each optimizer/scheduler group that names a ``link_to`` target to it."""
        for key, (classes, link_to) in {**parser._optimizers, **parser._lr_schedulers}.items():
            if link_to == "AUTOMATIC":
                continue
            if isinstance(classes, tuple):
                parser.link_arguments(key, link_to)
            else:
                parser.link_arguments(key, link_to, compute_fn=functools.partial(_with_class_path, classes))

    def parse_arguments(self, parser: LightningArgumentParser, args: ArgsType) -> None:
        """``self.config``: ``args`` (a list, or a dict/Namespace of values) or ``sys.argv[1:]`` parsed."""
        if args is not None and len(sys.argv) > 1:
            warnings.warn(
                "LightningCLI's `args` stand for the command line; it was given both "
                f"(sys.argv[1:]={sys.argv[1:]}, args={args}): only `args` are parsed.",
                UserWarning,
                stacklevel=3,
            )
        if isinstance(args, (dict, Namespace)):
            self.config = parser.parse_object(args)
        else:
            self.config = parser.parse_args(args)

    def _ckpt_hyperparameters(self) -> None:
        """A subcommand's ``--ckpt_path`` gives the model its saved hyperparameters (the command line wins)."""
        command = self.config.get("subcommand")
        if not command:
            return
        path = self.config[command].get("ckpt_path")
        if not path or not os.path.isfile(path):
            return
        hparams = dict(read_file(path, map_location="cpu").get("hyper_parameters") or {})
        hparams.pop("_instantiator", None)
        if not hparams:
            return
        if "_class_path" in hparams:
            hparams = {"class_path": hparams.pop("_class_path"), "dict_kwargs": hparams}
        try:
            self.config = self.parser.parse_object({command: {"model": hparams}}, self.config)
        except SystemExit:
            sys.stderr.write(f"The hyperparameters saved in {path} do not parse as the model's arguments.\n")
            raise

    # -- building -------------------------------------------------------------------------------

    def before_instantiate_classes(self) -> None:
        """Override to run code before the classes are built."""

    def instantiate_classes(self) -> None:
        """Build the datamodule, the module (with the CLI's optimizer) and the Trainer."""
        self.config_init = self.parser.instantiate(self.config, instantiators=self.instantiators)
        self.datamodule = self._get(self.config_init, "data")
        self.model = self._get(self.config_init, "model")
        self._add_configure_optimizers_method_to_model(self.subcommand)
        self.trainer = self.instantiate_trainer()

    def after_instantiate_classes(self) -> None:
        """Override to run code after the classes are built."""

    def instantiate_trainer(self, **kwargs: Any) -> Trainer:
        """The Trainer of the parsed ``trainer`` arguments (``kwargs`` win), with the CLI's callbacks."""
        extra = [self._get(self.config_init, key) for key in self._parser(self.subcommand).callback_keys]
        config = {**self._get(self.config_init, "trainer", default={}), **kwargs}
        return self._instantiate_trainer(config, extra)

    def _instantiate_trainer(self, config: dict[str, Any], callbacks: list[Callback]) -> Trainer:
        if "callbacks" not in config:
            warnings.warn(
                f"`{getattr(self.trainer_class, '__qualname__', self.trainer_class)}` takes no `callbacks` "
                "argument: the CLI's callbacks are not added.",
                UserWarning,
                stacklevel=2,
            )
            return self.trainer_class(**config)
        given = config["callbacks"]
        listed = [] if given is None else list(given) if isinstance(given, list) else [given]
        listed.extend(callbacks)
        if "callbacks" in self.trainer_defaults:
            default = self.trainer_defaults["callbacks"]
            listed.extend(default if isinstance(default, list) else [default])
        if self.save_config_callback is not None and not config.get("fast_dev_run", False):
            listed.append(
                self.save_config_callback(
                    self._parser(self.subcommand),
                    self.config.get(str(self.subcommand), self.config),
                    **self.save_config_kwargs,
                )
            )
        config["callbacks"] = listed
        return self.trainer_class(**config)

    def _parser(self, subcommand: str | None) -> LightningArgumentParser:
        return self.parser if subcommand is None else self._subcommand_parsers[subcommand]

    def _get(self, config: Namespace, key: str, default: Any = None) -> Any:
        return config.get(str(self.subcommand), config).get(key, default)

    @staticmethod
    def configure_optimizers(module: TrainModule, optimizer: Optimizer, lr_scheduler: Any = None) -> Any:
        """What the module's ``configure_optimizers`` returns for the CLI's optimizer (and scheduler).

        Override to return something else (several schedulers, an interval); ``ReduceLROnPlateau``
        gets its ``monitor``.
        """
        if lr_scheduler is None:
            return optimizer
        if isinstance(lr_scheduler, ReduceLROnPlateau):
            return {
                "optimizer": optimizer,
                "lr_scheduler": {"scheduler": lr_scheduler, "monitor": lr_scheduler.monitor},
            }
        return [optimizer], [lr_scheduler]

    def _add_configure_optimizers_method_to_model(self, subcommand: str | None) -> None:
        """Give the module a ``configure_optimizers`` for the optimizer given on the command line."""
        if not self.auto_configure_optimizers:
            return
        parser = self._parser(subcommand)
        optimizers = _automatic(parser._optimizers, Optimizer)
        schedulers = _automatic(parser._lr_schedulers, LRSchedulerTypeTuple)
        if not optimizers:
            return
        if len(optimizers) > 1 or len(schedulers) > 1:
            raise ValueError(
                f"{type(self).__name__} builds `configure_optimizers` for at most one optimizer and one "
                f"scheduler marked 'AUTOMATIC'; found {optimizers + schedulers}. Link the groups to the "
                "module's arguments (link_to=...) and write `configure_optimizers` yourself."
            )
        optimizer_init = self._init_of(parser._optimizers, optimizers[0])
        if not optimizer_init:  # the group is there, but no optimizer was asked for
            return
        scheduler_init = self._init_of(parser._lr_schedulers, schedulers[0]) if schedulers else None
        if is_overridden("configure_optimizers", self.model):
            warnings.warn(
                f"`{type(self.model).__name__}.configure_optimizers` will be overridden by "
                f"`{type(self).__name__}.configure_optimizers`.",
                UserWarning,
                stacklevel=2,
            )
        optimizer = instantiate_class(self.model.parameters(), optimizer_init)
        scheduler = instantiate_class(optimizer, scheduler_init) if scheduler_init else None
        built = functools.partial(self.configure_optimizers, optimizer=optimizer, lr_scheduler=scheduler)
        functools.update_wrapper(built, self.configure_optimizers)  # is_overridden follows __wrapped__
        self.model.configure_optimizers = types.MethodType(built, self.model)

    def _init_of(self, register: dict[str, tuple[Any, str]], key: str) -> dict[str, Any] | None:
        classes = register[key][0]
        init = self._get(self.config_init, key)
        return init if isinstance(classes, tuple) else _with_class_path(classes, init)

    # -- running --------------------------------------------------------------------------------

    def _run_subcommand(self, subcommand: str) -> None:
        """``before_<cmd>()``, the Trainer's method (or the CLI's own of that name), ``after_<cmd>()``."""
        before = getattr(self, f"before_{subcommand}", None)
        if callable(before):
            before()
        method = getattr(self, subcommand, getattr(self.trainer, subcommand))
        kwargs = {
            k: v for k, v in self.config_init[subcommand].items() if k in self._subcommand_method_arguments[subcommand]
        }
        kwargs["model"] = self.model
        if self.datamodule is not None:
            kwargs["datamodule"] = self.datamodule
        method(**kwargs)
        after = getattr(self, f"after_{subcommand}", None)
        if callable(after):
            after()

    def _set_seed(self) -> None:
        from strategies._seed import seed_everything

        seed = self._get(self.config, "seed_everything")
        if seed is False:
            return
        seed = seed_everything(workers=True) if seed is True else seed_everything(seed, workers=True)
        (self.config[self.subcommand] if self.subcommand else self.config)["seed_everything"] = seed

    def _dumped_config(self) -> dict[str, Any]:
        """The parsed config as plain data (of the subcommand), for the modules' hyperparameters."""
        if not hasattr(self, "config_dump"):
            import yaml

            dumped = yaml.safe_load(self.parser.dump(self.config, skip_link_targets=False, skip_unset=False))
            self.config_dump = dumped[self.subcommand] if self.subcommand else dumped
        return self.config_dump  # type: ignore[no-any-return]


class _Instantiator:
    """Builds the CLI's module/datamodule with the parsed config as what ``save_hyperparameters`` keeps."""

    def __init__(self, cli: LightningCLI, key: str) -> None:
        self.cli = cli
        self.key = key

    def __call__(self, class_type: type, *args: Any, applied_instantiation_links: dict[str, Any], **kwargs: Any) -> Any:
        hparams = dict(self.cli._dumped_config().get(self.key) or {})
        if "class_path" in hparams:  # stored flat, whatever the subclass mode, as Lightning does
            hparams = {
                "_class_path": hparams["class_path"],
                **(hparams.get("init_args") or {}),
                **(hparams.get("dict_kwargs") or {}),
            }
        prefix = f"{self.key}."
        for key, value in applied_instantiation_links.items():
            if key.startswith(prefix):
                key = key[len(prefix) :]
                _set_nested(hparams, key[len("init_args.") :] if key.startswith("init_args.") else key, value)
        with given_hyperparameters(hparams, INSTANTIATOR):
            return class_type(*args, **kwargs)


@contextlib.contextmanager
def given_hyperparameters(hparams: dict[str, Any], instantiator: str) -> Iterator[None]:
    """Within the block, ``save_hyperparameters()`` keeps ``hparams`` (and how to rebuild from them)."""
    token = _module.GIVEN_HPARAMS.set({**hparams, "_instantiator": instantiator})
    try:
        yield
    finally:
        _module.GIVEN_HPARAMS.reset(token)


def instantiate_class(args: Any, init: dict[str, Any]) -> Any:
    """``init["class_path"]`` built with ``args`` (one value or a tuple) and ``init["init_args"]``."""
    module_name, _, name = init["class_path"].rpartition(".")
    cls = getattr(__import__(module_name, fromlist=[name]), name)
    return cls(*(args if isinstance(args, tuple) else (args,)), **(init.get("init_args") or {}))


def instantiate_module(class_type: type, config: dict[str, Any]) -> Any:
    """A module or datamodule rebuilt from the hyperparameters the CLI saved (``load_from_checkpoint``)."""
    parser = ArgumentParser(exit_on_error=False)
    if "_class_path" in config:
        parser.add_subclass_arguments(class_type, "module", fail_untyped=False)
        config = {
            "class_path": config["_class_path"],
            "dict_kwargs": {k: v for k, v in config.items() if k != "_class_path"},
        }
    else:
        parser.add_class_arguments(class_type, "module", fail_untyped=False)
    return parser.instantiate(parser.parse_object({"module": config})).module


def _with_class_path(cls: type, init_args: Any = None) -> dict[str, Any]:
    if isinstance(init_args, Namespace):
        init_args = init_args.as_dict()
    return {"class_path": f"{cls.__module__}.{cls.__name__}", "init_args": init_args or {}}


def _automatic(register: dict[str, tuple[Any, str]], base: type | tuple[type, ...]) -> list[str]:
    """The keys of the groups marked AUTOMATIC whose classes are subclasses of ``base``."""
    found = []
    for key, (classes, link_to) in register.items():
        options = classes if isinstance(classes, tuple) else (classes,)
        if link_to == "AUTOMATIC" and any(issubclass(c, base) for c in options):
            found.append(key)
    return found


def _built_type(value: Any) -> type:
    """The class a class or a builder function (by its return annotation) makes."""
    if callable(value) and not isinstance(value, type):
        return inspect.signature(value).return_annotation  # type: ignore[no-any-return]
    return value  # type: ignore[no-any-return]


def _set_nested(data: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, last = dotted.split(".")
    for key in parents:
        data = data.setdefault(key, {})
    data[last] = value


def _first_line(obj: Any) -> str | None:
    """A method's docstring's first paragraph, on one line (the subcommand's help)."""
    doc = inspect.getdoc(obj)
    return " ".join(doc.split("\n\n")[0].split()) if doc else None
