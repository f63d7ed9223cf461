//===- SanitizerOptions.cpp - ASan defaults of every fuzzer ---------------===//
//
// LLVM's inline allocator code, instrumented in this build, poisons slabs
// that Debian's uninstrumented MLIR libraries then use legitimately: with
// user poisoning on, ASan reports those as use-after-poison.
//
//===----------------------------------------------------------------------===//

extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}
