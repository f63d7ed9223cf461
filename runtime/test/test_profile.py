"""Profile mode end to end: coop-run --profile writes a cost table from the
bundled MLP's plan; coop-opt --coop-annotate-costs=profile=... reads it
back, and every kernel the table lists gets the measured cost_us, not the
roofline's; the profiled step computes what a plain step computes; a
malformed table is an error naming its line.

Needs no torch: only the tools named by COOP_OPT, COOP_TRANSLATE, COOP_RUN."""
import os
import re
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
MLP = os.path.join(HERE, "..", "..", "models", "mlp.mlir")
REPEAT = 2


def tool(name):
    path = os.environ.get(name)
    if not path or not os.path.exists(path):
        raise unittest.SkipTest(f"{name} is not set to a built tool")
    return path


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)


def strip_costs(mlir):
    """models/mlp.mlir carries cost_us on every op; annotate-costs keeps
    existing costs, so remove them first."""
    mlir = re.sub(r"cost_us = [^,}]* : f64(, )?", "", mlir)
    mlir = re.sub(r", \}", "}", mlir)
    return re.sub(r" \{\}", "", mlir)


COMPUTE = re.compile(r'coop\.compute "([^"]+)"')
COST = re.compile(r"cost_us = ([^ ,}]+) : f64")
TENSOR = re.compile(r"tensor<([^>]*)>")


def computes(mlir):
    """(kernel, operand signatures, cost_us) of every coop.compute."""
    ops = []
    for line in mlir.splitlines():
        kernel = COMPUTE.search(line)
        if not kernel:
            continue
        cost = COST.search(line)
        types = line[line.rindex(" : (") + 4:]
        operands = types[: types.index(") -> ")] if ") -> " in types else types
        sigs = TENSOR.findall(operands)
        ops.append((kernel.group(1), ",".join(sigs) if sigs else "-",
                    float(cost.group(1)) if cost else None))
    return ops


def read_table(path):
    table = {}
    with open(path) as f:
        for line in f:
            content = line.split("#", 1)[0].split()
            if not content:
                continue
            assert len(content) == 3, line
            key = (content[0], content[1])
            assert key not in table, f"duplicate entry {key}"
            table[key] = float(content[2])
    return table


class ProfileMode(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.opt = tool("COOP_OPT")
        cls.translate = tool("COOP_TRANSLATE")
        cls.coop_run = tool("COOP_RUN")
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = cls.tmp.name
        with open(MLP) as f:
            cls.stripped = os.path.join(cls.dir, "mlp.nocost.mlir")
            with open(cls.stripped, "w") as out:
                out.write(strip_costs(f.read()))
        # The bundled model's plan: half of its unconstrained arena.
        cls.plan = cls.compile(MLP, "ratio=0.5 policy=coop", "mlp")
        cls.table = os.path.join(cls.dir, "table.txt")
        cls.profiled = os.path.join(cls.dir, "profiled.bin")
        cls.profile_run = run([cls.coop_run, cls.plan, "--seed", "1", "--profile", cls.table,
                               "--repeat", str(REPEAT), "--dump-arguments", cls.profiled])

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    @classmethod
    def compile(cls, mlir, options, name, pre=(), report=False):
        rt_mlir = os.path.join(cls.dir, f"{name}.rt.mlir")
        rt = run([cls.opt, mlir, *pre, f"--coop-compile={options}", "-o", rt_mlir])
        assert rt.returncode == 0, rt.stderr
        plan = os.path.join(cls.dir, f"{name}.plan")
        out = run([cls.translate, "--coop-rt-to-plan", rt_mlir, "-o", plan])
        assert out.returncode == 0, out.stderr
        return (plan, rt.stdout + rt.stderr) if report else plan

    def annotate(self, *options):
        out = run([self.opt, self.stripped, *options])
        self.assertEqual(out.returncode, 0, out.stderr)
        return computes(out.stdout)

    def test_profiled_step_computes_a_plain_step(self):
        self.assertEqual(self.profile_run.returncode, 0, self.profile_run.stderr)
        self.assertIn("profiled: a warm-up and 2 timed run(s) per launch", self.profile_run.stdout)
        plain = os.path.join(self.dir, "plain.bin")
        out = run([self.coop_run, self.plan, "--seed", "1", "--dump-arguments", plain])
        self.assertEqual(out.returncode, 0, out.stderr)
        loss = lambda text: re.search(r"loss \S+ \((\S+)\)", text).group(1)
        self.assertEqual(loss(self.profile_run.stdout), loss(out.stdout))
        with open(plain, "rb") as a, open(self.profiled, "rb") as b:
            self.assertTrue(a.read() == b.read(), "profiled step changed the arguments")

    def test_annotate_costs_reads_the_profile(self):
        self.assertEqual(self.profile_run.returncode, 0, self.profile_run.stderr)
        table = read_table(self.table)
        self.assertGreater(len(table), 10)
        profiled = self.annotate(f"--coop-annotate-costs=profile={self.table}")
        roofline = self.annotate("--coop-annotate-costs")
        self.assertEqual(len(profiled), len(roofline))
        self.assertGreater(len(profiled), 100)
        used = set()
        for (kernel, sig, cost), (_, _, estimate) in zip(profiled, roofline):
            key = (kernel, sig)
            # Every compute op of the step is a launch of this plan (no
            # recomputation at 0.5), so the table lists it.
            self.assertIn(key, table, f"{key} was not profiled")
            used.add(key)
            self.assertAlmostEqual(cost, table[key], delta=1e-9 * max(1.0, table[key]),
                                   msg=f"{key}: annotated {cost}, table {table[key]}")
            self.assertNotEqual(cost, estimate, f"{key}: the roofline's cost, not the profile's")
        self.assertEqual(used, set(table), "table entries that match no op")

    def test_profile_guided_planning(self):
        # At 0.4 of the unconstrained arena the MLP needs recomputation; the
        # planner weighs it with the profiled costs (its compute overhead
        # differs from the roofline's), and the plan still computes exactly
        # what the bundled half-budget plan computes.
        self.assertEqual(self.profile_run.returncode, 0, self.profile_run.stderr)
        overhead = {}
        for name, pre in (("guided", [f"--coop-annotate-costs=profile={self.table}"]),
                          ("roofline", ["--coop-annotate-costs"])):
            plan, report = self.compile(self.stripped, "ratio=0.4 policy=coop report=true", name,
                                        pre=pre, report=True)
            overhead[name] = re.search(r"compute overhead:\s+(\S+) %", report).group(1)
        self.assertNotEqual(overhead["guided"], overhead["roofline"])
        guided = os.path.join(self.dir, "guided.plan")
        outs = [run([self.coop_run, p, "--seed", "1", "--steps", "2"]) for p in (guided, self.plan)]
        for out in outs:
            self.assertEqual(out.returncode, 0, out.stderr)
        losses = [re.findall(r"loss \S+ \((\S+)\)", out.stdout) for out in outs]
        self.assertEqual(len(losses[0]), 2)
        self.assertEqual(losses[0], losses[1])

    def test_malformed_table_is_an_error_naming_the_line(self):
        self.assertEqual(self.profile_run.returncode, 0, self.profile_run.stderr)
        with open(self.table) as f:
            text = f.read()
        lines = len(text.splitlines())
        cases = [
            ("aten.mm 1024x128xf32,128x128xf32\n", "expected 'kernel operand-signatures microseconds'"),
            ("aten.relu_ * -3\n", "'-3' is not a non-negative time in microseconds"),
            ("aten.relu_ * fast\n", "'fast' is not a non-negative time in microseconds"),
            ("aten.relu_ 1024x128xf32 1.0\n", "a second entry for aten.relu_ 1024x128xf32"),
        ]
        for bad, message in cases:
            with self.subTest(bad=bad):
                path = os.path.join(self.dir, "bad.txt")
                with open(path, "w") as f:
                    f.write(text + bad)
                out = run([self.opt, self.stripped, f"--coop-annotate-costs=profile={path}",
                           "-o", os.devnull])
                self.assertNotEqual(out.returncode, 0)
                self.assertIn(f"bad profile table, line {lines + 1}: {message}", out.stderr)

    def test_bad_profile_options(self):
        cases = [
            ([self.plan, "--repeat", "2"], "--repeat needs --profile"),
            ([self.plan, "--profile", "t.txt", "--repeat", "0"],
             "--repeat needs an integer in [1, 1000000], not '0'"),
            ([self.plan, "--profile"], "--profile needs a table file name"),
            ([self.plan, "--seed", "1", "--repeat", "1", "--profile",
              os.path.join(self.dir, "missing", "t.txt")], "cannot write"),
        ]
        for args, message in cases:
            with self.subTest(args=args):
                out = run([self.coop_run, *args])
                self.assertNotEqual(out.returncode, 0)
                self.assertIn(message, out.stderr)


if __name__ == "__main__":
    unittest.main()
