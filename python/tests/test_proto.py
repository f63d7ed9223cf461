"""The committed training_graph_pb2.py matches proto/training_graph.proto."""
import os
import shutil
import subprocess
import tempfile
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


class GeneratedCodeTest(unittest.TestCase):
    def test_python_module_is_regenerated_from_the_schema(self):
        protoc = shutil.which("protoc")
        if not protoc:
            self.skipTest("protoc is not installed")
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([protoc, f"--python_out={tmp}",
                            f"--proto_path={ROOT}/proto", "training_graph.proto"],
                           check=True)
            with open(os.path.join(tmp, "training_graph_pb2.py")) as fresh, \
                    open(os.path.join(ROOT, "python", "coop_export",
                                      "training_graph_pb2.py")) as committed:
                self.assertEqual(committed.read(), fresh.read(),
                                 "regenerate: protoc --python_out="
                                 "python/coop_export -Iproto "
                                 "proto/training_graph.proto")


if __name__ == "__main__":
    unittest.main()
