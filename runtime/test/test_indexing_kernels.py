"""The CPU kernels of runtime/src/CpuKernelsIndexing.cpp against PyTorch.

Tiny models of what models outside the zoo do with indices, masks and
losses (where-masked logits and dtype conversions, a gather-based cross
entropy, index_select lookups, scatters, cumulative sums, max pooling over a
dimension, binary cross entropy with logits and smooth L1 losses) run three
training steps through coop-opt and coop-run through test_zoo_kernels'
check: their losses and updated parameters must match PyTorch's own steps,
and their exported steps must contain the kernels they test. Each model has
parameters upstream of the new kernels, so their backwards run too.

Needs torch (for /usr/bin/python3) and the tools named by COOP_OPT,
COOP_TRANSLATE and COOP_RUN."""
import unittest

import test_zoo_kernels
from test_zoo_kernels import torch

if torch is not None:
    import torch.nn.functional as F
    from torch import nn

    class MaskedLogits(nn.Module):
        """Logits masked with where by a bool mask made of an int64 buffer
        (as a padding mask is made of token ids; the harness compares no
        bool buffers), in tensor and scalar branches (torch turns a scalar
        into scalar_tensor); the mask as floats, int64 buckets of the
        logits (and those as bools) converted back to floats, and flips of
        one and two dimensions."""

        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(6, 4)
            self.register_buffer("keep", torch.tensor([1, 0, 2, 1]))

        def forward(self, x):  # x [5, 6]
            y = self.fc(x)
            mask = self.keep.ne(0)
            buckets = (y * 3).to(torch.int64)
            masked = torch.where(mask, y, y * 0.5) + torch.where(mask, 0.25, y)
            converted = mask.float() + buckets.float() + buckets.bool().float()
            grid = y.reshape(5, 2, 2).flip([1, 2]).reshape(5, 4)
            return masked + converted + y.flip(1) * 0.5 + grid

    def _gathered_cross_entropy(logits, target):
        """A hand-written cross entropy: the target's log-probability by
        gather."""
        return -logits.log_softmax(1).gather(1, target[:, None]).mean()

    class Lookups(nn.Module):
        """An embedding table read by index_select (rows repeat, so the
        backward's index_add accumulates) and features picked by
        index_select along the last dimension."""

        def __init__(self):
            super().__init__()
            self.table = nn.Parameter(torch.randn(7, 6))
            self.fc = nn.Linear(6, 5)
            self.register_buffer("picked", torch.tensor([4, 0, 4, 2, 1]))

        def forward(self, tokens):  # tokens [4] int64
            rows = self.table.index_select(0, tokens)  # [4, 6]
            return self.fc(rows).index_select(1, self.picked) * 2

    test_zoo_kernels.CASES.update({
        "masked_logits": lambda: (MaskedLogits(), (torch.randn(5, 6),),
                                  (torch.tensor([0, 3, 1, 2, 3]),), F.cross_entropy, "sgd"),
        "lookups": lambda: (Lookups(), (torch.tensor([3, 0, 3, 6]),),
                            (torch.tensor([1, 4, 0, 2]),), _gathered_cross_entropy, "sgd"),
    })
    test_zoo_kernels.KERNELS.update({
        "masked_logits": {"aten._to_copy", "aten.scalar_tensor", "aten.where.self",
                          "aten.flip"},
        "lookups": {"aten.gather", "aten.scatter_add", "aten.index_select",
                    "aten.index_add"},
    })


def setUpModule():
    test_zoo_kernels.setUpModule()


def load_tests(loader, tests, pattern):
    """This module's cases only: ZooKernels' run in their own module."""
    return unittest.TestSuite(loader.loadTestsFromName(name, IndexingKernels)
                              for name in sorted(vars(IndexingKernels))
                              if name.startswith("test_"))


class IndexingKernels(test_zoo_kernels.ZooKernels):
    def test_masked_logits(self):
        self.check("masked_logits")

    def test_lookups(self):
        self.check("lookups")


if __name__ == "__main__":
    unittest.main()
