"""``pytorch_lightning.plugins``: the old training-type, precision and environment plugins.

Every class here is deprecated; importing this package imports torch.
"""

from compat.plugins import environments, precision, training_type
from compat.plugins.environments import (
    ClusterEnvironment,
    LightningEnvironment,
    SLURMEnvironment,
    TorchElasticEnvironment,
)
from compat.plugins.precision import (
    ApexMixedPrecisionPlugin,
    DeepSpeedPrecisionPlugin,
    FullyShardedNativeMixedPrecisionPlugin,
    MixedPrecisionPlugin,
    NativeMixedPrecisionPlugin,
    PrecisionPlugin,
    ShardedNativeMixedPrecisionPlugin,
    TPUHalfPrecisionPlugin,
)
from compat.plugins.training_type import (
    DataParallelPlugin,
    DDP2Plugin,
    DDPFullyShardedPlugin,
    DDPPlugin,
    DDPShardedPlugin,
    DDPSpawnPlugin,
    DDPSpawnShardedPlugin,
    DeepSpeedPlugin,
    HorovodPlugin,
    ParallelPlugin,
    RPCPlugin,
    RPCSequentialPlugin,
    SingleDevicePlugin,
    SingleTPUPlugin,
    TPUSpawnPlugin,
    TrainingTypePlugin,
)


class Plugin:
    """``pytorch_lightning.plugins.Plugin``: removed; there is no common plugin base any more."""

    def __init__(self, *args, **kwargs) -> None:
        from compat._warnings import deprecation_message

        raise NotImplementedError(
            deprecation_message("pytorch_lightning.plugins.Plugin", None, detail="it has no runtime equivalent here")
        )


__all__ = [
    "Plugin",
    "environments",
    "precision",
    "training_type",
    "ClusterEnvironment",
    "LightningEnvironment",
    "SLURMEnvironment",
    "TorchElasticEnvironment",
    "PrecisionPlugin",
    "MixedPrecisionPlugin",
    "NativeMixedPrecisionPlugin",
    "ApexMixedPrecisionPlugin",
    "ShardedNativeMixedPrecisionPlugin",
    "FullyShardedNativeMixedPrecisionPlugin",
    "DeepSpeedPrecisionPlugin",
    "TPUHalfPrecisionPlugin",
    "TrainingTypePlugin",
    "ParallelPlugin",
    "SingleDevicePlugin",
    "DDPPlugin",
    "DDPSpawnPlugin",
    "DDP2Plugin",
    "DDPShardedPlugin",
    "DDPSpawnShardedPlugin",
    "DDPFullyShardedPlugin",
    "DeepSpeedPlugin",
    "DataParallelPlugin",
    "HorovodPlugin",
    "TPUSpawnPlugin",
    "SingleTPUPlugin",
    "RPCPlugin",
    "RPCSequentialPlugin",
]
