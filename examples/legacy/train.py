"""A PyTorch Lightning 1.2-era project, written only with the old names, running on ``compat``.

    python examples/legacy/train.py --out DIR      # rank 0; the script is re-run once for rank 1

Custom pieces, all old-style:

* ``RecordingEnvironment``: a ``ClusterEnvironment`` with ``master_address()``/``master_port()``/
  ``creates_children()`` *methods* (the new API has properties);
* ``RecordingDDPPlugin``: a ``DDPPlugin`` overriding ``init_ddp_connection`` (calling super),
  ``pre_dispatch`` and ``post_dispatch``;
* ``RecordingAccelerator``: a ``CPUAccelerator`` container overriding ``setup(trainer, model)``;
* ``Regressor``: a ``LightningModule`` that builds its layer in ``setup`` with ``torch.distributed``
  and overrides ``configure_sharded_model``; ``RecordingCallback`` overrides
  ``on_before_accelerator_backend_setup``.

Two fits, one epoch each: the first with ``Trainer(accelerator="ddp", num_processes=2,
plugins=[...])``, the second with ``Trainer(accelerator=RecordingAccelerator(...),
num_processes=2)``. Each rank writes ``calls_rank<r>.json`` (every override call, and whether the
process group was live); rank 0 writes ``weights.pt``. ``examples/new/train.py`` is the same
program on the new API; the final weights are equal.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch import nn  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402

from compat import Callback, LightningModule, Trainer  # noqa: E402
from compat.accelerators import CPUAccelerator  # noqa: E402
from compat.plugins import ClusterEnvironment, DDPPlugin, PrecisionPlugin  # noqa: E402

CALLS: list[dict] = []


def record(name: str, **extra) -> None:
    CALLS.append({"name": name, "process_group": dist.is_initialized(), **extra})


class RecordingEnvironment(ClusterEnvironment):
    """Processes on this machine; the old-style methods give the rendezvous."""

    def __init__(self) -> None:
        self._world_size = 1
        self._global_rank = 0
        self._port = None

    def creates_children(self) -> bool:
        record("env.creates_children")
        return False

    def master_address(self) -> str:
        record("env.master_address")
        return os.environ.get("MASTER_ADDR", "127.0.0.1")

    def master_port(self) -> int:
        record("env.master_port")
        if "MASTER_PORT" in os.environ:
            return int(os.environ["MASTER_PORT"])
        if self._port is None:
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", 0))
                self._port = sock.getsockname()[1]
        return self._port

    def world_size(self) -> int:
        return self._world_size

    def set_world_size(self, size: int) -> None:
        self._world_size = size

    def global_rank(self) -> int:
        return self._global_rank

    def set_global_rank(self, rank: int) -> None:
        self._global_rank = rank

    def local_rank(self) -> int:
        return int(os.environ.get("LOCAL_RANK", 0))

    def node_rank(self) -> int:
        return int(os.environ.get("NODE_RANK", 0))


class RecordingDDPPlugin(DDPPlugin):
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


class Regressor(LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.layer = None

    def setup(self, stage: str) -> None:
        # The process group is live here: agree on the hidden size chosen by rank 0.
        record("module.setup", rank=dist.get_rank(), world_size=dist.get_world_size())
        if self.layer is None:
            hidden = [16 if dist.get_rank() == 0 else -1]
            dist.broadcast_object_list(hidden, src=0)
            torch.manual_seed(1234)
            self.layer = nn.Sequential(nn.Linear(4, hidden[0]), nn.Tanh(), nn.Linear(hidden[0], 1))

    def configure_sharded_model(self) -> None:
        record("module.configure_sharded_model")

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.layer(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


class RecordingCallback(Callback):
    def on_before_accelerator_backend_setup(self, trainer, pl_module) -> None:
        record("callback.on_before_accelerator_backend_setup")


def data() -> DataLoader:
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(64, 4, generator=generator)
    y = x.sum(dim=1, keepdim=True)
    return DataLoader(TensorDataset(x, y), batch_size=8)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    out = parser.parse_args().out
    os.makedirs(out, exist_ok=True)

    model = Regressor()
    trainer = Trainer(
        accelerator="ddp",
        num_processes=2,
        plugins=[RecordingDDPPlugin(), RecordingEnvironment()],
        max_epochs=1,
        callbacks=[RecordingCallback()],
        enable_progress_bar=False,
    )
    trainer.fit(model, data())
    plugin = trainer.training_type_plugin
    record("trainer.training_type_plugin", type=type(plugin).__name__)

    accelerator = RecordingAccelerator(
        precision_plugin=PrecisionPlugin(),
        training_type_plugin=RecordingDDPPlugin(cluster_environment=RecordingEnvironment()),
    )
    trainer = Trainer(accelerator=accelerator, num_processes=2, max_epochs=1, enable_progress_bar=False)
    trainer.fit(model, data())
    record("trainer.accelerator_backend", type=type(trainer.accelerator_backend).__name__)

    rank = trainer.global_rank
    with open(os.path.join(out, f"calls_rank{rank}.json"), "w") as f:
        json.dump(CALLS, f, indent=1)
    if rank == 0:
        torch.save({k: v.detach().cpu() for k, v in model.state_dict().items()}, os.path.join(out, "weights.pt"))


if __name__ == "__main__":
    main()
