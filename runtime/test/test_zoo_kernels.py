"""The CPU kernels of runtime/src/CpuKernelsMore.cpp against PyTorch.

Tiny models that make the exporter emit the kernels the bigger zoo models
need (average pooling, GPT's causal mask, Swin's shifted windows and
relative position bias) and those of common models outside the zoo
(MobileNet's and EfficientNet's activations, baddbmm and triu attention,
adaptive pooling, nearest upsampling, MSE loss, scalar fills) run three
training steps through coop-opt and coop-run, and their losses and updated
parameters must match PyTorch's own steps within test_e2e's tolerance.
Each model also checks that its exported step really contains the kernels
it is meant to test.

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

    class Activations(nn.Module):
        """MobileNet's ReLU6 (hardtanh) and hard swish/sigmoid, EfficientNet's
        SiLU, in place and not, and negation (a GRU's 1 - z); the inputs
        span the activations' corners (-3, -1, 0, 1, 3, 6). (torch 1.13
        differentiates SiLU through sigmoid, not silu_backward.)"""

        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.randn(6) * 2)
            self.heads = nn.ModuleList(nn.Linear(6, 3) for _ in range(10))

        def forward(self, x):
            y = x * self.w
            parts = (F.relu6(y), F.hardtanh(y * 1.5, -0.5, 2.0, inplace=True),
                     F.hardswish(y + 0.5, inplace=True), F.hardsigmoid(y),
                     F.hardsigmoid(y - 1, inplace=True), F.silu(y * 0.5, inplace=True),
                     -y, F.hardswish(y * 0.7), F.silu(y), (y * 2).neg_())
            return sum(head(p) for head, p in zip(self.heads, parts))

    class BiasedAttention(nn.Module):
        """Hand-written attention: scores from baddbmm with a broadcast
        bias, beta and alpha; a triu mask (bool) filled; triu on floats."""

        def __init__(self, d=6, seq=5):
            super().__init__()
            self.seq = seq
            self.q = nn.Linear(d, d)
            self.k = nn.Linear(d, d, bias=False)
            self.bias = nn.Parameter(torch.randn(seq, seq))
            self.head = nn.Linear(seq * d, 3)

        def forward(self, x):  # x [B, seq, d]
            scores = torch.baddbmm(self.bias, self.q(x), self.k(x).transpose(1, 2),
                                   beta=0.5, alpha=0.25)
            mask = torch.ones(self.seq, self.seq, dtype=torch.bool).triu(1)
            att = scores.masked_fill(mask, -1e4).softmax(-1) + torch.triu(scores, -1)
            return self.head((att @ x).flatten(1))

    class PoolUpsample(nn.Module):
        """VGG's adaptive average pool (uneven, overlapping windows),
        nearest upsampling by a factor and to a size, a scalar fill of a
        fresh strided tensor and of a slice of it, under an MSE loss."""

        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.randn(3, 5, 7))
            self.heads = nn.ModuleList(nn.Linear(3 * n, 4) for n in (6, 24, 21, 35))

        def forward(self, x):  # x [2, 3, 5, 7]
            y = x * self.w
            a = F.adaptive_avg_pool2d(y, (3, 2))
            u = F.interpolate(a, scale_factor=2, mode="nearest")
            v = F.interpolate(y, size=(7, 3), mode="nearest")
            m = y.new_empty_strided((2, 3, 5, 7), (105, 35, 7, 1))
            m.fill_(0.5)
            m[:, :, 1:3].fill_(2.0)
            return sum(head(p.flatten(1)) for head, p in zip(self.heads, (a, u, v, y * m)))

    def _mse_sum(output, target):
        return F.mse_loss(output, target) + 0.5 * F.mse_loss(output, target, reduction="sum")

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
        "activations": lambda: (Activations(), (torch.randn(8, 6) * 2,),
                                (torch.tensor([0, 1, 2, 0, 1, 2, 0, 1]),),
                                F.cross_entropy, "sgd"),
        "biased_attention": lambda: (BiasedAttention(), (torch.randn(2, 5, 6),),
                                     (torch.tensor([0, 2]),), F.cross_entropy, "sgd"),
        "pool_upsample": lambda: (PoolUpsample(), (torch.randn(2, 3, 5, 7),),
                                  (torch.randn(2, 4),), _mse_sum, "sgd"),
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
        "activations": {"aten.hardtanh", "aten.hardtanh_", "aten.hardtanh_backward",
                        "aten.hardswish_", "aten.hardswish_backward", "aten.hardsigmoid",
                        "aten.hardsigmoid_", "aten.hardsigmoid_backward", "aten.silu_",
                        "aten.hardswish", "aten.silu", "aten.neg", "aten.neg_"},
        "biased_attention": {"aten.baddbmm", "aten.triu"},
        "pool_upsample": {"aten._adaptive_avg_pool2d", "aten._adaptive_avg_pool2d_backward",
                          "aten.upsample_nearest2d.vec",
                          "aten.upsample_nearest2d_backward.vec", "aten.new_empty_strided",
                          "aten.fill_.Scalar", "aten.mse_loss", "aten.mse_loss_backward"},
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

    def test_activations(self):
        self.check("activations")

    def test_avg_pool(self):
        self.check("avg_pool")

    def test_causal_attention(self):
        self.check("causal_attention")

    def test_biased_attention(self):
        self.check("biased_attention")

    def test_fills(self):
        self.check("fills")

    def test_pool_upsample(self):
        self.check("pool_upsample")

    def test_shifted_windows(self):
        self.check("shifted_windows")


if __name__ == "__main__":
    unittest.main()
