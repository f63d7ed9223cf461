"""CPU kernels the zoo and common models need beyond the basics, against PyTorch.

Tiny models that make the exporter emit the kernels the bigger zoo models
need (average pooling, GPT's causal mask, Swin's shifted windows and
relative position bias) and those of common models outside the zoo
(MobileNet's and EfficientNet's activations, leaky ReLU, ELU, softplus,
mish and PReLU, reflection and replication padding, normalize, variance,
norms, smooth L1, Huber and KL losses, log-sigmoid, log1p, expm1 and atan,
baddbmm and triu attention, adaptive average and max pooling, nearest and
bilinear upsampling, pixel shuffles, group normalization, 1-D convolutions,
MSE loss, scalar fills, slice and index assignments with int64 index
arithmetic, batch norm on the input) run three training steps through
coop-opt and coop-run, and their losses and updated parameters must match
PyTorch's own steps within test_e2e's tolerance. Each model also checks that
its exported step really contains the kernels it is meant to test.
(silu_backward and mish_backward, which torch 1.13 never emits, are checked
in RuntimeTest.cpp.)

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

    class GroupNorms(nn.Module):
        """nn.GroupNorm: affine on 4-D and 3-D inputs, without an affine
        transform, and on the input itself (its backward then computes only
        the weight and bias gradients: a partial output_mask)."""

        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.randn(6, 3, 4))
            self.on_input = nn.GroupNorm(2, 6)
            self.affine = nn.GroupNorm(3, 6)
            self.plain = nn.GroupNorm(6, 6, affine=False)
            self.flat = nn.GroupNorm(1, 6)
            self.heads = nn.ModuleList(nn.Linear(72, 4) for _ in range(4))

        def forward(self, x):  # x [2, 6, 3, 4]
            y = x * self.w
            parts = (self.on_input(x), self.affine(y), self.plain(y * 2 + 1),
                     self.flat(y.reshape(2, 6, 12)))
            return sum(head(p.flatten(1)) for head, p in zip(self.heads, parts))

    class Conv1d(nn.Module):
        """1-D convolutions: strided, padded, dilated and grouped, on the
        input itself (no input gradient), one without a bias, and a
        grouped, strided transposed one with output padding."""

        def __init__(self):
            super().__init__()
            self.first = nn.Conv1d(4, 6, 3, stride=2, padding=2, dilation=2, groups=2)
            self.plain = nn.Conv1d(6, 6, 1, bias=False)
            self.up = nn.ConvTranspose1d(6, 4, 3, stride=2, padding=1, output_padding=1,
                                         groups=2)
            self.head = nn.Linear(4 * 12, 3)

        def forward(self, x):  # x [2, 4, 11]
            y = torch.tanh(self.first(x))  # [2, 6, 6]
            return self.head(self.up(self.plain(y)).flatten(1))  # [2, 4, 12]

    class Bilinear(nn.Module):
        """Bilinear upsampling with and without align_corners: by integer
        and fractional scale factors (ATen then reads positions by the
        factor, not by the sizes), to sizes smaller and larger, and one
        axis kept."""

        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.randn(3, 4, 5))
            sizes = (8 * 10, 6 * 8, 7 * 3, 3 * 8, 4 * 9)
            self.heads = nn.ModuleList(nn.Linear(3 * n, 4) for n in sizes)

        def forward(self, x):  # x [2, 3, 4, 5]
            y = x * self.w
            parts = (F.interpolate(y, scale_factor=2, mode="bilinear", align_corners=False),
                     F.interpolate(y, scale_factor=(1.5, 1.7), mode="bilinear",
                                   align_corners=False),
                     F.interpolate(y, size=(7, 3), mode="bilinear", align_corners=True),
                     F.interpolate(y, size=(3, 8), mode="bilinear", align_corners=False),
                     F.interpolate(y, size=(4, 9), mode="bilinear", align_corners=True))
            return sum(head(p.flatten(1)) for head, p in zip(self.heads, parts))

    class AdaptiveMaxPool(nn.Module):
        """Adaptive max pooling over uneven, overlapping windows, batched
        and of one [C, H, W] sample; the input holds repeated values down
        each column, so ties pick the first maximum."""

        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.randn(5))
            self.heads = nn.ModuleList(nn.Linear(n, 4) for n in (3 * 6, 3 * 4 * 2))

        def forward(self, x):  # x [2, 3, 7, 5], small integers
            y = x * self.w
            a = F.adaptive_max_pool2d(y, (3, 2))
            b = F.adaptive_max_pool2d(y[1], (4, 2))
            return self.heads[0](a.flatten(1)) + self.heads[1](b.flatten())

    class Activations2(nn.Module):
        """Leaky ReLU, ELU, SELU and CELU (in place and not: their backward
        then reads the result), softplus past its threshold, mish; the
        inputs span both signs widely."""

        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.randn(6) * 2)
            self.heads = nn.ModuleList(nn.Linear(6, 3) for _ in range(11))

        def forward(self, x):
            y = x * self.w
            parts = (F.leaky_relu(y), F.leaky_relu(y * 1.5, 0.2, inplace=True), F.elu(y),
                     F.elu(y - 0.5, 0.7, inplace=True), F.selu(y), F.celu(y, 0.5),
                     F.celu(y * 0.5, 1.5, inplace=True), F.softplus(y),
                     F.softplus(y, beta=2, threshold=1), F.mish(y),
                     F.mish(y + 1, inplace=True))
            return sum(head(p) for head, p in zip(self.heads, parts))

    class PReLUs(nn.Module):
        """nn.PReLU with one slope and with one per channel: torch's
        decompositions of it and of its backward reach prims.where, one
        operand a Python number, which the exporter traces as aten.where."""

        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 1)
            self.shared = nn.PReLU()
            self.per_channel = nn.PReLU(4, init=0.1)
            self.head = nn.Linear(8 * 9, 4)

        def forward(self, x):
            y = self.conv(x)
            return self.head(torch.cat((self.shared(y), self.per_channel(y)), 1).flatten(1))

    class Pads(nn.Module):
        """Reflection and replication padding, 1-D to 3-D, as modules and as
        convolutions' padding modes (torch 1.13 has no decomposition of
        them; the exporter's indexes every padded dim)."""

        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.randn(3, 4, 5))
            self.reflect = nn.Conv2d(3, 2, 3, padding=2, padding_mode="reflect")
            self.replicate = nn.Conv2d(3, 2, 3, padding=1, padding_mode="replicate")
            self.pads = (nn.ReflectionPad1d((2, 1)), nn.ReplicationPad1d(3),
                         nn.ReflectionPad2d((1, 3, 2, 0)), nn.ReplicationPad2d((0, 2, 1, 1)))
            self.heads = nn.ModuleList(nn.Linear(n, 3) for n in (84, 40, 96, 132, 162, 126, 140))

        def forward(self, x):
            y = x * self.w
            parts = (self.reflect(y), self.replicate(y),
                     *(pad(y.flatten(1, 2) if pad_1d else y)
                       for pad, pad_1d in zip(self.pads, (True, True, False, False))),
                     F.pad(y.unsqueeze(1), (1, 1, 0, 1, 1, 0), mode="replicate"))
            return sum(head(p.flatten(1)) for head, p in zip(self.heads, parts))

    class RefsPrimitives(nn.Module):
        """Functions torch 1.13 decomposes through its refs into primitives
        (convert_element_type, sum, div, ne, log1p), which the exporter
        traces as aten kernels: normalize, var, std and norm, pairwise
        distance, smooth L1, Huber and KL divergence, log-sigmoid; and
        log1p, expm1 and atan themselves."""

        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(6, 6)
            self.heads = nn.ModuleList(nn.Linear(n, 3) for n in (6, 1, 6, 1, 1, 6))

        def forward(self, x):
            y = self.lin(x)
            parts = (F.normalize(y, dim=1), y.var(1, keepdim=True) + y.std(1, keepdim=True),
                     y.norm(dim=0, keepdim=True).expand_as(y),
                     F.pairwise_distance(y, y.flip(0)).unsqueeze(1),
                     (F.smooth_l1_loss(y, x) + F.huber_loss(y, x * 0.5, delta=0.7)
                      + F.kl_div(F.log_softmax(y, 1), F.softmax(x, 1), reduction="batchmean")
                      ).expand(y.shape[0], 1),
                     F.logsigmoid(y) + torch.log1p(y.abs()) + torch.expm1(y * 0.5)
                     + torch.atan(y))
            return sum(head(p) for head, p in zip(self.heads, parts))

    class PixelShuffle(nn.Module):
        """Sub-pixel convolution's shuffles: pixel_shuffle (whose backward is
        pixel_unshuffle) and pixel_unshuffle."""

        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.randn(8, 3, 3))
            self.heads = nn.ModuleList(nn.Linear(72, 4) for _ in range(2))

        def forward(self, x):  # x [2, 8, 3, 3]
            y = x * self.w
            up = F.pixel_shuffle(y, 2)  # [2, 2, 6, 6]
            down = F.pixel_unshuffle(up[:, :, :, :3] * 2, 3)  # [2, 18, 2, 1]
            return self.heads[0](up.flatten(1)) + self.heads[1](
                torch.cat([down.flatten(1)] * 2, 1))

    def _mse_sum(output, target):
        return F.mse_loss(output, target) + 0.5 * F.mse_loss(output, target, reduction="sum")

    class SliceAssign(nn.Module):
        """Slice assignments: copy_ into a strided view of a fresh tensor, and
        a fill of one channel."""

        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.randn(4, 6, 6))
            self.head = nn.Linear(4 * 36, 3)

        def forward(self, x):
            g = torch.zeros_like(x)
            g[:, :, ::2, 1::2] = x[:, :, ::2, 1::2] * self.w[:, ::2, 1::2]
            g[:, 1] = 2.0
            return self.head((g + x).flatten(1))

    class NormFirst(nn.Module):
        """Batch norm straight on the input: its backward computes no input
        gradient (output_mask [False, True, True])."""

        def __init__(self):
            super().__init__()
            self.bn = nn.BatchNorm2d(3)
            self.fc = nn.Linear(3 * 4 * 4, 5)

        def forward(self, x):
            return self.fc(self.bn(x).flatten(1))

    class IndexAssign(nn.Module):
        """Rows written in place by index (index_put_), chosen by modular
        position arithmetic (remainder.Scalar on int64)."""

        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.randn(12, 4))
            self.head = nn.Linear(48, 3)

        def forward(self, x):
            y = x * self.w
            rows = (torch.arange(6) * 5 + 3) % 12
            y[rows] = y[(rows + 7) % 12] * 2
            return self.head(y.flatten().unsqueeze(0).expand(2, -1))

    def convnext():
        """torchvision's ConvNeXt, two small stages: depthwise convolutions,
        channels-last layer norm and MLP between Permute modules, layer
        scale. torch's layer-scale `mul` keeps the permuted strides, so its
        backward reshapes as views what coop's contiguous results cannot
        view; the importer makes those reshapes copies."""
        from torchvision.models.convnext import CNBlockConfig, ConvNeXt
        return ConvNeXt([CNBlockConfig(8, 16, 1), CNBlockConfig(16, None, 1)],
                        num_classes=3)

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
        "group_norm": lambda: (GroupNorms(), (torch.randn(2, 6, 3, 4),),
                               (torch.tensor([1, 3]),), F.cross_entropy, "sgd"),
        "conv1d": lambda: (Conv1d(), (torch.randn(2, 4, 11),), (torch.tensor([2, 0]),),
                           F.cross_entropy, "sgd"),
        "bilinear": lambda: (Bilinear(), (torch.randn(2, 3, 4, 5),), (torch.tensor([0, 3]),),
                             F.cross_entropy, "sgd"),
        "adaptive_max_pool": lambda: (AdaptiveMaxPool(),
                                      (torch.randint(-2, 3, (2, 3, 7, 5)).float(),),
                                      (torch.tensor([1, 2]),), F.cross_entropy, "sgd"),
        "activations2": lambda: (Activations2(), (torch.randn(8, 6) * 2,),
                                 (torch.tensor([0, 1, 2, 0, 1, 2, 0, 1]),),
                                 F.cross_entropy, "sgd"),
        "prelu": lambda: (PReLUs(), (torch.randn(2, 3, 3, 3),), (torch.tensor([3, 0]),),
                          F.cross_entropy, "sgd"),
        "pads": lambda: (Pads(), (torch.randn(2, 3, 4, 5),), (torch.tensor([2, 0]),),
                         F.cross_entropy, "sgd"),
        "refs_primitives": lambda: (RefsPrimitives(), (torch.randn(4, 6),),
                                    (torch.tensor([0, 2, 1, 1]),), F.cross_entropy, "sgd"),
        "pixel_shuffle": lambda: (PixelShuffle(), (torch.randn(2, 8, 3, 3),),
                                  (torch.tensor([3, 1]),), F.cross_entropy, "sgd"),
        "slice_assign": lambda: (SliceAssign(), (torch.randn(2, 4, 6, 6),),
                                 (torch.tensor([0, 2]),), F.cross_entropy, "sgd"),
        "norm_first": lambda: (NormFirst(), (torch.randn(2, 3, 4, 4),),
                               (torch.tensor([4, 1]),), F.cross_entropy, "sgd"),
        "index_assign": lambda: (IndexAssign(), (torch.randn(12, 4),),
                                 (torch.tensor([2, 0]),), F.cross_entropy, "sgd"),
        "convnext": lambda: (convnext(), (torch.randn(2, 3, 16, 16),),
                             (torch.tensor([1, 2]),), F.cross_entropy, "sgd"),
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
        "group_norm": {"aten.native_group_norm", "aten.native_group_norm_backward"},
        "conv1d": {"aten.convolution", "aten.convolution_backward"},
        "bilinear": {"aten.upsample_bilinear2d.vec", "aten.upsample_bilinear2d_backward.vec"},
        "adaptive_max_pool": {"aten.adaptive_max_pool2d", "aten.adaptive_max_pool2d_backward"},
        "activations2": {"aten.leaky_relu", "aten.leaky_relu_", "aten.leaky_relu_backward",
                         "aten.elu", "aten.elu_", "aten.celu", "aten.celu_",
                         "aten.elu_backward", "aten.softplus", "aten.softplus_backward",
                         "aten.mish", "aten.mish_"},
        "prelu": {"aten.where.self"},
        "pads": {"aten.arange.start", "aten.index_select"},
        "refs_primitives": {"aten.sum.dim_IntList", "aten.div.Tensor", "aten.ne.Tensor",
                            "aten.log1p", "aten.expm1", "aten.atan"},
        "pixel_shuffle": {"aten.pixel_shuffle", "aten.pixel_unshuffle"},
        "slice_assign": {"aten.copy_", "aten.fill_.Tensor"},
        "norm_first": {"aten.native_batch_norm_backward"},
        "index_assign": {"aten.index_put_", "aten.remainder.Scalar"},
        "convnext": {"aten._reshape_alias", "aten.native_layer_norm"},
    }

    test_e2e.add_models(CASES)


def setUpModule():
    test_e2e.setUpModule()


class ZooKernels(test_e2e.ModelCase):
    def check(self, name):
        kernels = {op.kernel for op in self.model(name).graph.ops}
        self.assertLessEqual(KERNELS[name], kernels,
                             f"{name} does not emit {KERNELS[name] - kernels}")
        self.check_against_torch(name)

    def test_activations(self):
        self.check("activations")

    def test_activations2(self):
        self.check("activations2")

    def test_adaptive_max_pool(self):
        self.check("adaptive_max_pool")

    def test_bilinear(self):
        self.check("bilinear")

    def test_conv1d(self):
        self.check("conv1d")

    def test_group_norm(self):
        self.check("group_norm")

    def test_refs_primitives(self):
        self.check("refs_primitives")

    def test_pads(self):
        self.check("pads")

    def test_prelu(self):
        self.check("prelu")

    def test_pixel_shuffle(self):
        self.check("pixel_shuffle")

    def test_slice_assign(self):
        self.check("slice_assign")

    def test_norm_first(self):
        self.check("norm_first")

    def test_index_assign(self):
        self.check("index_assign")

    def test_convnext(self):
        self.check("convnext")

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
