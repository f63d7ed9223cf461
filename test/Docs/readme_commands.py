"""Runs the tool commands of README.md's shell blocks as written.

A command is run when it starts with `build/bin/` or with the exporter's
`PYTHONPATH=python`: the ones a reader copies to compile, run and export a
step. The set-up, test and evaluation scripts are the suite's own business
(and minutes long). Each runs in a scratch directory where `build` and the
repository's `models` and `python` are links, so outputs land there and
inputs resolve as they do from the repository root.

usage: readme_commands.py REPO_ROOT BUILD_DIR"""
import os
import re
import subprocess
import sys
import tempfile

RUNNABLE = ("build/bin/", "PYTHONPATH=python ")


def commands(readme):
    """Every runnable command line of the README's ```sh blocks, in order."""
    blocks = re.findall(r"```sh\n(.*?)```", readme, re.S)
    lines = [line.split("  #")[0].strip() for block in blocks for line in block.splitlines()]
    return [line for line in lines if line.startswith(RUNNABLE)]


def main():
    root, build = sys.argv[1], sys.argv[2]
    with open(os.path.join(root, "README.md")) as f:
        found = commands(f.read())
    if len(found) < 5:
        print(f"expected the README's compile, run and export commands, found {found}")
        return 1
    failed = 0
    with tempfile.TemporaryDirectory() as scratch:
        os.symlink(os.path.abspath(build), os.path.join(scratch, "build"))
        for name in ("models", "python"):
            os.symlink(os.path.join(root, name), os.path.join(scratch, name))
        for command in found:
            run = subprocess.run(command, shell=True, cwd=scratch, capture_output=True,
                                 text=True)
            print(f"$ {command}\n  exit {run.returncode}")
            if run.returncode != 0:
                failed += 1
                print(run.stdout[-2000:] + run.stderr[-2000:])
    print(f"{len(found) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
