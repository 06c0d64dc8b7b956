"""``pytorch_lightning.loggers`` on compat: every 1.x logger name, resolved when it is used.

``TensorBoardLogger`` and ``CSVLogger`` keep the 1.x default experiment name ``"default"``
(``strategies``' is ``"lightning_logs"``) and take the 1.x arguments; ``LightningLoggerBase`` is
``strategies.Logger`` (the same abstract members: ``name``, ``version``, ``log_metrics``,
``log_hyperparams``). Each name warns once with its new name. A 1.x logger ``strategies`` has no
counterpart for (``WandbLogger``, ``MLFlowLogger``, ``LoggerCollection``, ...) raises
``compat.MissingNameError`` where it is imported.
"""

from __future__ import annotations

import functools
from typing import Any

from compat import _legacy
from compat._warnings import deprecation_message, warn_deprecated

__all__ = ["CSVLogger", "LightningLoggerBase", "TensorBoardLogger"]  # noqa: F822 (resolved by __getattr__)

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


def _logger_base() -> tuple[type, str]:
    import strategies

    return strategies.Logger, "strategies.Logger"


_OWN = {
    "TensorBoardLogger": lambda: (_tensorboard(), "strategies.TensorBoardLogger"),
    "CSVLogger": lambda: (_csv(), "strategies.CSVLogger"),
    "LightningLoggerBase": _logger_base,
}

__getattr__ = _legacy.module_getattr(__name__, _OWN)
__dir__ = _legacy.module_dir(__name__, _OWN)
