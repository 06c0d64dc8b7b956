"""The old-API pieces no codemod can rewrite, kept apart from ``train.py``.

``python -m compat.migrate`` leaves a ``# TODO(compat.migrate)`` on each of them:

* ``DispatchRecordingDDPPlugin.pre_dispatch``/``post_dispatch``: their code moves into
  ``setup(trainer)``/``teardown()`` of a strategy subclass;
* ``RecordingAccelerator``: the 1.2 accelerator *container* is gone (accelerators are devices
  only); ``setup(trainer, model)`` code moves into the strategy's ``setup(trainer)``;
* ``RecordingCallback.on_before_accelerator_backend_setup``: becomes ``Callback.setup``.

``train.py`` uses them unless ``--no-manual`` is given, so the rest of the project can be migrated
and run on the new API on its own (tests/codemods/test_legacy_migration.py).
"""

from __future__ import annotations

from recording import record

from compat import Callback, Trainer
from compat.accelerators import CPUAccelerator
from compat.plugins import DDPPlugin, PrecisionPlugin


class DispatchRecordingDDPPlugin(DDPPlugin):
    def init_ddp_connection(self, global_rank=None, world_size=None) -> None:
        record("plugin.init_ddp_connection", global_rank=global_rank, world_size=world_size)
        super().init_ddp_connection(global_rank, world_size)
        record("plugin.init_ddp_connection.after_super")

    def pre_dispatch(self) -> None:
        record("plugin.pre_dispatch", wrapped=type(self.model).__name__)
        super().pre_dispatch()

    def post_dispatch(self) -> None:
        record("plugin.post_dispatch")
        super().post_dispatch()


class RecordingAccelerator(CPUAccelerator):
    def setup(self, trainer, model) -> None:
        record("accelerator.setup", has_layer=getattr(model, "layer", None) is not None)
        super().setup(trainer, model)
        record("accelerator.setup.after_super", wrapped=type(trainer.model).__name__)


class RecordingCallback(Callback):
    def on_before_accelerator_backend_setup(self, trainer, pl_module) -> None:
        record("callback.on_before_accelerator_backend_setup")


def fit_through_an_accelerator_container(model, loader, environment):
    """The second fit of train.py, the 1.2 way: an ``Accelerator(precision_plugin, training_type_plugin)``."""
    accelerator = RecordingAccelerator(
        precision_plugin=PrecisionPlugin(),
        training_type_plugin=DispatchRecordingDDPPlugin(cluster_environment=environment),
    )
    trainer = Trainer(
        accelerator=accelerator,
        num_processes=2,
        max_epochs=1,
        callbacks=[RecordingCallback()],
        enable_progress_bar=False,
    )
    trainer.fit(model, loader)
    record("trainer.accelerator_backend", type=type(trainer.accelerator_backend).__name__)
    return trainer
