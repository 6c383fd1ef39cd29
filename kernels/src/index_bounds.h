// Extents of one-dimensional accesses: `p[i]` where `i` is a non-negative index guarded by
// `i < n` (an enclosing if, a for loop's condition, or an earlier `if (i >= n) return;`).
#pragma once

#include <clang-c/Index.h>

#include <optional>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "clang_util.h"

namespace streamhaz::kernels {

// Per variable of the function: how it is declared and every place that may change it.
struct VarUse {
  int param = -1;             // parameter index, -1 for locals
  CXCursor init = clang_getNullCursor();
  std::vector<CXCursor> modified_by;  // assignments, ++/--, &v, non-const reference bindings
};
using VarUses = std::unordered_map<CXCursor, VarUse, CursorHash, CursorEq>;

// `var < bound` holds (`var <= bound` when inclusive) wherever the guard is in force.
struct Guard {
  CXCursor var;
  nlohmann::json bound;
  bool inclusive = false;
};

class IndexBounds {
 public:
  IndexBounds(CXTranslationUnit tu, const VarUses& vars) : tu_(tu), vars_(vars) {}

  // The guard a for loop gives its body (canonical loops with a non-negative index only).
  std::optional<Guard> loop_guard(CXCursor for_stmt) const;
  // The guards the condition of an if gives its then-branch.
  std::vector<Guard> if_guards(CXCursor if_stmt) const;
  // The guards `if (cond) return;` gives the statements after it.
  std::vector<Guard> early_return_guards(CXCursor stmt) const;

  // The number of elements from the pointer an index may reach, under `guards`.
  std::optional<nlohmann::json> extent_of_index(CXCursor index, const std::vector<Guard>& guards) const;
  // An extent expression over unmodified integer parameters and non-negative constants.
  std::optional<nlohmann::json> extent_expr(CXCursor e) const;

 private:
  bool non_negative(CXCursor e, int depth = 0) const;
  std::optional<Guard> less_than(CXCursor cmp, bool negated) const;
  bool guard_var_ok(CXCursor var, CXCursor allowed_modification) const;
  const VarUse* use_of(CXCursor decl_ref) const;

  CXTranslationUnit tu_;
  const VarUses& vars_;
};

}  // namespace streamhaz::kernels
