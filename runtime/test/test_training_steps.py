"""Several training steps are PyTorch's steps: a small MLP with dropout
(small_models.DropoutMLP), exported with torch.optim's SGD with momentum,
Adam and AdamW, planned into half of its arena (which recomputes), runs
STEPS steps with coop-run; the losses of every step and the final
parameters and optimizer state (moments, momentum buffers, the step
counter) match STEPS steps of torch eager and torch.optim whose dropout
draws the runtime's stream, the masks differing from step to step.

Needs torch and the tools named by COOP_OPT, COOP_TRANSLATE and COOP_RUN
(COOP_BACKEND: coop-run's backend, cpu when unset), as test_e2e."""
import re
import subprocess
import sys
import unittest

import test_e2e
from test_e2e import ATOL, RTOL, tool

STEPS = 5
RATIO = 0.5

if test_e2e.torch is not None:
    import torch
    import small_models


def setUpModule():
    test_e2e.setUpModule()


def torch_steps(name, span):
    """STEPS steps of torch eager + torch.optim on a fresh copy of the
    model, dropout drawing step s's masks. Returns the losses, the final
    {argument name: tensor} and the masks each step drew."""
    model, inputs, targets, loss_fn, optimizer = small_models.build(name)
    model.train()
    names = {p: n for n, p in model.named_parameters()}
    losses, masks = [], []
    for step in range(STEPS):
        with small_models.step_stream(step, span) as stream:
            loss = loss_fn(model(*inputs), *targets)
        masks.append(stream.drawn)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    result = {n: p.detach().clone() for n, p in model.named_parameters()}
    for param, state in optimizer.state.items():
        for key, value in state.items():
            if key == "step":  # one counter for every parameter
                result["optimizer.step"] = torch.as_tensor(value, dtype=torch.float32)
            else:
                result[f"{names[param]}.{key}"] = value.clone()
    return losses, result, masks


class TrainingSteps(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        test_e2e.EndToEnd.setUpClass.__func__(cls)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def plan_with_recomputation(self, model):
        """The Plan file at RATIO; fails unless the plan recomputes a
        dropout mask (which must redraw the step's mask)."""
        planned, path = f"{model.graph_path}.rt.mlir", f"{model.graph_path}.plan"
        compiled = subprocess.run(
            [tool("COOP_OPT"), "--coop-annotate-costs",
             f"--coop-compile=ratio={RATIO} report=true", "-o", planned],
            input=model.mlir, capture_output=True, text=True)
        self.assertEqual(compiled.returncode, 0, compiled.stderr)
        report = re.search(r"recomputations:\s+(\d+)", compiled.stdout)
        self.assertIsNotNone(report, compiled.stdout)
        self.assertGreater(int(report.group(1)), 0,
                           f"{model.name}: nothing recomputed at {RATIO}")
        with open(planned) as f:
            self.assertTrue(any("bernoulli" in line and "recompute_of" in line for line in f),
                            f"{model.name}: no dropout mask recomputed at {RATIO}")
        subprocess.run([tool("COOP_TRANSLATE"), "--coop-rt-to-plan", planned, "-o", path],
                       check=True, capture_output=True, text=True)
        return path

    def check(self, optimizer):
        name = f"steps_{optimizer}"
        model = test_e2e.Model(name, self.tmp.name)
        losses, data = model.run(self.plan_with_recomputation(model), steps=STEPS)
        ours = model.split(data)
        span = small_models.random_span(model.graph)
        theirs_losses, theirs, masks = torch_steps(name, span)

        # Every step draws new masks (the stream advances by the span).
        self.assertEqual(len(masks), STEPS)
        for step in range(1, STEPS):
            for layer, (before, now) in enumerate(zip(masks[step - 1], masks[step])):
                self.assertFalse(torch.equal(before, now),
                                 f"{name}: dropout #{layer} draws step {step - 1}'s mask again")

        self.assertEqual(len(losses), STEPS)
        for step, (got, expected) in enumerate(zip(losses, theirs_losses)):
            self.assertLessEqual(abs(got - expected), ATOL + RTOL * abs(expected),
                                 f"{name} step {step + 1}: loss {got} vs torch {expected}")
        worst = 0.0
        for arg_name, expected in theirs.items():
            self.assertIn(arg_name, ours, f"{name}: torch.optim has '{arg_name}'")
            got = ours[arg_name]
            excess = ((got - expected).abs() / (ATOL + RTOL * expected.abs())).max().item()
            worst = max(worst, excess)
            self.assertLessEqual(excess, 1.0, f"{name}: '{arg_name}' differs from torch "
                                 f"(max |diff| {(got - expected).abs().max().item():.3g})")
        # Every parameter and state tensor was compared.
        state = {t.name for t in model.arguments if t.role in (
            test_e2e.pb.PARAMETER, test_e2e.pb.OPTIMIZER_STATE)}
        self.assertEqual(state, set(theirs))
        print(f"\n{name}: {STEPS} steps at ratio {RATIO} match torch.optim; worst |diff| / "
              f"(atol + rtol |torch|) = {worst:.3f}", file=sys.stderr)

    def test_sgd_momentum(self):
        self.check("sgd")

    def test_adam(self):
        self.check("adam")

    def test_adamw(self):
        self.check("adamw")


if __name__ == "__main__":
    unittest.main()
