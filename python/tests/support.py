"""Shared set-up of the exporter tests: torch or a skip, and the importer."""
import os
import subprocess
import sys
import unittest

try:
    import torch  # noqa: F401
except ImportError:
    reason = f"torch is not installed for {sys.executable}"
    print(f"skipping the exporter tests: {reason}", file=sys.stderr)
    raise unittest.SkipTest(reason)

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))


def import_with_coop_translate(test, path):
    """Imports `path` with coop-translate (from $COOP_TRANSLATE) and returns
    the MLIR text; skips when the tool was not given."""
    tool = os.environ.get("COOP_TRANSLATE")
    if not tool:
        test.skipTest("COOP_TRANSLATE is not set")
    result = subprocess.run([tool, "--import-training-graph", path],
                            capture_output=True, text=True)
    test.assertEqual(result.returncode, 0, result.stderr)
    return result.stdout
