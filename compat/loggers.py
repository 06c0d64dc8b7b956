"""``pytorch_lightning.loggers`` on compat: every 1.x logger name, resolved when it is used.

``TensorBoardLogger`` and ``CSVLogger`` keep the 1.x default experiment name ``"default"``
(``strategies``' is ``"lightning_logs"``) and take the 1.x arguments; ``LightningLoggerBase`` is
``strategies.Logger`` (the same abstract members: ``name``, ``version``, ``log_metrics``,
``log_hyperparams``). ``MLFlowLogger`` and ``WandbLogger`` take 1.5's arguments in 1.5's order
(``strategies``' follow Lightning 2.6's, which moved ``version`` and ``run_name``) and keep 1.5's
defaults (MLflow's experiment ``"default"``, W&B's own default project). Each name warns once with
its new name. A 1.x logger ``strategies`` has no counterpart for (``LoggerCollection``,
``CometLogger``, ``NeptuneLogger``, ...) raises ``compat.MissingNameError`` where it is imported.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from compat import _legacy
from compat._warnings import deprecation_message, warn_deprecated

__all__ = ["CSVLogger", "LightningLoggerBase", "MLFlowLogger", "TensorBoardLogger", "WandbLogger"]  # noqa: F822 (resolved by __getattr__)

_OLD_NAME = "default"  # the 1.x default of `name` for both loggers


@functools.cache
def _tensorboard() -> type:
    import strategies

    class TensorBoardLogger(strategies.TensorBoardLogger):
        """``strategies.TensorBoardLogger`` with the 1.x defaults and arguments.

        ``log_graph=True`` is refused (no graph is written here); ``default_hp_metric`` is
        accepted and ignored (no ``hp_metric`` placeholder is logged), with a warning when True
        is asked for explicitly.
        """

        def __init__(
            self,
            save_dir: Any,
            name: str | None = _OLD_NAME,
            version: int | str | None = None,
            log_graph: bool = False,
            default_hp_metric: bool | None = None,
            prefix: str = "",
            sub_dir: str | None = None,
            **kwargs: Any,
        ) -> None:
            if log_graph:
                raise TypeError(
                    "`TensorBoardLogger(log_graph=True)`: `strategies.TensorBoardLogger` writes no model graph; "
                    "drop the argument, or call `logger.experiment.add_graph(model, example_input)` yourself."
                )
            if default_hp_metric:
                warn_deprecated(
                    deprecation_message(
                        "pytorch_lightning.loggers.TensorBoardLogger",
                        None,
                        member="default_hp_metric",
                        old_display="TensorBoardLogger(default_hp_metric=True)",
                        detail="no `hp_metric` placeholder is logged",
                        hint="log the metric you want in the HPARAMS tab yourself",
                    )
                )
            super().__init__(save_dir, name, version, sub_dir=sub_dir, prefix=prefix, **kwargs)

    TensorBoardLogger.__module__ = __name__
    TensorBoardLogger.__qualname__ = "TensorBoardLogger"
    return TensorBoardLogger


@functools.cache
def _csv() -> type:
    import strategies

    class CSVLogger(strategies.CSVLogger):
        """``strategies.CSVLogger`` with the 1.x default experiment name ``"default"``."""

        def __init__(self, save_dir: Any, name: str | None = _OLD_NAME, *args: Any, **kwargs: Any) -> None:
            super().__init__(save_dir, name, *args, **kwargs)

    CSVLogger.__module__ = __name__
    CSVLogger.__qualname__ = "CSVLogger"
    return CSVLogger


# A tracking URI where 1.5 has ``run_name``: 1.2 and 1.3 took ``tracking_uri`` second.
_URI = re.compile(r"^(file|https?|databricks|sqlite|postgresql|mysql|mssql)(\+[a-z]+)?:", re.IGNORECASE)


@functools.cache
def _mlflow() -> type:
    import strategies

    class MLFlowLogger(strategies.MLFlowLogger):
        """``strategies.MLFlowLogger`` with 1.5's arguments, in 1.5's order, and its default experiment
        ``"default"``. A tracking URI given second (1.3's order, where 1.5 has ``run_name``) is refused,
        saying to pass it by keyword."""

        def __init__(
            self,
            experiment_name: str = _OLD_NAME,
            run_name: str | None = None,
            tracking_uri: str | None = None,
            tags: dict[str, Any] | None = None,
            save_dir: str | None = "./mlruns",
            prefix: str = "",
            artifact_location: str | None = None,
            **kwargs: Any,
        ) -> None:
            if isinstance(run_name, str) and _URI.match(run_name):
                raise TypeError(
                    f"`MLFlowLogger({experiment_name!r}, {run_name!r}, ...)`: the second argument is `run_name` "
                    "since Lightning 1.4 (it was `tracking_uri` in 1.2 and 1.3); pass `tracking_uri=` by keyword."
                )
            super().__init__(
                experiment_name=experiment_name,
                run_name=run_name,
                tracking_uri=tracking_uri,
                tags=tags,
                save_dir=save_dir,
                prefix=prefix,
                artifact_location=artifact_location,
                **kwargs,
            )

        def finalize(self, status: str = "FINISHED") -> None:
            super().finalize(status)

    MLFlowLogger.__module__ = __name__
    MLFlowLogger.__qualname__ = "MLFlowLogger"
    return MLFlowLogger


@functools.cache
def _wandb() -> type:
    import strategies

    class WandbLogger(strategies.WandbLogger):
        """``strategies.WandbLogger`` with 1.5's arguments in 1.5's order (``offline`` third,
        ``version`` sixth) and 1.5's default project: W&B's own (``$WANDB_PROJECT`` or
        ``"uncategorized"``), not ``"lightning_logs"``. ``sync_step`` (1.2 to 1.4, without effect since
        1.2.1) is accepted and ignored, with a warning."""

        def __init__(
            self,
            name: str | None = None,
            save_dir: str | None = None,
            offline: bool | None = False,
            id: str | None = None,
            anonymous: bool | None = None,
            version: str | None = None,
            project: str | None = None,
            log_model: str | bool = False,
            experiment: Any = None,
            prefix: str | None = "",
            **kwargs: Any,
        ) -> None:
            if "sync_step" in kwargs:
                kwargs.pop("sync_step")
                warn_deprecated(
                    deprecation_message(
                        "pytorch_lightning.loggers.WandbLogger",
                        None,
                        member="sync_step",
                        old_display="WandbLogger(sync_step=...)",
                        detail="it has had no effect since Lightning 1.2.1 (metrics are synchronized by W&B)",
                        hint="drop the argument",
                    )
                )
            super().__init__(
                name=name,
                save_dir=save_dir,  # type: ignore[arg-type]
                version=version,
                offline=bool(offline),
                id=id,
                anonymous=anonymous,
                project=project,
                log_model=log_model,  # type: ignore[arg-type]
                experiment=experiment,
                prefix=prefix or "",
                **kwargs,
            )
            if project is None:  # 1.5 left the project to wandb.init
                self._wandb_init["project"] = self._project = None

    WandbLogger.__module__ = __name__
    WandbLogger.__qualname__ = "WandbLogger"
    return WandbLogger


def _logger_base() -> tuple[type, str]:
    import strategies

    return strategies.Logger, "strategies.Logger"


_OWN = {
    "TensorBoardLogger": lambda: (_tensorboard(), "strategies.TensorBoardLogger"),
    "CSVLogger": lambda: (_csv(), "strategies.CSVLogger"),
    "LightningLoggerBase": _logger_base,
    "MLFlowLogger": lambda: (_mlflow(), "strategies.MLFlowLogger"),
    "WandbLogger": lambda: (_wandb(), "strategies.WandbLogger"),
}

__getattr__ = _legacy.module_getattr(__name__, _OWN)
__dir__ = _legacy.module_dir(__name__, _OWN)
