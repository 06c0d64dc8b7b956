"""Start the extra local ranks by running the user's script again."""

from __future__ import annotations

import atexit
import ctypes
import functools
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from typing_extensions import override

from strategies._distributed import RENDEZVOUS
from strategies._watch import PROGRESS
from strategies.environments import ClusterEnvironment, LocalEnvironment
from strategies.launchers.launcher import Launcher, RankFailedError

_ERROR_DIR_VAR = "STRATEGY_COMPAT_ERROR_DIR"
# How long rank 0 waits for a failed child's report before it blames itself.
_BLAME_WAIT_S = 2.0
# How long the watchdog lets rank 0 notice a dead child before ending the job itself.
_GRACE_S = 5.0


class SubprocessScriptLauncher(Launcher):
    """Runs the script once more for every extra local rank; this process is local rank 0.

    For ``Trainer(strategy="ddp", devices=2)`` in ``python train.py --lr 0.1``, the processes are::

        python train.py --lr 0.1                       # local rank 0: this process
        LOCAL_RANK=1 NODE_RANK=0 WORLD_SIZE=2 \\
        MASTER_ADDR=127.0.0.1 MASTER_PORT=<port> \\
        python train.py --lr 0.1                       # started by rank 0

    (``python -m pkg.train`` is re-run as ``python -m pkg.train``.) Nothing is launched when the
    cluster environment creates the processes itself (torchrun, SLURM, or a child of this
    launcher). Children run in their own session and die with rank 0 (also when ``fit`` ran in a
    thread that has ended since: one long-lived thread starts them); a watchdog thread ends the
    job when a child fails, and the error raised in rank 0 names the failed rank and carries its
    traceback. SIGINT/SIGTERM to rank 0 end the children too.

    Args:
        cluster_environment: where the ranks come from.
        num_processes: processes per node.
        num_nodes: nodes.
    """

    def __init__(self, cluster_environment: ClusterEnvironment, num_processes: int, num_nodes: int) -> None:
        self.cluster_environment = cluster_environment
        self.num_processes = num_processes
        self.num_nodes = num_nodes

    @override
    def launch(self, function: Callable[..., Any], *args: Any, trainer: Any = None, **kwargs: Any) -> Any:
        # A rank other than local 0 never launches, even under an environment that says it should
        # (an old-style one whose creates_children() always returns False would fork forever).
        if self.cluster_environment.creates_processes_externally or self.cluster_environment.local_rank() != 0:
            return _run_reporting(function, args, kwargs, self.cluster_environment)
        children = self._children()
        try:
            return function(*args, **kwargs)
        except BaseException as err:
            if children is None:
                raise
            PROGRESS.annotate(err)
            children.fail(err)
            raise

    def _children(self) -> _Children | None:
        """The child ranks of this run: started on the first launch, met again on later ones."""
        children = _Children.current
        if children is None:
            if self.num_processes > 1 and _Children.ended is not None:
                raise RuntimeError(_CANNOT_RESTART.format(why=_Children.ended))
            if self.num_processes > 1:
                children = _Children.start(self.cluster_environment, self.num_processes, self.num_nodes)
            return children
        if children.size != self.num_processes:
            raise RuntimeError(
                f"This process already started {children.size} local ranks; a run with {self.num_processes} "
                "devices cannot reuse them. Use the same `devices` for every Trainer in one script."
            )
        # The children keep the MASTER_PORT they were started with: meet them there again (after
        # `strategy.close()`, or with a new Trainer), where this process still serves the store.
        if isinstance(self.cluster_environment, LocalEnvironment):
            self.cluster_environment.set_main_port(children.port)
        return children


def _run_reporting(function: Callable[..., Any], args: Any, kwargs: Any, env: ClusterEnvironment) -> Any:
    """Run in a rank that something else started; on error, say which ranks did not arrive.

    In a child of our launcher the traceback is left where rank 0 looks for it and the child
    ends at once: it is a rank of rank 0's run, and the script's own ``except`` (which would carry
    on out of step with the other ranks) is rank 0's to run. Under torchrun/SLURM the error goes on.
    """
    try:
        return function(*args, **kwargs)
    except SystemExit as err:
        if err.code in (0, None):
            raise  # a clean `sys.exit()` in the script is no failure
        _report_and_end(err, env)
        raise
    except BaseException as err:
        _report_and_end(err, env)
        raise


def _report_and_end(err: BaseException, env: ClusterEnvironment) -> None:
    """Name absent ranks on ``err``; in a child of our launcher, leave the traceback and end now."""
    PROGRESS.annotate(err)
    error_dir = os.environ.get(_ERROR_DIR_VAR)
    if not (error_dir and os.path.isdir(error_dir)):
        return
    text = traceback.format_exc()
    Path(error_dir, f"rank{env.global_rank()}.txt").write_text(text)
    sys.stderr.write(text)
    sys.stderr.flush()
    sys.stdout.flush()
    os._exit(1)


def _script_command() -> list[str]:
    """The command that runs this script again for another rank.

    The interpreter's own command line (``sys.orig_argv``) while the script's arguments are still
    the ones it was given: it keeps interpreter options (``-X dev``, ``-W ...``) and a runner the
    script was started through (``python -m some.runner train.py ...``). Otherwise (the script
    rewrote ``sys.argv``): the script, or ``-m`` its module, with the current arguments.
    """
    main = sys.modules["__main__"]
    spec = getattr(main, "__spec__", None)
    if spec is not None and spec.name.split(".")[0] in ("pytest", "_pytest"):
        raise RuntimeError(_CANNOT_RERUN.format(what="pytest"))
    script = getattr(main, "__file__", None)
    if spec is None and script is None:
        raise RuntimeError(_CANNOT_RERUN.format(what="an interactive session"))
    if "pytest" in os.path.basename(sys.argv[0]):
        raise RuntimeError(_CANNOT_RERUN.format(what="pytest"))
    same = _same_command_line(script)
    if same is not None:
        return same
    if spec is not None:
        return [sys.executable, "-m", spec.name.removesuffix(".__main__"), *sys.argv[1:]]
    return [sys.executable, os.path.abspath(str(script)), *sys.argv[1:]]


def _same_command_line(script: str | None) -> list[str] | None:
    """``sys.orig_argv`` run again (script path made absolute), or None when it does not end with
    the script's current arguments or ran code given with ``-c``."""
    orig = list(getattr(sys, "orig_argv", None) or ())
    args = sys.argv[1:]
    head = orig[1 : len(orig) - len(args)]
    if not head or orig[len(orig) - len(args) :] != args or "-c" in head:
        return None
    if script is not None and sys.argv and sys.argv[0] in head:  # the script's path, as given
        head[len(head) - 1 - head[::-1].index(sys.argv[0])] = os.path.abspath(script)
    return [sys.executable, *head, *args]


_CANNOT_RESTART = (
    "The local ranks this process started for a run ended: {why}. They cannot be started again in the "
    "middle of the script, because `strategy='ddp'` starts a rank by running the script again from the top, "
    "so a new rank would not be at this call. Run the script again to retry (torchrun's `--max-restarts` "
    "does that for you), or use `strategy='ddp_spawn'`, which starts its workers for every call."
)

_CANNOT_RERUN = (
    "`strategy='ddp'` starts the other ranks by running the script again, which is not possible from "
    "{what}. Use `strategy='ddp_spawn'` here, or put the training in a script and run that."
)


def _die_with_parent(parent: int) -> Callable[[], None]:
    def set_death_signal() -> None:
        # Linux: SIGKILL this child when rank 0 dies, even by SIGKILL. The kernel sends it when the
        # *thread* that forked the child ends, which is why children are started by `_SPAWNER`.
        try:
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except OSError:
            return
        if os.getppid() != parent:  # rank 0 died before the signal was armed
            os._exit(1)

    return set_death_signal


class _Spawner:
    """One long-lived thread that starts every child rank of this process.

    ``PR_SET_PDEATHSIG`` fires when the thread that started the child ends, not the process: a
    child started from the thread that called ``fit`` would be killed as soon as that thread
    returned (``fit`` in a ``threading.Thread``). This thread never returns, so the children live
    as long as the process and still die with it. It is a daemon: it never holds up an exit.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def call(self, function: Callable[[], Any]) -> Any:
        """Run ``function`` on the spawner thread and return its result (or raise its error)."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name="strategy-compat-spawner", daemon=True)
                self._thread.start()
        done: Future[Any] = Future()
        self._requests.put((function, done))
        return done.result()

    def _serve(self) -> None:
        while True:
            function, done = self._requests.get()
            try:
                done.set_result(function())
            except BaseException as err:  # handed to the caller, raised there
                done.set_exception(err)


_SPAWNER = _Spawner()


class _Children:
    """The child ranks this process started (once per process), and their watchdog."""

    current: _Children | None = None
    # Why the children of this process ended early (a failure or an interrupt); None while they run.
    ended: str | None = None

    def __init__(self, procs: dict[int, subprocess.Popen[bytes]], error_dir: str, port: int) -> None:
        self.procs = procs
        self.port = port
        self.size = len(procs) + 1
        self.error_dir = error_dir
        self._interrupted = False
        self._handled = threading.Event()
        self._stopped = threading.Event()
        self._previous_handlers: dict[int, Any] = {}

    @classmethod
    def start(cls, env: ClusterEnvironment, num_processes: int, num_nodes: int) -> _Children:
        command = _script_command()
        port = env.main_port
        if isinstance(env, LocalEnvironment):
            # Held on 127.0.0.1 from now on (whether MASTER_PORT chose it or the OS did), and served
            # by this process until the children end: they meet there for every run of the script.
            port = RENDEZVOUS.reserve(port)
            env.set_main_port(port)
            RENDEZVOUS.keep(port)
        error_dir = tempfile.mkdtemp(prefix="strategy-compat-")
        base_env = {
            **os.environ,
            "MASTER_ADDR": env.main_address,
            "MASTER_PORT": str(port),
            "WORLD_SIZE": str(num_processes * num_nodes),
            "NODE_RANK": str(env.node_rank()),
            _ERROR_DIR_VAR: error_dir,
        }
        procs = {}
        for local_rank in range(1, num_processes):
            child_env = {**base_env, "LOCAL_RANK": str(local_rank)}
            start = functools.partial(
                subprocess.Popen,
                command,
                env=child_env,
                start_new_session=True,
                preexec_fn=_die_with_parent(os.getpid()),
            )
            procs[env.node_rank() * num_processes + local_rank] = _SPAWNER.call(start)
        children = cls(procs, error_dir, port)
        children._install()
        cls.current = children
        return children

    def _install(self) -> None:
        threading.Thread(target=self._watch, name="strategy-compat-watchdog", daemon=True).start()
        atexit.register(self.join)
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                self._previous_handlers[signum] = signal.signal(signum, self._on_signal)

    def _on_signal(self, signum: int, frame: Any) -> None:
        # The children end because of this signal: their exit codes blame nobody.
        self._interrupted = True
        self.kill()
        previous = self._previous_handlers.get(signum)
        if callable(previous):
            previous(signum, frame)
        elif signum == signal.SIGINT:
            raise KeyboardInterrupt
        else:
            raise SystemExit(128 + signum)

    def failed_rank(self) -> tuple[int, str] | None:
        """The first child that exited non-zero, with its traceback (or its exit code)."""
        for rank, proc in sorted(self.procs.items()):
            code = proc.poll()
            if code is not None and code != 0:
                report = Path(self.error_dir, f"rank{rank}.txt")
                text = report.read_text() if report.exists() else f"(exited with code {code}, no traceback)"
                return rank, text
        return None

    def _watch(self) -> None:
        while not self._stopped.is_set():
            failure = None if self._interrupted else self.failed_rank()
            if failure is not None:
                # Give rank 0 a moment to notice (gloo sees the closed socket); if it is stuck in a
                # collective or a computation, end the whole job from here.
                if self._handled.wait(_GRACE_S):
                    return
                rank, text = failure
                sys.stderr.write(f"\n{RankFailedError(rank, text)}\nEnding the job from rank 0.\n")
                sys.stderr.flush()
                self.kill()
                os._exit(1)
            time.sleep(0.2)

    def fail(self, err: BaseException) -> None:
        """Rank 0 raised: find whom to blame, end the children, and name the rank on ``err``.

        An interrupt (Ctrl-C, SIGTERM) blames nobody: the children ended because rank 0 ended
        them, and ``err`` (``KeyboardInterrupt``, exit status 130) goes on unchanged.
        """
        self._handled.set()
        interrupted = self._interrupted or isinstance(err, (KeyboardInterrupt, SystemExit))
        deadline = time.monotonic() + _BLAME_WAIT_S
        failure = None if interrupted else self.failed_rank()
        while failure is None and not interrupted and time.monotonic() < deadline:
            time.sleep(0.1)
            failure = self.failed_rank()
        self.kill()
        # The group's other ranks are gone: drop it and its store, so nothing waits on them again.
        RENDEZVOUS.close()
        if interrupted:
            _Children.ended = f"interrupted ({type(err).__name__})"
            return
        if failure is not None:
            _Children.ended = f"rank {failure[0]} failed"
            raise RankFailedError(*failure) from err
        _Children.ended = f"rank 0 raised {type(err).__name__}"
        err.add_note("Raised on global rank 0.")

    def kill(self) -> None:
        """End every child (and its own children), politely then firmly."""
        for proc in self.procs.values():
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + 3
        for proc in self.procs.values():
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()
        self._cleanup()

    def join(self, timeout: float = 120.0) -> None:
        """At exit: wait for the children to finish the same script, then clean up."""
        if self._stopped.is_set():
            return
        deadline = time.monotonic() + timeout
        for proc in self.procs.values():
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                break
        self._handled.set()
        failure = self.failed_rank()
        self.kill()
        if failure is not None:
            sys.stderr.write(f"\n{RankFailedError(*failure)}\n")
            sys.stderr.flush()
            os._exit(1)

    def _cleanup(self) -> None:
        if _Children.current is self:
            _Children.current = None
        RENDEZVOUS.release(self.port)
        self._stopped.set()
        shutil.rmtree(self.error_dir, ignore_errors=True)
        for signum, previous in self._previous_handlers.items():
            if threading.current_thread() is threading.main_thread():
                signal.signal(signum, previous)
        self._previous_handlers = {}
