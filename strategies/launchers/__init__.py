"""Launchers: how the processes of a run are started."""

from strategies.launchers.launcher import Launcher, RankFailedError
from strategies.launchers.multiprocessing import MultiprocessingLauncher
from strategies.launchers.subprocess_script import SubprocessScriptLauncher

__all__ = ["Launcher", "MultiprocessingLauncher", "RankFailedError", "SubprocessScriptLauncher"]
