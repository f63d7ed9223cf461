"""The two models of the partitioner bench, importable under torch 1.13 and
2.x alike (the exporter may run under either).

`build(name)` -> (model, inputs, targets, loss_fn), built for real from
seed 0, so every process that builds a model gets the same one.
"""
import os
import sys

import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))

from coop_export.zoo import GPT  # noqa: E402  (hand-written attention, no SDPA)

GPT_VOCAB = 8192
GPT_BATCH, GPT_SEQ = 8, 256
RESNET_BATCH, RESNET_SIZE = 16, 128


def _gpt():
    # 6 layers, d_model 256, 8 heads, seq 256. Dropout 0: aten's dropout
    # returns its input at p=0, so the step has no random ops and both
    # tracers see the same graph.
    model = GPT(vocab=GPT_VOCAB, d=256, layers=6, heads=8, max_len=GPT_SEQ,
                dropout=0.0)
    ids = torch.randint(0, GPT_VOCAB, (GPT_BATCH, GPT_SEQ))
    targets = torch.randint(0, GPT_VOCAB, (GPT_BATCH, GPT_SEQ))
    return model, (ids,), (targets,), F.cross_entropy


def _resnet18():
    import torchvision
    model = torchvision.models.resnet18(num_classes=1000)
    x = torch.randn(RESNET_BATCH, 3, RESNET_SIZE, RESNET_SIZE)
    y = torch.randint(0, 1000, (RESNET_BATCH,))
    return model, (x,), (y,), F.cross_entropy


MODELS = {"gpt": _gpt, "resnet18": _resnet18}


def build(name):
    torch.manual_seed(0)
    model, inputs, targets, loss_fn = MODELS[name]()
    model.train()
    return model, inputs, targets, loss_fn
