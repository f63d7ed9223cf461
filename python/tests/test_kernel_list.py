"""The exporter's copy of the runtime's kernel registry
(coop_export/runtime_kernels.txt) is the registry: `coop-run
--list-kernels` prints the same names. Needs no torch, only the built
coop-run named by COOP_RUN."""
import os
import subprocess
import unittest

REGISTRY_COPY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                             "coop_export", "runtime_kernels.txt")


class KernelList(unittest.TestCase):
    def test_copy_equals_registry(self):
        tool = os.environ.get("COOP_RUN")
        if not tool or not os.path.exists(tool):
            self.skipTest("COOP_RUN is not set to a built coop-run")
        listed = subprocess.run([tool, "--list-kernels"], capture_output=True,
                                text=True, check=True).stdout.split()
        with open(REGISTRY_COPY) as f:
            copied = f.read().split()
        self.assertTrue(listed, "coop-run --list-kernels printed no kernel")
        self.assertEqual(len(listed), len(set(listed)), "a kernel is registered twice")
        only_copied = sorted(set(copied) - set(listed))
        only_registered = sorted(set(listed) - set(copied))
        self.assertFalse(
            only_copied or only_registered,
            f"python/coop_export/runtime_kernels.txt is not the runtime's registry "
            f"(only in the copy: {only_copied}; only in the registry: "
            f"{only_registered}); regenerate it with `build/bin/coop-run "
            "--list-kernels > python/coop_export/runtime_kernels.txt`")

if __name__ == "__main__":
    unittest.main()
