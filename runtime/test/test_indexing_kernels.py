"""The CPU kernels of runtime/src/CpuKernelsIndexing.cpp against PyTorch.

Tiny models of what models outside the zoo do with indices, masks and
losses (where-masked logits and dtype conversions, a gather-based cross
entropy, index_select lookups, scatters in and out of place, cumulative
sums, max pooling over a dimension, binary cross entropy with logits and
smooth L1 losses) run three training steps through coop-opt and coop-run
by test_zoo_kernels' check: their losses and updated parameters must match
PyTorch's own steps, and their exported steps must contain the kernels they
test. Each model has parameters upstream of the new kernels, so their
backwards run too.

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

    class DetectionHead(nn.Module):
        """A detection head: 3 class logits and 4 box offsets per anchor."""

        def __init__(self):
            super().__init__()
            self.trunk = nn.Linear(5, 8)
            self.out = nn.Linear(8, 7)

        def forward(self, x):  # x [6, 5]
            return self.out(torch.tanh(self.trunk(x)))

    def _detection_loss(output, labels, boxes):
        """Multi-label BCE with logits on soft targets (mean; summed with a
        class weight and pos_weight; unreduced), smooth L1 on the boxes
        (mean, beta 1, so both branches run; summed with beta 0.5;
        unreduced with beta 0, L1's backward)."""
        logits, offsets = output[:, :3], output[:, 3:]
        weight, pos_weight = torch.tensor([0.5, 1.0, 2.0]), torch.tensor([3.0, 1.0, 0.5])
        bce = (F.binary_cross_entropy_with_logits(logits, labels)
               + 0.5 * F.binary_cross_entropy_with_logits(logits, labels, weight=weight,
                                                          pos_weight=pos_weight,
                                                          reduction="sum")
               + 0.1 * F.binary_cross_entropy_with_logits(logits, labels,
                                                          reduction="none")[:, 1].sum())
        box = (F.smooth_l1_loss(offsets, boxes)
               + 0.25 * F.smooth_l1_loss(offsets, boxes, reduction="sum", beta=0.5)
               + 0.1 * (F.smooth_l1_loss(offsets, boxes, reduction="none", beta=0.0)
                        * torch.tensor([1.0, 2.0, 0.5, 1.5])).sum())
        return bce + box

    class SequencePool(nn.Module):
        """A sequence model: positions of the non-padding tokens by an int64
        cumsum (as RoBERTa numbers them), running sums forward and
        backward in time (cumsum, and flip-cumsum-flip), max pooling over
        time with its int64 indices, the min over features, one-hot rows of
        the argmax (scatter.value) and the minima scattered to them
        (scatter.src), argmin and an argmax over everything."""

        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(4, 6)
            self.pos = nn.Embedding(6, 6)
            self.head = nn.Linear(6, 3)
            self.register_buffer("tokens", torch.tensor([[5, 2, 7, 0, 0], [1, 1, 1, 1, 1],
                                                         [9, 3, 0, 0, 0]]))

        def forward(self, x):  # x [3, 5, 4]
            keep = self.tokens.ne(0).long()
            h = self.proj(x) + self.pos(keep.cumsum(1) * keep)  # [3, 5, 6]
            forward_sum, backward_sum = h.cumsum(1), h.flip(1).cumsum(1).flip(1)
            pooled, when = (forward_sum - 0.5 * backward_sum).max(1)  # [3, 6]
            lowest = h.min(2).values  # [3, 5]
            best = h.argmax(2, keepdim=True)  # [3, 5, 1]
            onehot = torch.zeros_like(h).scatter(2, best, 1.0)
            picked = torch.zeros(3, 5, 6).scatter(2, best, lowest.unsqueeze(2))
            counts = (when.float() + h.argmin(-1).float().sum(1, keepdim=True)
                      + h.argmax().float())
            return self.head(pooled + (h * onehot + picked).sum(1) + 0.1 * counts)

    class InPlaceScatters(nn.Module):
        """In-place scatters into fresh zeros: one-hot label rows
        (scatter_ of a value, for label smoothing), scores written and added
        at the labels (scatter_ of a tensor, scatter_add_) and rows summed
        per bucket (index_add_); their backwards gather and index_select."""

        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 3)
            self.register_buffer("labels", torch.tensor([[0], [2], [1], [1], [0]]))
            self.register_buffer("buckets", torch.tensor([0, 3, 3, 1, 2]))

        def forward(self, x):  # x [5, 4]
            y = self.fc(x)
            onehot = torch.zeros(5, 3).scatter_(1, self.labels, 1.0)
            written = torch.zeros(5, 3).scatter_(1, self.labels, y[:, 1:2])
            added = torch.zeros(5, 3).scatter_add_(1, self.labels, y[:, :1] * 2)
            buckets = torch.zeros(4, 3).index_add_(0, self.buckets, y)
            return y * (0.9 * onehot + 0.1 / 3) + written + added + buckets.sum(0)

    test_zoo_kernels.CASES.update({
        "masked_logits": lambda: (MaskedLogits(), (torch.randn(5, 6),),
                                  (torch.tensor([0, 3, 1, 2, 3]),), F.cross_entropy, "sgd"),
        "lookups": lambda: (Lookups(), (torch.tensor([3, 0, 3, 6]),),
                            (torch.tensor([1, 4, 0, 2]),), _gathered_cross_entropy, "sgd"),
        "detection_head": lambda: (DetectionHead(), (torch.randn(6, 5),),
                                   (torch.rand(6, 3), torch.randn(6, 4) * 0.8),
                                   _detection_loss, "sgd"),
        "sequence_pool": lambda: (SequencePool(), (torch.randn(3, 5, 4),),
                                  (torch.tensor([2, 0, 1]),), F.cross_entropy, "sgd"),
        "in_place_scatters": lambda: (InPlaceScatters(), (torch.randn(5, 4),),
                                      (torch.tensor([1, 0, 2, 2, 1]),), F.cross_entropy, "sgd"),
    })
    test_zoo_kernels.KERNELS.update({
        "masked_logits": {"aten._to_copy", "aten.scalar_tensor", "aten.where.self",
                          "aten.flip"},
        "lookups": {"aten.gather", "aten.scatter_add", "aten.index_select",
                    "aten.index_add"},
        "detection_head": {"aten.binary_cross_entropy_with_logits", "aten.smooth_l1_loss",
                           "aten.smooth_l1_loss_backward"},
        "sequence_pool": {"aten.cumsum", "aten.flip", "aten.max.dim", "aten.min.dim",
                          "aten.argmax", "aten.argmin", "aten.scatter.value",
                          "aten.scatter.src"},
        "in_place_scatters": {"aten.scatter_.value", "aten.scatter_.src", "aten.scatter_add_",
                              "aten.index_add_", "aten.gather", "aten.index_select"},
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

    def test_detection_head(self):
        self.check("detection_head")

    def test_sequence_pool(self):
        self.check("sequence_pool")

    def test_in_place_scatters(self):
        self.check("in_place_scatters")

    def test_lookups(self):
        self.check("lookups")


if __name__ == "__main__":
    unittest.main()
