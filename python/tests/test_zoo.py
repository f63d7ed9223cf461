"""Zoo models at the paper's sizes: parameter bytes match PyTorch's own
count, and every exported graph imports and verifies.

The default run covers a representative subset (a CNN with batch norm, a
transformer encoder with dropout, the tied-weight GPT-2, the BiLSTM whose
nn.LSTM reads cached weights). COOP_ZOO=all runs
every model, COOP_ZOO=resnet50,unet a chosen list.
"""
import os
import tempfile
import unittest

import support  # noqa: F401  (skips without torch)

from coop_export import zoo
from coop_export.__main__ import export_zoo_model, parameter_bytes, write_graph

DEFAULT_SUBSET = ("resnet50", "bert_large", "gpt2", "bilstm")


def selected_models():
    choice = os.environ.get("COOP_ZOO", "")
    if choice == "all":
        return sorted(zoo.ZOO)
    return choice.split(",") if choice else list(DEFAULT_SUBSET)


class ZooTest(unittest.TestCase):
    def test_zoo_models(self):
        for name in selected_models():
            with self.subTest(model=name):
                model, *_ = zoo.build(name)
                expected = sum(p.numel() * p.element_size()
                               for p in model.parameters())
                graph = export_zoo_model(name)
                self.assertEqual(parameter_bytes(graph), expected)
                self.assertEqual(graph.metadata["batch"],
                                 str(zoo.ZOO[name].batch))
                with tempfile.TemporaryDirectory() as tmp:
                    path = os.path.join(tmp, f"{name}.pb")
                    write_graph(graph, path)
                    mlir = support.import_with_coop_translate(self, path)
                self.assertIn("attributes {coop.step}", mlir)
                print(f"{name}: {len(graph.ops)} ops, {parameter_bytes(graph)} "
                      "parameter bytes", flush=True)


if __name__ == "__main__":
    unittest.main()
