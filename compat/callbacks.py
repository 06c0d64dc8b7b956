"""``pytorch_lightning.callbacks`` on compat: every 1.x callback name, resolved when it is used.

``Callback`` is ``compat.Callback`` (old hook names bridged); ``ModelCheckpoint`` takes the 1.x
arguments (``period``, ``every_n_val_epochs``, ``prefix``) on top of ``strategies.ModelCheckpoint``;
``EarlyStopping``, ``LearningRateMonitor`` and ``Timer`` are ``strategies``' own. Each name warns
once with its new name. A 1.x callback ``strategies`` has no counterpart for yet (``ProgressBar``,
``StochasticWeightAveraging``, ...) raises ``compat.MissingNameError`` where it is imported. The
names come from the 1.2-1.5 catalogs (see ``compat._legacy``).
"""

from __future__ import annotations

import functools
from typing import Any

from compat import _legacy
from compat._warnings import deprecation_message, warn_deprecated

__all__ = ["ModelCheckpoint"]  # noqa: F822 (resolved by __getattr__)


@functools.cache
def _model_checkpoint() -> type:
    import strategies

    class ModelCheckpoint(strategies.ModelCheckpoint):
        """``strategies.ModelCheckpoint`` with the 1.2-1.5 arguments, each warning once.

        ``period=N`` / ``every_n_val_epochs=N`` are ``every_n_epochs=N``; ``prefix="p"`` puts
        ``p-`` before the file name, as 1.2 did.
        """

        def __init__(
            self,
            *args: Any,
            period: int | None = None,
            every_n_val_epochs: int | None = None,
            prefix: str = "",
            train_time_interval: Any = None,
            **kwargs: Any,
        ) -> None:
            old = "pytorch_lightning.callbacks.ModelCheckpoint"
            for keyword, value in (("period", period), ("every_n_val_epochs", every_n_val_epochs)):
                if value is None:
                    continue
                if kwargs.get("every_n_epochs") not in (None, value):
                    raise TypeError(
                        f"`ModelCheckpoint({keyword}={value}, every_n_epochs={kwargs['every_n_epochs']})`: "
                        f"`{keyword}` is the old name of `every_n_epochs`; pass only `every_n_epochs`."
                    )
                warn_deprecated(
                    deprecation_message(
                        old,
                        "every_n_epochs",
                        member=keyword,
                        old_display=f"ModelCheckpoint({keyword}=...)",
                        replacement=f"ModelCheckpoint(every_n_epochs={value})",
                    )
                )
                kwargs["every_n_epochs"] = value
            if prefix:
                warn_deprecated(
                    deprecation_message(
                        old,
                        None,
                        member="prefix",
                        old_display="ModelCheckpoint(prefix=...)",
                        replacement=f"ModelCheckpoint(filename='{prefix}-{{epoch}}-{{step}}')",
                    )
                )
                filename = kwargs.get("filename") or "{epoch}-{step}"
                kwargs["filename"] = f"{prefix}{self.CHECKPOINT_JOIN_CHAR}{filename}"
            if train_time_interval is not None:
                raise TypeError(
                    "`ModelCheckpoint(train_time_interval=...)` has no counterpart in `strategies`: save by "
                    "`every_n_train_steps=N` or `every_n_epochs=N` instead."
                )
            super().__init__(*args, **kwargs)

    ModelCheckpoint.__module__ = __name__
    ModelCheckpoint.__qualname__ = "ModelCheckpoint"  # its checkpoint state key and pickle path
    return ModelCheckpoint


_OWN = {"ModelCheckpoint": lambda: (_model_checkpoint(), "strategies.ModelCheckpoint")}

__getattr__ = _legacy.module_getattr(__name__, _OWN)
__dir__ = _legacy.module_dir(__name__, _OWN)
