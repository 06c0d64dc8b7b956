"""``MLFlowLogger``: metrics, hyperparameters and checkpoints to an MLflow tracking store.

Lightning 2.6's ``lightning.pytorch.loggers.MLFlowLogger``, on ``strategies``: the same arguments,
the same run layout and the same values in the store. Needs ``mlflow`` (or ``mlflow-skinny``):
``pip install strategy-compat[mlflow]``.
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
import time
import warnings
from argparse import Namespace
from collections.abc import Mapping
from typing import Any, Literal

from typing_extensions import override

from strategies._logger_tools import (
    add_prefix,
    checkpoint_metadata,
    checkpoints_to_upload,
    flatten_params,
    params_dict,
    rank_zero_experiment,
    upload_policy,
)
from strategies.loggers import Logger

_log = logging.getLogger("strategies")

_FILE_URI = "file:"
_BAD_METRIC_CHARS = re.compile(r"[^a-zA-Z0-9_/. -]+")
_PARAM_LENGTH = 250  # the value length Lightning truncates to (older MLflow stores reject longer ones)
_BATCH = 100  # MLflow's largest batch of params in one call
_STATUS = {"success": "FINISHED", "failed": "FAILED", "finished": "FINISHED"}


class MLFlowLogger(Logger):
    """Logs to MLflow: ``self.log`` values as metrics, ``hparams`` as params, checkpoints as artifacts.

    The run is created on first use, on global rank 0 only; on other ranks ``experiment`` is a
    stand-in whose every call does nothing. ``name`` is the experiment's id and ``version`` the
    run's id, so ``ModelCheckpoint`` writes to ``<save_dir>/<experiment id>/<run id>/checkpoints``
    as in Lightning.

    MLflow 3.x refuses a local ``file:`` store (this logger's default, as Lightning's) unless the
    environment says ``MLFLOW_ALLOW_FILE_STORE=true``; the error says so. A database store
    (``tracking_uri="sqlite:///mlflow.db"``, needs ``sqlalchemy``) or a server URL need nothing more.

    Args:
        experiment_name: the MLflow experiment; created when it does not exist.
        run_name: the run's name (the ``mlflow.runName`` tag).
        tracking_uri: where the store is; defaults to ``$MLFLOW_TRACKING_URI`` (read at import, as Lightning,
            and again when the logger is made), else ``file:<save_dir>``.
        tags: tags set on the new run.
        save_dir: the local store's folder, used when there is no ``tracking_uri``.
        log_model: ``True`` uploads the checkpoints a ``ModelCheckpoint`` kept when the run ends
            (at each save when ``save_top_k=-1``), ``"all"`` at each save, ``False`` never.
        prefix: put before every metric name, joined with ``-``.
        artifact_location: where a new experiment keeps its artifacts.
        run_id: continue this run instead of creating one.
        synchronous: passed to MLflow's ``log_batch`` (``False`` logs in the background).
    """

    LOGGER_JOIN_CHAR = "-"

    def __init__(
        self,
        experiment_name: str = "lightning_logs",
        run_name: str | None = None,
        tracking_uri: str | None = os.getenv("MLFLOW_TRACKING_URI"),
        tags: dict[str, Any] | None = None,
        save_dir: str | None = "./mlruns",
        log_model: Literal[True, False, "all"] = False,
        prefix: str = "",
        artifact_location: str | None = None,
        run_id: str | None = None,
        synchronous: bool | None = None,
    ) -> None:
        _require_mlflow()
        tracking_uri = tracking_uri or os.environ.get("MLFLOW_TRACKING_URI") or f"{_FILE_URI}{save_dir}"
        self._experiment_name = experiment_name
        self._experiment_id: str | None = None
        self._tracking_uri = tracking_uri
        self._run_name = run_name
        self._run_id = run_id
        self.tags = tags
        self._log_model = log_model
        self._uploaded: dict[str, float] = {}
        self._checkpoint_callback: Any = None
        self._prefix = prefix
        self._artifact_location = artifact_location
        self._log_batch_kwargs = {} if synchronous is None else {"synchronous": synchronous}
        self._initialized = False
        self._client: Any = None
        self._make_client()  # as Lightning: a store MLflow refuses fails here, not at the first log

    def _make_client(self) -> Any:
        if self._client is None:
            from mlflow.exceptions import MlflowException
            from mlflow.tracking import MlflowClient

            try:
                self._client = MlflowClient(self._tracking_uri)
            except MlflowException as err:
                if "MLFLOW_ALLOW_FILE_STORE" not in str(err):
                    raise
                raise RuntimeError(
                    f"`MLFlowLogger` would log to the local file store `{self._tracking_uri}`, which this mlflow "
                    "refuses unless you opt in: set the environment variable `MLFLOW_ALLOW_FILE_STORE=true`, or "
                    "pass `tracking_uri=` a database (`'sqlite:///mlflow.db'`, needs `sqlalchemy`) or a server URL."
                ) from err
        return self._client

    @property
    @rank_zero_experiment
    def experiment(self) -> Any:
        """The ``MlflowClient``, with this logger's experiment and run created (a stand-in off rank 0).

        Use it for what the logger does not wrap, e.g.
        ``self.logger.experiment.log_text(self.logger.run_id, "notes", "notes.txt")``.
        """
        client = self._make_client()
        if self._initialized:
            return client
        import mlflow

        mlflow.set_tracking_uri(self._tracking_uri)
        if self._run_id is not None:
            self._experiment_id = client.get_run(self._run_id).info.experiment_id
            self._initialized = True
            return client
        if self._experiment_id is None:
            found = client.get_experiment_by_name(self._experiment_name)
            if found is not None and found.lifecycle_stage != "deleted":
                self._experiment_id = found.experiment_id
            else:
                _log.warning("Experiment with name %s not found. Creating it.", self._experiment_name)
                self._experiment_id = client.create_experiment(
                    name=self._experiment_name, artifact_location=self._artifact_location
                )
        tags = dict(self.tags or {})
        if self._run_name is not None:
            from mlflow.utils.mlflow_tags import MLFLOW_RUN_NAME

            if MLFLOW_RUN_NAME in tags:
                _log.warning(
                    "The tag %s is found in tags. The value will be overridden by %s.", MLFLOW_RUN_NAME, self._run_name
                )
            tags[MLFLOW_RUN_NAME] = self._run_name
            self.tags = tags
        from mlflow.tracking.context.registry import resolve_tags

        run = client.create_run(experiment_id=self._experiment_id, tags=resolve_tags(tags))
        self._run_id = run.info.run_id
        self._initialized = True
        return client

    @property
    def run_id(self) -> str | None:
        """The run's id (the run is created first when there is none; None off rank 0)."""
        _ = self.experiment
        return self._run_id

    @property
    def experiment_id(self) -> str | None:
        """The experiment's id (created first when there is none; None off rank 0)."""
        _ = self.experiment
        return self._experiment_id

    @property
    @override
    def name(self) -> str | None:
        """The experiment's id."""
        return self.experiment_id

    @property
    @override
    def version(self) -> str | None:
        """The run's id."""
        return self.run_id

    @property
    @override
    def save_dir(self) -> str | None:
        """The local store's folder for a ``file:`` tracking URI, else None."""
        if self._tracking_uri.startswith(_FILE_URI):
            return self._tracking_uri[len(_FILE_URI) :]
        return None

    @override
    def log_hyperparams(self, params: Mapping[str, Any] | Namespace) -> None:
        from mlflow.entities import Param

        flat = flatten_params(params_dict(params))
        entries = [Param(key=key, value=str(value)[:_PARAM_LENGTH]) for key, value in flat.items()]
        for start in range(0, len(entries), _BATCH):
            self.experiment.log_batch(
                run_id=self.run_id, params=entries[start : start + _BATCH], **self._log_batch_kwargs
            )

    @override
    def log_metrics(self, metrics: Mapping[str, Any], step: int | None = None) -> None:
        from mlflow.entities import Metric

        stamp = int(time.time() * 1000)
        entries = []
        for key, value in add_prefix(metrics, self._prefix, self.LOGGER_JOIN_CHAR).items():
            if isinstance(value, str):
                _log.warning("Discarding metric with string value %s=%s.", key, value)
                continue
            clean = _BAD_METRIC_CHARS.sub("", key)
            if clean != key:
                warnings.warn(
                    "MLFlow only allows '_', '/', '.' and ' ' special characters in metric name."
                    f" Replacing {key} with {clean}.",
                    RuntimeWarning,
                    stacklevel=2,
                )
            entries.append(Metric(key=clean, value=float(value), timestamp=stamp, step=step or 0))
        self.experiment.log_batch(run_id=self.run_id, metrics=entries, **self._log_batch_kwargs)

    @override
    def finalize(self, status: str = "success") -> None:
        if not self._initialized:
            return
        if self._checkpoint_callback is not None:
            self._upload_checkpoints(self._checkpoint_callback)
        client = self.experiment
        if client.get_run(self.run_id):
            client.set_terminated(self.run_id, _STATUS.get(status, status))

    @override
    def after_save_checkpoint(self, checkpoint_callback: Any) -> None:
        policy = upload_policy(self._log_model, checkpoint_callback)
        if policy == "now":
            self._upload_checkpoints(checkpoint_callback)
        elif policy == "at_end":
            self._checkpoint_callback = checkpoint_callback

    def _upload_checkpoints(self, checkpoint_callback: Any) -> None:
        """Each new or changed checkpoint as artifacts ``<file stem>/``.

        The folder holds the file, ``metadata.yaml`` and ``aliases.txt``.
        """
        for mtime, path, score, _ in checkpoints_to_upload(checkpoint_callback, self._uploaded):
            aliases = ["latest", "best"] if path == checkpoint_callback.best_model_path else ["latest"]
            folder = os.path.splitext(os.path.basename(path))[0]
            self.experiment.log_artifact(self._run_id, path, folder)
            with tempfile.TemporaryDirectory() as tmp:
                with open(os.path.join(tmp, "metadata.yaml"), "w") as f:
                    f.write(_yaml(checkpoint_metadata(checkpoint_callback, path, score, key="Checkpoint")))
                with open(os.path.join(tmp, "aliases.txt"), "w") as f:
                    f.write(str(aliases))
                self.experiment.log_artifacts(self._run_id, tmp, folder)
            self._uploaded[path] = mtime

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_client"] = None  # ddp_spawn pickles the Trainer: each process opens its own client
        return state


def _yaml(data: Mapping[str, Any]) -> str:
    """Block-style YAML with sorted keys, as Lightning's ``yaml.dump`` writes ``metadata.yaml``."""
    import io

    from ruamel.yaml import YAML

    def _sorted(value: Any) -> Any:
        return {k: _sorted(value[k]) for k in sorted(value)} if isinstance(value, Mapping) else value

    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    out = io.StringIO()
    yaml.dump(_sorted(data), out)
    return out.getvalue()


def _require_mlflow() -> None:
    import importlib.util

    if importlib.util.find_spec("mlflow") is None:
        raise ModuleNotFoundError(
            "`MLFlowLogger` needs the `mlflow` package, which is not installed: `pip install mlflow-skinny` "
            "(or `pip install strategy-compat[mlflow]`), or use `CSVLogger`."
        )


__all__ = ["MLFlowLogger"]
