"""GPT blocks whose attention is F.scaled_dot_product_attention or
nn.MultiheadAttention, through the exporter, coop-opt and coop-run.

Under torch 2.x both trace to kernels the runtime lacks: the fused CPU
attention (`_scaled_dot_product_flash_attention_for_cpu` and its
backward) and, with attention dropout, `_safe_softmax`. The exporter
traces attention in its math form and decomposes `_safe_softmax`
(python/coop_export/kernel_coverage.py), so every block here exports,
imports, compiles and passes `coop-run --check`; without attention
dropout (whose mask comes from torch's generator inside the attention) its
three training steps also match PyTorch's within test_e2e's tolerance.
torch 1.13 has no F.scaled_dot_product_attention: those cases skip there,
the nn.MultiheadAttention ones run.

Needs the tools named by COOP_OPT, COOP_TRANSLATE and COOP_RUN; reuses
test_e2e's export-plan-run-compare."""
import math
import subprocess
import unittest

import test_e2e
from test_e2e import torch

if torch is not None:
    import small_models
    import torch.nn.functional as F
    from torch import nn

    class GPTBlock(nn.Module):
        """Token and position embeddings, one pre-norm decoder block
        (causal attention, GELU MLP, residual dropout from the runtime's
        stream), a language-model head."""

        def __init__(self, attention, attention_dropout, vocab=13, d=16, heads=2, seq=6):
            super().__init__()
            self.attention, self.heads, self.p = attention, heads, attention_dropout
            self.tok, self.pos = nn.Embedding(vocab, d), nn.Parameter(torch.randn(seq, d) * 0.1)
            self.ln1, self.ln2, self.ln = nn.LayerNorm(d), nn.LayerNorm(d), nn.LayerNorm(d)
            if attention == "sdpa":
                # No bias: the key bias gets a gradient of pure rounding noise
                # (softmax ignores it), which Adam scales up to a full step.
                self.qkv, self.proj = nn.Linear(d, 3 * d, bias=False), nn.Linear(d, d)
            else:
                self.mha = nn.MultiheadAttention(d, heads, dropout=attention_dropout,
                                                 batch_first=True)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
            self.drop = nn.Dropout(0.1)
            self.head = nn.Linear(d, vocab)

        def attend(self, x):
            b, t, d = x.shape
            if self.attention == "mha":
                mask = torch.ones(t, t, dtype=torch.bool).triu(1)
                return self.mha(x, x, x, attn_mask=mask, need_weights=False)[0]
            q, k, v = (y.view(b, t, self.heads, d // self.heads).transpose(1, 2)
                       for y in self.qkv(x).split(d, dim=2))
            out = F.scaled_dot_product_attention(
                q, k, v, dropout_p=self.p if self.training else 0.0, is_causal=True)
            return self.proj(out.transpose(1, 2).reshape(b, t, d))

        def forward(self, tokens):
            x = self.tok(tokens) + self.pos
            x = x + self.drop(self.attend(self.ln1(x)))
            x = x + self.drop(self.mlp(self.ln2(x)))
            return self.head(self.ln(x))

    def _case(attention, attention_dropout, optimizer):
        def build():
            model = GPTBlock(attention, attention_dropout)
            tokens = torch.randint(0, 13, (32, 6))
            return (model, (tokens,), (torch.randint(0, 13, (32, 6)),),
                    small_models._lm_loss, optimizer)
        return build

    CASES = {
        "sdpa": _case("sdpa", 0.0, "adam"),
        "sdpa_dropout": _case("sdpa", 0.1, "adamw"),
        "mha": _case("mha", 0.0, "sgd"),
        "mha_dropout": _case("mha", 0.1, "adam"),
    }
    test_e2e.add_models(CASES)


def setUpModule():
    test_e2e.setUpModule()


class Attention(test_e2e.ModelCase):
    def setUp(self):
        if self._testMethodName.startswith("test_sdpa") and not hasattr(
                F, "scaled_dot_product_attention"):
            self.skipTest(f"torch {torch.__version__} has no F.scaled_dot_product_attention")

    def check_runs(self, name):
        """The unconstrained plan and one at 0.75 of its arena (with
        recomputations; the floor is near 0.55) pass `coop-run --check`,
        and two steps run."""
        model = self.model(name)
        kernels = {op.kernel for op in model.graph.ops}
        self.assertFalse({k for k in kernels if "scaled_dot_product" in k or "safe_softmax" in k},
                         f"{name}: fused attention kernels were exported")
        for ratio in (1.0, 0.75):
            plan = model.plan("none" if ratio == 1.0 else "search", ratio)
            self.assertIsNotNone(plan, f"{name} does not plan at ratio {ratio}")
            out = subprocess.run([test_e2e.tool("COOP_RUN"), plan, "--check"],
                                 capture_output=True, text=True)
            self.assertEqual(out.returncode, 0, f"{name} at {ratio}: {out.stderr}")
            self.assertIn("every launch has a cpu kernel that accepts it", out.stdout)
        losses, _ = model.run(plan, steps=2)
        self.assertEqual(len(losses), 2)
        self.assertTrue(all(math.isfinite(loss) for loss in losses), losses)

    def test_sdpa_matches_torch(self):
        self.check_runs("sdpa")
        self.check_against_torch("sdpa")

    def test_sdpa_with_dropout_runs(self):
        self.check_runs("sdpa_dropout")

    def test_multihead_attention_matches_torch(self):
        self.check_runs("mha")
        self.check_against_torch("mha")

    def test_multihead_attention_with_dropout_runs(self):
        self.check_runs("mha_dropout")


if __name__ == "__main__":
    unittest.main()
