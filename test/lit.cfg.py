# -*- Python -*-
import os
import sys

import lit.formats
from lit.llvm import llvm_config

config.name = "COOP"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.coop_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]

config.substitutions.append(("%coop_src_root", config.coop_src_root))
config.substitutions.append(("%python", sys.executable))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(
    ["coop-opt", "coop-translate", "coop-run", "coop-dump-graph"], [config.coop_tools_dir, config.llvm_tools_dir]
)
