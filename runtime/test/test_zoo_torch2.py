"""The zoo exported under torch 2.x passes `coop-run --check`.

torch 2.x traces some modules to other kernels than torch 1.13 (whose
exports are models/zoo/*.pb.gz, checked by test_zoo_check): fused CPU
attention, `_safe_softmax`, `alias` for `detach`. Each model named by
COOP_ZOO_MODELS (comma-separated; ctest runs one per test) is exported
under this interpreter's torch at batch 1 (language models at sequence
length 16, the BiLSTM over 4 steps: the kernels do not depend on the
sizes), imported, planned at ratio 1.0 and checked as test_zoo_check
checks the committed graphs. Skipped, saying why, when torch is older than 2.0.

Needs the tools named by COOP_OPT, COOP_TRANSLATE and COOP_RUN."""
import gzip
import os
import sys
import tempfile
import unittest

import test_zoo_check

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "python"))
try:
    import torch
except ImportError:
    torch = None

SMALL = {"bert_large": {"seq": 16}, "gpt2": {"seq": 16}, "gpt3_2.7b": {"seq": 16},
         "bilstm": {"seq": 4}}


class ZooTorch2(unittest.TestCase):
    check = test_zoo_check.ZooCheck.check

    def test_zoo_exports_pass_check(self):
        if torch is None or int(torch.__version__.split(".")[0]) < 2:
            found = f"torch {torch.__version__}" if torch else "no torch"
            self.skipTest(f"no torch 2.x: {sys.executable} has {found} (configure with "
                          "-DCOOP_TORCH2_PYTHON=<python with torch 2.x>)")
        from coop_export.__main__ import export_zoo_model, write_graph
        models = os.environ.get("COOP_ZOO_MODELS", "")
        self.assertTrue(models, "COOP_ZOO_MODELS names no model")
        with tempfile.TemporaryDirectory() as tmp:
            for name in models.split(","):
                with self.subTest(model=name):
                    path = os.path.join(tmp, name + ".pb.gz")
                    write_graph(export_zoo_model(name, 1, **SMALL.get(name, {})), path)
                    # The unconstrained plan: at batch 1 the parameters
                    # are most of the arena, and the kernels are the same.
                    self.check(name, path, os.path.join(tmp, name + ".plan"), ratio=1.0)


if __name__ == "__main__":
    unittest.main()
