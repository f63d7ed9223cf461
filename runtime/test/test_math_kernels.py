"""The CPU kernels of runtime/src/CpuKernelsMath.cpp against PyTorch.

Tiny models written the way models outside the zoo write their math: a
LLaMA-style RMSNorm and rotary embedding, a hand-written softmax and
log-softmax loss, a hand-written layer norm with var/std/var_mean, a mix of
clamps, absolute values, signs, erf, maximum/minimum, powers and masks (in
place and not), and T5-style relative position buckets in int64. Each runs
three training steps through coop-opt and coop-run, and its losses and
updated parameters must match PyTorch's own steps within test_e2e's
tolerance; each checks that its exported step really contains the kernels
it is meant to test (forward and backward).

Needs torch (for /usr/bin/python3) and the tools named by COOP_OPT,
COOP_TRANSLATE and COOP_RUN; reuses test_zoo_kernels' cases and checks."""
import unittest

import test_zoo_kernels
from test_zoo_kernels import torch

if torch is not None:
    import torch.nn.functional as F
    from torch import nn

    class RMSNormRotary(nn.Module):
        """LLaMA's RMSNorm (pow, mean, rsqrt) and rotary embedding (inverse
        frequencies from pow.Scalar, sin and cos of the positions, a rotated
        half), and sin and cos of a trainable path (their backwards)."""

        def __init__(self, d=8, seq=5):
            super().__init__()
            self.d, self.seq = d, seq
            self.proj = nn.Linear(d, d)
            self.norm = nn.Parameter(1 + 0.1 * torch.randn(d))
            self.phase = nn.Parameter(torch.randn(d))
            self.head = nn.Linear(seq * d, 3)

        def forward(self, x):  # x [B, seq, d]
            h = self.proj(x)
            h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6) * self.norm
            inv_freq = torch.pow(10000.0, -torch.arange(0, self.d, 2, dtype=torch.float32)
                                 / self.d)
            freqs = torch.arange(self.seq, dtype=torch.float32)[:, None] * inv_freq[None]
            emb = torch.cat((freqs, freqs), -1)
            half = torch.cat((-h[..., self.d // 2:], h[..., :self.d // 2]), -1)
            rotated = h * emb.cos() + half * emb.sin()
            waves = torch.sin(h) * torch.cos(self.phase * h)
            return self.head((rotated + waves).flatten(1))

    def _manual_cross_entropy(logits, one_hot):
        """Cross entropy written out: a log-softmax shifted by the
        (detached) maximum."""
        shifted = logits - logits.amax(-1, keepdim=True).detach()
        log_probs = shifted - shifted.exp().sum(-1, keepdim=True).log()
        return -(log_probs * one_hot).sum(-1).mean()

    class ManualSoftmax(nn.Module):
        """Attention weights by a hand-written softmax (detached amax, exp,
        sum, division), amax/amin over two dimensions without keepdim as
        features. (amax's and amin's backward count ties in int64, which
        the core sum and div kernels do not compute.)"""

        def __init__(self, d=6, seq=4):
            super().__init__()
            self.q = nn.Linear(d, d)
            self.k = nn.Linear(d, d, bias=False)
            self.head = nn.Linear(seq * d + seq + d, 4)

        def forward(self, x):  # x [B, seq, d]
            scores = self.q(x) @ self.k(x).transpose(1, 2)
            e = (scores - scores.amax(-1, keepdim=True).detach()).exp()
            att = e / e.sum(-1, keepdim=True)
            y = att @ x
            with torch.no_grad():
                extremes = y.amax((0, 2))[None] + scores.amin((1, 2))[:, None]  # [B, seq]
                edge = y.amax((0, 1)).expand(y.shape[0], -1)  # [B, d]
            return self.head(torch.cat((y.flatten(1), extremes, edge), -1))

    class ManualLayerNorm(nn.Module):
        """Layer norm written out (mean, biased var), standardization by
        std, var_mean over two dimensions, the variance of everything."""

        def __init__(self, d=8):
            super().__init__()
            self.proj = nn.Linear(d, d)
            self.gain = nn.Parameter(1 + 0.1 * torch.randn(d))
            self.bias = nn.Parameter(0.1 * torch.randn(d))
            self.head = nn.Linear(d, 3)

        def forward(self, x):  # x [B, seq, d]
            h = self.proj(x)
            mean = h.mean(-1, keepdim=True)
            var = h.var(-1, unbiased=False, keepdim=True)
            normed = (h - mean) / torch.sqrt(var + 1e-5) * self.gain + self.bias
            standard = (h - mean) / h.std(-1, keepdim=True)
            var01, mean01 = torch.var_mean(h, dim=(0, 1))
            return self.head((normed + standard).mean(1) * var01 + mean01 + h.var())

    class MathMix(nn.Module):
        """Clamps (both bounds, one bound, in place), abs (sgn in its
        backward), sign, erf, maximum, minimum, rsub, reciprocal, log, exp,
        rsqrt, powers (special and general exponents, tensor exponents),
        comparisons as masks, logical_and and where; many in place. (torch
        1.13 cannot export sgn's own backward.)"""

        def __init__(self, d=6):
            super().__init__()
            self.w = nn.Parameter(torch.randn(d) * 1.5)
            self.v = nn.Parameter(torch.randn(d))
            self.heads = nn.ModuleList(nn.Linear(d, 3) for _ in range(8))

        def forward(self, x):
            y, z = x * self.w, x * self.v
            pos = y.abs() + 1
            clamps = (y.clamp(-1, 1) + y.clamp(min=0.2) + y.clamp(max=0.5)
                      + torch.clamp_min(y, -0.3) + torch.clamp_max(z, 0.4)
                      + (y * 2).clamp_(-0.5, 0.5) + (z * 2).clamp_min_(0.1)
                      + (z * 3).clamp_max_(0.2))
            signs = y.abs() + y.sign() * z + (y * z).abs_() + (y - 0.5).sign_() * z
            smooth = (torch.erf(y) + (z * 0.5).erf_() + torch.maximum(y, z)
                      + torch.minimum(y, 1 - z) + torch.rsub(y, z, alpha=0.5))
            inverse = (pos.reciprocal() + torch.log(pos) + (z * 0.5).exp()
                       + (z * 0.3).exp_() + (pos * 2).log_() + (pos + 1).reciprocal_()
                       + torch.rsqrt(pos) + (pos * 3).rsqrt_())
            powers = (y.pow(3) + pos ** 0.5 + pos ** -0.5 + pos ** -2 + pos ** -1.5
                      + pos ** z + (pos * 2).pow_(1.5) + (pos + 1).pow_(z))
            masks = ((y >= z) * z + (y <= 0.1) * y + (y > 0.5) * z + (y < -0.5) * z
                     + (z >= 0.2) * y + (z <= y) * y + (y != z) * z
                     + torch.logical_and(y > 0, z > 0) * (y + z))
            chosen = torch.where(y > z, y, z * 0.1) + torch.where(z < 0, y, z)
            waves = (y * 1).sin_() + (z * 1).cos_()
            return sum(head(p) for head, p in zip(
                self.heads, (clamps, signs, smooth, inverse, powers, masks, chosen, waves)))

    class RelativeBuckets(nn.Module):
        """T5's relative position buckets in int64 (abs, sign, clamp,
        minimum, lt/gt, where) indexing a learned bias on attention scores."""

        def __init__(self, d=6, seq=5, buckets=6):
            super().__init__()
            self.seq, self.buckets = seq, buckets
            self.q = nn.Linear(d, d)
            self.bias = nn.Embedding(2 * buckets, 1)
            self.head = nn.Linear(seq * d, 3)

        def forward(self, x):  # x [B, seq, d]
            positions = torch.arange(self.seq)
            # (int64 subtraction broadcasts only its second operand)
            rel = positions.expand(self.seq, self.seq) - positions[:, None]
            dist = rel.abs()
            far = torch.minimum(dist + 2, torch.full_like(dist, self.buckets - 1))
            bucket = torch.where(dist < 2, dist, far)
            bucket = torch.where(rel > 0, bucket + self.buckets, bucket)
            bucket = (bucket + rel.sign()).clamp(0, 2 * self.buckets - 1)
            scores = self.q(x) @ x.transpose(1, 2) + self.bias(bucket)[:, :, 0]
            return self.head((scores.softmax(-1) @ x).flatten(1))

    class MixedDtypes(nn.Module):
        """ATen's type promotion: int64 positions broadcast on both sides,
        then mixed with float32 activations (mul, add, true division)."""

        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(torch.full((5, 5), 0.1))
            self.head = nn.Linear(25, 3)

        def forward(self, x):
            positions = torch.arange(5)
            rel = positions[None, :] - positions[:, None]
            y = x * self.scale + rel / 4 + (rel * rel) * self.scale
            return self.head(y.flatten(1))

    class MaxPoolingGrad(nn.Module):
        """amax and amin with gradients, over values that tie: their
        backward divides by the tie count, an int64 sum of a bool mask."""

        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(6, 4)
            self.head = nn.Linear(16, 3)

        def forward(self, x):
            h = self.lin(x)
            doubled = torch.cat([h, h], dim=-1)  # every extreme twice
            pooled = torch.cat([doubled.amax(dim=1), doubled.amin(dim=1)], dim=-1)
            return self.head(pooled)

    CASES = {
        "rmsnorm_rotary": lambda: (RMSNormRotary(), (torch.randn(2, 5, 8),),
                                   (torch.tensor([0, 2]),), F.cross_entropy, "sgd"),
        "manual_softmax": lambda: (ManualSoftmax(), (torch.randn(2, 4, 6),),
                                   (F.one_hot(torch.tensor([1, 3]), 4).float(),),
                                   _manual_cross_entropy, "sgd"),
        "manual_layer_norm": lambda: (ManualLayerNorm(), (torch.randn(2, 4, 8),),
                                      (torch.tensor([2, 0]),), F.cross_entropy, "sgd"),
        "math_mix": lambda: (MathMix(), (torch.randn(8, 6) * 2,),
                             (torch.tensor([0, 1, 2, 0, 1, 2, 0, 1]),), F.cross_entropy,
                             "sgd"),
        "relative_buckets": lambda: (RelativeBuckets(), (torch.randn(2, 5, 6),),
                                     (torch.tensor([1, 0]),), F.cross_entropy, "sgd"),
        "mixed_dtypes": lambda: (MixedDtypes(), (torch.randn(2, 5, 5),),
                                 (torch.tensor([2, 1]),), F.cross_entropy, "sgd"),
        "max_pooling_grad": lambda: (MaxPoolingGrad(), (torch.randn(2, 5, 6),),
                                     (torch.tensor([0, 2]),), F.cross_entropy, "sgd"),
    }
    KERNELS = {
        "rmsnorm_rotary": {"aten.pow.Tensor_Scalar", "aten.rsqrt", "aten.pow.Scalar",
                           "aten.sin", "aten.cos"},
        "manual_softmax": {"aten.amax", "aten.amin", "aten.exp", "aten.log"},
        "manual_layer_norm": {"aten.var.correction", "aten.std.correction",
                              "aten.var_mean.correction", "aten.masked_fill_.Scalar"},
        "math_mix": {"aten.clamp", "aten.clamp_", "aten.clamp_min", "aten.clamp_min_",
                     "aten.clamp_max", "aten.clamp_max_", "aten.abs", "aten.abs_",
                     "aten.sign", "aten.sign_", "aten.sgn", "aten.erf",
                     "aten.erf_", "aten.maximum", "aten.minimum", "aten.rsub.Scalar",
                     "aten.rsub.Tensor", "aten.reciprocal", "aten.reciprocal_", "aten.log",
                     "aten.log_", "aten.exp", "aten.exp_", "aten.rsqrt", "aten.rsqrt_",
                     "aten.pow.Tensor_Scalar", "aten.pow.Tensor_Tensor", "aten.pow_.Scalar",
                     "aten.pow_.Tensor", "aten.ge.Scalar", "aten.le.Scalar", "aten.gt.Scalar",
                     "aten.lt.Scalar", "aten.ge.Tensor", "aten.le.Tensor", "aten.gt.Tensor",
                     "aten.lt.Tensor", "aten.ne.Tensor", "aten.eq.Tensor",
                     "aten.logical_and", "aten.logical_and_", "aten.where.self",
                     "aten.scalar_tensor", "aten.masked_fill_.Scalar", "aten.sin_",
                     "aten.cos_", "aten.sin", "aten.cos"},
        "relative_buckets": {"aten.abs", "aten.sign", "aten.minimum", "aten.clamp",
                             "aten.lt.Scalar", "aten.gt.Scalar", "aten.where.self"},
        "mixed_dtypes": {"aten.sub.Tensor", "aten.div.Tensor", "aten.mul.Tensor"},
        "max_pooling_grad": {"aten.amax", "aten.amin", "aten.sum.dim_IntList",
                             "aten.eq.Tensor"},
    }
    test_zoo_kernels.CASES.update(CASES)
    test_zoo_kernels.KERNELS.update(KERNELS)


def setUpModule():
    test_zoo_kernels.setUpModule()


# ZooKernels' fixtures and check, without its tests (test_zoo_kernels runs
# those).
_ZooFixtures = type("_ZooFixtures", (test_zoo_kernels.test_e2e.ModelCase,), {
    name: value for name, value in vars(test_zoo_kernels.ZooKernels).items()
    if not name.startswith(("test_", "__"))})


class MathKernels(_ZooFixtures):
    """One test_<case> per case above."""


for _case in (CASES if torch is not None else ()):
    setattr(MathKernels, f"test_{_case}", lambda self, case=_case: self.check(case))


if __name__ == "__main__":
    unittest.main()
