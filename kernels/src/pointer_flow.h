// Which memory a function reaches through its parameters: read, written or both, and how far
// (docs/kernels.md). One Analyzer per translation unit; device functions the kernels call are
// analysed once and their facts applied at each call.
#pragma once

#include <clang-c/Index.h>

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "clang_util.h"
#include "function_facts.h"

namespace streamhaz::kernels {

class Analyzer {
 public:
  // `errors`: (file, offset) of every error diagnostic of the translation unit.
  Analyzer(CXTranslationUnit tu, std::vector<std::pair<std::string, unsigned>> errors)
      : tu_(tu), errors_(std::move(errors)) {}

  // The facts of a function definition (a kernel or a device function it calls).
  const FunctionFacts& analyze(CXCursor definition);

  bool has_errors(CXCursor definition) const;

 private:
  CXTranslationUnit tu_;
  std::vector<std::pair<std::string, unsigned>> errors_;
  std::unordered_map<CXCursor, FunctionFacts, CursorHash, CursorEq> done_;
  std::unordered_map<CXCursor, bool, CursorHash, CursorEq> in_progress_;
  std::unordered_map<CXCursor, FunctionFacts, CursorHash, CursorEq> recursive_;
};

// The parameters of a function or function template, in order.
std::vector<CXCursor> parameters(CXCursor function);

}  // namespace streamhaz::kernels
