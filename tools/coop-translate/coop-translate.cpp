//===- coop-translate.cpp - Translations into and out of coop -------------===//

#include "coop/Target/PlanFile.h"
#include "coop/Target/TrainingGraph.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  mlir::coop::registerImportTrainingGraphTranslation();
  mlir::coop::registerPlanTranslations();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "Coop translation driver\n"));
}
