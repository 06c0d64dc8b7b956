"""The import rewriter of the side-by-side test: only imports (and chains through module aliases) change."""

from __future__ import annotations

import textwrap

from _to_strategies import resolve, rewrite


def test_renamed_names_keep_the_programs_own_local_name():
    out = rewrite("from lightning.pytorch import LightningModule, Trainer, LightningDataModule as DM\n")
    assert out == "from strategies import TrainModule as LightningModule, Trainer, DataModule as DM\n"


def test_a_path_swaps_its_prefix_or_falls_back_to_a_shallower_module_that_has_the_name():
    assert resolve("lightning.pytorch.callbacks.ModelCheckpoint") == "strategies.callbacks.ModelCheckpoint"
    assert resolve("pytorch_lightning.loggers.CSVLogger") == "strategies.loggers.CSVLogger"
    assert resolve("lightning.fabric.utilities.seed.seed_everything") == "strategies.utilities.seed_everything"
    assert resolve("lightning.LightningModule") == "strategies.TrainModule"


def test_a_name_strategies_lacks_is_still_written_against_strategies_so_the_program_fails_at_import():
    assert resolve("lightning.pytorch.no_such_module.Thing") == "strategies.no_such_module.Thing"


def test_module_aliases_bind_strategies_and_their_chains_are_mapped():
    source = textwrap.dedent(
        """\
        import lightning as L
        import lightning.pytorch as pl
        import torch
        from lightning.pytorch.demos import Transformer

        class M(L.LightningModule):
            x: "pl.LightningModule"

        trainer = pl.Trainer(callbacks=[L.pytorch.callbacks.ModelCheckpoint()])
        torch.nn.Linear(1, 1)
        """
    )
    assert rewrite(source) == textwrap.dedent(
        """\
        import strategies as L
        import strategies as pl
        import torch
        from lightning.pytorch.demos import Transformer

        class M(L.TrainModule):
            x: "pl.LightningModule"

        trainer = pl.Trainer(callbacks=[L.callbacks.ModelCheckpoint()])
        torch.nn.Linear(1, 1)
        """
    )


def test_several_names_in_one_import_each_find_their_home():
    out = rewrite("from lightning.pytorch.utilities import rank_zero_only, grad_norm\n")
    assert out == "from strategies.utilities import rank_zero_only, grad_norm\n"
    out = rewrite("from pytorch_lightning import seed_everything, LightningModule\n")
    assert out == "from strategies import seed_everything, TrainModule as LightningModule\n"
