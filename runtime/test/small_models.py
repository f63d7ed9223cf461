"""Small instances of the zoo's architectures for the runtime's end-to-end
tests: an MLP, a ResNet and a transformer encoder with dropout, exported
with real initial values, plus a PyTorch reference of the same steps.

The runtime draws dropout masks from its own counter-based generator, so
the reference runs each step's forward pass inside coop.rng.CounterStream
(the one Python copy of the stream), which makes nn.Dropout draw the
runtime's masks of that step."""
import math
import sys

import torch
import torch.nn.functional as F
from torch import nn

from coop.rng import CounterStream, random_span
from coop_export import export
from coop_export.exporter import STEP_COUNTER, make_optimizer


def step_stream(step, span):
    """The runtime's random stream in 0-based step `step` of a graph whose
    random span is `span` (coop.rng.random_span)."""
    return CounterStream(SEED, step * span)


# --- models ---------------------------------------------------------------

class MLP(nn.Module):
    def __init__(self, hidden_layers=32):
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.hidden = nn.ModuleList(nn.Linear(64, 64) for _ in range(hidden_layers))
        self.out = nn.Linear(64, 10)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        x = self.drop(F.relu(self.fc1(x)))
        for fc in self.hidden:
            x = F.relu(fc(x))
        return self.out(x)


class BatchNorm2d(nn.BatchNorm2d):
    """nn.BatchNorm2d calling native_batch_norm directly: F.batch_norm also
    traces a zero-byte 'reserve' tensor (aten.empty.memory_format, size
    [0]) that coop-verify-plan rejects today."""

    def forward(self, x):
        self.num_batches_tracked.add_(1)
        return torch.native_batch_norm(x, self.weight, self.bias, self.running_mean,
                                       self.running_var, True, self.momentum, self.eps)[0]


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                      BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)), inplace=True)
        out = self.bn2(self.conv2(out))
        return F.relu(out + (x if self.down is None else self.down(x)), inplace=True)


class ResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, 1, 1, bias=False)
        self.bn1 = BatchNorm2d(8)
        self.pool = nn.MaxPool2d(2)
        self.layer1 = nn.Sequential(*(Block(8, 8, 1) for _ in range(28)))
        self.layer2 = nn.Sequential(Block(8, 16, 2), Block(16, 16, 1))
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.bn1(self.conv1(x)), inplace=True))
        x = self.layer2(self.layer1(x))
        return self.fc(x.mean((2, 3)))


class EncoderLayer(nn.Module):
    def __init__(self, d, heads, p):
        super().__init__()
        self.heads = heads
        # Three projections, not one split: the exporter traces chunk() as a
        # compute op whose results keep the source's strides. No key bias:
        # softmax ignores it, so its gradient is pure rounding noise, which
        # Adam would scale up to a full step.
        self.q, self.v = nn.Linear(d, d), nn.Linear(d, d)
        self.k = nn.Linear(d, d, bias=False)
        self.proj = nn.Linear(d, d)
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ff1, self.ff2 = nn.Linear(d, 2 * d), nn.Linear(2 * d, d)
        self.drop_attn, self.drop1, self.drop2 = (nn.Dropout(p) for _ in range(3))

    def forward(self, x):
        b, s, d = x.shape
        h = self.heads
        q, k, v = self.q(x), self.k(x), self.v(x)
        q, k, v = (t.reshape(b, s, h, d // h).transpose(1, 2).reshape(b * h, s, d // h)
                   for t in (q, k, v))
        att = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(d // h)
        att = self.drop_attn(torch.softmax(att, dim=-1))
        out = torch.bmm(att, v).reshape(b, h, s, d // h).transpose(1, 2).reshape(b, s, d)
        x = self.ln1(x + self.drop1(self.proj(out)))
        return self.ln2(x + self.drop2(self.ff2(F.gelu(self.ff1(x)))))


class Transformer(nn.Module):
    def __init__(self, vocab=50, d=32, heads=4, layers=2, seq=16, p=0.1):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(seq, d) * 0.02)
        self.layers = nn.ModuleList(EncoderLayer(d, heads, p) for _ in range(layers))
        self.head = nn.Linear(d, vocab)

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


class UNet(nn.Module):
    """A two-level U-Net: `depth` 3x3 convolutions with batch norm and ReLU,
    max-pool down, a stride-2 transposed convolution up, the skip
    concatenated on the channels, a 1x1 convolution to per-pixel classes."""

    @staticmethod
    def convs(cin, cout, count):
        layers = []
        for i in range(count):
            layers += [nn.Conv2d(cin if i == 0 else cout, cout, 3, padding=1, bias=False),
                       nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]
        return nn.Sequential(*layers)

    def __init__(self, cin=3, width=4, classes=3, depth=8):
        super().__init__()
        self.inc = self.convs(cin, width, depth)
        self.down = self.convs(width, 2 * width, depth)
        self.up = nn.ConvTranspose2d(2 * width, width, 2, stride=2)
        self.conv = self.convs(2 * width, width, depth)
        self.outc = nn.Conv2d(width, classes, 1)

    def forward(self, x):
        skip = self.inc(x)
        x = self.up(self.down(F.max_pool2d(skip, 2)))
        return self.outc(self.conv(torch.cat([skip, x], dim=1)))


class LSTM(nn.Module):
    """A one-layer LSTM over a few time steps (unrolled by the exporter into
    per-step matmuls and gates), classifying from the last step."""

    def __init__(self, inputs=8, hidden=16, classes=5):
        super().__init__()
        self.lstm = nn.LSTM(inputs, hidden, num_layers=12, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


class DropoutMLP(nn.Module):
    """Wide activations over small weights (so that half of the arena
    forces recomputation even beside Adam's state), dropout after every
    hidden layer."""

    def __init__(self, width=64, layers=6, p=0.2):
        super().__init__()
        self.fc_in = nn.Linear(16, width)
        self.hidden = nn.ModuleList(nn.Linear(width, width) for _ in range(layers))
        self.drops = nn.ModuleList(nn.Dropout(p) for _ in range(layers))
        self.fc_out = nn.Linear(width, 5)

    def forward(self, x):
        x = torch.tanh(self.fc_in(x))
        for fc, drop in zip(self.hidden, self.drops):
            x = drop(torch.tanh(fc(x)))
        return self.fc_out(x)


# The torch.optim optimizers of the multi-step tests (test_training_steps).
OPTIMIZERS = {
    "sgd": lambda params: torch.optim.SGD(params, lr=0.05, momentum=0.9),
    "adam": lambda params: torch.optim.Adam(params, lr=1e-2),
    "adamw": lambda params: torch.optim.AdamW(params, lr=1e-2, weight_decay=0.1),
}


def _lm_loss(logits, targets):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def build(name):
    """(model, inputs, targets, loss_fn, optimizer) of a small model; the
    same every time (fixed seeds)."""
    torch.manual_seed(0)
    if name == "mlp":
        return (MLP(), (torch.randn(1024, 32),), (torch.randint(0, 10, (1024,)),),
                F.cross_entropy, "sgd")
    if name == "resnet":
        return (ResNet(), (torch.randn(16, 3, 16, 16),), (torch.randint(0, 10, (16,)),),
                F.cross_entropy, "sgd")
    if name == "transformer":
        return (Transformer(seq=32, layers=8), (torch.randint(0, 50, (8, 32)),),
                (torch.randint(0, 50, (8, 32)),), _lm_loss, "adam")
    if name == "unet":
        return (UNet(), (torch.randn(4, 3, 16, 16),), (torch.randint(0, 3, (4, 16, 16)),),
                F.cross_entropy, "sgd")
    if name.startswith("steps_"):  # steps_<optimizer>
        model = DropoutMLP()
        return (model, (torch.randn(512, 16),), (torch.randint(0, 5, (512,)),),
                F.cross_entropy, OPTIMIZERS[name[len("steps_"):]](model.parameters()))
    if name == "lstm":
        return (LSTM(), (torch.randn(64, 8, 8),), (torch.randint(0, 5, (64,)),),
                F.cross_entropy, "adam")
    raise KeyError(name)


MODELS = ("mlp", "resnet", "transformer", "unet", "lstm")
SEED = 7  # the random kernels' stream


def export_model(name):
    model, inputs, targets, loss_fn, optimizer = build(name)
    return export(model, inputs, loss_fn, optimizer, targets=targets, name=name,
                  seed=SEED, initial_values=True, metadata={"model": name})


def reference_steps(name, steps, graph):
    """PyTorch's own `steps` training steps of the exported step `graph`
    (optimizer state starting at zero, the same update rule and constants
    as the exporter's, dropout masks from the runtime's stream). Returns the losses
    and the final {argument name: tensor} of parameters, buffers and
    optimizer state."""
    model, inputs, targets, loss_fn, optimizer = build(name)
    span = random_span(graph)
    rule = make_optimizer(optimizer)
    model.train()
    params = [(n, p) for n, p in model.named_parameters()]
    state = {n: [torch.zeros_like(p) for _ in rule.state_names] for n, p in params}
    counter = torch.zeros((), dtype=torch.float32)
    losses = []
    for step in range(steps):
        with step_stream(step, span):
            loss = loss_fn(model(*inputs), *targets)
        grads = torch.autograd.grad(loss, [p for _, p in params])
        with torch.no_grad():
            shared = rule.begin_step(counter if rule.counts_steps else None)
            for (n, p), g in zip(params, grads):
                rule.update(p, g, state[n], shared)
        losses.append(loss.detach().clone())
    result = {n: p.detach().clone() for n, p in params}
    result.update({n: b.detach().clone() for n, b in model.named_buffers()})
    for n, _ in params:
        for state_name, value in zip(rule.state_names, state[n]):
            result[f"{n}.{state_name}"] = value
    if rule.counts_steps:
        result[STEP_COUNTER] = counter
    return losses, result


def write_graph(name, directory):
    """Exports `name` to directory/<name>.pb; returns the graph."""
    graph = export_model(name)
    with open(graph_path(name, directory), "wb") as f:
        f.write(graph.SerializeToString(deterministic=True))
    return graph


def graph_path(name, directory):
    return f"{directory}/{name}.pb"


if __name__ == "__main__":
    # PYTHONPATH=../../python python3 small_models.py OUTDIR [MODEL...]:
    # writes OUTDIR/<model>.pb for each model (all when none is named), as
    # ctest's e2e fixtures do through test_e2e.
    out = sys.argv[1]
    for model_name in sys.argv[2:] or MODELS:
        graph = write_graph(model_name, out)
        kernels = sorted({op.kernel for op in graph.ops if op.kind == 0})
        print(model_name, len(graph.ops), "ops:", " ".join(kernels))
