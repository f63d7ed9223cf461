// RUN: not coop-opt %s --coop-plan-memory="budget=12XB" 2>&1 | FileCheck %s --check-prefix=UNITS
// RUN: not coop-opt %s --coop-plan-memory="budget=-5" 2>&1 | FileCheck %s --check-prefix=UNITS
// UNITS: error: loc("@step"): invalid budget '{{.*}}': expected a positive number of bytes with an optional unit (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)
// RUN: not coop-opt %s --coop-plan-memory="budget=1MiB policy=lru" 2>&1 | FileCheck %s --check-prefix=POLICY
// POLICY: error: loc("@step"): unknown policy 'lru'; expected search, lookahead, coop, dtr, dte or none
// RUN: not coop-opt %s --coop-plan-memory="budget=1MiB ratio=0.5" 2>&1 | FileCheck %s --check-prefix=BOTH --implicit-check-not=func.func
// RUN: not coop-opt %s --coop-plan-memory 2>&1 | FileCheck %s --check-prefix=BOTH
// BOTH: error: loc("@step"): give exactly one of budget=<bytes> (e.g. 512MiB) or ratio=<r>
// RUN: not coop-opt %s --coop-plan-memory="ratio=-0.5" 2>&1 | FileCheck %s --check-prefix=RATIO
// RATIO: error: loc("@step"): ratio must be positive, got -5.000000e-01
// RUN: not coop-opt %s --coop-plan-memory="ratio=0" 2>&1 | FileCheck %s --check-prefix=ZERO --implicit-check-not=func.func
// ZERO: error: loc("@step"): ratio must be positive, got 0.000000e+00
// RUN: not coop-opt %s --coop-plan-memory="ratio=inf" 2>&1 | FileCheck %s --check-prefix=HUGE
// RUN: not coop-opt %s --coop-plan-memory="ratio=1e30" 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: error: loc("@step"): ratio {{.*}} gives a budget of {{.*}} bytes, more than the largest supported (2^62); give a ratio of at most
// An empty file, or one without a training step, is an error, not an
// empty program.
// RUN: printf '' > %t.empty
// RUN: not coop-opt %t.empty --coop-compile="ratio=0.5" 2>&1 | FileCheck %s --check-prefix=NO-STEP
// RUN: not coop-opt %t.empty --coop-plan-memory="ratio=0.5" 2>&1 | FileCheck %s --check-prefix=NO-STEP
// RUN: echo 'func.func @f() { return }' | not coop-opt --coop-plan-memory="ratio=0.5" 2>&1 | FileCheck %s --check-prefix=NO-STEP
// NO-STEP: error: nothing to plan: the input has no function marked 'coop.step'
// RUN: not coop-opt %s --coop-plan-memory="budget=1MiB" --coop-plan-memory="budget=1MiB" 2>&1 | FileCheck %s --check-prefix=AGAIN
// AGAIN: error: loc("@step"): step is already planned

// Every numeric option is range-checked, naming the option and its range.
// RUN: not coop-opt %s --coop-plan-memory="budget=1MiB alignment=0" 2>&1 | FileCheck %s --check-prefix=ALIGN
// ALIGN: error: loc("@step"): alignment must be in [1, 1073741824] bytes, got 0
// RUN: not coop-opt %s --coop-plan-memory="budget=1MiB alignment=4611686018427387904" 2>&1 | FileCheck %s --check-prefix=ALIGN-HUGE
// ALIGN-HUGE: error: loc("@step"): alignment must be in [1, 1073741824] bytes, got 4611686018427387904
// RUN: not coop-opt %s --coop-plan-memory="budget=1MiB pack-nodes=-3" 2>&1 | FileCheck %s --check-prefix=NODES
// NODES: error: loc("@step"): pack-nodes must be in [0, 1000000000] nodes, got -3
// RUN: not coop-opt %s --coop-plan-memory="budget=1MiB time-limit=-1" 2>&1 | FileCheck %s --check-prefix=TIME
// TIME: error: loc("@step"): time-limit must be in [0, 1e+06] seconds, got -1
// RUN: not coop-opt %s --coop-plan-memory="budget=1MiB time-limit=nan" 2>&1 | FileCheck %s --check-prefix=TIME-NAN
// TIME-NAN: error: loc("@step"): time-limit must be in [0, 1e+06] seconds, got nan
// RUN: not coop-opt %s --coop-plan-memory="budget=1MiB time-limit=inf" 2>&1 | FileCheck %s --check-prefix=TIME-INF
// TIME-INF: error: loc("@step"): time-limit must be in [0, 1e+06] seconds, got inf
// RUN: not coop-opt %s --coop-plan-memory="budget=1MiB work-limit=-1" 2>&1 | FileCheck %s --check-prefix=WORK
// WORK: error: loc("@step"): work-limit must be in [0, 1000000000000000] units, got -1
// RUN: not coop-opt %s --coop-plan-memory="budget=1MiB small-region=-1" 2>&1 | FileCheck %s --check-prefix=SMALL
// SMALL: error: loc("@step"): small-region must be in [0, 4611686018427387904] bytes, got -1
// RUN: not coop-opt %s --coop-plan-memory="budget=1MiB small-region=9223372036854775807" 2>&1 | FileCheck %s --check-prefix=SMALL-HUGE
// SMALL-HUGE: error: loc("@step"): small-region must be in [0, 4611686018427387904] bytes, got 9223372036854775807
// RUN: not coop-opt %s --coop-plan-memory="budget=5000000TB" 2>&1 | FileCheck %s --check-prefix=BUDGET-HUGE
// BUDGET-HUGE: error: loc("@step"): budget must be in [1, 4611686018427387904] bytes, got 5000000000000000000

// The floor is x (512) + the working set of op #3, {a, b, c} = 2048 bytes.
// A planner error is at the op it is about, with its figures; it never
// shows the function's signature (a zoo model's is 45 KB on one line).
// RUN: not coop-opt %s --coop-plan-memory="budget=1KiB" 2>&1 | FileCheck %s --check-prefix=FLOOR --implicit-check-not=func.func
// FLOOR: :[[# @LINE + 30]]:8: error: cannot plan @step with policy 'search': budget of 1024 bytes is below the memory floor of 2048 bytes (512 persistent + the working set of op #3 'aten.add')
// FLOOR-NEXT: %c = coop.compute "aten.add"

// Without rematerialization a, b, c and d are live together at op #3:
// 2560 bytes. At the floor, coop evicts d and recomputes it; none cannot.
// No op ran out of room: the error is at the op where the live bytes peak.
// RUN: not coop-opt %s --coop-plan-memory="budget=2048 policy=none" 2>&1 | FileCheck %s --check-prefix=NONE --implicit-check-not=func.func
// NONE: :[[# @LINE + 23]]:8: error: cannot plan @step with policy 'none': out of memory under policy none: the step without rematerialization needs 2560 bytes once packed offline (2560 bytes live at once), more than the budget of 2048 bytes
// RUN: coop-opt %s --coop-plan-memory="budget=2048 policy=coop" --coop-verify-plan | FileCheck %s --check-prefix=COOP
// The search's work limit bounds the whole search, a failing one too, and
// so does a time limit. Only the first candidate (a quick one: one
// simulation, no replays) runs whatever the limit; in the bundled MLP at
// 0.325 it runs out of memory, and a limit already passed stops the rest.
// The error is about the step, not an op, and names the limit; below the
// floor the floor's error stays at its op. Without a limit the thorough
// round plans it.
// RUN: not coop-opt %coop_src_root/models/mlp.mlir --coop-annotate-costs --coop-plan-memory="ratio=0.325 work-limit=1" 2>&1 | FileCheck %s --check-prefix=WORK-LIMIT --implicit-check-not=func.func
// WORK-LIMIT: error: loc("@mlp_train_step"): cannot plan @mlp_train_step with policy 'search': no plan found within the work limit of 1 units (1 candidate tried; the first: out of memory at op #{{[0-9]+}} {{.*}}); try work-limit=0 and time-limit=0 (no limits) or larger ones
// RUN: not coop-opt %coop_src_root/models/mlp.mlir --coop-annotate-costs --coop-plan-memory="ratio=0.325 work-limit=0 time-limit=1e-9" 2>&1 | FileCheck %s --check-prefix=TIME-LIMIT --implicit-check-not=func.func
// TIME-LIMIT: error: loc("@mlp_train_step"): cannot plan @mlp_train_step with policy 'search': no plan found within the time limit of 1e-09 s (1 candidate tried;
// RUN: coop-opt %coop_src_root/models/mlp.mlir --coop-annotate-costs --coop-plan-memory="ratio=0.325 work-limit=0" --coop-verify-plan | FileCheck %s --check-prefix=UNLIMITED
// UNLIMITED: search = "lookahead
// RUN: not coop-opt %s --coop-plan-memory="budget=1KiB work-limit=1" 2>&1 | FileCheck %s --check-prefix=FLOOR --implicit-check-not=func.func --implicit-check-not=work-limit
// COOP: coop.evict
// COOP: recompute_of = 1

func.func @step(%x: tensor<128xf32> {coop.role = #coop.role<input>}) -> tensor<128xf32> attributes {coop.step} {
  %a = coop.compute "aten.exp"(%x) : (tensor<128xf32>) -> tensor<128xf32>
  %d = coop.compute "aten.cos"(%x) : (tensor<128xf32>) -> tensor<128xf32>
  %b = coop.compute "aten.sin"(%a) : (tensor<128xf32>) -> tensor<128xf32>
  %c = coop.compute "aten.add"(%a, %b) : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
  %e = coop.compute "aten.mul"(%c, %d) : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
  return %e : tensor<128xf32>
}
