"""Cluster environments: where the ranks come from and where they meet."""

from strategies.environments.cluster_environment import ClusterEnvironment
from strategies.environments.local import LocalEnvironment
from strategies.environments.slurm import SLURMEnvironment
from strategies.environments.torchelastic import TorchElasticEnvironment

__all__ = ["ClusterEnvironment", "LocalEnvironment", "SLURMEnvironment", "TorchElasticEnvironment"]
