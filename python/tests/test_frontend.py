"""The Python front end (python/coop): compile errors surface as
exceptions with the tool's message, a session round-trips parameters and
optimizer state, and its losses match `reference_step` (PyTorch eager on the
runtime's random stream). The tools and libcoop_runtime.so come from
$COOP_BUILD_DIR (else the repository's build/)."""
import copy
import io
import os
import tempfile
import time
import unittest

import support  # noqa: F401  (torch or a skip; python/ on the path)

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

import coop
from coop.compiler import Progress, _run
from coop.rng import CounterStream, bernoulli, uniform

# |coop - torch| <= ATOL + RTOL * |torch|, as runtime/test/test_e2e.py.
RTOL, ATOL = 1e-4, 1e-5
STEPS = 5  # issue 14: 5 steps of SGD-momentum, Adam and AdamW with dropout


def _mlp(dropout):
    torch.manual_seed(0)
    layers = [nn.Linear(16, 32), nn.ReLU(), nn.Dropout(dropout), nn.Linear(32, 32),
              nn.ReLU(), nn.Dropout(dropout), nn.Linear(32, 4)]
    return nn.Sequential(*layers)


class _Scaled(nn.Module):
    """Scales its logits by a tensor made in forward, a traced constant."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc(x) * torch.tensor([1.0, 2.0, 3.0, 4.0])


def _batch(index):
    generator = torch.Generator().manual_seed(index)
    return (torch.randn(8, 16, generator=generator),
            torch.randint(0, 4, (8,), generator=generator))


def _sgd(model):
    return torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-3)


def _adam(model):
    return torch.optim.Adam(model.parameters(), lr=1e-2, weight_decay=1e-3)


def _adamw(model):
    return torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)



class Pair:
    """A model compiled, its session, and a copy trained by reference_step."""

    def __init__(self, model, optimizer=_sgd):
        self.model = model
        self.twin = copy.deepcopy(self.model)
        self.optimizer, self.twin_optimizer = optimizer(self.model), optimizer(self.twin)
        x, y = _batch(0)
        self.compiled = coop.compile(self.model, (x,), F.cross_entropy, self.optimizer,
                                     targets=(y,), ratio=1.0, progress=None)
        self.session = self.compiled.session(self.model, self.optimizer)

    def steps(self, test, count, numpy=False):
        """Runs `count` steps on both from the session's step index (the
        session fed numpy arrays with `numpy`, else tensors); checks every
        loss, then every parameter, buffer and optimizer state (Adam's step
        counts too) after a write-back."""
        for _ in range(count):
            index = self.session.step_index
            x, y = _batch(index)
            ours = (self.session.step(x.numpy(), y.numpy()) if numpy
                    else self.session.step(x, y))
            theirs = coop.reference_step(self.compiled, self.twin, self.twin_optimizer,
                                         x, y, step=index)
            test.assertLessEqual(abs(ours - theirs), ATOL + RTOL * abs(theirs),
                                 f"step {index}: loss {ours} vs torch {theirs}")
        self.session.write_back()
        for (name, ours), theirs in zip(self.model.named_parameters(), self.twin.parameters()):
            test.assert_close(ours, theirs, name)
            for state_name, value in self.twin_optimizer.state[theirs].items():
                test.assert_close(self.optimizer.state[ours][state_name], value,
                                  f"{name} {state_name}")
        for (name, ours), theirs in zip(self.model.named_buffers(), self.twin.buffers()):
            test.assert_close(ours, theirs, name)


class Frontend(unittest.TestCase):
    def assert_close(self, ours, theirs, what):
        ours, theirs = torch.as_tensor(ours).double(), torch.as_tensor(theirs).double()
        excess = ((ours - theirs).abs() / (ATOL + RTOL * theirs.abs())).max().item()
        self.assertLessEqual(excess, 1.0, f"{what} differs from torch")

    def test_compile_returns_report_plan_and_picture(self):
        progress = io.StringIO()
        model = _mlp(0.0)
        x, y = _batch(0)
        # One tensor stands for a one-element tuple.
        compiled = coop.compile(model, x, F.cross_entropy, "sgd", targets=y,
                                budget="1MiB", policy="coop", progress=progress)
        self.assertIn("coop-plan-memory @train_step: policy coop, budget 1048576",
                      compiled.report)
        self.assertTrue(os.path.getsize(compiled.plan_path) > 0)
        self.assertIn("<svg", compiled.svg)
        lines = progress.getvalue().splitlines()
        for stage in ("exporting train_step", "importing", "planning", "writing the plan"):
            self.assertIn(f"coop: {stage} ...", lines)
            self.assertTrue(any(line.startswith(f"coop: {stage}: done in") for line in lines),
                            lines)

    def test_progress_ticks_while_a_stage_runs(self):
        stream = io.StringIO()
        with Progress(stream, interval=0.05).stage("planning"):
            time.sleep(0.3)
        lines = stream.getvalue().splitlines()
        self.assertEqual(lines[0], "coop: planning ...")
        self.assertGreaterEqual(len(lines), 4, lines)
        for line in lines[1:-1]:
            self.assertRegex(line, r"^coop: planning \.\.\. \d+ s$")
        self.assertRegex(lines[-1], r"^coop: planning: done in 0\.\d s$")

    def test_tools_stderr_is_a_warning_on_success_and_the_error_on_failure(self):
        stream = io.StringIO()
        progress = Progress(stream)
        self.assertEqual(_run(progress, "warning", ["/bin/sh", "-c",
                                                    "echo careful >&2; echo out"]), "out\n")
        self.assertIn("coop: sh: careful", stream.getvalue().splitlines())
        with self.assertRaises(coop.CompileError) as raised:
            _run(progress, "failing", ["/bin/sh", "-c", "echo broken >&2; exit 3"])
        self.assertEqual((raised.exception.tool, raised.exception.message), ("sh", "broken"))

    def test_tool_errors_are_exceptions_with_the_tools_message(self):
        model = _mlp(0.0)
        x, y = _batch(0)
        cases = [
            (dict(ratio=0.01), "coop-opt", "is below the memory floor of"),
            (dict(ratio=1.0, policy="fastest"), "coop-opt", "unknown policy 'fastest'"),
            (dict(budget="lots"), "coop-opt", "lots"),
        ]
        for options, tool, message in cases:
            with self.assertRaises(coop.CompileError, msg=str(options)) as raised:
                coop.compile(model, (x,), F.cross_entropy, "sgd", targets=(y,),
                             progress=None, **options)
            self.assertEqual(raised.exception.tool, tool)
            self.assertIn(message, str(raised.exception))

    def test_missing_build_and_bad_budget_options(self):
        model = _mlp(0.0)
        x, y = _batch(0)
        with tempfile.TemporaryDirectory() as empty:
            with self.assertRaises(coop.CompileError) as raised:
                coop.compile(model, (x,), F.cross_entropy, "sgd", targets=(y,), ratio=0.5,
                             build_dir=empty, progress=None)
            self.assertIn(f"coop-translate not found at {empty}/bin/coop-translate",
                          str(raised.exception))
        for options in ({}, {"ratio": 0.5, "budget": "1MiB"}):
            with self.assertRaisesRegex(ValueError, "exactly one of budget= and ratio="):
                coop.compile(model, (x,), F.cross_entropy, "sgd", targets=(y,),
                             progress=None, **options)

    def test_session_round_trips_parameters_and_state(self):
        pair = Pair(_mlp(0.0))
        original = {n: p.detach().clone() for n, p in pair.model.named_parameters()}
        with torch.no_grad():
            for p in pair.model.parameters():
                p.zero_()
        pair.session.write_back()
        for name, param in pair.model.named_parameters():
            self.assertTrue(torch.equal(param, original[name]), name)
            self.assertTrue(np.array_equal(pair.session.read(name), original[name].numpy()))
            self.assertTrue(torch.equal(pair.optimizer.state[param]["momentum_buffer"],
                                        torch.zeros_like(param)), name)
        # A new session binds the state written back, bit for bit.
        pair.session.step(*_batch(0))
        pair.session.write_back()
        again = pair.compiled.session(pair.model, pair.optimizer)
        for name, param in pair.model.named_parameters():
            self.assertTrue(np.array_equal(again.read(name), param.detach().numpy()), name)
            buffer = pair.optimizer.state[param]["momentum_buffer"]
            self.assertTrue(np.array_equal(again.read(f"{name}.momentum_buffer"),
                                           buffer.numpy()), name)
            self.assertGreater(buffer.abs().max().item(), 0, name)

    def test_bad_batches_are_errors(self):
        pair = Pair(_mlp(0.0))
        x, y = _batch(0)
        with self.assertRaises(coop.SessionError) as raised:
            pair.session.step(x[:4], y)
        self.assertEqual(raised.exception.code, "INVALID_ARGUMENT")
        self.assertIn("input0", str(raised.exception))
        with self.assertRaises(coop.SessionError) as raised:
            pair.session.step(x, y.int())
        self.assertIn("target0", str(raised.exception))
        with self.assertRaisesRegex(ValueError, "the step takes input0, target0; got input0"):
            pair.session.step(x)
        self.assertEqual(pair.session.step_index, 0)

    def test_unknown_backend_is_a_session_error(self):
        model = _mlp(0.0)
        compiled = coop.compile(model, _batch(0)[0], F.cross_entropy, "sgd",
                                targets=_batch(0)[1], ratio=1.0, progress=None)
        with self.assertRaises(coop.SessionError) as raised:
            compiled.session(model, backend="tpu")
        self.assertIn("backend 'tpu' is not available", str(raised.exception))

    def test_sgd_steps_match_torch(self):
        Pair(_mlp(0.0)).steps(self, 3)

    def test_batch_norm_buffers_and_numpy_batches(self):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(16, 32), nn.BatchNorm1d(32), nn.ReLU(),
                              nn.Linear(32, 4))
        Pair(model).steps(self, 3, numpy=True)
        self.assertEqual(model[1].num_batches_tracked.item(), 3)

    def test_traced_constants_are_bound(self):
        Pair(_Scaled()).steps(self, 2)

    # STEPS steps with dropout: fresh masks each step, and Adam/AdamW's bias
    # corrections of each step.
    def test_sgd_momentum_steps_with_dropout_match_torch(self):
        Pair(_mlp(0.25)).steps(self, STEPS)

    def test_adam_steps_with_dropout_match_torch(self):
        Pair(_mlp(0.25), optimizer=_adam).steps(self, STEPS)

    def test_adamw_steps_with_dropout_match_torch(self):
        pair = Pair(_mlp(0.25), optimizer=_adamw)
        pair.steps(self, STEPS)
        for param in pair.model.parameters():
            self.assertEqual(float(pair.optimizer.state[param]["step"]), STEPS)

    def test_step_index_round_trips_through_the_runtime(self):
        pair = Pair(_mlp(0.25))
        pair.session.step_index = 7
        self.assertEqual((pair.session.step_index, pair.session.stats()["steps"]), (7, 7))
        # Steps 7 and 8 draw reference_step's masks of steps 7 and 8.
        pair.steps(self, 2)
        self.assertEqual(pair.session.step_index, 9)
        with self.assertRaises(coop.SessionError) as raised:
            pair.session.step_index = -1
        self.assertEqual(raised.exception.code, "INVALID_ARGUMENT")
        self.assertEqual(pair.session.step_index, 9)
        # SGD keeps no step count: a new session starts where it is told, else at 0.
        self.assertEqual(pair.compiled.session(pair.model, pair.optimizer).step_index, 0)
        self.assertEqual(pair.compiled.session(pair.model, pair.optimizer,
                                               step_index=9).step_index, 9)

    def test_a_new_session_resumes_adams_steps(self):
        """Two sessions of 2 steps each (written back between them) compute
        what 4 steps of torch.optim do: the second binds the step counts
        and starts at step index 2, its masks step 2's."""
        pair = Pair(_mlp(0.25), optimizer=_adam)
        pair.steps(self, 2)
        pair.session = pair.compiled.session(pair.model, pair.optimizer)
        self.assertEqual(pair.session.step_index, 2)
        self.assertEqual(pair.session.read("optimizer.step"), 2)
        pair.steps(self, 2)
        self.assertEqual(float(pair.optimizer.state[next(pair.model.parameters())]["step"]),
                         4)

    def test_step_counts_as_numbers_and_unequal_counts(self):
        """torch.optim before 1.12 kept 'step' as a number: bound from and
        written back as one. Parameters that stepped unequally cannot share
        the plan's one counter."""
        pair = Pair(_mlp(0.0), optimizer=_adam)
        pair.session.step(*_batch(0))
        pair.session.write_back()
        states = [pair.optimizer.state[p] for p in pair.model.parameters()]
        for state in states:
            state["step"] = 1
        session = pair.compiled.session(pair.model, pair.optimizer)
        self.assertEqual(session.step_index, 1)
        session.step(*_batch(1))
        session.write_back()
        self.assertEqual([state["step"] for state in states], [2] * len(states))
        states[0]["step"] = 5
        with self.assertRaises(coop.SessionError) as raised:
            pair.compiled.session(pair.model, pair.optimizer)
        self.assertEqual(raised.exception.code, "FAILED_PRECONDITION")
        self.assertIn("different step counts (2.0, 5.0)", str(raised.exception))


class RandomStream(unittest.TestCase):
    def test_counter_stream_draws_the_runtimes_masks_in_order(self):
        with CounterStream(seed=7, offset=100) as stream:
            first = torch.empty(3, 5).bernoulli_(0.3)
            kept, mask = torch.ops.aten.native_dropout(torch.ones(4, 2), 0.5, True)
        self.assertEqual(stream.offset, 100 + 15 + 8)
        self.assertTrue(torch.equal(first, bernoulli(7, 100, (3, 5), 0.3)))
        self.assertTrue(torch.equal(mask, torch.from_numpy(uniform(7, 115, 8) < 0.5)
                                    .reshape(4, 2)))
        self.assertTrue(torch.equal(kept, mask.float() * 2))
        # `drawn`: each op's mask as drawn (dropout's keep mask), in order.
        self.assertEqual(len(stream.drawn), 2)
        self.assertTrue(torch.equal(stream.drawn[0], first))
        self.assertTrue(torch.equal(stream.drawn[1], mask.float()))
        with self.assertRaisesRegex(NotImplementedError, "aten.randn"):
            with CounterStream(seed=7):
                torch.randn(3)

    def test_fused_dropout_on_torchs_generator_is_refused(self):
        attention = getattr(torch.ops.aten, "_scaled_dot_product_flash_attention_for_cpu",
                            None)
        if attention is None:
            self.skipTest(f"torch {torch.__version__} has no fused CPU attention")
        q = torch.randn(1, 1, 2, 4)
        with CounterStream(seed=7):
            attention(q, q, q, 0.0)  # no dropout: torch's kernel runs
            with self.assertRaisesRegex(NotImplementedError, "flash_attention_for_cpu"):
                attention(q, q, q, 0.1)

    def test_random_span_is_the_exporters_final_offset(self):
        pair = Pair(_mlp(0.5))
        offsets = [op.rng.offset for op in pair.compiled.graph.ops if op.HasField("rng")]
        self.assertEqual(offsets, [0, 8 * 32])
        self.assertEqual(pair.compiled.random_span, 2 * 8 * 32)
        # reference_step at step s draws the masks at offset s * S.
        x, y = _batch(0)
        model = copy.deepcopy(pair.twin)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
        masks = []
        model[2].register_forward_hook(lambda m, i, out: masks.append(out != 0))
        coop.reference_step(pair.compiled, model, optimizer, x, y, step=3)
        hidden = F.relu(pair.twin[0](x)) != 0
        expected = torch.from_numpy(uniform(0, 3 * 2 * 8 * 32, 8 * 32) < 0.5).reshape(8, 32)
        self.assertTrue(torch.equal(masks[0], hidden & expected))


if __name__ == "__main__":
    unittest.main()
