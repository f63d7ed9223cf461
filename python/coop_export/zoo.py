"""The paper's model zoo at the paper's sizes, plus GPT-2 and a GPT-3-style
2.7B decoder.

Models are built under a FakeTensorMode: parameters have shapes and dtypes
but no storage, so even the 2.7B model is built in seconds and no memory.
Each entry returns (model, example inputs, targets, loss function,
optimizer) ready for `coop_export.export`.
"""
import math
from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._subclasses import FakeTensorMode
from torch._subclasses.fake_tensor import DataDependentOutputException


@dataclass
class ZooModel:
    build: object            # (batch, **options) -> (model, inputs, targets)
    batch: int               # the paper's batch size
    loss: object = F.cross_entropy
    optimizer: str = "sgd"
    options: dict = field(default_factory=dict)


# U-Net (Ronneberger et al.), padded convolutions as in the widely used
# milesial/Pytorch-UNet, so odd sizes (460x608 pools to 57x76) are padded
# back when the decoder upsamples.
class _DoubleConv(nn.Sequential):
    def __init__(self, cin, cout):
        super().__init__(
            nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout),
            nn.ReLU(inplace=True),
            nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout),
            nn.ReLU(inplace=True))


class _Up(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.up = nn.ConvTranspose2d(cin, cin // 2, 2, stride=2)
        self.conv = _DoubleConv(cin, cout)

    def forward(self, x, skip):
        x = self.up(x)
        dy, dx = skip.shape[2] - x.shape[2], skip.shape[3] - x.shape[3]
        x = F.pad(x, [dx // 2, dx - dx // 2, dy // 2, dy - dy // 2])
        return self.conv(torch.cat([skip, x], dim=1))


class UNet(nn.Module):
    def __init__(self, in_channels=3, classes=2, width=64):
        super().__init__()
        widths = [width * 2 ** i for i in range(5)]
        self.inc = _DoubleConv(in_channels, widths[0])
        self.downs = nn.ModuleList(
            _DoubleConv(widths[i], widths[i + 1]) for i in range(4))
        self.ups = nn.ModuleList(
            _Up(widths[i + 1], widths[i]) for i in reversed(range(4)))
        self.outc = nn.Conv2d(widths[0], classes, 1)

    def forward(self, x):
        skips = [self.inc(x)]
        for down in self.downs:
            skips.append(down(F.max_pool2d(skips[-1], 2)))
        x = skips.pop()
        for up in self.ups:
            x = up(x, skips.pop())
        return self.outc(x)


class BiLSTM(nn.Module):
    """Bidirectional LSTM classifier over a sequence (the last step)."""
    def __init__(self, input_size=100, hidden=256, classes=10):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden, batch_first=True,
                            bidirectional=True)
        self.head = nn.Linear(2 * hidden, classes)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


class BertEncoder(nn.Module):
    """BERT-Large-shaped: token, position and segment embeddings, 24 post-LN
    encoder layers (d=1024, 16 heads, 4096 feed-forward, GELU), MLM head."""
    def __init__(self, vocab=30522, d=1024, layers=24, heads=16, ff=4096,
                 max_len=512, dropout=0.1):
        super().__init__()
        self.tokens = nn.Embedding(vocab, d)
        self.positions = nn.Embedding(max_len, d)
        self.segments = nn.Embedding(2, d)
        self.norm = nn.LayerNorm(d)
        self.dropout = nn.Dropout(dropout)
        def make_layer():
            return nn.TransformerEncoderLayer(d, heads, ff, dropout,
                                              activation="gelu",
                                              batch_first=True)
        self.encoder = nn.TransformerEncoder(make_layer(), layers)
        # Layers built one by one, not deep-copied: torch 2.x gives a
        # deep-copied fake tensor a fake mode of its own, and make_fx refuses
        # to mix modes.
        self.encoder.layers = nn.ModuleList(make_layer() for _ in range(layers))
        self.head = nn.Linear(d, vocab)

    def forward(self, ids):
        positions = torch.arange(ids.shape[1], device=ids.device)
        x = self.tokens(ids) + self.positions(positions) + self.segments(
            torch.zeros_like(ids))
        x = self.encoder(self.dropout(self.norm(x)))
        return self.head(x).transpose(1, 2)  # (batch, vocab, seq) for the loss


class _CausalSelfAttention(nn.Module):
    def __init__(self, d, heads, dropout):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        batch, seq, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=2)
        shape = (batch, seq, self.heads, d // self.heads)
        q, k, v = (t.view(shape).transpose(1, 2) for t in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(d // self.heads)
        mask = torch.ones(seq, seq, dtype=torch.bool, device=x.device).tril()
        scores = scores.masked_fill(~mask, float("-inf"))
        attention = self.dropout(scores.softmax(dim=-1))
        out = (attention @ v).transpose(1, 2).reshape(batch, seq, d)
        return self.dropout(self.proj(out))


class _DecoderBlock(nn.Module):
    def __init__(self, d, heads, dropout):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attention = _CausalSelfAttention(d, heads, dropout)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(),
                                 nn.Linear(4 * d, d), nn.Dropout(dropout))

    def forward(self, x):
        x = x + self.attention(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    """GPT-2-style pre-LN decoder with the head tied to the token
    embedding."""
    def __init__(self, vocab=50257, d=768, layers=12, heads=12, max_len=1024,
                 dropout=0.1):
        super().__init__()
        self.tokens = nn.Embedding(vocab, d)
        self.positions = nn.Embedding(max_len, d)
        self.dropout = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(
            _DecoderBlock(d, heads, dropout) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.tokens.weight

    def forward(self, ids):
        positions = torch.arange(ids.shape[1], device=ids.device)
        x = self.dropout(self.tokens(ids) + self.positions(positions))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x)).transpose(1, 2)


def _image_model(factory, size=224, classes=1000):
    def build(batch):
        model = factory()
        return model, (torch.randn(batch, 3, size, size),), (
            torch.randint(0, classes, (batch,)),)
    return build


def _torchvision(name, **kwargs):
    import torchvision
    return getattr(torchvision.models, name)(**kwargs)


def _unet(batch, height=460, width=608):
    return UNet(), (torch.randn(batch, 3, height, width),), (
        torch.randint(0, 2, (batch, height, width)),)


def _bilstm(batch, seq=128, input_size=100, hidden=256):
    return BiLSTM(input_size, hidden), (torch.randn(batch, seq, input_size),), (
        torch.randint(0, 10, (batch,)),)


def _language_model(model_factory, vocab):
    def build(batch, seq):
        model = model_factory(seq)
        return model, (torch.randint(0, vocab, (batch, seq)),), (
            torch.randint(0, vocab, (batch, seq)),)
    return build


ZOO = {
    "resnet50": ZooModel(_image_model(lambda: _torchvision("resnet50")), 115),
    "resnet152": ZooModel(_image_model(lambda: _torchvision("resnet152")), 55),
    "inception_v3": ZooModel(_image_model(lambda: _torchvision(
        "inception_v3", aux_logits=False, init_weights=False), size=299), 96),
    "densenet121": ZooModel(_image_model(lambda: _torchvision("densenet121")), 70),
    "swin_t": ZooModel(_image_model(lambda: _torchvision("swin_t")), 40),
    "unet": ZooModel(_unet, 5),
    "bilstm": ZooModel(_bilstm, 2048),
    "bert_large": ZooModel(_language_model(
        lambda seq: BertEncoder(max_len=seq), 30522), 4, options={"seq": 512}),
    "gpt2": ZooModel(_language_model(
        lambda seq: GPT(max_len=seq), 50257), 8, options={"seq": 1024}),
    "gpt3_2.7b": ZooModel(_language_model(
        lambda seq: GPT(d=2560, layers=32, heads=32, max_len=seq), 50257), 1,
        optimizer="adam", options={"seq": 2048}),
}


def build(name, batch=None, **options):
    """(model, inputs, targets, loss, optimizer) for a zoo entry, fake where
    possible: nothing is allocated. A model whose construction reads tensor
    values (torchvision's Swin-T under torch 2.x computes its stochastic
    depth schedule with `.item()`) is built for real instead; such models
    are small."""
    entry = ZOO[name]
    kwargs = {**entry.options, **options}
    try:
        with FakeTensorMode():
            model, inputs, targets = entry.build(batch or entry.batch, **kwargs)
    except DataDependentOutputException:
        model, inputs, targets = entry.build(batch or entry.batch, **kwargs)
    return model, inputs, targets, entry.loss, entry.optimizer
