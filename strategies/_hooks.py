"""The hooks a module and a datamodule may override, with Lightning 2.x's names (all no-ops)."""

from __future__ import annotations

from typing import Any

import torch


class _DataHooks:
    """Data hooks shared by ``TrainModule`` and ``DataModule``."""

    def prepare_data(self) -> None:
        """Download or write data once per node (local rank 0), before ``setup``."""

    def setup(self, stage: str) -> None:
        """Build what the stage needs; ``torch.distributed`` is live here for parallel strategies."""

    def teardown(self, stage: str) -> None:
        """Release what ``setup`` built."""

    def train_dataloader(self) -> Any:
        """The training data (or pass ``train_dataloaders`` / a DataModule to ``fit``)."""
        return None

    def val_dataloader(self) -> Any:
        """The validation data."""
        return None

    def test_dataloader(self) -> Any:
        """The test data."""
        return None

    def predict_dataloader(self) -> Any:
        """The prediction data."""
        return None

    def on_before_batch_transfer(self, batch: Any, dataloader_idx: int) -> Any:
        """Edit a batch before it is moved to the device; return it."""
        return batch

    def transfer_batch_to_device(self, batch: Any, device: torch.device, dataloader_idx: int) -> Any:
        """Move every tensor of the batch (through lists, tuples, dicts) to ``device``; return it."""
        from strategies._data import move_to_device

        return move_to_device(batch, device)

    def on_after_batch_transfer(self, batch: Any, dataloader_idx: int) -> Any:
        """Edit a batch after it is on the device; return it."""
        return batch


class _ModelHooks:
    """The module's lifecycle hooks; docs/lifecycle.md lists when each runs."""

    def on_fit_start(self) -> None:
        """After ``strategy.setup``: the model is on its device and wrapped; optimizers exist."""

    def on_fit_end(self) -> None:
        """After ``strategy.teardown``."""

    def on_train_start(self) -> None:
        """Before the first training epoch."""

    def on_train_end(self) -> None:
        """After the last training epoch."""

    def on_validation_start(self) -> None:
        """Before each validation run."""

    def on_validation_end(self) -> None:
        """After each validation run."""

    def on_test_start(self) -> None:
        """Before the test run."""

    def on_test_end(self) -> None:
        """After the test run."""

    def on_predict_start(self) -> None:
        """Before the predict run."""

    def on_predict_end(self) -> None:
        """After the predict run."""

    def on_train_batch_start(self, batch: Any, batch_idx: int) -> int | None:
        """Before each training step; return -1 to skip the rest of the epoch."""
        return None

    def on_train_batch_end(self, outputs: Any, batch: Any, batch_idx: int) -> None:
        """After each training step (and optimizer step)."""

    def on_validation_batch_start(self, batch: Any, batch_idx: int, dataloader_idx: int = 0) -> None:
        """Before each ``validation_step``."""

    def on_validation_batch_end(self, outputs: Any, batch: Any, batch_idx: int, dataloader_idx: int = 0) -> None:
        """After each ``validation_step``."""

    def on_test_batch_start(self, batch: Any, batch_idx: int, dataloader_idx: int = 0) -> None:
        """Before each ``test_step``."""

    def on_test_batch_end(self, outputs: Any, batch: Any, batch_idx: int, dataloader_idx: int = 0) -> None:
        """After each ``test_step``."""

    def on_predict_batch_start(self, batch: Any, batch_idx: int, dataloader_idx: int = 0) -> None:
        """Before each ``predict_step``."""

    def on_predict_batch_end(self, outputs: Any, batch: Any, batch_idx: int, dataloader_idx: int = 0) -> None:
        """After each ``predict_step``."""

    def on_validation_model_zero_grad(self) -> None:
        """Before validation inside ``fit``: drop the gradients (``set_to_none``) to free memory."""
        self.zero_grad(set_to_none=True)  # type: ignore[attr-defined]

    def on_validation_model_eval(self) -> None:
        """Put the module in eval mode for validation."""
        self.trainer.model.eval()  # type: ignore[attr-defined]

    def on_validation_model_train(self) -> None:
        """Put the module back in train mode after validation."""
        self.trainer.model.train()  # type: ignore[attr-defined]

    def on_test_model_eval(self) -> None:
        """Put the module in eval mode for testing."""
        self.trainer.model.eval()  # type: ignore[attr-defined]

    def on_test_model_train(self) -> None:
        """Put the module back in train mode after testing."""
        self.trainer.model.train()  # type: ignore[attr-defined]

    def on_predict_model_eval(self) -> None:
        """Put the module in eval mode for prediction."""
        self.trainer.model.eval()  # type: ignore[attr-defined]

    def on_train_epoch_start(self) -> None:
        """Before each training epoch."""

    def on_train_epoch_end(self) -> None:
        """After each training epoch and its validation."""

    def on_validation_epoch_start(self) -> None:
        """Before the validation batches."""

    def on_validation_epoch_end(self) -> None:
        """After the validation batches."""

    def on_test_epoch_start(self) -> None:
        """Before the test batches."""

    def on_test_epoch_end(self) -> None:
        """After the test batches."""

    def on_predict_epoch_start(self) -> None:
        """Before the predict batches."""

    def on_predict_epoch_end(self) -> None:
        """After the predict batches."""

    def on_before_zero_grad(self, optimizer: torch.optim.Optimizer) -> None:
        """Before ``optimizer_zero_grad`` (inside the closure, after ``training_step``)."""

    def on_before_backward(self, loss: torch.Tensor) -> None:
        """Before ``backward``."""

    def on_after_backward(self) -> None:
        """After ``backward``: the gradients exist."""

    def on_before_optimizer_step(self, optimizer: torch.optim.Optimizer) -> None:
        """After the closure, before clipping and the optimizer step."""

    def configure_model(self) -> None:
        """Create layers inside the strategy's sharded context (FSDP/DeepSpeed shard them here)."""


class _CheckpointHooks:
    """Hooks around saving and restoring checkpoints."""

    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        """Add to (or edit) a checkpoint before it is written."""

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        """Read a checkpoint being restored (before the weights are loaded)."""
