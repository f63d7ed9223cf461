"""--coop-compile's graph passes run bit-identically: a small GPT decoder
(coop_export.zoo.GPT) builds its causal mask in every layer, which
coop-merge-duplicates makes the layers share, and updates Adam's state
after the whole backward, which coop-hoist-state-updates moves up to each
gradient. Its plans, with and without those passes, unconstrained and at
ratios that recompute, give losses and arguments (parameters, Adam's
state) over test_e2e's three steps bit-identical to the unconstrained plan
with them. The dropout layers' random ops (and the empty tensors they
fill) stay one per layer.

Needs torch (for /usr/bin/python3) and the tools named by COOP_OPT,
COOP_TRANSLATE and COOP_RUN; reuses test_e2e's export-plan-run-compare."""
import subprocess
import unittest

import test_e2e
from test_e2e import torch

LAYERS = 3
RATIOS = (0.8, 0.5)

if torch is not None:
    import torch.nn.functional as F
    from coop_export.zoo import GPT

    def _decoder():
        model = GPT(vocab=13, d=16, layers=LAYERS, heads=2, max_len=16, dropout=0.1)
        return (model, (torch.randint(0, 13, (32, 16)),), (torch.randint(0, 13, (32, 16)),),
                F.cross_entropy, "adam")

    test_e2e.add_models({"mask_per_layer": _decoder})


def setUpModule():
    test_e2e.setUpModule()


def kernel_count(mlir, kernel):
    return mlir.count(f'coop.compute "{kernel}"(')


def last_index(mlir, predicate):
    lines = mlir.splitlines()
    return max(i for i, line in enumerate(lines) if predicate(line))


def first_index(mlir, predicate):
    return next(i for i, line in enumerate(mlir.splitlines()) if predicate(line))


class GraphPasses(test_e2e.ModelCase):
    def test_mask_per_layer_bit_identical_with_and_without(self):
        model = self.model("mask_per_layer")
        merged = subprocess.run([test_e2e.tool("COOP_OPT"), "--coop-merge-duplicates"],
                                input=model.mlir, check=True, capture_output=True,
                                text=True).stdout
        for kernel in ("aten.ones", "aten.tril", "aten.bitwise_not"):
            self.assertEqual(kernel_count(model.mlir, kernel), LAYERS, kernel)
            self.assertEqual(kernel_count(merged, kernel), 1, kernel)
        # Dropout: torch 1.13 traces empty_like, then bernoulli_ into it
        # (random and in place), torch 2.x native_dropout.
        for kernel in ("aten.empty_like", "aten.bernoulli_.float", "aten.native_dropout"):
            self.assertEqual(kernel_count(merged, kernel), kernel_count(model.mlir, kernel),
                             kernel)
        self.assertGreater(kernel_count(model.mlir, "aten.bernoulli_.float") +
                           kernel_count(model.mlir, "aten.native_dropout"), LAYERS)
        # Adam's second moment reads the gradient: exported after the last
        # backward op, it runs before it once hoisted.
        hoisted = subprocess.run([test_e2e.tool("COOP_OPT"), "--coop-hoist-state-updates"],
                                 input=merged, check=True, capture_output=True,
                                 text=True).stdout
        backward = lambda line: "_backward" in line and "coop.compute" in line
        moment = lambda line: 'coop.compute "aten.addcmul_' in line
        self.assertGreater(first_index(merged, moment), last_index(merged, backward))
        self.assertLess(first_index(hoisted, moment), last_index(hoisted, backward))

        losses, data = self.baseline("mask_per_layer")
        checked = []
        for passes in (True, False):
            for policy, ratio in [("none", 1.0)] + [("search", r) for r in RATIOS]:
                if passes and policy == "none":
                    continue  # the baseline
                plan = model.plan(policy, ratio, graph_passes=passes)
                self.assertIsNotNone(plan, f"{policy}@{ratio} graph passes={passes} "
                                     "did not plan")
                self.assertEqual(model.run(plan), (losses, data),
                                 f"{policy}@{ratio} graph passes={passes} differs from "
                                 "the unconstrained plan with them")
                checked.append(f"{policy}@{ratio}{'' if passes else '(without)'}")
        print(f"\nmask_per_layer: bit-identical over {test_e2e.STEPS} steps: "
              f"{' '.join(checked)}", flush=True)


if __name__ == "__main__":
    unittest.main()
