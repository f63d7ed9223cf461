// Every exported zoo model imports, verifies, and compiles at half the
// arena it needs without rematerialization: planned with coop, verified
// independently, lowered and written as a Plan file.
// RUN: gzip -dc %coop_src_root/models/zoo/resnet50.pb.gz | coop-translate --import-training-graph | coop-opt --coop-annotate-costs --coop-compile="ratio=0.5" -o %t.resnet50.mlir
// RUN: coop-translate --coop-rt-to-plan %t.resnet50.mlir -o %t.resnet50.plan
// RUN: FileCheck %s --check-prefix=RESNET < %t.resnet50.mlir
// RUN: gzip -dc %coop_src_root/models/zoo/resnet152.pb.gz | coop-translate --import-training-graph | coop-opt --coop-annotate-costs --coop-compile="ratio=0.5" | coop-translate --coop-rt-to-plan -o %t.resnet152.plan
// RUN: gzip -dc %coop_src_root/models/zoo/inception_v3.pb.gz | coop-translate --import-training-graph | coop-opt --coop-annotate-costs --coop-compile="ratio=0.5" | coop-translate --coop-rt-to-plan -o %t.inception_v3.plan
// RUN: gzip -dc %coop_src_root/models/zoo/densenet121.pb.gz | coop-translate --import-training-graph | coop-opt --coop-annotate-costs --coop-compile="ratio=0.5" | coop-translate --coop-rt-to-plan -o %t.densenet121.plan
// RUN: gzip -dc %coop_src_root/models/zoo/swin_t.pb.gz | coop-translate --import-training-graph | coop-opt --coop-annotate-costs --coop-compile="ratio=0.5" | coop-translate --coop-rt-to-plan -o %t.swin_t.plan
// RUN: gzip -dc %coop_src_root/models/zoo/unet.pb.gz | coop-translate --import-training-graph | coop-opt --coop-annotate-costs --coop-compile="ratio=0.5" | coop-translate --coop-rt-to-plan -o %t.unet.plan
// RUN: gzip -dc %coop_src_root/models/zoo/bert_large.pb.gz | coop-translate --import-training-graph | coop-opt --coop-annotate-costs --coop-compile="ratio=0.5" | coop-translate --coop-rt-to-plan -o %t.bert_large.plan
// RUN: gzip -dc %coop_src_root/models/zoo/gpt2.pb.gz | coop-translate --import-training-graph | coop-opt --coop-annotate-costs --coop-compile="ratio=0.5" | coop-translate --coop-rt-to-plan -o %t.gpt2.plan
// RUN: gzip -dc %coop_src_root/models/zoo/gpt3_2.7b.pb.gz | coop-translate --import-training-graph | coop-opt --coop-annotate-costs --coop-compile="ratio=0.5" | coop-translate --coop-rt-to-plan -o %t.gpt3.plan
// The BiLSTM plans under coop from 0.57 of its offline-packed arena (0.47
// of the online allocator's) since the importer lets the bias add take over
// its 1 GiB input projection's buffer (coop-reuse-buffers).
// RUN: gzip -dc %coop_src_root/models/zoo/bilstm.pb.gz | coop-translate --import-training-graph | coop-opt --coop-annotate-costs --coop-memory-stats -o %t.bilstm.mlir | FileCheck %s --check-prefix=BILSTM
// With coop itself: the default search's work limit bounds a failing
// search too.
// RUN: coop-opt %t.bilstm.mlir --coop-compile="ratio=0.6 policy=coop" | coop-translate --coop-rt-to-plan -o %t.bilstm.plan

// Batch norm is recomputed for its normalized output: the running
// statistics it updated go to scratch (buffers other than the arguments'),
// so the real ones are updated exactly once.
// Arguments keep the exporter's names, by which the runtime binds them.
// RESNET-LABEL: coop_rt.program @resnet50_train_step
// RESNET: coop_rt.argument 0 "conv1.weight" <parameter>
// RESNET: coop_rt.argument {{[0-9]+}} "bn1.running_mean" <buffer> <offset = [[MEAN:[0-9]+]],
// RESNET: coop_rt.launch "aten.native_batch_norm"({{.*}}) -> ({{.*}}) {{{.*}}recompute_of = {{[0-9]+}}

// BILSTM-LABEL: coop-memory-stats @bilstm_train_step
// BILSTM: ops: 12372
