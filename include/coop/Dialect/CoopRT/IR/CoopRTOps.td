//===- CoopRTOps.td - The runtime-facing plan dialect ------*- tablegen -*-===//

#ifndef COOP_DIALECT_COOPRT_IR_COOPRTOPS_TD
#define COOP_DIALECT_COOPRT_IR_COOPRTOPS_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "coop/Dialect/Coop/IR/CoopAttrs.td"

def CoopRT_Dialect : Dialect {
  let name = "coop_rt";
  let cppNamespace = "::mlir::coop_rt";
  let summary = "A planned training step as the runtime executes it";
  let description = [{
    The lowered form of a planned `coop.step`: one `coop_rt.program` per
    step with the arena size, the table of persistent tensors, and a flat
    stream of kernel launches whose operands are arena locations
    (`#coop_rt.buf`). Views are gone: they are folded into the strides and
    element offsets of the buffers that read them. Evictions and frees are
    gone too: every address is fixed, so the runtime allocates nothing. This
    is what `coop-translate --coop-rt-to-plan` serializes for `coop-run`.
  }];
  let useDefaultAttributePrinterParser = 1;
  let dependentDialects = ["::mlir::coop::CoopDialect"];
}

class CoopRT_Op<string mnemonic, list<Trait> traits = []>
    : Op<CoopRT_Dialect, mnemonic, traits>;

def CoopRT_BufferAttr : AttrDef<CoopRT_Dialect, "Buffer"> {
  let mnemonic = "buf";
  let summary = "A tensor at a fixed place in the arena";
  let description = [{
    `offset` and `size` are the byte range of the storage in the arena;
    the tensor has `shape` and `element_type` and reads element
    `element_offset + sum(i_k * strides[k])` of that storage (strides in
    elements). A freshly allocated tensor is contiguous with element offset
    0; views have other strides and offsets.

    ```mlir
    #coop_rt.buf<offset = 1024, size = 512, element_type = f32,
                 shape = array<i64: 8, 16>, strides = array<i64: 1, 8>,
                 element_offset = 0>
    ```
  }];
  let parameters = (ins
    "int64_t":$offset,
    "int64_t":$size,
    "::mlir::Type":$element_type,
    "::mlir::DenseI64ArrayAttr":$shape,
    "::mlir::DenseI64ArrayAttr":$strides,
    "int64_t":$element_offset
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def CoopRT_BufferArrayAttr : TypedArrayAttrBase<CoopRT_BufferAttr,
                                                "array of arena buffers">;

def CoopRT_ProgramOp : CoopRT_Op<"program", [
    IsolatedFromAbove, NoTerminator, SingleBlock, Symbol]> {
  let summary = "One planned training step";
  let description = [{
    `arena_bytes` is the single device allocation the step runs in. `plan`
    carries the planner's summary (budget, policy, figures). The body holds
    `coop_rt.argument` entries (the persistent-tensor table), then
    `coop_rt.launch` ops in execution order, then one `coop_rt.output`.

    ```mlir
    coop_rt.program @step arena(2048) {
      coop_rt.argument 0 "x" #coop.role<input> #coop_rt.buf<...>
      coop_rt.launch "aten.exp"([#coop_rt.buf<...>]) -> ([#coop_rt.buf<...>])
      coop_rt.output [#coop_rt.buf<...>]
    }
    ```
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    I64Attr:$arena_bytes,
    OptionalAttr<DictionaryAttr>:$plan
  );
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name `arena` `(` $arena_bytes `)` attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
}

def CoopRT_ArgumentOp : CoopRT_Op<"argument", [HasParent<"ProgramOp">]> {
  let summary = "A persistent tensor of the step, bound before it runs";
  let arguments = (ins
    I64Attr:$index,
    StrAttr:$name,
    Coop_RoleAttr:$role,
    CoopRT_BufferAttr:$buffer
  );
  let assemblyFormat = "$index $name $role $buffer attr-dict";
}

def CoopRT_LaunchOp : CoopRT_Op<"launch", [HasParent<"ProgramOp">]> {
  let summary = "Runs one kernel on arena buffers";
  let description = [{
    Runs `kernel` reading `inputs` and writing `outputs`, with the aten
    arguments in `args`. `inplace` (one entry per output, -1 for none)
    names the input an output overwrites; when the two buffers differ the
    plan copies on write and the runtime copies the input first. A
    `recompute_of` launch re-runs original op #N of the step; a random
    kernel replays its `rng` stream so the values are identical.
  }];
  let arguments = (ins
    StrAttr:$kernel,
    CoopRT_BufferArrayAttr:$inputs,
    CoopRT_BufferArrayAttr:$outputs,
    OptionalAttr<DictionaryAttr>:$args,
    OptionalAttr<DenseI64ArrayAttr>:$inplace,
    OptionalAttr<Coop_RngAttr>:$rng,
    OptionalAttr<CoopRT_BufferAttr>:$workspace,
    OptionalAttr<I64Attr>:$recompute_of,
    OptionalAttr<F64Attr>:$cost_us
  );
  let assemblyFormat = "$kernel `(` $inputs `)` `->` `(` $outputs `)` attr-dict";
  let hasVerifier = 1;
}

def CoopRT_OutputOp : CoopRT_Op<"output", [HasParent<"ProgramOp">]> {
  let summary = "Where the step's outputs (the loss) are when it ends";
  let arguments = (ins CoopRT_BufferArrayAttr:$buffers);
  let assemblyFormat = "$buffers attr-dict";
}

#endif // COOP_DIALECT_COOPRT_IR_COOPRTOPS_TD
