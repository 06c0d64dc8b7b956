"""``DeviceStatsMonitor``: the device's statistics to the loggers around each training batch (Lightning 2.6).

On a CPU run: the machine's memory, CPU and swap use in percent (``cpu_vm_percent``,
``cpu_percent``, ``cpu_swap_percent``, from ``psutil``: the ``psutil`` extra); on CUDA:
``torch.cuda.memory_stats`` (allocated, reserved and active bytes, allocation counts, OOMs).
Each value goes to the loggers as ``DeviceStatsMonitor.on_train_batch_start/<name>`` (and
``.on_train_batch_end/...``) when the training step values do, every ``log_every_n_steps``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from strategies.callbacks import Callback

if TYPE_CHECKING:
    from strategies.module import TrainModule
    from strategies.trainer import Trainer

__all__ = ["DeviceStatsMonitor"]


class DeviceStatsMonitor(Callback):
    """Log the device's statistics at the start and end of each training batch.

    Args:
        cpu_stats: ``None``: the CPU's statistics on a CPU run only; ``True``: also on a GPU run;
            ``False``: never the CPU's.

    Example::

        trainer = Trainer(callbacks=[DeviceStatsMonitor()], logger=CSVLogger("logs"))
    """

    def __init__(self, cpu_stats: bool | None = None) -> None:
        self._cpu_stats = cpu_stats

    def setup(self, trainer: Trainer, module: TrainModule, stage: str) -> None:
        """Check, when a fit starts, that there is a logger and, for CPU statistics, ``psutil``."""
        if stage != "fit":
            return
        if not trainer.loggers:
            raise RuntimeError(
                "Cannot use `DeviceStatsMonitor` callback with `Trainer(logger=False)`: give the Trainer a logger "
                "(`logger=CSVLogger(...)`), or remove the callback."
            )
        if self._cpu_stats is not False and trainer.strategy.root_device.type == "cpu" or self._cpu_stats:
            try:
                import psutil  # noqa: F401
            except ModuleNotFoundError:
                raise ModuleNotFoundError(
                    "`DeviceStatsMonitor` cannot log CPU stats as `psutil` is not installed: pip install psutil "
                    "(strategy-compat's `psutil` extra), or pass `cpu_stats=False`.",
                    name="psutil",
                ) from None

    def on_train_batch_start(self, trainer: Trainer, module: TrainModule, batch: Any, batch_idx: int) -> None:
        """The statistics before the batch."""
        self._log(trainer, "on_train_batch_start")

    def on_train_batch_end(
        self, trainer: Trainer, module: TrainModule, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        """The statistics after the batch."""
        self._log(trainer, "on_train_batch_end")

    def _log(self, trainer: Trainer, key: str) -> None:
        if not trainer.metrics.step_logs_due() or not trainer.is_global_zero:
            return
        device = trainer.strategy.root_device
        if self._cpu_stats is False and device.type == "cpu":
            return
        stats = dict(trainer.accelerator.get_device_stats(device))
        if self._cpu_stats and device.type != "cpu":
            from strategies.accelerators.cpu import get_cpu_stats

            stats.update(get_cpu_stats())
        prefix = f"{type(self).__qualname__}.{key}"
        for logger in trainer.loggers:
            separator = getattr(logger, "group_separator", "/")
            logger.log_metrics(
                {f"{prefix}{separator}{k}": v for k, v in stats.items()}, step=trainer.metrics.logger_step
            )
