//===- CoopAttrs.td - coop dialect attributes --------------*- tablegen -*-===//

#ifndef COOP_DIALECT_COOP_IR_COOPATTRS_TD
#define COOP_DIALECT_COOP_IR_COOPATTRS_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "coop/Dialect/Coop/IR/CoopDialect.td"

def Coop_Role : I32EnumAttr<"Role", "persistent role of a step argument", [
    I32EnumAttrCase<"Parameter", 0, "parameter">,
    I32EnumAttrCase<"Gradient", 1, "gradient">,
    I32EnumAttrCase<"OptimizerState", 2, "optimizer_state">,
    I32EnumAttrCase<"Buffer", 3, "buffer">,
    I32EnumAttrCase<"Input", 4, "input">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::coop";
}

def Coop_RoleAttr : EnumAttr<Coop_Dialect, Coop_Role, "role"> {
  let summary = "What a persistent step argument holds";
  let assemblyFormat = "`<` $value `>`";
}

def Coop_RngAttr : AttrDef<Coop_Dialect, "Rng"> {
  let mnemonic = "rng";
  let summary = "Counter-based random stream of a random kernel";
  let description = [{
    A random kernel draws from the stream keyed by (`seed`, `offset`), so
    running it again, as a recomputation does, reproduces its values
    exactly. Example: `#coop.rng<seed = 42, offset = 1024>`.
  }];
  let parameters = (ins "uint64_t":$seed, "uint64_t":$offset);
  let assemblyFormat = "`<` struct(params) `>`";
}

#endif // COOP_DIALECT_COOP_IR_COOPATTRS_TD
