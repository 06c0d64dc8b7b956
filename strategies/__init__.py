"""strategy-compat's strategy library: the setup-inside-dist lifecycle for every strategy."""

try:
    import torch as _torch  # noqa: F401 - the library's one requirement beyond the core install
except ModuleNotFoundError as _err:  # the CLI's install (and its pre-commit hook) has no torch
    if _err.name != "torch":
        raise
    raise ModuleNotFoundError(
        "`import strategies` needs PyTorch, which is not installed here. Install the library with "
        "its torch extra: pip install 'strategy-compat[torch]' (pick your torch build first, e.g. "
        "pip install torch==2.13.0). The migrate CLI (python -m compat.migrate) works without it.",
        name="torch",
    ) from None

from strategies._optimization import AutomaticOptimization
from strategies._progress import ProgressBar, TQDMProgressBar
from strategies._seed import seed_everything
from strategies.accelerators import Accelerator, CPUAccelerator, CUDAAccelerator
from strategies.callbacks import Callback, HookCall, HookRecorder
from strategies.ddp import DDPStrategy
from strategies.ddp_spawn import DDPSpawnStrategy
from strategies.deepspeed import DeepSpeedStrategy
from strategies.device_stats import DeviceStatsMonitor
from strategies.dp import DataParallelStrategy
from strategies.early_stopping import EarlyStopping
from strategies.environments import ClusterEnvironment, LocalEnvironment, SLURMEnvironment, TorchElasticEnvironment
from strategies.finetuning import BackboneFinetuning, BaseFinetuning
from strategies.fsdp import FSDPStrategy
from strategies.lambda_callbacks import GradientAccumulationScheduler, LambdaCallback
from strategies.launchers import Launcher, MultiprocessingLauncher, RankFailedError, SubprocessScriptLauncher
from strategies.loggers import CSVLogger, Logger, MLFlowLogger, TensorBoardLogger, WandbLogger
from strategies.lr_monitor import LearningRateMonitor
from strategies.model_checkpoint import ModelCheckpoint
from strategies.model_summary import ModelSummary
from strategies.module import DataModule, TrainModule
from strategies.on_exception_checkpoint import OnExceptionCheckpoint
from strategies.parallel import ParallelStrategy
from strategies.precision import DoublePrecision, HalfPrecision, MixedPrecision, Precision
from strategies.prediction_writer import BasePredictionWriter
from strategies.profilers import AdvancedProfiler, PassThroughProfiler, Profiler, SimpleProfiler
from strategies.registry import StrategyRegistry
from strategies.rich_progress import RichModelSummary, RichProgressBar, RichProgressBarTheme
from strategies.single_device import SingleDeviceStrategy
from strategies.strategy import Strategy
from strategies.swa import StochasticWeightAveraging
from strategies.timer import Timer
from strategies.trainer import HookCaller, Trainer, TrainerMetrics


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("strategy-compat")
    except PackageNotFoundError:  # a source tree on sys.path, not installed
        return "0+unknown"


#: The version of the strategy-compat distribution (``pip show strategy-compat``).
__version__ = _version()
del _version

STRATEGY_REGISTRY = Trainer.registry
for _cls in (
    SingleDeviceStrategy,
    DDPStrategy,
    DDPSpawnStrategy,
    FSDPStrategy,
    DeepSpeedStrategy,
    DataParallelStrategy,
):
    _cls.register_strategies(STRATEGY_REGISTRY)

__all__ = [
    "Accelerator",
    "AutomaticOptimization",
    "BackboneFinetuning",
    "BaseFinetuning",
    "BasePredictionWriter",
    "CPUAccelerator",
    "CUDAAccelerator",
    "Callback",
    "ClusterEnvironment",
    "DDPSpawnStrategy",
    "DDPStrategy",
    "DataModule",
    "DataParallelStrategy",
    "DeepSpeedStrategy",
    "DoublePrecision",
    "FSDPStrategy",
    "HalfPrecision",
    "HookCall",
    "HookCaller",
    "HookRecorder",
    "Launcher",
    "LocalEnvironment",
    "MixedPrecision",
    "MultiprocessingLauncher",
    "ParallelStrategy",
    "Precision",
    "RankFailedError",
    "SLURMEnvironment",
    "STRATEGY_REGISTRY",
    "SingleDeviceStrategy",
    "Strategy",
    "StrategyRegistry",
    "SubprocessScriptLauncher",
    "TorchElasticEnvironment",
    "TrainModule",
    "Trainer",
    "TrainerMetrics",
    "seed_everything",
    "CSVLogger",
    "EarlyStopping",
    "GradientAccumulationScheduler",
    "LambdaCallback",
    "LearningRateMonitor",
    "Logger",
    "MLFlowLogger",
    "ModelCheckpoint",
    "ModelSummary",
    "OnExceptionCheckpoint",
    "RichModelSummary",
    "RichProgressBar",
    "RichProgressBarTheme",
    "DeviceStatsMonitor",
    "AdvancedProfiler",
    "PassThroughProfiler",
    "Profiler",
    "ProgressBar",
    "SimpleProfiler",
    "StochasticWeightAveraging",
    "TensorBoardLogger",
    "TQDMProgressBar",
    "Timer",
    "WandbLogger",
]
