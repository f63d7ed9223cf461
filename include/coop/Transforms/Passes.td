//===- Passes.td - coop pass declarations ------------------*- tablegen -*-===//

#ifndef COOP_TRANSFORMS_PASSES_TD
#define COOP_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def CoopMemoryStats : Pass<"coop-memory-stats", "ModuleOp"> {
  let summary = "Print the memory figures of every training step";
  let description = [{
    For every `func.func` marked `coop.step`, prints to standard output the
    op count, tensor and storage counts, persistent bytes, the peak of live
    bytes when the step runs in program order with no rematerialization
    (exact liveness, no fragmentation or alignment), and the memory floor:
    persistent bytes plus the largest single-op working set (distinct
    transient buffers an op reads or writes, plus its workspace). No plan can
    run the step in fewer bytes than the floor. The IR is left unchanged.

    Input:

    ```mlir
    func.func @step(%w: tensor<4x4xf32> {coop.role = #coop.role<parameter>},
                    %x: tensor<2x4xf32> {coop.role = #coop.role<input>})
        -> tensor<2x4xf32> attributes {coop.step} {
      %y = coop.compute "aten.mm"(%x, %w)
          : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
      return %y : tensor<2x4xf32>
    }
    ```

    Printed (the IR itself is unchanged):

    ```
    coop-memory-stats @step
      ops:               1
      tensors:           3
      storages:          3
      persistent bytes:  96 (96 B)
      peak live bytes:   128 (128 B) at op #0 'aten.mm'
      memory floor:      128 (128 B) at op #0 'aten.mm'
    ```
  }];
  let dependentDialects = ["::mlir::coop::CoopDialect"];
}

def CoopPlanMemory : Pass<"coop-plan-memory", "::mlir::ModuleOp"> {
  let summary = "Plan every tensor's arena offset and the evictions and "
                "recomputations that fit a training step into a budget";
  let description = [{
    Runs the planner core on each `coop.step` function and rewrites it into
    an explicit schedule inside one arena of `budget` bytes (or `ratio` times
    the arena the step needs with no rematerialization):

    - every step argument gets `coop.offset`, every `coop.compute` gets
      `offsets` (one per result) and, with a workspace, `workspace_offset`;
    - `coop.evict` and `coop.free` release buffers where the plan does;
    - a recomputation is a clone of the original op with `recompute_of`
      set to the original op's index, reading the tensors resident at that
      point; later readers use its results. Views over a recomputed tensor
      are re-created the same way (they cost nothing);
    - the function gets `coop.plan`: budget, policy, options and the plan's
      figures (overhead, peak, fragmentation, evictions, recomputations).

    Policies: `coop` (sliding window over address-ordered memory, two-ended
    placement of cheap and expensive tensors, recomputable in-place), `dtr`,
    `dte` (the baselines), `none` (no rematerialization), and `lookahead`
    (Coop's window and placement, victims scored by the recompute chain
    their next read will trigger over the distance to that read). The
    default, `search`, plans several candidates and keeps the fitting plan
    with the least overhead: `lookahead` following evictions chosen ahead of
    time from the whole step's live-byte profile (for targets at and below
    the budget), `lookahead` alone, `coop`, `dtr` and `dte`; `report=true`
    lists them and names the winner.

    Every policy's schedule is then repacked offline (`pack`, default on):
    with the whole schedule fixed, every buffer's lifetime is known, and an
    offline packer (several greedy orders, then a bounded exact search)
    gives new offsets far tighter than the simulator's online best fit. A
    policy may be simulated in an arena larger than the budget
    (`search-budget`) when its repacked plan still fits the budget: it then
    evicts and recomputes less. `none` is simulated once, in an unbounded
    arena, and packed as low as the packer goes: that is the arena `ratio`
    is a fraction of. `pack=false` gives the online policy's own plan, the
    paper's reproduction.

    Input (budget=2048, alignment=512; `%h` must make room for `%b`):

    ```mlir
    func.func @step(%x: tensor<128xf32> {coop.role = #coop.role<input>})
        -> tensor<128xf32> attributes {coop.step} {
      %h = coop.compute "aten.exp"(%x) : (tensor<128xf32>) -> tensor<128xf32>
      %a = coop.compute "aten.sin"(%h) : (tensor<128xf32>) -> tensor<128xf32>
      ...
    ```

    Output:

    ```mlir
    func.func @step(%x: tensor<128xf32> {coop.offset = 0 : i64, coop.role = ...})
        -> tensor<128xf32> attributes {coop.plan = {budget = 2048 : i64, ...}, coop.step} {
      %h = coop.compute "aten.exp"(%x) {offsets = array<i64: 1536>} : ...
      %a = coop.compute "aten.sin"(%h) {offsets = array<i64: 1024>} : ...
      coop.evict %h : tensor<128xf32>
      ...
      %h2 = coop.compute "aten.exp"(%x) {offsets = array<i64: 1536>, recompute_of = 0 : i64} : ...
    ```

    A budget below the memory floor, or one the policy cannot meet, is an
    error that names the floor and the op; a search that `work-limit` or
    `time-limit` stops without a plan is an error at the step that says
    so. So is an input with no
    `coop.step` function, and a numeric option outside its range (budget
    and small-region up to 2^62 bytes, alignment 1 B to 1 GiB, time-limit
    0 to 10^6 s, work-limit 0 to 10^15 units, pack-nodes 0 to 10^9).

    The search's limit is its work, counted where it is done (units of
    about 25 ns): the same step gets the same plan on any machine under
    any load. Its last fifth goes to the best candidates again, each in an
    arena a quarter larger than the budget with its live bytes capped at
    the budget, repacked into the budget. Where nothing plans for the
    budget, the search runs again for
    98.5 % of it, within half the limit (near the floor,
    whether a budget plans jumps with it, and a plan for a smaller budget
    fits this one). A `time-limit` bounds the step's whole planning by the clock
    besides, plan found or not, at the cost of that determinism.
  }];
  let options = [
    Option<"budget", "budget", "std::string", /*default=*/"\"\"",
           "Arena size: bytes with an optional unit (B, KiB, MiB, GiB, TiB, "
           "KB, MB, GB, TB), e.g. 512MiB">,
    Option<"ratio", "ratio", "double", /*default=*/"0.0",
           "Arena size as a fraction of the arena the step needs with no "
           "rematerialization (same allocator); instead of budget">,
    Option<"policy", "policy", "std::string", /*default=*/"\"search\"",
           "search (the default: the best of several candidate plans), or "
           "one policy: lookahead, coop, dtr, dte or none">,
    Option<"workLimit", "work-limit", "int64_t",
           /*default=*/"::coop::planner::kDefaultSearchWorkLimit",
           "policy=search: units of work (about 25 ns each) after "
           "which the search starts no new candidate, replay or simulated "
           "arena, plan found or not (0: no limit); the default takes about "
           "3.75 s on a 2-core machine">,
    Option<"timeLimit", "time-limit", "double", /*default=*/"0.0",
           "policy=search: seconds of the clock after which the search "
           "stops as at its work limit (0: none); a binding time limit makes "
           "the plan depend on the machine's speed and load">,
    Option<"alignment", "alignment", "int64_t", /*default=*/"512",
           "Alignment of every buffer, in bytes">,
    Option<"partition", "partition", "bool", /*default=*/"true",
           "Place cheap tensors at the high end of free memory and expensive "
           "ones at the low end (policy=search: may also place from the low "
           "end only, last; coop.plan's partition says which the plan did)">,
    Option<"inplace", "inplace", "bool", /*default=*/"true",
           "Recomputable in-place updates; false copies on write">,
    Option<"window", "window", "bool", /*default=*/"true",
           "Coop's contiguous sliding-window eviction; false evicts single "
           "tensors (coop policy only)">,
    Option<"smallRegion", "small-region", "int64_t", /*default=*/"0",
           "Bytes reserved at the top of the arena for tensors of at most "
           "10 KiB, which eviction never scans (0: none)">,
    Option<"pack", "pack", "bool", /*default=*/"true",
           "Repack the plan's buffers offline (false: the simulator's online "
           "best-fit addresses, as in the paper)">,
    Option<"searchBudget", "search-budget", "bool", /*default=*/"true",
           "With pack: also simulate in arenas larger than the budget and "
           "keep the least-overhead plan that fits once repacked">,
    Option<"packNodes", "pack-nodes", "int64_t", /*default=*/"2000",
           "Nodes the packer's exact search may visit per repacked plan "
           "(0: greedy orders only)">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Print the plan's figures to standard output">,
    Option<"svg", "svg", "std::string", /*default=*/"\"\"",
           "Write a picture of the arena over time to this SVG file">
  ];
  let dependentDialects = ["::mlir::coop::CoopDialect"];
}

def CoopVerifyPlan : Pass<"coop-verify-plan", "::mlir::func::FuncOp"> {
  let summary = "Prove a planned step safe, independently of the planner";
  let description = [{
    Reads a planned `coop.step` function (offsets, evictions, frees,
    recomputations) back into a plan and replays it with the planner core's
    independent verifier, which shares no code with the simulator. It
    proves that every buffer lies inside the arena, no two live buffers
    overlap, every op reads resident tensors holding the right version (in-
    place aware), nothing is freed twice or read after it is gone, and the
    step ends with the same persistent state and outputs as the
    unconstrained step. It also rejects IR that reads an SSA value after
    its buffer was evicted, freed or overwritten in place, since the
    lowering reads offsets off those values.

    A violation is reported at the op where it happens, e.g. for a
    hand-edited offset that makes two buffers overlap:

    ```mlir
    %b = coop.compute "aten.cos"(%x) {offsets = array<i64: 512>} : ...
    // error: invalid plan: instruction #1 (run op #1 'aten.cos'):
    //        'aten.cos#1:0' at [512, 1024) overlaps 'aten.sin#0:0' ...
    ```

    The IR is never changed. Unplanned steps are an error.
  }];
  let dependentDialects = ["::mlir::coop::CoopDialect"];
}

def CoopLowerToRuntime : Pass<"coop-lower-to-runtime", "::mlir::ModuleOp"> {
  let summary = "Lower planned steps to coop_rt programs of kernel launches";
  let description = [{
    Replaces every planned `coop.step` function with a `coop_rt.program`:
    the arena size, the persistent-tensor table (`coop_rt.argument`, one per
    step argument, with its role and place), one `coop_rt.launch` per
    executed kernel (recomputations included) whose operands are arena
    buffers with shape, element type, strides and element offset, and a
    `coop_rt.output` with the buffers of the step's results. Views vanish
    into the strides of the buffers that read them; evictions and frees
    vanish because every address is fixed. An in-place result keeps its
    operand's layout. When the plan wrote a persistent tensor's final
    version somewhere else (copy on write), a `coop.copy` launch at the end
    moves it home, so the next step finds it where it expects it.

    Input (planned):

    ```mlir
    func.func @step(%x: tensor<4x8xf32> {coop.offset = 0 : i64, coop.role = #coop.role<input>})
        -> tensor<8x4xf32> attributes {coop.plan = {budget = 1024 : i64, ...}, coop.step} {
      %t = coop.view "aten.t"(%x) : (tensor<4x8xf32>) -> tensor<8x4xf32>
      %y = coop.compute "aten.relu"(%t) {offsets = array<i64: 512>} : ...
      return %y : tensor<8x4xf32>
    }
    ```

    Output:

    ```mlir
    coop_rt.program @step arena(1024) attributes {plan = {...}} {
      coop_rt.argument 0 "arg0" #coop.role<input> #coop_rt.buf<offset = 0, size = 128, element_type = f32, shape = array<i64: 4, 8>, strides = array<i64: 8, 1>, element_offset = 0>
      coop_rt.launch "aten.relu"([#coop_rt.buf<offset = 0, ..., shape = array<i64: 8, 4>, strides = array<i64: 1, 8>, ...>]) -> ([#coop_rt.buf<offset = 512, ...>])
      coop_rt.output [#coop_rt.buf<offset = 512, ...>]
    }
    ```

    Unplanned steps, and views whose layout is unknown, are errors.
  }];
  let dependentDialects = ["::mlir::coop::CoopDialect",
                           "::mlir::coop_rt::CoopRTDialect"];
}

def CoopMaterializeViews : Pass<"coop-materialize-views", "::mlir::func::FuncOp"> {
  let summary = "Make reshapes that coop's layouts cannot view into copies";
  let description = [{
    Every compute result is contiguous here, while torch keeps an input's
    strides through some kernels (a `mul` of a permuted tensor is permuted
    too) and then records a reshape of that result as a view
    (`aten._reshape_alias`, `aten.view`). In a `coop.step` function, this
    pass computes the layouts the lowering will give every value and
    replaces each reshape view that cannot be expressed over them with a
    copy, `coop.compute "aten.reshape"`, unless something writes in place
    through the view (then the lowering reports it). The importer
    (`coop-translate --import-training-graph`) does the same, so run this
    on hand-written steps only, before `coop-annotate-costs` (the copy has
    no cost yet).

    Input:

    ```mlir
    %y = coop.compute "aten.mul.Tensor"(%x, %x)
        : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %t = coop.view "aten.t"(%y) : (tensor<2x3xf32>) -> tensor<3x2xf32>
    %r = coop.view "aten.view"(%t) {args = {size = [6]}}
        : (tensor<3x2xf32>) -> tensor<6xf32>
    ```

    Output (a transposed 2x3 has no flat view):

    ```mlir
    %t = coop.view "aten.t"(%y) : (tensor<2x3xf32>) -> tensor<3x2xf32>
    %r = coop.compute "aten.reshape"(%t) {args = {size = [6]}}
        : (tensor<3x2xf32>) -> tensor<6xf32>
    ```
  }];
  let dependentDialects = ["::mlir::coop::CoopDialect"];
}

def CoopReuseBuffers : Pass<"coop-reuse-buffers", "::mlir::func::FuncOp"> {
  let summary = "Let results take over the buffers of operands that die with them";
  let description = [{
    In a `coop.step` function: `aten._unsafe_view` (an alias in ATen that
    torch's autograd does not track, exported as a copy) becomes a view
    when its source has no other use, and `aten.add.Tensor`, `sub.Tensor`,
    `mul.Tensor` and `div.Tensor` whose first operand has the result's type
    and no other use (a compute result, or a reshape view of one) write
    their result in place over it. Neither the step nor a recomputation of
    such a result then needs both buffers at once; the planner treats the
    result as any in-place version (recomputable from the operand's
    producer). The importer (`coop-translate --import-training-graph`) runs
    it on every imported step; run it on hand-written steps before
    planning.

    Input (a linear layer on a 3-D input, as torch traces it):

    ```mlir
    %mm = coop.compute "aten.mm"(%x, %wt) : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
    %v = coop.compute "aten._unsafe_view"(%mm) {args = {size = [2, 4, 6]}}
        : (tensor<8x6xf32>) -> tensor<2x4x6xf32>
    %y = coop.compute "aten.add.Tensor"(%v, %b)
        : (tensor<2x4x6xf32>, tensor<6xf32>) -> tensor<2x4x6xf32>
    ```

    Output:

    ```mlir
    %v = coop.view "aten._unsafe_view"(%mm) {args = {size = [2, 4, 6]}}
        : (tensor<8x6xf32>) -> tensor<2x4x6xf32>
    %y = coop.compute "aten.add.Tensor"(%v, %b) {inplace = array<i64: 0>}
        : (tensor<2x4x6xf32>, tensor<6xf32>) -> tensor<2x4x6xf32>
    ```
  }];
  let dependentDialects = ["::mlir::coop::CoopDialect"];
}

def CoopMergeDuplicates : Pass<"coop-merge-duplicates", "::mlir::func::FuncOp"> {
  let summary = "Replace ops by earlier identical ones whose results nothing writes";
  let description = [{
    In an unplanned `coop.step` function, replaces every `coop.compute` and
    `coop.view` by an earlier op with the same kernel, `args`, operands
    (the same SSA values; the walk goes in program order, so a chain of
    duplicates collapses op by op) and result types, and erases it. Costs
    and workspaces may differ: the first op's are kept. Merged only when
    the two compute the same contents and keep them:

    - no result of either op is ever written, in place (`inplace`) or
      through a view: an in-place write makes a new version, and after
      merging the old version would be read where the later op's result
      was (so in-place ops, and anything they overwrite, stay);
    - neither is random (`rng`, or a kernel the verifier knows as random:
      each run draws a new mask), nor an aten kernel with a trailing `_`
      (it writes an operand, whether `inplace` says so or not), nor a
      compute op without results;
    - the two results are not both step outputs (directly or as views):
      the step's outputs stay distinct tensors.

    `--coop-compile` runs it first. A planned step (`coop.plan`, arena
    offsets, recomputations, evictions or frees) is an error: the plan's
    op indices and places would no longer match.

    Input (a causal mask built in two layers):

    ```mlir
    %o1 = coop.compute "aten.ones"() {args = {size = [4, 4]}} : () -> tensor<4x4xi1>
    %t1 = coop.compute "aten.tril"(%o1) : (tensor<4x4xi1>) -> tensor<4x4xi1>
    %y1 = coop.compute "aten.masked_fill.Scalar"(%s1, %t1) ...
    %o2 = coop.compute "aten.ones"() {args = {size = [4, 4]}} : () -> tensor<4x4xi1>
    %t2 = coop.compute "aten.tril"(%o2) : (tensor<4x4xi1>) -> tensor<4x4xi1>
    %y2 = coop.compute "aten.masked_fill.Scalar"(%s2, %t2) ...
    ```

    Output:

    ```mlir
    %o1 = coop.compute "aten.ones"() {args = {size = [4, 4]}} : () -> tensor<4x4xi1>
    %t1 = coop.compute "aten.tril"(%o1) : (tensor<4x4xi1>) -> tensor<4x4xi1>
    %y1 = coop.compute "aten.masked_fill.Scalar"(%s1, %t1) ...
    %y2 = coop.compute "aten.masked_fill.Scalar"(%s2, %t1) ...
    ```
  }];
  let dependentDialects = ["::mlir::coop::CoopDialect"];
}

def CoopHoistStateUpdates : Pass<"coop-hoist-state-updates", "::mlir::func::FuncOp"> {
  let summary = "Run every update of the step's state as soon as what it reads is ready";
  let description = [{
    In an unplanned `coop.step` function, moves the ops that serve updates
    of the optimizer state up to right after the last other op they depend
    on. A state update is a `coop.compute` with results, not random, each
    result written in place over a version of a function argument's
    storage (not through a view) that no other op reads (momentum, Adam's
    moments, a step counter); the ops serving updates are those and every
    non-random computation with fresh results only (or view) whose
    results only such ops read and that replaces an operand at least as
    large that only they read (weight decay's `grad + wd * p`). Each
    update moves, in program order, with the serving ops it needs that
    come later (a momentum buffer's `mul_` before its `add_`), to right
    after the last producer of their operands that is not one of them; one
    that depends on no other op (that `mul_` alone) stays. Parameters' own
    updates stay: the forward and the backward read the old version, and
    ending it earlier would end the recomputations of activations from it.
    Exported steps run the optimizer after the whole backward pass, which
    keeps every gradient alive to the end of the step; moved, each dies
    where the state update that reads it ran. Every op computes what it
    did on the same values, so the results are bit-identical.

    `--coop-compile` runs it after coop-merge-duplicates. A planned step is
    an error, as for coop-merge-duplicates.

    Input (SGD with momentum after the backward):

    ```mlir
    %gw = coop.compute "aten.mm"(%xt, %dy) ...          // the gradient of %w
    %dx = coop.compute "aten.mm"(%dy, %wt) ...          // the rest of the backward
    %b1 = coop.compute "aten.mul_.Tensor"(%buf, %m) {inplace = array<i64: 0>} ...
    %b2 = coop.compute "aten.add_.Tensor"(%b1, %gw) {inplace = array<i64: 0>} ...
    %w1 = coop.compute "aten.add_.Tensor"(%w, %b2) {inplace = array<i64: 0>} ...
    ```

    Output (the parameter's own update stays at the end):

    ```mlir
    %gw = coop.compute "aten.mm"(%xt, %dy) ...
    %b1 = coop.compute "aten.mul_.Tensor"(%buf, %m) {inplace = array<i64: 0>} ...
    %b2 = coop.compute "aten.add_.Tensor"(%b1, %gw) {inplace = array<i64: 0>} ...
    %dx = coop.compute "aten.mm"(%dy, %wt) ...
    %w1 = coop.compute "aten.add_.Tensor"(%w, %b2) {inplace = array<i64: 0>} ...
    ```
  }];
  let dependentDialects = ["::mlir::coop::CoopDialect"];
}

def CoopAnnotateCosts : Pass<"coop-annotate-costs", "::mlir::ModuleOp"> {
  let summary = "Fill in cost_us on compute ops that lack it";
  let description = [{
    Estimates the run time of every `coop.compute` in a `coop.step`
    function that has no `cost_us` yet: the measured time from the profile
    table when it lists the kernel, else the analytic roofline of the
    device, max(FLOPs / peak FLOP/s, bytes moved / bandwidth), per aten op
    family (matmuls and convolutions by their FLOPs, everything else by the
    bytes it touches). Views cost nothing and are left alone; existing
    costs are kept. The function gets `coop.costs`, where the costs came
    from (op counts `profile`, `roofline` and `given` in the input, the
    `device`, the `profile_table`), which coop-plan-memory's report prints.
    `--coop-compile` runs this pass first. See docs/cost-model.md for the
    families and the profile format.

    Input:

    ```mlir
    func.func @step(%w: tensor<128x256xf32> {coop.role = #coop.role<parameter>},
                    %x: tensor<512x256xf32> {coop.role = #coop.role<input>})
        -> tensor<512x128xf32> attributes {coop.step} {
      %wt = coop.view "aten.t"(%w) : (tensor<128x256xf32>) -> tensor<256x128xf32>
      %y = coop.compute "aten.mm"(%x, %wt)
          : (tensor<512x256xf32>, tensor<256x128xf32>) -> tensor<512x128xf32>
      return %y : tensor<512x128xf32>
    }
    ```

    Output with `--coop-annotate-costs=device=a100` (33.5 MFLOP at
    19.5 TFLOP/s):

    ```mlir
      %y = coop.compute "aten.mm"(%x, %wt) {cost_us = 1.7207... : f64}
          : (tensor<512x256xf32>, tensor<256x128xf32>) -> tensor<512x128xf32>
    ```
  }];
  let options = [
    Option<"device", "device", "std::string", /*default=*/"\"a100\"",
           "Built-in device whose peak FLOP/s and bandwidth the roofline "
           "uses: a100, v100, h100 or cpu">,
    Option<"profile", "profile", "std::string", /*default=*/"\"\"",
           "Measured profile table (kernel, operand signatures, "
           "microseconds per line) that overrides the analytic estimate">
  ];
  let dependentDialects = ["::mlir::coop::CoopDialect"];
}

#endif // COOP_TRANSFORMS_PASSES_TD
