"""The exporter against the runtime's kernel registry: a kernel the runtime
lacks is decomposed into kernels it has (torch's decompositions, then the
exporter's own), a kernel it has is kept, attention is traced in its math
form unless the runtime has the fused kernel, and a kernel nothing covers
is an ExportError that names it."""
import unittest

import support  # noqa: F401  (skips without torch)
import torch
import torch.nn as nn
import torch.nn.functional as F
from test_exporter import GraphInvariants, SmallCNN, export_cnn, kernels

from coop_export import ExportError, export
from coop_export import kernel_coverage

RUNTIME = kernel_coverage.runtime_kernels()


class AllAny(nn.Module):
    """A softmax whose fully masked rows are zeroed, as `_safe_softmax`
    does: `all` over a row, `any` over the batch."""
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        scores = self.lin(x)
        masked = scores.gt(0.5)
        rows = masked.all(-1, keepdim=True)
        return torch.where(rows, torch.zeros_like(scores), scores.softmax(-1)) * masked.any()


class Attention(nn.Module):
    def __init__(self, d=8, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = (y.view(b, t, self.heads, d // self.heads).transpose(1, 2)
                   for y in self.qkv(x).split(d, dim=2))
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def export_attention(**options):
    torch.manual_seed(0)
    return export(Attention(), (torch.randn(2, 4, 8),), lambda out: out.square().sum(),
                  **options)


class KernelCoverageTest(unittest.TestCase, GraphInvariants):
    def test_a_kernel_nothing_covers_is_named(self):
        without = RUNTIME - {"aten.convolution"}
        with self.assertRaisesRegex(ExportError, r"no kernel for 'aten\.convolution' \(1 op\)"):
            export_cnn(kernels=without)
        graph = export_cnn(kernels=without, check_kernels=False)
        self.assertEqual(kernels(graph)["aten.convolution"], 1)

    def test_kernels_the_runtime_has_are_kept_the_others_decomposed(self):
        self.assertEqual(kernels(export_cnn())["aten.addmm"], 1)
        graph = export_cnn(kernels=RUNTIME - {"aten.addmm"})
        self.check_invariants(graph)
        ops = kernels(graph)
        self.assertNotIn("aten.addmm", ops)
        self.assertIn("aten.mm", ops)  # torch's decomposition: mm, then add
        for op in graph.ops:
            if op.kind == op.COMPUTE:
                self.assertTrue(kernel_coverage.has_kernel(op.kernel, RUNTIME), op.kernel)

    def test_all_and_any_decompositions_match_torch(self):
        torch.manual_seed(0)
        for x in (torch.rand(3, 4, 5) > 0.3, torch.randint(0, 3, (3, 4, 5)),
                  torch.randn(3, 4).relu()):
            self.assertTrue(torch.equal(kernel_coverage._all(x), x.all()))
            self.assertTrue(torch.equal(kernel_coverage._any(x), x.any()))
            for dim in (0, -1):
                for keepdim in (False, True):
                    self.assertTrue(torch.equal(kernel_coverage._all(x, dim, keepdim),
                                                x.all(dim, keepdim)))
                    self.assertTrue(torch.equal(kernel_coverage._any(x, dim, keepdim),
                                                x.any(dim, keepdim)))
        graph = export(AllAny(), (torch.randn(3, 4),), lambda out: out.sum())
        self.check_invariants(graph)
        ops = kernels(graph)
        self.assertFalse([k for k in ops if k.startswith(("aten.all", "aten.any"))], ops)
        self.assertIn("aten.bitwise_not", ops)

    @unittest.skipUnless(hasattr(F, "scaled_dot_product_attention"),
                         f"torch {torch.__version__} has no F.scaled_dot_product_attention")
    def test_attention_is_fused_only_where_the_runtime_has_the_kernel(self):
        ops = kernels(export_attention())
        self.assertFalse([k for k in ops if "scaled_dot_product" in k], ops)
        self.assertIn("aten.bmm", ops)
        fused = RUNTIME | set(kernel_coverage.FUSED_CPU_ATTENTION)
        ops = kernels(export_attention(kernels=fused))
        self.assertIn(kernel_coverage.FUSED_CPU_ATTENTION[0], ops)
        self.assertIn(kernel_coverage.FUSED_CPU_ATTENTION[1], ops)


if __name__ == "__main__":
    unittest.main()
