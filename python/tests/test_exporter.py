"""Exporter unit tests: op coverage, in-place versions, views, roles."""
import collections
import os
import tempfile
import unittest

import support  # noqa: F401  (skips without torch)
import torch
import torch.nn as nn
import torch.nn.functional as F

from coop_export import Adam, ExportError, export
from coop_export import training_graph_pb2 as pb
from coop_export.__main__ import write_graph


def kernels(graph):
    return collections.Counter(op.kernel for op in graph.ops)


def roles_of(graph):
    return collections.Counter(t.role for t in graph.tensors)


def producers(graph):
    return {r: op for op in graph.ops for r in op.results}


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8 * 4 * 4, 10)

    def forward(self, x):
        return self.fc(F.relu(self.bn(self.conv(x)), inplace=True).flatten(1))


class TinyTransformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 16)
        layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.1,
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2)
        self.head = nn.Linear(16, 50)

    def forward(self, ids):
        return self.head(self.encoder(self.embed(ids))).transpose(1, 2)


class ScaledLinear(nn.Module):
    """A linear layer whose outputs are scaled by a tensor made in forward:
    a constant of the traced step."""
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x) * torch.tensor([1.0, 2.0, 3.0])


class ReadsAfterWrite(nn.Module):
    """Reads a tensor, and a view of it, after relu_ overwrote it."""
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x)
        flat = h.view(-1)
        doubled = h * 2
        h.relu_()
        return (h + doubled).sum() + flat.sum()


def export_cnn(**kwargs):
    torch.manual_seed(0)
    return export(SmallCNN(), (torch.randn(2, 3, 4, 4),), F.cross_entropy,
                  targets=(torch.randint(0, 10, (2,)),), **kwargs)


class GraphInvariants:
    """Checks every exported graph must satisfy."""
    def check_invariants(self, graph):
        defined = {i for i, t in enumerate(graph.tensors)
                   if t.role != pb.ACTIVATION}
        for op in graph.ops:
            for operand in op.operands:
                self.assertIn(operand, defined, f"{op.kernel} reads an "
                              "undefined tensor")
            for result in op.results:
                self.assertNotIn(result, defined, "a tensor produced twice")
                defined.add(result)
            if op.inplace:
                self.assertEqual(len(op.inplace), len(op.results))
            for result, target in zip(op.results, op.inplace):
                if target >= 0:
                    self.assertEqual(graph.tensors[result].shape,
                                     graph.tensors[op.operands[target]].shape)
            if op.kind == pb.Op.VIEW:
                self.assertEqual(len(op.operands), 1, op.kernel)
            for arg in op.args:
                if arg.value.WhichOneof("kind") == "operand":
                    self.assertLess(arg.value.operand, len(op.operands))
        for output in graph.outputs:
            self.assertIn(output, defined)


class ExporterTest(unittest.TestCase, GraphInvariants):
    def test_cnn_roles_versions_and_views(self):
        graph = export_cnn()
        self.check_invariants(graph)
        roles = roles_of(graph)
        model = SmallCNN()
        self.assertEqual(roles[pb.PARAMETER], len(list(model.parameters())))
        self.assertEqual(roles[pb.OPTIMIZER_STATE], roles[pb.PARAMETER])
        self.assertEqual(roles[pb.BUFFER], 3)  # running mean/var, count
        self.assertEqual(roles[pb.INPUT], 2)

        ops = kernels(graph)
        for kernel in ("aten.convolution", "aten.native_batch_norm",
                       "aten.relu_", "aten.threshold_backward",
                       "aten.convolution_backward", "aten.addmm",
                       "aten.nll_loss_forward", "aten.add_.Tensor"):
            self.assertIn(kernel, ops)

        batch_norm = next(op for op in graph.ops
                          if op.kernel == "aten.native_batch_norm")
        # Running statistics are written in place: operands 3 and 4.
        self.assertEqual(list(batch_norm.inplace), [-1, -1, -1, 3, 4])
        stats = [graph.tensors[batch_norm.operands[i]] for i in (3, 4)]
        self.assertEqual([t.role for t in stats], [pb.BUFFER, pb.BUFFER])

        relu = next(op for op in graph.ops if op.kernel == "aten.relu_")
        self.assertEqual(list(relu.inplace), [0])

        for op in graph.ops:
            if op.kernel in ("aten.t", "aten.view", "aten.detach",
                             "aten._reshape_alias", "aten.expand"):
                self.assertEqual(op.kind, pb.Op.VIEW, op.kernel)

    def test_sgd_updates_parameters_and_momentum_in_place(self):
        graph = export_cnn()
        produced_by = producers(graph)
        for index, tensor in enumerate(graph.tensors):
            if tensor.role not in (pb.PARAMETER, pb.OPTIMIZER_STATE):
                continue
            writers = [op for op in graph.ops
                       if any(graph.tensors[op.operands[t]].name == tensor.name
                              for t in op.inplace if t >= 0)]
            self.assertTrue(writers, f"{tensor.name} is never updated")
        momentum_updates = [op for op in graph.ops
                            if op.kernel == "aten.mul_.Tensor"]
        self.assertEqual(len(momentum_updates), roles_of(graph)[pb.PARAMETER])
        # The parameter update reads the newest momentum version.
        for op in graph.ops:
            if (op.kernel == "aten.add_.Tensor" and
                    graph.tensors[op.operands[0]].role == pb.PARAMETER):
                source = produced_by[op.operands[1]]
                self.assertEqual(source.kernel, "aten.add_.Tensor")

    def test_adam_state_roles(self):
        torch.manual_seed(0)
        model = nn.Linear(4, 3)
        optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
        graph = export(model, (torch.randn(2, 4),), F.cross_entropy,
                       optimizer, targets=(torch.randint(0, 3, (2,)),))
        self.check_invariants(graph)
        states = [t.name for t in graph.tensors if t.role == pb.OPTIMIZER_STATE]
        self.assertEqual(sorted(states), ["bias.exp_avg", "bias.exp_avg_sq",
                                          "optimizer.step", "weight.exp_avg",
                                          "weight.exp_avg_sq"])
        # The step counter: a float32 scalar incremented in place once, the
        # bias corrections (pow(beta, step)) read its new version.
        counter = states.index("optimizer.step")
        counter_id = [i for i, t in enumerate(graph.tensors)
                      if t.role == pb.OPTIMIZER_STATE][counter]
        self.assertEqual((list(graph.tensors[counter_id].shape),
                          graph.tensors[counter_id].dtype), ([], pb.FLOAT32))
        increments = [op for op in graph.ops if counter_id in op.operands]
        self.assertEqual([op.kernel for op in increments], ["aten.add_.Tensor"])
        self.assertEqual(list(increments[0].inplace), [0])
        powers = [op for op in graph.ops if op.kernel == "aten.pow.Scalar"]
        self.assertEqual(len(powers), 2)
        for op in powers:
            self.assertEqual(op.operands[0], increments[0].results[0])
        addcdiv = [op for op in graph.ops if op.kernel == "aten.addcdiv_"]
        self.assertEqual(len(addcdiv), 2)
        for op in addcdiv:
            self.assertEqual(graph.tensors[op.operands[0]].role, pb.PARAMETER)
            self.assertEqual(op.inplace[0], 0)

    def test_a_tensor_named_like_the_step_counter_is_refused(self):
        model = nn.Module()
        model.optimizer = nn.Linear(4, 3)
        model.optimizer.register_buffer("step", torch.zeros(()))
        model.forward = model.optimizer
        with self.assertRaisesRegex(ExportError, "named 'optimizer.step'"):
            export(model, (torch.randn(2, 4),), F.cross_entropy, "adam",
                   targets=(torch.tensor([0, 1]),))

    def test_reads_after_in_place_write_see_the_new_version(self):
        torch.manual_seed(0)
        graph = export(ReadsAfterWrite(), (torch.randn(3, 4),),
                       lambda out: out, optimizer="sgd")
        self.check_invariants(graph)
        produced_by = producers(graph)
        relu = next(op for op in graph.ops if op.kernel == "aten.relu_")
        new_version = relu.results[0]
        add = next(op for op in graph.ops if op.kernel == "aten.add.Tensor")
        self.assertEqual(add.operands[0], new_version)
        # `doubled` was computed before the write, from the old version.
        mul = produced_by[add.operands[1]]
        self.assertEqual(mul.operands[0], relu.operands[0])
        # The view taken before relu_ is re-derived from the new version.
        rereads = [op for op in graph.ops
                   if op.kernel == "aten.as_strided.default"]
        self.assertEqual(len(rereads), 1)
        self.assertEqual(rereads[0].operands[0], new_version)
        self.assertEqual(list(graph.tensors[rereads[0].results[0]].shape), [12])

    def test_transformer_dropout_gets_distinct_rng_offsets(self):
        torch.manual_seed(0)
        graph = export(TinyTransformer(), (torch.randint(0, 50, (2, 6)),),
                       F.cross_entropy, targets=(torch.randint(0, 50, (2, 6)),),
                       seed=5)
        self.check_invariants(graph)
        random_ops = [op for op in graph.ops if op.HasField("rng")]
        self.assertGreaterEqual(len(random_ops), 6)  # 3 dropouts x 2 layers
        self.assertTrue(all(op.rng.seed == 5 for op in random_ops))
        offsets = [op.rng.offset for op in random_ops]
        self.assertEqual(len(set(offsets)), len(offsets))
        self.assertEqual(offsets, sorted(offsets))
        for kernel in ("aten.bmm", "aten.native_layer_norm",
                       "aten.native_layer_norm_backward", "aten.embedding",
                       "aten.embedding_dense_backward"):
            self.assertTrue(any(op.kernel.startswith(kernel) for op in graph.ops),
                            kernel)

    def test_split_results_are_views(self):
        # torch 1.13 gives a list of aliases (`Tensor(a)[]`) no alias set;
        # the pieces of a fused projection must still alias it.
        class FusedQKV(nn.Module):
            def __init__(self):
                super().__init__()
                self.qkv = nn.Linear(8, 24)

            def forward(self, x):
                q, k, v = self.qkv(x).chunk(3, dim=-1)
                return (q * k + v).sum(-1)

        graph = export(FusedQKV(), (torch.randn(4, 8),), lambda out: out.sum(),
                       optimizer="sgd")
        split = next(op for op in graph.ops if op.kernel.startswith("aten.split"))
        self.assertEqual(split.kind, pb.Op.VIEW)
        self.assertEqual(len(split.results), 3)
        source = graph.tensors[split.operands[0]]
        for result in split.results:
            self.assertEqual(graph.tensors[result].shape, [4, 8])
        self.assertEqual(source.shape, [4, 24])

    def test_none_and_list_arguments_are_recorded(self):
        graph = export_cnn()
        conv = next(op for op in graph.ops if op.kernel == "aten.convolution")
        args = {a.name: a.value for a in conv.args}
        self.assertEqual(list(args), ["input", "weight", "bias", "stride",
                                      "padding", "dilation", "transposed",
                                      "output_padding", "groups"])
        self.assertEqual(args["input"].operand, 0)
        self.assertTrue(args["bias"].none)
        self.assertEqual([i.int_value for i in args["padding"].list.items], [1, 1])

    def test_masked_off_gradients_are_not_results(self):
        # Batch norm straight on the input: no gradient for the input, so
        # its backward has output_mask [False, True, True] and two results.
        torch.manual_seed(0)
        model = nn.Sequential(nn.BatchNorm2d(3), nn.Flatten(), nn.Linear(48, 5))
        graph = export(model, (torch.randn(2, 3, 4, 4),), F.cross_entropy,
                       targets=(torch.randint(0, 5, (2,)),))
        self.check_invariants(graph)
        backward = next(op for op in graph.ops
                        if op.kernel == "aten.native_batch_norm_backward")
        mask = next(a.value for a in backward.args if a.name == "output_mask")
        self.assertEqual([i.bool_value for i in mask.list.items], [False, True, True])
        self.assertEqual(len(backward.results), 2)

    def test_initial_values_and_gradient_buffers(self):
        torch.manual_seed(0)
        model = nn.Linear(4, 3)
        graph = export(model, (torch.randn(2, 4),), F.cross_entropy,
                       targets=(torch.tensor([0, 2]),), initial_values=True,
                       accumulate_grads=True)
        self.check_invariants(graph)
        by_name = {t.name: t for t in graph.tensors}
        weight = torch.frombuffer(bytearray(by_name["weight"].initial_value),
                                  dtype=torch.float32).reshape(3, 4)
        self.assertTrue(torch.equal(weight, model.weight.detach()))
        target = torch.frombuffer(bytearray(by_name["target0"].initial_value),
                                  dtype=torch.int64)
        self.assertEqual(target.tolist(), [0, 2])
        self.assertEqual(by_name["weight.grad"].role, pb.GRADIENT)
        self.assertFalse(any(t.initial_value for t in graph.tensors
                             if t.role == pb.ACTIVATION))

    def test_traced_constants_keep_their_values(self):
        # Without initial_values only the traced constant has one: it is
        # the step's, and a runtime session binds it from the graph.
        model = ScaledLinear()
        graph = export(model, (torch.randn(2, 4),), F.cross_entropy,
                       targets=(torch.tensor([0, 2]),))
        self.check_invariants(graph)
        stored = {t.name: t.initial_value for t in graph.tensors if t.initial_value}
        self.assertEqual(list(stored), ["constant._tensor_constant0"])
        value = torch.frombuffer(bytearray(stored["constant._tensor_constant0"]),
                                 dtype=torch.float32)
        self.assertEqual(value.tolist(), [1.0, 2.0, 3.0])

    def test_lstm_traces_per_step_ops_with_the_bound_weights(self):
        # nn.LSTM passes its cached `_flat_weights` to the fused kernel;
        # the exporter must trace the weights functional_call binds (torch
        # 1.13 otherwise mixes fake modes) and per-step aten ops (torch 2.x
        # otherwise traces one opaque oneDNN kernel).
        class Tagger(nn.Module):
            def __init__(self):
                super().__init__()
                self.lstm = nn.LSTM(3, 4, batch_first=True, bidirectional=True)
                self.head = nn.Linear(8, 2)

            def forward(self, x):
                return self.head(self.lstm(x)[0][:, -1])

        model = Tagger()
        cached = list(model.lstm._flat_weights)
        graph = export(model, (torch.randn(2, 5, 3),), F.cross_entropy,
                       targets=(torch.tensor([0, 1]),), initial_values=True)
        ops = kernels(graph)
        self.assertFalse([k for k in ops if "rnn" in k or "lstm" in k], ops)
        self.assertEqual(ops["aten.sigmoid_"], 3 * 5 * 2)
        self.assertEqual(ops["aten.tanh"], 5 * 2)
        params = [t for t in graph.tensors if t.role == pb.PARAMETER]
        self.assertEqual([t.name for t in params],
                         [n for n, _ in model.named_parameters()])
        # Every LSTM weight feeds the step (none is a stray constant).
        self.assertFalse([t for t in graph.tensors if t.name.startswith("constant.")])
        # The module's own cached list is left as it was.
        self.assertEqual([id(w) for w in model.lstm._flat_weights],
                         [id(w) for w in cached])

    def test_in_place_views_keep_the_layout_their_operand_had(self):
        # A batch-first GRU stacks its time steps into [T, B, H] and then
        # applies `transpose_(0, 1)`; make_fx records the stack's value as
        # the live tensor, which the transpose later changes to [B, T, H].
        class Tagger(nn.Module):
            def __init__(self):
                super().__init__()
                self.gru = nn.GRU(3, 4, batch_first=True)
                self.head = nn.Linear(4, 2)

            def forward(self, x):
                return self.head(self.gru(x)[0][:, -1])

        torch.manual_seed(0)
        graph = export(Tagger(), (torch.randn(2, 5, 3),), F.cross_entropy,
                       targets=(torch.tensor([0, 1]),))
        self.check_invariants(graph)
        self.assertNotIn("aten.transpose_", kernels(graph))
        stacks = [op for op in graph.ops if op.kernel == "aten.stack"]
        self.assertTrue(stacks)
        for op in stacks:
            dim = next(a.value.int_value for a in op.args if a.name == "dim")
            self.assertEqual(graph.tensors[op.results[0]].shape[dim], len(op.operands))
        forward = stacks[0].results[0]
        self.assertEqual(list(graph.tensors[forward].shape), [5, 2, 4])
        view = next(op for op in graph.ops if forward in op.operands
                    and op.kind == pb.Op.VIEW)
        self.assertEqual(view.kernel, "aten.as_strided.default")
        self.assertEqual(list(graph.tensors[view.results[0]].shape), [2, 5, 4])
        stride = next(a.value.list for a in view.args if a.name == "stride")
        self.assertEqual([i.int_value for i in stride.items], [4, 8, 1])

    def test_update_rules_match_torch_optim(self):
        # The rule make_optimizer derives from a torch.optim instance does
        # what that optimizer's own steps do (eager, on real tensors):
        # Nesterov momentum and weight decay, AdamW's decoupled decay, and
        # Adam's bias corrections over several steps (computed in float32
        # from the step counter, torch's in float64: fp32 tolerance).
        from coop_export.exporter import make_optimizer
        cases = [(lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True,
                                            weight_decay=0.01), 1e-6),
                 (lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.5), 1e-6),
                 (lambda p: torch.optim.Adam(p, lr=0.1, weight_decay=0.01), 1e-5),
                 (lambda p: torch.optim.AdamW(p, lr=0.1, weight_decay=0.1), 1e-5)]
        for make, rtol in cases:
            torch.manual_seed(0)
            param = nn.Parameter(torch.randn(5))
            grads = [torch.randn(5) for _ in range(5)]
            mine = param.detach().clone()
            optimizer = make([param])
            rule = make_optimizer(optimizer)
            state = [torch.zeros(5) for _ in rule.state_names]
            counter = torch.zeros(())
            for grad in grads:
                param.grad = grad.clone()
                optimizer.step()
                shared = rule.begin_step(counter)
                rule.update(mine, grad, state, shared)
            with self.subTest(optimizer=repr(optimizer).split()[0], rule=rule):
                torch.testing.assert_close(mine, param.detach(), rtol=rtol, atol=rtol / 10)
                if rule.counts_steps:
                    self.assertEqual(counter.item(),
                                     float(optimizer.state[param]["step"]))

    def test_optimizer_options_it_cannot_express_are_refused(self):
        model = nn.Linear(4, 3)
        for optimizer in (torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9,
                                          dampening=0.1),
                          torch.optim.Adam(model.parameters(), amsgrad=True),
                          torch.optim.RMSprop(model.parameters())):
            with self.assertRaises(ExportError):
                export(model, (torch.randn(2, 4),), F.cross_entropy, optimizer,
                       targets=(torch.tensor([0, 1]),))

    def test_import_round_trip(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "cnn.pb")
            write_graph(export_cnn(), path)
            mlir = support.import_with_coop_translate(self, path)
        self.assertIn("attributes {coop.step}", mlir)
        self.assertIn('coop.compute "aten.native_batch_norm"', mlir)
        self.assertIn("inplace = array<i64: -1, -1, -1, 3, 4>", mlir)


if __name__ == "__main__":
    unittest.main()
