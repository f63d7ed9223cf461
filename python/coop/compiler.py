"""`coop.compile`: one training step of a PyTorch model planned into a
memory budget, through the built tools (docs/python.md).

export (coop_export) -> coop-translate --import-training-graph ->
coop-opt --coop-annotate-costs --coop-compile (plan, verify, lower) ->
coop-translate --coop-rt-to-plan."""
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from contextlib import contextmanager

from coop_export import export

from .errors import CompileError
from .rng import random_span
from .runtime import Session, as_tuple

_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def find_build_dir(path=None):
    """The build directory: `path`, else $COOP_BUILD_DIR, else the
    repository's build/."""
    return os.path.abspath(path or os.environ.get("COOP_BUILD_DIR")
                           or os.path.join(_REPO, "build"))


def _tool(build, name):
    path = os.path.join(build, "bin", name)
    if not os.access(path, os.X_OK):
        raise CompileError(name, f"{name} not found at {path}: build the project "
                           "(scripts/build.sh) or point COOP_BUILD_DIR or "
                           "build_dir= at a build")
    return path


class Progress:
    """Progress lines on `stream` (stderr by default; None: silent): a line
    when a stage starts, one every `interval` seconds while it runs, one
    when it ends."""

    def __init__(self, stream=sys.stderr, interval=10.0):
        self.stream = stream
        self.interval = interval

    def say(self, text):
        if self.stream is not None:
            print(f"coop: {text}", file=self.stream, flush=True)

    @contextmanager
    def stage(self, name):
        start = time.monotonic()
        done = threading.Event()

        def tick():
            while not done.wait(self.interval):
                self.say(f"{name} ... {time.monotonic() - start:.0f} s")

        self.say(f"{name} ...")
        ticker = threading.Thread(target=tick, daemon=True)
        ticker.start()
        try:
            yield
        finally:
            done.set()
            ticker.join()
        self.say(f"{name}: done in {time.monotonic() - start:.1f} s")


def _run(progress, stage, command):
    """Runs a tool; its failure is a CompileError with the tool's message,
    what it says on success (warnings) goes to the progress stream.
    Returns its standard output."""
    tool = os.path.basename(command[0])
    with progress.stage(stage):
        result = subprocess.run(command, capture_output=True, text=True)
    message = result.stderr.strip()
    if result.returncode != 0:
        raise CompileError(tool, message or f"exit status {result.returncode}")
    if message:
        progress.say(f"{tool}: {message}")
    return result.stdout


class CompiledStep:
    """A compiled training step: the report, the Plan file, the memory
    picture, and what a session and `reference_step` need (the exported
    graph, its random stream and the loss)."""

    def __init__(self, graph, workdir, loss_fn, build):
        self.graph = graph
        self.workdir = workdir
        self.report = ""  # --coop-compile's report=true
        self.loss_fn = loss_fn
        self.build_dir = build
        self.name = graph.name
        self.graph_path = os.path.join(workdir, f"{self.name}.pb")
        self.mlir_path = os.path.join(workdir, f"{self.name}.mlir")
        self.planned_path = os.path.join(workdir, f"{self.name}.rt.mlir")
        self.plan_path = os.path.join(workdir, f"{self.name}.plan")
        self.svg_path = os.path.join(workdir, f"{self.name}.svg")
        # The random kernels' stream: its seed, and S, the offsets a step
        # spans (step s draws at offset + i + s * S).
        self.seed = next((op.rng.seed for op in graph.ops if op.HasField("rng")), 0)
        self.random_span = random_span(graph)

    @property
    def svg(self):
        """The arena over time, as SVG text."""
        with open(self.svg_path) as f:
            return f.read()

    def session(self, model, optimizer=None, backend="cpu", step_index=None):
        """A runtime session of this plan bound to `model`'s parameters and
        buffers and `optimizer`'s state (coop.Session)."""
        return Session(self, model, optimizer, backend=backend, step_index=step_index)


def _compile_into(workdir, model, example_inputs, loss_fn, optimizer, targets,
                  options, name, seed, build, progress):
    translate, opt = _tool(build, "coop-translate"), _tool(build, "coop-opt")
    with progress.stage(f"exporting {name}"):
        graph = export(model, as_tuple(example_inputs), loss_fn, optimizer,
                       targets=as_tuple(targets), name=name, seed=seed)
    step = CompiledStep(graph, workdir, loss_fn, build)
    with open(step.graph_path, "wb") as f:
        f.write(graph.SerializeToString(deterministic=True))
    options = options + ["report=true", f"svg={step.svg_path}"]
    _run(progress, "importing", [translate, "--import-training-graph", step.graph_path,
                                 "-o", step.mlir_path])
    step.report = _run(progress, "planning",
                       [opt, step.mlir_path, "--coop-annotate-costs",
                        f"--coop-compile={' '.join(options)}", "-o", step.planned_path])
    _run(progress, "writing the plan", [translate, "--coop-rt-to-plan", step.planned_path,
                                        "-o", step.plan_path])
    progress.say(f"plan {step.plan_path}")
    return step


def compile(model, example_inputs, loss_fn, optimizer="sgd", *, targets=(),
            budget=None, ratio=None, policy=None, work_limit=None, time_limit=None,
            seed=0, name="train_step", workdir=None, build_dir=None, progress=sys.stderr):
    """Plans one training step of `model` into a memory budget.

    The step is `loss_fn(model(*example_inputs), *targets)` (each a tensor
    or a sequence of tensors), backward, and
    `optimizer`'s update ('sgd', 'adam', 'adamw' or a torch.optim.SGD, Adam
    or AdamW; coop_export.export). Give exactly one of `budget` (bytes, or
    a string such as "6GiB") and `ratio` (of the arena the step needs
    without rematerialization); `policy` (search, lookahead, coop, dtr, dte,
    none), `work_limit` (units of plan search work, deterministic) and
    `time_limit` (seconds of plan search on the clock) pass through to
    --coop-compile. Files go to `workdir` (a temporary directory kept as
    long as the result, by default); the tools are found in `build_dir`'s
    bin/ (default: $COOP_BUILD_DIR, else the repository's build/). Progress
    lines go to `progress` (None: quiet). A tool's failure raises
    CompileError with its message; an export failure raises
    coop_export.ExportError. Returns a CompiledStep."""
    if (budget is None) == (ratio is None):
        raise ValueError("give exactly one of budget= and ratio=")
    options = [f"budget={budget}" if budget is not None else f"ratio={ratio}"]
    if policy is not None:
        options.append(f"policy={policy}")
    if work_limit is not None:
        options.append(f"work-limit={work_limit}")
    if time_limit is not None:
        options.append(f"time-limit={time_limit}")
    build = find_build_dir(build_dir)
    progress = Progress(progress)
    if workdir is not None:
        os.makedirs(workdir, exist_ok=True)
        return _compile_into(workdir, model, example_inputs, loss_fn, optimizer, targets,
                             options, name, seed, build, progress)
    # A temporary directory that lives as long as the result.
    workdir = tempfile.mkdtemp(prefix="coop-")
    try:
        step = _compile_into(workdir, model, example_inputs, loss_fn, optimizer, targets,
                             options, name, seed, build, progress)
    except BaseException:
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    weakref.finalize(step, shutil.rmtree, workdir, ignore_errors=True)
    return step
