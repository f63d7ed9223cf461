#!/usr/bin/env python3
"""Writes the bundled default model: one training step of an MLP classifier.

Forward (addmm, in-place relu_, dropout), log-softmax + NLL loss, the full
backward pass as PyTorch's autograd decomposes it, and an in-place SGD
update with momentum. Op names and argument names follow aten, as the
exporter emits them. Costs come from a simple roofline on an A100-class
device (19.5 TFLOP/s fp32, 1555 GB/s), in microseconds.

Usage: gen_mlp_step.py [--batch N] [--layers 256,128,...,10] > mlp.mlir
"""
import argparse
import math

PEAK_FLOPS_PER_US = 19.5e6
BYTES_PER_US = 1.555e6
DTYPE_BYTES = {"f32": 4, "i64": 8, "i1": 1}


def tensor(shape, dtype="f32"):
    dims = "x".join(str(d) for d in shape)
    return f"tensor<{dims}x{dtype}>" if shape else f"tensor<{dtype}>"


def nbytes(shape, dtype="f32"):
    return math.prod(shape) * DTYPE_BYTES[dtype]


class Step:
    def __init__(self):
        self.lines = []
        self.types = {}
        self.counter = 0

    def arg(self, name, shape, dtype, role):
        self.types[name] = (shape, dtype)
        return f"%{name}: {tensor(shape, dtype)} {{coop.role = #coop.role<{role}>}}"

    def fresh(self, hint):
        self.counter += 1
        return f"{hint}{self.counter}"

    def _emit(self, op, kernel, inputs, outputs, attrs):
        names = [self.fresh(hint) for hint, _, _ in outputs]
        for name, (_, shape, dtype) in zip(names, outputs):
            self.types[name] = (shape, dtype)
        lhs = f"%{names[0]}" if len(names) == 1 else f"%{names[0]}:{len(names)}"
        attr_text = f" {{{', '.join(attrs)}}}" if attrs else ""
        in_types = ", ".join(tensor(*self.types[i]) for i in inputs)
        out_types = ", ".join(tensor(shape, dtype) for _, shape, dtype in outputs)
        if len(outputs) > 1:
            out_types = f"({out_types})"
        operands = ", ".join(f"%{i}" for i in inputs)
        self.lines.append(
            f'  {lhs} = coop.{op} "{kernel}"({operands}){attr_text} : ({in_types}) -> {out_types}'
        )
        if len(names) == 1:
            return names[0]
        for i, name in enumerate(names):
            self.types[f"{names[0]}#{i}"] = self.types[name]
        return [f"{names[0]}#{i}" for i in range(len(names))]

    def compute(self, kernel, inputs, outputs, args=None, flops=0, inplace=None, rng=None):
        moved = sum(nbytes(*self.types[i]) for i in inputs)
        moved += sum(nbytes(shape, dtype) for _, shape, dtype in outputs)
        cost = max(flops / PEAK_FLOPS_PER_US, moved / BYTES_PER_US)
        attrs = []
        if args:
            attrs.append("args = {" + ", ".join(f"{k} = {v}" for k, v in args.items()) + "}")
        attrs.append(f"cost_us = {cost:.4f} : f64")
        if inplace is not None:
            attrs.append("inplace = array<i64: " + ", ".join(str(i) for i in inplace) + ">")
        if rng is not None:
            attrs.append(f"rng = #coop.rng<seed = {rng[0]}, offset = {rng[1]}>")
        return self._emit("compute", kernel, inputs, outputs, attrs)

    def inplace(self, kernel, target, others=(), args=None):
        shape, dtype = self.types[target]
        return self.compute(kernel, [target, *others], [("v", shape, dtype)], args=args, inplace=[0])

    def view(self, kernel, source, shape, args=None):
        attrs = ["args = {" + ", ".join(f"{k} = {v}" for k, v in args.items()) + "}"] if args else []
        return self._emit("view", kernel, [source], [("t", shape, self.types[source][1])], attrs)


def build(batch, widths, dropout, lr, momentum):
    step = Step()
    args = [step.arg("x", [batch, widths[0]], "f32", "input"),
            step.arg("target", [batch], "i64", "input")]
    layers = list(zip(widths[:-1], widths[1:]))
    for i, (fan_in, fan_out) in enumerate(layers):
        args.append(step.arg(f"w{i}", [fan_out, fan_in], "f32", "parameter"))
        args.append(step.arg(f"b{i}", [fan_out], "f32", "parameter"))
    for i, (fan_in, fan_out) in enumerate(layers):
        args.append(step.arg(f"w{i}_momentum", [fan_out, fan_in], "f32", "optimizer_state"))
        args.append(step.arg(f"b{i}_momentum", [fan_out], "f32", "optimizer_state"))

    # Forward: hidden layers are addmm -> relu_ (in place) -> dropout.
    h = "x"
    rng_offset = 0  # each dropout draws from its own range of the stream
    saved = []  # per layer: (layer input, relu output, dropout mask)
    for i, (fan_in, fan_out) in enumerate(layers):
        wt = step.view("aten.t", f"w{i}", [fan_in, fan_out])
        a = step.compute("aten.addmm", [f"b{i}", h, wt], [("a", [batch, fan_out], "f32")],
                         args={"alpha": 1, "beta": 1}, flops=2 * batch * fan_in * fan_out)
        if i == len(layers) - 1:
            saved.append((h, None, None))
            h = a
            break
        r = step.inplace("aten.relu_", a)
        mask = None
        if dropout > 0:
            out, mask = step.compute("aten.native_dropout", [r],
                                     [("d", [batch, fan_out], "f32"), ("mask", [batch, fan_out], "i1")],
                                     args={"p": f"{dropout:e} : f64", "train": "true"},
                                     rng=(0, rng_offset))
            rng_offset += batch * fan_out
            saved.append((h, r, mask))
            h = out
        else:
            saved.append((h, r, None))
            h = r
    classes = widths[-1]
    logp = step.compute("aten._log_softmax", [h], [("logp", [batch, classes], "f32")],
                        args={"dim": 1, "half_to_float": "false"}, flops=4 * batch * classes)
    loss, total_weight = step.compute("aten.nll_loss_forward", [logp, "target"],
                                      [("loss", [], "f32"), ("total_weight", [], "f32")],
                                      args={"reduction": 1, "ignore_index": -100})

    # Backward.
    ones = step.compute("aten.ones_like", [loss], [("ones", [], "f32")])
    g = step.compute("aten.nll_loss_backward", [ones, logp, "target", total_weight],
                     [("glogp", [batch, classes], "f32")],
                     args={"reduction": 1, "ignore_index": -100})
    g = step.compute("aten._log_softmax_backward_data", [g, logp],
                     [("glogits", [batch, classes], "f32")],
                     args={"dim": 1, "input_dtype": '"f32"'}, flops=3 * batch * classes)
    grads = {}
    for i in reversed(range(len(layers))):
        fan_in, fan_out = layers[i]
        layer_in, relu_out, mask = saved[i]
        gt = step.view("aten.t", g, [fan_out, batch])
        grads[f"w{i}"] = step.compute("aten.mm", [gt, layer_in], [("gw", [fan_out, fan_in], "f32")],
                                      flops=2 * batch * fan_in * fan_out)
        grads[f"b{i}"] = step.compute("aten.sum.dim_IntList", [g], [("gb", [fan_out], "f32")],
                                      args={"dim": "[0]", "keepdim": "false"}, flops=batch * fan_out)
        if i == 0:
            break
        g = step.compute("aten.mm", [g, f"w{i}"], [("gh", [batch, fan_in], "f32")],
                         flops=2 * batch * fan_in * fan_out)
        prev_in, prev_relu, prev_mask = saved[i - 1]
        if prev_mask is not None:
            g = step.compute("aten.native_dropout_backward", [g, prev_mask],
                             [("gd", [batch, fan_in], "f32")],
                             args={"scale": f"{1.0 / (1.0 - dropout):e} : f64"})
        g = step.compute("aten.threshold_backward", [g, prev_relu], [("ga", [batch, fan_in], "f32")],
                         args={"threshold": "0.0 : f64"})

    # SGD with momentum, in place: buf = momentum * buf + grad; p -= lr * buf.
    for name in [f"{kind}{i}" for i in range(len(layers)) for kind in ("w", "b")]:
        buf = step.inplace("aten.mul_.Scalar", f"{name}_momentum", args={"other": f"{momentum:e} : f64"})
        buf = step.inplace("aten.add_.Tensor", buf, [grads[name]], args={"alpha": "1.0 : f64"})
        step.inplace("aten.add_.Tensor", name, [buf], args={"alpha": f"{-lr:e} : f64"})

    header = (f"// One training step of an MLP {'-'.join(map(str, widths))}, batch {batch}.\n"
              f"// Generated by models/gen_mlp_step.py; do not edit by hand.\n")
    body = "\n".join(step.lines)
    signature = ",\n    ".join(args)
    return (f"{header}func.func @mlp_train_step(\n    {signature})\n"
            f"    -> tensor<f32> attributes {{coop.step}} {{\n{body}\n"
            f"  return %{loss} : tensor<f32>\n}}\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--layers",
                        default="256,128,128,128,128,128,128,128,128,128,128,10")
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--momentum", type=float, default=0.9)
    opts = parser.parse_args()
    widths = [int(w) for w in opts.layers.split(",")]
    print(build(opts.batch, widths, opts.dropout, opts.lr, opts.momentum), end="")


if __name__ == "__main__":
    main()
