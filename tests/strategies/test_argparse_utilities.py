"""``strategies.utilities.argparse``: flags from a class's ``__init__`` (where ``compat.migrate``
moves 1.x's ``Trainer.add_argparse_args`` / ``from_argparse_args``)."""

from __future__ import annotations

from argparse import ArgumentParser

import pytest

from strategies import DataModule, Trainer
from strategies.utilities import argparse as helpers
from strategies.utilities.argparse import add_argparse_args, from_argparse_args, parse_argparser


class _Data(DataModule):  # annotations are strings here (`from __future__ import annotations`)
    def __init__(self, batch_size: int = 32, data_dir: str = "data", shuffle: bool = True, ratio: float = 0.5):
        super().__init__()
        self.batch_size, self.data_dir, self.shuffle, self.ratio = batch_size, data_dir, shuffle, ratio


def _parse(argv: str, cls: type = Trainer, parser: ArgumentParser | None = None):
    return add_argparse_args(cls, parser or ArgumentParser()).parse_args(argv.split())


def test_trainer_flags_are_the_new_trainers_parameters_typed_from_its_annotations():
    args = _parse(
        "--max_epochs 2 --limit_train_batches 4 --limit_val_batches 0.5 --devices 2 --precision 16-mixed "
        "--fast_dev_run --enable_checkpointing false --accelerator cpu"
    )
    assert args.max_epochs == 2
    assert args.limit_train_batches == 4 and isinstance(args.limit_train_batches, int)  # a count, not 4.0
    assert args.limit_val_batches == 0.5
    assert args.devices == 2 and _parse("--devices 0,1").devices == "0,1" and _parse("").devices == "auto"
    assert args.precision == "16-mixed" and _parse("--precision 32").precision == 32
    assert args.fast_dev_run is True and _parse("--fast_dev_run 3").fast_dev_run == 3
    assert args.enable_checkpointing is False
    assert args.accelerator == "cpu"
    with pytest.raises(SystemExit):  # 1.x's --gpus is not a flag of the new Trainer: refused, not ignored
        _parse("--gpus 2")


def test_from_argparse_args_builds_the_trainer_and_keywords_win(tmp_path):
    args = _parse(f"--max_epochs 3 --limit_train_batches 2 --default_root_dir {tmp_path}")
    trainer = from_argparse_args(Trainer, args, max_epochs=5, logger=False)
    assert trainer.max_epochs == 5
    assert trainer.limit_train_batches == 2
    assert trainer.default_root_dir == str(tmp_path)


def test_a_flag_the_script_already_has_is_its_own_and_still_reaches_the_trainer(tmp_path):
    parser = ArgumentParser()
    parser.add_argument("--max_epochs", type=int, default=7)
    args = _parse("--max_epochs 4", parser=parser)  # no "conflicting option string" error
    assert args.max_epochs == 4
    assert from_argparse_args(Trainer, args, logger=False, default_root_dir=str(tmp_path)).max_epochs == 4


def test_a_datamodule_gets_flags_from_string_annotations_and_only_its_parameters_reach_it():
    args = _parse(
        "--batch_size 8 --shuffle false --ratio 0.25 --max_epochs 2",
        cls=_Data,
        parser=add_argparse_args(Trainer, ArgumentParser()),
    )
    data = from_argparse_args(_Data, args)
    assert (data.batch_size, data.data_dir, data.shuffle, data.ratio) == (8, "data", False, 0.25)


def test_group_or_new_parser_and_parse_argparser(monkeypatch):
    parent = ArgumentParser()
    assert add_argparse_args(_Data, parent) is parent
    assert any(group.title.endswith("_Data") for group in parent._action_groups)
    child = add_argparse_args(_Data, ArgumentParser(), use_argument_group=False)
    assert child is not parent and "--batch_size" in child._option_string_actions
    with pytest.raises(RuntimeError, match="not an argument group"):
        add_argparse_args(_Data, parent.add_argument_group("g"))  # type: ignore[arg-type]
    monkeypatch.setattr("sys.argv", ["prog", "--batch_size", "4"])
    assert parse_argparser(_Data, add_argparse_args(_Data, ArgumentParser())).batch_size == 4
    assert from_argparse_args(_Data, {"batch_size": 3, "unrelated": 1}).batch_size == 3


@pytest.mark.parametrize(("value", "expected"), [("yes", True), ("OFF", False), ("1", True), ("7", 7), ("ddp", "ddp")])
def test_str_to_bool_or_int(value, expected):
    assert helpers.str_to_bool_or_int(value) == expected
    if isinstance(expected, bool):
        assert helpers.str_to_bool(value) is expected
    else:
        with pytest.raises(ValueError, match="truth value"):
            helpers.str_to_bool(value)
