"""The CPU kernels of runtime/src/CpuKernelsMore.cpp against PyTorch.

Tiny models that make the exporter emit the kernels the bigger zoo models
need (average pooling, GPT's causal mask, Swin's shifted windows and
relative position bias) run three training steps through coop-opt and
coop-run, and their losses and updated parameters must match PyTorch's
own steps within test_e2e's tolerance. Each model also checks that its
exported step really contains the kernels it is meant to test.

Needs torch (for /usr/bin/python3) and the tools named by COOP_OPT,
COOP_TRANSLATE and COOP_RUN; reuses test_e2e's export-plan-run-compare."""
import unittest

import test_e2e
from test_e2e import torch

if torch is not None:
    import small_models
    import torch.nn.functional as F
    from torch import nn

    class AvgPool(nn.Module):
        """Inception's and DenseNet's pooling: padded windows counted with
        and without the padding, ceil mode with a divisor override."""

        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.randn(3, 7, 7))
            self.heads = nn.ModuleList(nn.Linear(3 * n, 4) for n in (49, 16, 16))

        def forward(self, x):
            x = x * self.w
            a = F.avg_pool2d(x, 3, stride=1, padding=1)
            b = F.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False)
            c = F.avg_pool2d(x, 2, ceil_mode=True, divisor_override=3)
            return sum(head(p.flatten(1)) for head, p in zip(self.heads, (a, b, c)))

    class CausalAttention(nn.Module):
        """GPT-2's attention mask: positions from arange, a lower-triangular
        bool mask, its negation filling the scores."""

        def __init__(self, vocab=11, d=8, seq=6):
            super().__init__()
            self.seq = seq
            self.tok = nn.Embedding(vocab, d)
            self.pos = nn.Embedding(seq, d)
            # No key bias: its gradient is zero (softmax ignores it) made of
            # rounding noise.
            self.q = nn.Linear(d, d)
            self.k = nn.Linear(d, d, bias=False)
            self.head = nn.Linear(d, vocab)

        def forward(self, tokens):
            x = self.tok(tokens) + self.pos(torch.arange(self.seq))
            scores = self.q(x) @ self.k(x).transpose(1, 2)
            mask = torch.ones(self.seq, self.seq, dtype=torch.bool).tril()
            scores = scores.masked_fill(~mask, -1e4)
            return self.head(scores.softmax(-1) @ x)

    class ShiftedWindows(nn.Module):
        """Swin's shifted windows: padding, a cyclic shift, a relative
        position table gathered by an index (index_put in the backward), and
        the padding masked with eq/ne and masked_fill."""

        def __init__(self, c=4):
            super().__init__()
            self.w = nn.Parameter(torch.randn(c))
            self.table = nn.Parameter(torch.randn(7, c))
            # Positions 1, 2, 7, 8 hold data after pad and roll; three of
            # them share row 0, so its gradient accumulates.
            self.register_buffer("index", torch.tensor([3, 0, 0, 6, 1, 5, 2, 4, 0]))
            self.head = nn.Linear(9 * c, 3)

        def forward(self, x):  # x [B, 2, 2, C]
            x = F.pad(x * self.w, (0, 0, 0, 1, 0, 1))  # [B, 3, 3, C]
            x = torch.roll(x, shifts=(-1, 1), dims=(1, 2)).reshape(x.shape[0], 9, -1)
            s = x.sum(-1, keepdim=True)  # exactly 0 on the padding
            y = (x * self.table[self.index]).masked_fill(s.eq(0.0), -2.0)
            return self.head((y + x.masked_fill(s.ne(0.0), 0.25)).flatten(1))

    class Fills(nn.Module):
        """Swin's in-place buffers: new_zeros/new_empty filled by copy_,
        zero_ and fill_ with a lifted constant tensor, slices of a mask
        filled in place (fill_ into a strided view), and a no-op
        as_strided_."""

        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.randn(4, 3))
            self.head = nn.Linear(12, 2)

        def forward(self, x):
            y = x * self.w
            z = y.new_zeros((4, 3))
            z.copy_(y * 2)
            e = y.new_empty((4, 3)).zero_()
            m = y.new_zeros((4, 3))
            m.fill_(torch.tensor(1.5))
            v = (y + 1).as_strided_((4, 3), (3, 1))
            mask = y.new_zeros((4, 5))
            mask[1:3, 1:4] = 2.0
            mask[:, 4:] = 3
            return self.head((z + e + m * y + v + mask[:, 2:] * y).reshape(1, 12).expand(2, 12))

    CASES = {
        "avg_pool": lambda: (AvgPool(), (torch.randn(2, 3, 7, 7),), (torch.tensor([1, 3]),),
                             F.cross_entropy, "sgd"),
        "causal_attention": lambda: (CausalAttention(), (torch.randint(0, 11, (3, 6)),),
                                     (torch.randint(0, 11, (3, 6)),),
                                     small_models._lm_loss, "sgd"),
        "shifted_windows": lambda: (ShiftedWindows(), (torch.randn(2, 2, 2, 4),),
                                    (torch.tensor([0, 2]),), F.cross_entropy, "sgd"),
        "fills": lambda: (Fills(), (torch.randn(4, 3),), (torch.tensor([0, 1]),),
                          F.cross_entropy, "sgd"),
    }
    KERNELS = {
        "avg_pool": {"aten.avg_pool2d", "aten.avg_pool2d_backward"},
        "causal_attention": {"aten.arange", "aten.tril", "aten.bitwise_not",
                             "aten.masked_fill.Scalar"},
        "shifted_windows": {"aten.constant_pad_nd", "aten.roll", "aten.index.Tensor",
                            "aten.index_put", "aten.ne.Scalar", "aten.eq.Scalar",
                            "aten.masked_fill.Scalar"},
        "fills": {"aten.new_zeros", "aten.new_empty", "aten.copy_", "aten.zero_",
                  "aten.fill_.Tensor", "aten.lift_fresh_copy",
                  # as_strided_ only relayouts: exported as a view.
                  "aten.as_strided.default"},
    }

    _small_build = small_models.build

    def _build(name):
        """The cases here, seeded like small_models' models, else those."""
        if name not in CASES:
            return _small_build(name)
        torch.manual_seed(0)
        return CASES[name]()

    small_models.build = _build


def setUpModule():
    test_e2e.setUpModule()


class ZooKernels(unittest.TestCase):
    setUpClass = classmethod(test_e2e.EndToEnd.setUpClass.__func__)
    tearDownClass = classmethod(test_e2e.EndToEnd.tearDownClass.__func__)
    model = test_e2e.EndToEnd.model
    baseline = test_e2e.EndToEnd.baseline
    check_against_torch = test_e2e.EndToEnd.check_against_torch

    def check(self, name):
        kernels = {op.kernel for op in self.model(name).graph.ops}
        self.assertLessEqual(KERNELS[name], kernels,
                             f"{name} does not emit {KERNELS[name] - kernels}")
        self.check_against_torch(name)

    def test_avg_pool(self):
        self.check("avg_pool")

    def test_causal_attention(self):
        self.check("causal_attention")

    def test_fills(self):
        self.check("fills")

    def test_shifted_windows(self):
        self.check("shifted_windows")


if __name__ == "__main__":
    unittest.main()
