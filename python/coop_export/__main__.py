"""Command line: export a zoo model's training step.

    PYTHONPATH=python /usr/bin/python3 -m coop_export --model resnet50 \\
        --batch 115 -o r50.pb

A file name ending in .gz is gzip-compressed. --list prints the zoo.
"""
import argparse
import gzip
import sys
import time

from . import zoo
from .exporter import export
from .graph_builder import ExportError, tensor_bytes


def write_graph(graph, path):
    # Deterministic map order and mtime=0 keep files byte-identical across
    # runs.
    data = graph.SerializeToString(deterministic=True)
    if path.endswith(".gz"):
        with open(path, "wb") as raw, gzip.GzipFile(
                fileobj=raw, mode="wb", mtime=0) as out:
            out.write(data)
    else:
        with open(path, "wb") as out:
            out.write(data)


def parameter_bytes(graph):
    """Bytes of all PARAMETER tensors of an exported graph."""
    from . import training_graph_pb2 as pb
    return sum(tensor_bytes(t.shape, _TORCH_DTYPES[t.dtype])
               for t in graph.tensors if t.role == pb.PARAMETER)


def _torch_dtypes():
    from .graph_builder import DTYPES
    return {code: dtype for dtype, code in DTYPES.items()}


_TORCH_DTYPES = _torch_dtypes()


def export_zoo_model(name, batch=None, seed=0, **options):
    model, inputs, targets, loss, optimizer = zoo.build(name, batch, **options)
    used_batch = batch or zoo.ZOO[name].batch
    return export(model, inputs, loss, optimizer, targets=targets,
                  name=f"{name}_train_step", seed=seed,
                  metadata={"model": name, "batch": used_batch, **options})


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python3 -m coop_export",
        description="Export one training step of a zoo model as a coop "
                    "TrainingGraph protobuf.")
    parser.add_argument("--model", choices=sorted(zoo.ZOO))
    parser.add_argument("--batch", type=int,
                        help="batch size (default: the paper's)")
    parser.add_argument("--seq", type=int,
                        help="sequence length of the language models")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the random kernels' streams")
    parser.add_argument("-o", "--output", help="output file (.pb or .pb.gz)")
    parser.add_argument("--list", action="store_true",
                        help="list the zoo models and their default sizes")
    args = parser.parse_args(argv)

    if args.list:
        for name, entry in sorted(zoo.ZOO.items()):
            print(f"{name:14} batch {entry.batch:5}  {entry.optimizer:5} "
                  f"{entry.options}")
        return 0
    if not args.model or not args.output:
        parser.error("--model and -o are required (or --list)")
    options = {"seq": args.seq} if args.seq else {}
    if options and "seq" not in zoo.ZOO[args.model].options:
        parser.error(f"--seq applies to language models, not {args.model}")

    start = time.time()
    try:
        graph = export_zoo_model(args.model, args.batch, args.seed, **options)
    except ExportError as error:
        print(f"coop_export: error: {error}", file=sys.stderr)
        return 1
    write_graph(graph, args.output)
    print(f"{args.model}: {len(graph.ops)} ops, {len(graph.tensors)} tensors, "
          f"{parameter_bytes(graph)} parameter bytes -> {args.output} "
          f"({time.time() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
