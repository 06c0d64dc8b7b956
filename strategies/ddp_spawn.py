"""DistributedDataParallel with workers started by ``torch.multiprocessing`` (spawn)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from typing_extensions import override

from strategies.ddp import DDPStrategy
from strategies.launchers import MultiprocessingLauncher
from strategies.registry import register_find_unused

if TYPE_CHECKING:
    from strategies.registry import StrategyRegistry


class DDPSpawnStrategy(DDPStrategy):
    """Like ``DDPStrategy``, but the workers are spawned from the calling process.

    Everything from ``setup_environment`` to ``teardown`` runs inside the workers; the parent
    never has a process group. Rank 0 sends the trained weights, the callback metrics and the
    results back, and the parent's module is updated when ``fit`` returns. State the setup hooks
    put on the module in a worker (e.g. layers) does not exist in the parent.

    Args:
        start_method: ``"spawn"`` (default), ``"fork"`` or ``"forkserver"``.
    """

    def __init__(self, *args: Any, start_method: str = "spawn", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.start_method = start_method

    @override
    def _configure_launcher(self) -> None:
        self._launcher = MultiprocessingLauncher(self, start_method=self.start_method)

    @classmethod
    @override
    def register_strategies(cls, registry: StrategyRegistry) -> None:
        """Add ``"ddp_spawn"``, ``"ddp_fork"``, ``"ddp_notebook"`` (fork, as Lightning does in
        notebooks) and their ``_find_unused_parameters_true``/``_false`` forms to the registry."""
        registry.register("ddp_spawn", cls, "DistributedDataParallel in workers spawned by torch.multiprocessing.")
        registry.register(
            "ddp_fork",
            cls,
            "`ddp_spawn` with forked workers (no pickling; CPU, or CUDA untouched before).",
            start_method="fork",
        )
        registry.register(
            "ddp_notebook", cls, "`ddp_fork` under the name Lightning gives it for notebooks.", start_method="fork"
        )
        for name, start_method in (("ddp_spawn", "spawn"), ("ddp_fork", "fork"), ("ddp_notebook", "fork")):
            register_find_unused(registry, name, cls, start_method=start_method)
