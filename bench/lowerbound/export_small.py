#!/usr/bin/python3
"""Scaled-down zoo models for the MILP bound: the same architecture with
fewer layers, blocks or time steps, at the zoo's batch and input sizes.

    PYTHONPATH=python /usr/bin/python3 bench/lowerbound/export_small.py \
        --model resnet50 -o resnet50_small.pb.gz

Run with Debian's /usr/bin/python3 (torch 1.13 + torchvision), like
`python3 -m coop_export`. `--list` prints what each scaled model is.
"""
import argparse
import sys

import torch
import torch.nn as nn
from torch._subclasses import FakeTensorMode
from torch._subclasses.fake_tensor import DataDependentOutputException

from coop_export import zoo
from coop_export.__main__ import write_graph
from coop_export.exporter import export


def _resnet(layers):
    def factory():
        from torchvision.models.resnet import Bottleneck, ResNet
        return ResNet(Bottleneck, layers)
    return factory


def _densenet(blocks):
    def factory():
        from torchvision.models.densenet import DenseNet
        return DenseNet(32, blocks, 64)
    return factory


def _inception():
    # Inception V3 with one block of each repeated kind: the blocks dropped
    # map their input width to the same output width, so Identity fits.
    import torchvision
    model = torchvision.models.inception_v3(aux_logits=False,
                                            init_weights=False)
    for name in ("Mixed_5d", "Mixed_6b", "Mixed_6c", "Mixed_6d", "Mixed_6e",
                 "Mixed_7c"):
        setattr(model, name, nn.Identity())
    return model


def _swin(depths):
    def factory():
        from torchvision.models.swin_transformer import SwinTransformer
        return SwinTransformer(patch_size=[4, 4], embed_dim=96, depths=depths,
                               num_heads=[3, 6, 12, 24], window_size=[7, 7],
                               stochastic_depth_prob=0.2)
    return factory


# name -> (zoo entry it scales, description, ZooModel with the zoo's sizes)
SMALL = {
    "resnet50": ("resnet50", "Bottleneck ResNet, blocks [1,1,1,1] (zoo: [3,4,6,3])",
                 zoo.ZooModel(zoo._image_model(_resnet([1, 1, 1, 1])), 115)),
    "resnet152": ("resnet152", "Bottleneck ResNet, blocks [1,1,2,1] (zoo: [3,8,36,3])",
                  zoo.ZooModel(zoo._image_model(_resnet([1, 1, 2, 1])), 55)),
    "inception_v3": ("inception_v3", "Inception V3 without Mixed_5d, 6b-6e, 7c",
                     zoo.ZooModel(zoo._image_model(_inception, size=299), 96)),
    "densenet121": ("densenet121", "DenseNet-BC, blocks (2,2,2,2) (zoo: (6,12,24,16))",
                    zoo.ZooModel(zoo._image_model(_densenet((2, 2, 2, 2))), 70)),
    "swin_t": ("swin_t", "Swin-T, depths [1,1,1,1] (zoo: [2,2,6,2])",
               zoo.ZooModel(zoo._image_model(_swin([1, 1, 1, 1])), 40)),
    "bert_large": ("bert_large", "BERT-Large, 4 encoder layers (zoo: 24)",
                   zoo.ZooModel(zoo._language_model(
                       lambda seq: zoo.BertEncoder(layers=4, max_len=seq), 30522),
                       4, options={"seq": 512})),
    "gpt2": ("gpt2", "GPT-2, 4 blocks (zoo: 12)",
             zoo.ZooModel(zoo._language_model(
                 lambda seq: zoo.GPT(layers=4, max_len=seq), 50257), 8,
                 options={"seq": 1024})),
    "gpt3_2.7b": ("gpt3_2.7b", "GPT-3 2.7B shape, 2 blocks (zoo: 32), Adam",
                  zoo.ZooModel(zoo._language_model(
                      lambda seq: zoo.GPT(d=2560, layers=2, heads=32,
                                          max_len=seq), 50257), 1,
                      optimizer="adam", options={"seq": 2048})),
    "bilstm": ("bilstm", "BiLSTM, 8 time steps (zoo: 128)",
               zoo.ZooModel(lambda batch: zoo._bilstm(batch, seq=8), 2048)),
    "unet": ("unet", "U-Net, as in the zoo (its graph is small enough)",
             zoo.ZOO["unet"]),
}


def build(name):
    entry = SMALL[name][2]
    try:
        with FakeTensorMode():
            model, inputs, targets = entry.build(entry.batch, **entry.options)
    except DataDependentOutputException:
        model, inputs, targets = entry.build(entry.batch, **entry.options)
    return export(model, inputs, entry.loss, entry.optimizer, targets=targets,
                  name=f"{name}_small_train_step", seed=0,
                  metadata={"model": name + "_small", "batch": entry.batch,
                            **entry.options})


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", choices=sorted(SMALL))
    parser.add_argument("-o", "--output")
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args(argv)
    if args.list:
        for name, (_, text, _) in sorted(SMALL.items()):
            print(f"{name:14} {text}")
        return 0
    if not args.model or not args.output:
        parser.error("--model and -o are required (or --list)")
    graph = build(args.model)
    write_graph(graph, args.output)
    print(f"{args.model} (scaled): {len(graph.ops)} ops -> {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
