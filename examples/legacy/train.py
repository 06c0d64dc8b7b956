"""A PyTorch Lightning 1.2-era project, written only with the old names, running on ``compat``.

    python examples/legacy/train.py --out DIR      # rank 0; the script is re-run once for rank 1

Custom pieces, all old-style. In this file (everything here the codemods can rewrite):

* ``RecordingEnvironment``: a ``ClusterEnvironment`` with ``master_address()``/``master_port()``/
  ``creates_children()`` *methods* (the new API has properties);
* ``RecordingDDPPlugin``: a ``DDPPlugin`` overriding ``init_ddp_connection`` (calling super);
* ``Regressor``: a ``LightningModule`` that builds its layer in ``setup`` with ``torch.distributed``
  and overrides ``configure_sharded_model``.

In ``manual_parts.py`` (what needs a person: ``python -m compat.migrate`` leaves TODOs there): a
``DDPPlugin`` overriding ``pre_dispatch``/``post_dispatch``, a ``CPUAccelerator`` container
overriding ``setup(trainer, model)``, and a callback overriding ``on_before_accelerator_backend_setup``.

Two fits, one epoch each: the first with ``Trainer(accelerator="ddp", num_processes=2,
plugins=[...])``, the second with ``Trainer(accelerator=RecordingAccelerator(...),
num_processes=2)`` (or, with ``--no-manual``, the first again). Each rank writes
``calls_rank<r>.json`` (every override call, and whether the process group was live); rank 0 writes
``weights.pt``. ``examples/new/train.py`` is the same program on the new API; the final weights are
equal.
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
from recording import CALLS, record  # noqa: E402
from torch import nn  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402

from compat import LightningModule, Trainer  # noqa: E402
from compat.plugins import ClusterEnvironment, DDPPlugin  # noqa: E402


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


def data() -> DataLoader:
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(64, 4, generator=generator)
    y = x.sum(dim=1, keepdim=True)
    return DataLoader(TensorDataset(x, y), batch_size=8)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument(
        "--no-manual",
        action="store_true",
        help="skip manual_parts.py (the pieces no codemod can rewrite); fit twice the plain way",
    )
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)

    model = Regressor()
    trainer = Trainer(
        accelerator="ddp",
        num_processes=2,
        plugins=[RecordingDDPPlugin(), RecordingEnvironment()],
        max_epochs=1,
        enable_progress_bar=False,
    )
    trainer.fit(model, data())
    plugin = trainer.training_type_plugin
    record("trainer.training_type_plugin", type=type(plugin).__name__)

    if args.no_manual:
        trainer = Trainer(
            accelerator="ddp",
            num_processes=2,
            plugins=[RecordingDDPPlugin(), RecordingEnvironment()],
            max_epochs=1,
            enable_progress_bar=False,
        )
        trainer.fit(model, data())
    else:
        from manual_parts import fit_through_an_accelerator_container

        trainer = fit_through_an_accelerator_container(model, data(), RecordingEnvironment())

    rank = trainer.global_rank
    with open(os.path.join(args.out, f"calls_rank{rank}.json"), "w") as f:
        json.dump(CALLS, f, indent=1)
    if rank == 0:
        torch.save({k: v.detach().cpu() for k, v in model.state_dict().items()}, os.path.join(args.out, "weights.pt"))


if __name__ == "__main__":
    main()
