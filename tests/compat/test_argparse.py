"""1.x's argparse helpers on compat: ``Trainer.add_argparse_args`` / ``from_argparse_args`` /
``parse_argparser``, ``LightningDataModule``'s, and ``pytorch_lightning.utilities.argparse``."""

from __future__ import annotations

import warnings
from argparse import ArgumentError, ArgumentParser, Namespace

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import compat
from compat import _argparse
from compat._warnings import CompatDeprecationWarning


def _quiet(factory):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return factory()


def _trainer_parser(parser=None, **kwargs):
    return _quiet(lambda: compat.Trainer.add_argparse_args(parser or ArgumentParser(), **kwargs))


@pytest.mark.parametrize(
    ("argv", "name", "expected"),
    [
        (["--gpus", "0,1"], "gpus", "0,1"),  # indices stay a string
        (["--gpus", "2"], "gpus", 2),
        (["--fast_dev_run"], "fast_dev_run", True),  # a bare bool flag
        (["--fast_dev_run", "0"], "fast_dev_run", False),
        (["--fast_dev_run", "7"], "fast_dev_run", 7),  # bool or int
        (["--limit_train_batches", "0.25"], "limit_train_batches", 0.25),  # int or float
        (["--limit_train_batches", "4"], "limit_train_batches", 4),
        (["--track_grad_norm", "2"], "track_grad_norm", 2.0),
        (["--precision", "16"], "precision", 16),
        (["--precision", "bf16"], "precision", "bf16"),
        (["--max_epochs", "3"], "max_epochs", 3),
        (["--logger", "false"], "logger", False),
        (["--auto_lr_find", "lr"], "auto_lr_find", "lr"),  # bool or str
        (["--max_time", "00:00:01:00"], "max_time", "00:00:01:00"),
        (["--distributed_backend", "ddp_cpu"], "distributed_backend", "ddp_cpu"),  # 1.2-1.4 only
        (["--devices", "2"], "devices", "2"),  # 1.5: str before int, as 1.5 read it
        ([], "max_epochs", None),  # the 1.5 default
        ([], "checkpoint_callback", None),
    ],
)
def test_trainer_flags_are_typed_as_1_5_typed_them(argv, name, expected):
    args = _trainer_parser().parse_args(argv)
    value = getattr(args, name)
    assert value == expected and type(value) is type(expected), (value, expected)


def test_non_flag_types_are_left_out_as_in_1x():
    options = _trainer_parser()._option_string_actions
    assert "--callbacks" not in options and "--plugins" not in options  # objects, not strings
    assert "--accumulate_grad_batches" in options  # int or a dict: the int is a flag


def test_the_group_is_pl_trainer_and_use_argument_group_false_returns_a_child_parser():
    parent = ArgumentParser()
    parent.add_argument("--lr", type=float, default=0.1)
    same = _trainer_parser(parent)
    assert same is parent and "pl.Trainer" in [g.title for g in parent._action_groups]
    child = _trainer_parser(ArgumentParser(add_help=False), use_argument_group=False)
    assert isinstance(child, ArgumentParser) and "--max_epochs" in child._option_string_actions
    with pytest.raises(RuntimeError, match="not an argument group"):
        _trainer_parser(ArgumentParser().add_argument_group("g"))


def test_a_flag_every_release_had_conflicts_as_in_1x():
    parser = ArgumentParser()
    parser.add_argument("--max_epochs", type=int)
    with pytest.raises(ArgumentError):
        _trainer_parser(parser)


def test_a_scripts_own_flag_of_a_release_specific_name_is_the_scripts_before_or_after():
    # a 1.2 script's `--devices` (1.5 added the Trainer's) is its own, in both orders
    before = ArgumentParser()
    before.add_argument("--devices", type=int, default=1, choices=[1, 2])
    before = _trainer_parser(before)
    after = _trainer_parser()
    after.add_argument("--devices", type=int, default=1, choices=[1, 2])  # no conflict error
    for parser in (before, after):
        args = parser.parse_args(["--devices", "2", "--max_epochs", "1"])
        assert args.devices == 2
        trainer = _quiet(lambda a=args: compat.Trainer.from_argparse_args(a, logger=False))
        assert trainer.num_devices == 1, "the script's --devices reached the Trainer"
        assert trainer.max_epochs == 1


def test_from_argparse_args_passes_only_what_was_set_and_kwargs_win(tmp_path):
    parser = _trainer_parser()
    parser.add_argument("--lr", type=float, default=0.1)  # the script's own, not the Trainer's
    args = parser.parse_args(["--max_epochs", "3", "--limit_train_batches", "2"])
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        trainer = compat.Trainer.from_argparse_args(args, limit_train_batches=1, default_root_dir=str(tmp_path))
    assert trainer.max_epochs == 3 and trainer.limit_train_batches == 1
    deprecated = [str(w.message) for w in rec if issubclass(w.category, CompatDeprecationWarning)]
    # no warning for the 1.x flags left at their defaults (weights_summary, progress_bar_refresh_rate, ...)
    assert not [m for m in deprecated if "weights_summary" in m or "progress_bar_refresh_rate" in m], deprecated
    assert any("`Trainer.from_argparse_args` is deprecated" in m and "LightningCLI" in m for m in deprecated)


def test_an_old_flag_the_user_set_is_translated_with_its_warning():
    args = _trainer_parser().parse_args(["--gpus", "0", "--weights_summary", "full"])
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        trainer = compat.Trainer.from_argparse_args(args, logger=False)
    assert trainer.strategy.root_device.type == "cpu"
    messages = " ".join(str(w.message) for w in rec)
    assert "Trainer(gpus=...)" in messages and "weights_summary" in messages


def test_parse_argparser_reads_the_command_line_and_a_bare_bool_flag_is_true(monkeypatch):
    parser = _trainer_parser()
    monkeypatch.setattr("sys.argv", ["prog", "--benchmark", "--max_epochs", "2"])
    args = _quiet(lambda: compat.Trainer.parse_argparser(parser))
    assert args.benchmark is True and args.max_epochs == 2
    # a `None` left for a bool argument whose default is a bool means the flag was given bare
    fixed = _quiet(lambda: compat.Trainer.parse_argparser(Namespace(benchmark=None, gpus=None)))
    assert fixed.benchmark is True and fixed.gpus is None


def test_env_variables_are_trainer_defaults_and_arguments_win(monkeypatch):
    monkeypatch.setenv("PL_TRAINER_MAX_EPOCHS", "4")
    monkeypatch.setenv("PL_TRAINER_LOGGER", "False")
    trainer = _quiet(lambda: compat.Trainer())
    assert trainer.max_epochs == 4 and trainer.logger is None
    assert _quiet(lambda: compat.Trainer(max_epochs=2)).max_epochs == 2


def test_default_attributes_are_the_1x_trainers():
    defaults = _quiet(compat.Trainer.default_attributes)
    assert defaults["max_epochs"] is None and defaults["weights_summary"] == "top"
    assert "distributed_backend" in defaults  # 1.2-1.4's too


def _define(source: str) -> type:
    """A class defined without postponed annotations (this module has them: 1.x, which read
    ``__annotations__`` as they are, skipped string annotations, and so does compat)."""
    namespace = {"compat": compat, "DataLoader": DataLoader, "TensorDataset": TensorDataset, "torch": torch}
    exec(compile(source, "<data module>", "exec", dont_inherit=True), namespace)
    return namespace[source.split("class ", 1)[1].split("(", 1)[0]]


_Data = _define(
    """
class _Data(compat.LightningDataModule):
    def __init__(self, data_dir: str = "./", batch_size: int = 32, shuffle: bool = False, ratio: float = 0.5):
        super().__init__()
        self.data_dir, self.batch_size, self.shuffle, self.ratio = data_dir, batch_size, shuffle, ratio

    def train_dataloader(self):
        return DataLoader(TensorDataset(torch.zeros(4, 2)), batch_size=self.batch_size)
"""
)


def test_a_data_modules_arguments_become_flags_and_build_it():
    parser = ArgumentParser()
    parser.add_argument("--lr", type=float, default=0.1)
    parser = _quiet(lambda: _Data.add_argparse_args(parser))
    args = parser.parse_args(["--batch_size", "8", "--shuffle", "--ratio", "0.25"])
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        data = _Data.from_argparse_args(args, data_dir="/data")
    assert (data.data_dir, data.batch_size, data.shuffle, data.ratio) == ("/data", 8, True, 0.25)
    assert any("LightningDataModule.from_argparse_args` is deprecated" in str(w.message) for w in rec)
    group = next(g for g in parser._action_groups if g.title.endswith("_Data"))
    assert {a.dest for a in group._group_actions} == {"data_dir", "batch_size", "shuffle", "ratio"}


def test_get_init_arguments_and_types_flattens_optional_and_union():
    data = _define(
        """
class Data(compat.LightningDataModule):
    def __init__(self, size: int | None = None, name="x"):
        super().__init__()
"""
    )
    found = _quiet(data.get_init_arguments_and_types)
    assert found[0] == ("size", (int, type(None)), None)
    assert found[1][0] == "name" and found[1][2] == "x"


def test_string_annotations_give_no_flags_as_in_1x():
    class Postponed(compat.LightningDataModule):  # this module has `from __future__ import annotations`
        def __init__(self, batch_size: int = 32):
            super().__init__()

    parser = _quiet(lambda: Postponed.add_argparse_args(ArgumentParser()))
    assert "--batch_size" not in parser._option_string_actions


def test_the_1x_module_path_resolves_to_these_helpers_with_a_warning():
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        from compat.utilities.argparse import add_argparse_args

    assert add_argparse_args is _argparse.add_argparse_args
    assert any("LightningCLI" in str(w.message) for w in rec)
    parser = add_argparse_args(_Data, ArgumentParser())
    assert parser.parse_args(["--batch_size", "3"]).batch_size == 3


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Optional[Union[int, float]]", (int, float, type(None))),
        ("Union[int, Dict[int, int]]", (int, "Dict[int, int]")),
        ("int | None", (int, type(None))),
        ("bool", (bool,)),
    ],
)
def test_annotation_text_is_read_as_typing_flattens_it(text, expected):
    assert _argparse._annotation_types(text) == expected
