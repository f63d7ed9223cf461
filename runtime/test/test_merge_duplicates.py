"""Merged duplicates run bit-identically: a small GPT decoder
(coop_export.zoo.GPT) builds its causal mask in every layer, and
--coop-compile's first pass, coop-merge-duplicates, makes the layers share
one. Its plans, with and without that pass, unconstrained and at ratios
that recompute, give losses and arguments (parameters, Adam's state) over
test_e2e's three steps bit-identical to the merged unconstrained plan's.
The dropout layers' random ops (and the empty tensors they fill) stay
one per layer.

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


class MergeDuplicates(test_e2e.ModelCase):
    def test_mask_per_layer_merged_bit_identical(self):
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

        losses, data = self.baseline("mask_per_layer")
        checked = []
        for merge in (True, False):
            for policy, ratio in [("none", 1.0)] + [("search", r) for r in RATIOS]:
                if merge and policy == "none":
                    continue  # the baseline
                plan = model.plan(policy, ratio, time_limit=0, merge_duplicates=merge)
                self.assertIsNotNone(plan, f"{policy}@{ratio} merge={merge} did not plan")
                self.assertEqual(model.run(plan), (losses, data),
                                 f"{policy}@{ratio} merge={merge} differs from the "
                                 "merged unconstrained plan")
                checked.append(f"{policy}@{ratio}{'' if merge else '(unmerged)'}")
        print(f"\nmask_per_layer: bit-identical over {test_e2e.STEPS} steps: "
              f"{' '.join(checked)}", flush=True)


if __name__ == "__main__":
    unittest.main()
