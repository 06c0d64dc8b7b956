"""``WandbLogger``: metrics, hyperparameters, media and checkpoints to Weights & Biases.

Lightning 2.6's ``lightning.pytorch.loggers.WandbLogger``, on ``strategies``: the same arguments,
the same ``wandb.init`` call and the same values in the run (every row carries
``trainer/global_step``, the x-axis of every chart). Needs ``wandb``: ``pip install
strategy-compat[wandb]``. ``offline=True`` (or ``WANDB_MODE=offline``) writes the run under
``<save_dir>/wandb/`` for a later ``wandb sync``.
"""

from __future__ import annotations

import os
from argparse import Namespace
from collections.abc import Mapping
from typing import Any, Literal

import torch
from typing_extensions import override

from strategies._logger_tools import (
    add_prefix,
    checkpoint_metadata,
    checkpoints_to_upload,
    json_values,
    params_dict,
    rank_zero_experiment,
    sanitize_callables,
    upload_policy,
)
from strategies.loggers import Logger
from strategies.utilities.rank_zero import rank_zero_only, rank_zero_warn

_STEP = "trainer/global_step"


class WandbLogger(Logger):
    """Logs to a Weights & Biases run, created on first use on global rank 0 only.

    On other ranks ``experiment`` is a stand-in whose every call does nothing, so
    ``self.logger.experiment.log({...})`` runs unchanged under DDP. ``name`` is the project and
    ``version`` the run's id; ``ModelCheckpoint`` writes to ``<save_dir>/<project>/<id>/checkpoints``
    as in Lightning.

    Args:
        name: the run's display name.
        save_dir: the folder wandb writes its files under (``<save_dir>/wandb/``).
        version: the run's id, to continue a run (same as ``id``).
        offline: log without a network, for a later ``wandb sync``; refused with ``log_model``.
        dir: the same as ``save_dir`` (``save_dir`` wins).
        id: the run's id (same as ``version``).
        anonymous: let the run be logged without an account.
        project: the project, defaulting to ``$WANDB_PROJECT``, else ``"lightning_logs"``.
        log_model: ``True`` uploads the checkpoints a ``ModelCheckpoint`` kept when the run ends
            (at each save when ``save_top_k=-1``), ``"all"`` at each save, ``False`` never.
        experiment: a run made already with ``wandb.init``, to log to instead of a new one.
        prefix: put before every metric name, joined with ``-``.
        checkpoint_name: the artifact name for checkpoints (default ``model-<run id>``).
        add_file_policy: ``"mutable"`` or ``"immutable"``, passed to ``Artifact.add_file``.
        **kwargs: passed on to ``wandb.init`` (``entity``, ``group``, ``tags``, ``mode``, ...).
    """

    LOGGER_JOIN_CHAR = "-"

    def __init__(
        self,
        name: str | None = None,
        save_dir: str | os.PathLike[str] = ".",
        version: str | None = None,
        offline: bool = False,
        dir: str | os.PathLike[str] | None = None,
        id: str | None = None,
        anonymous: bool | None = None,
        project: str | None = None,
        log_model: Literal["all"] | bool = False,
        experiment: Any = None,
        prefix: str = "",
        checkpoint_name: str | None = None,
        add_file_policy: Literal["mutable", "immutable"] = "mutable",
        **kwargs: Any,
    ) -> None:
        _require_wandb()
        if offline and log_model:
            raise ValueError(
                f"`WandbLogger(offline=True, log_model={log_model!r})`: checkpoints cannot be uploaded in offline "
                "mode. Drop `log_model`, or set `offline=False` to upload them."
            )
        self._offline = offline
        self._log_model = log_model
        self._prefix = prefix
        self._experiment = experiment
        self._uploaded: dict[str, float] = {}
        self._checkpoint_callbacks: dict[int, Any] = {}
        self.add_file_policy = add_file_policy
        folder = save_dir if save_dir is not None else dir
        self._wandb_init: dict[str, Any] = {
            "name": name,
            "project": project or os.environ.get("WANDB_PROJECT", "lightning_logs"),
            "dir": os.fspath(folder) if folder is not None else None,
            "id": version or id,
            "resume": "allow",
            "anonymous": "allow" if anonymous else None,
            **kwargs,
        }
        self._project = self._wandb_init.get("project")
        self._save_dir = self._wandb_init.get("dir")
        self._name = self._wandb_init.get("name")
        self._id = self._wandb_init.get("id")
        self._checkpoint_name = checkpoint_name

    @property
    @rank_zero_experiment
    def experiment(self) -> Any:
        """The ``wandb`` run (``wandb.init`` on first use; a stand-in off rank 0).

        Use it for what the logger does not wrap, e.g. ``self.logger.experiment.log({"samples": ...})``.
        """
        if self._experiment is not None:
            return self._experiment
        import wandb

        if self._offline:
            os.environ["WANDB_MODE"] = "dryrun"
        attach_id = getattr(self, "_attach_id", None)
        if wandb.run is not None:
            rank_zero_warn(
                "There is a wandb run already in progress and newly created instances of `WandbLogger` will reuse"
                " this run. If this is not desired, call `wandb.finish()` before instantiating `WandbLogger`."
            )
            self._experiment = wandb.run
        elif attach_id is not None and hasattr(wandb, "_attach"):
            self._experiment = wandb._attach(attach_id)  # the run the launching process made (ddp_spawn)
        else:
            if self._save_dir is not None:
                os.makedirs(self._save_dir, exist_ok=True)
            self._experiment = wandb.init(**self._wandb_init)
            if getattr(self._experiment, "define_metric", None):
                if self._wandb_init.get("sync_tensorboard"):
                    self._experiment.define_metric("*", step_metric="global_step")
                else:
                    self._experiment.define_metric(_STEP)
                    self._experiment.define_metric("*", step_metric=_STEP, step_sync=True)
        return self._experiment

    def __getstate__(self) -> dict[str, Any]:
        # ddp_spawn pickles the Trainer. A run the launching process made already is attached to
        # in the worker; otherwise the worker of rank 0 makes it.
        state = self.__dict__.copy()
        if self._experiment is not None:
            state["_id"] = getattr(self._experiment, "id", None)
            state["_attach_id"] = getattr(self._experiment, "_attach_id", None)
            state["_name"] = getattr(self._experiment, "name", None)
        state["_experiment"] = None
        return state

    @property
    @override
    def name(self) -> str | None:
        """The project."""
        return self._project

    @property
    @override
    def version(self) -> str | None:
        """The run's id (None before the run exists, unless one was given)."""
        return self._experiment.id if self._experiment is not None else self._id

    @property
    @override
    def save_dir(self) -> str | None:
        """The folder wandb writes under."""
        return self._save_dir

    def watch(
        self, model: torch.nn.Module, log: str | None = "gradients", log_freq: int = 100, log_graph: bool = True
    ) -> None:
        """``wandb.watch``: log ``model``'s gradients, parameters or both every ``log_freq`` steps."""
        self.experiment.watch(model, log=log, log_freq=log_freq, log_graph=log_graph)

    @override
    def log_hyperparams(self, params: Mapping[str, Any] | Namespace) -> None:
        values = json_values(sanitize_callables(params_dict(params)))
        self.experiment.config.update(values, allow_val_change=True)

    @override
    def log_metrics(self, metrics: Mapping[str, Any], step: int | None = None) -> None:
        row = add_prefix(metrics, self._prefix, self.LOGGER_JOIN_CHAR)
        if step is not None and not self._wandb_init.get("sync_tensorboard"):
            row[_STEP] = step
        self.experiment.log(row)

    @rank_zero_only
    def log_table(
        self,
        key: str,
        columns: list[Any] | None = None,
        data: list[list[Any]] | None = None,
        dataframe: Any = None,
        step: int | None = None,
    ) -> None:
        """A ``wandb.Table`` under ``key``, from ``columns`` and ``data`` rows or a pandas ``dataframe``."""
        import wandb

        self.log_metrics({key: wandb.Table(columns=columns, data=data, dataframe=dataframe)}, step)

    @rank_zero_only
    def log_text(
        self,
        key: str,
        columns: list[str] | None = None,
        data: list[list[str]] | None = None,
        dataframe: Any = None,
        step: int | None = None,
    ) -> None:
        """A table of text under ``key`` (``log_table``)."""
        self.log_table(key, columns, data, dataframe, step)

    @rank_zero_only
    def log_image(self, key: str, images: list[Any], step: int | None = None, **kwargs: Any) -> None:
        """``wandb.Image`` for each of ``images``; each keyword is a list of one value per image (``caption=[...]``)."""
        self._log_media("Image", key, images, step, kwargs)

    @rank_zero_only
    def log_audio(self, key: str, audios: list[Any], step: int | None = None, **kwargs: Any) -> None:
        """``wandb.Audio`` for each of ``audios``; each keyword is a list of one value per clip."""
        self._log_media("Audio", key, audios, step, kwargs)

    @rank_zero_only
    def log_video(self, key: str, videos: list[Any], step: int | None = None, **kwargs: Any) -> None:
        """``wandb.Video`` for each of ``videos``; each keyword is a list of one value per video."""
        self._log_media("Video", key, videos, step, kwargs)

    def _log_media(self, kind: str, key: str, items: list[Any], step: int | None, kwargs: dict[str, list[Any]]) -> None:
        import wandb

        if not isinstance(items, list):
            raise TypeError(f'Expected a list as "{kind.lower()}s", found {type(items)}')
        for name, values in kwargs.items():
            if len(values) != len(items):
                raise ValueError(f"Expected {len(items)} items but only found {len(values)} for {name}")
        make = getattr(wandb, kind)
        media = [make(item, **{name: values[i] for name, values in kwargs.items()}) for i, item in enumerate(items)]
        self.log_metrics({key: media}, step)

    def use_artifact(self, artifact: str, artifact_type: str | None = None) -> Any:
        """Mark ``artifact`` (``"entity/project/name:alias"``) as an input of this run and return it."""
        return self.experiment.use_artifact(artifact, type=artifact_type)

    @staticmethod
    @rank_zero_only
    def download_artifact(
        artifact: str,
        save_dir: str | os.PathLike[str] | None = None,
        artifact_type: str | None = None,
        use_artifact: bool | None = True,
    ) -> str:
        """Download ``artifact`` into ``save_dir`` and return the folder (through the current run when there is one)."""
        import wandb

        if wandb.run is not None and use_artifact:
            found = wandb.run.use_artifact(artifact)
        else:
            found = wandb.Api().artifact(artifact, type=artifact_type)
        return str(found.download(root=None if save_dir is None else os.fspath(save_dir)))

    @override
    def after_save_checkpoint(self, checkpoint_callback: Any) -> None:
        policy = upload_policy(self._log_model, checkpoint_callback)
        if policy == "now":
            self._upload_checkpoints(checkpoint_callback)
        elif policy == "at_end":
            self._checkpoint_callbacks[id(checkpoint_callback)] = checkpoint_callback

    @override
    def finalize(self, status: str) -> None:
        if status != "success" or self._experiment is None:
            return  # as Lightning: checkpoints go up on success only
        for checkpoint_callback in self._checkpoint_callbacks.values():
            self._upload_checkpoints(checkpoint_callback)

    def _upload_checkpoints(self, checkpoint_callback: Any) -> None:
        """Each new or changed checkpoint as a ``model`` artifact, aliased ``latest`` (and ``best``)."""
        import wandb

        for mtime, path, score, _ in checkpoints_to_upload(checkpoint_callback, self._uploaded):
            artifact = wandb.Artifact(
                name=self._checkpoint_name or f"model-{self.experiment.id}",
                type="model",
                metadata=checkpoint_metadata(checkpoint_callback, path, score),
            )
            artifact.add_file(path, name="model.ckpt", policy=self.add_file_policy)
            aliases = ["latest", "best"] if path == checkpoint_callback.best_model_path else ["latest"]
            self.experiment.log_artifact(artifact, aliases=aliases)
            self._uploaded[path] = mtime


def _require_wandb() -> None:
    import importlib.util

    if importlib.util.find_spec("wandb") is None:
        raise ModuleNotFoundError(
            "`WandbLogger` needs the `wandb` package, which is not installed: `pip install wandb` "
            "(or `pip install strategy-compat[wandb]`), or use `CSVLogger`."
        )


__all__ = ["WandbLogger"]
