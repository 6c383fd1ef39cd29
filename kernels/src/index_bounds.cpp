#include "index_bounds.h"

namespace streamhaz::kernels {

namespace {

using nlohmann::json;

bool is_builtin_index(CXCursor member) {
  if (clang_getCursorKind(member) != CXCursor_MemberRefExpr) return false;
  std::string field = spelling(member);
  if (field != "x" && field != "y" && field != "z") return false;
  std::vector<CXCursor> kids = expr_children(member);
  if (kids.size() != 1) return false;
  CXCursor base = strip_implicit(kids[0]);
  if (clang_getCursorKind(base) != CXCursor_DeclRefExpr) return false;
  std::string name = spelling(base);
  return name == "threadIdx" || name == "blockIdx" || name == "blockDim" || name == "gridDim";
}

bool is_unsigned(CXType t) { return is_integer(t) && !is_signed_integer(t); }

// The operands of `a && b` (or `||`), flattened.
void split(CXTranslationUnit tu, CXCursor e, const char* op, std::vector<CXCursor>& out) {
  e = strip_implicit(e);
  if (clang_getCursorKind(e) == CXCursor_BinaryOperator && binary_operator(tu, e) == op) {
    std::vector<CXCursor> kids = expr_children(e);
    split(tu, kids[0], op, out);
    split(tu, kids[1], op, out);
    return;
  }
  out.push_back(e);
}

}  // namespace

const VarUse* IndexBounds::use_of(CXCursor ref) const {
  ref = strip_casts(ref);
  if (clang_getCursorKind(ref) != CXCursor_DeclRefExpr) return nullptr;
  auto it = vars_.find(clang_getCursorReferenced(ref));
  return it == vars_.end() ? nullptr : &it->second;
}

bool IndexBounds::non_negative(CXCursor e, int depth) const {
  if (depth > 16) return false;
  e = strip_casts(e);
  if (std::optional<long long> v = integer_value(e)) return *v >= 0;
  // Unsigned values are taken to fit the index they are assigned to (a grid of fewer than
  // 2^31 threads for an int index).
  if (is_unsigned(clang_getCursorType(e))) return true;
  if (is_builtin_index(e)) return true;
  CXCursorKind k = clang_getCursorKind(e);
  if (k == CXCursor_BinaryOperator) {
    std::string op = binary_operator(tu_, e);
    std::vector<CXCursor> kids = expr_children(e);
    return (op == "+" || op == "*") && kids.size() == 2 && non_negative(kids[0], depth + 1) &&
           non_negative(kids[1], depth + 1);
  }
  if (k == CXCursor_DeclRefExpr) {
    const VarUse* u = use_of(e);
    return u && u->param < 0 && u->modified_by.empty() && !clang_Cursor_isNull(u->init) &&
           non_negative(u->init, depth + 1);
  }
  return false;
}

std::optional<json> IndexBounds::extent_expr(CXCursor e) const {
  e = strip_casts(e);
  if (std::optional<long long> v = integer_value(e)) {
    if (*v < 0) return std::nullopt;
    return json{{"const", *v}};
  }
  CXCursorKind k = clang_getCursorKind(e);
  if (k == CXCursor_DeclRefExpr) {
    const VarUse* u = use_of(e);
    if (u && u->param >= 0 && u->modified_by.empty() && is_integer(clang_getCursorType(e)))
      return json{{"param", u->param}};
    return std::nullopt;
  }
  if (k == CXCursor_BinaryOperator) {
    std::string op = binary_operator(tu_, e);
    if (op != "*" && op != "+") return std::nullopt;
    std::vector<CXCursor> kids = expr_children(e);
    std::optional<json> a = extent_expr(kids[0]), b = extent_expr(kids[1]);
    if (!a || !b) return std::nullopt;
    return json{{op == "*" ? "mul" : "add", json::array({*a, *b})}};
  }
  return std::nullopt;
}

bool IndexBounds::guard_var_ok(CXCursor var, CXCursor allowed) const {
  auto it = vars_.find(var);
  if (it == vars_.end() || it->second.param >= 0) return false;
  const VarUse& u = it->second;
  for (CXCursor m : u.modified_by)
    if (clang_Cursor_isNull(allowed) || !clang_equalCursors(m, allowed)) return false;
  if (is_unsigned(clang_getCursorType(var))) return true;
  return !clang_Cursor_isNull(u.init) && non_negative(u.init);
}

std::optional<Guard> IndexBounds::less_than(CXCursor cmp, bool negated) const {
  cmp = strip_implicit(cmp);
  if (clang_getCursorKind(cmp) != CXCursor_BinaryOperator) return std::nullopt;
  std::string op = binary_operator(tu_, cmp);
  std::vector<CXCursor> kids = expr_children(cmp);
  if (kids.size() != 2) return std::nullopt;
  // Normalise to `var OP bound` with OP one of <, <=, >, >=.
  CXCursor var = strip_casts(kids[0]), bound = kids[1];
  if (clang_getCursorKind(var) != CXCursor_DeclRefExpr || !vars_.count(clang_getCursorReferenced(var))) {
    var = strip_casts(kids[1]);
    bound = kids[0];
    if (op == "<") op = ">"; else if (op == ">") op = "<"; else if (op == "<=") op = ">="; else if (op == ">=") op = "<=";
    else return std::nullopt;
  }
  if (clang_getCursorKind(var) != CXCursor_DeclRefExpr) return std::nullopt;
  if (negated) {  // the condition is false where the guard holds
    if (op == ">=") op = "<"; else if (op == ">") op = "<="; else return std::nullopt;
  }
  if (op != "<" && op != "<=") return std::nullopt;
  std::optional<json> b = extent_expr(bound);
  if (!b) return std::nullopt;
  return Guard{clang_getCursorReferenced(var), *b, op == "<="};
}

std::optional<Guard> IndexBounds::loop_guard(CXCursor for_stmt) const {
  std::vector<CXCursor> kids = children(for_stmt);
  if (kids.size() != 4 || clang_getCursorKind(kids[0]) != CXCursor_DeclStmt || !is_expr(kids[1]) ||
      !is_expr(kids[2]))
    return std::nullopt;
  std::vector<CXCursor> decls = children(kids[0]);
  if (decls.size() != 1 || clang_getCursorKind(decls[0]) != CXCursor_VarDecl) return std::nullopt;
  CXCursor var = decls[0];
  // The increment: `i += non-negative` or `++i` / `i++`.
  CXCursor inc = strip_implicit(kids[2]);
  std::vector<CXCursor> inc_kids = expr_children(inc);
  if (inc_kids.empty()) return std::nullopt;
  CXCursor target = strip_implicit(inc_kids[0]);
  if (clang_getCursorKind(target) != CXCursor_DeclRefExpr || !clang_equalCursors(clang_getCursorReferenced(target), var))
    return std::nullopt;
  CXCursorKind ik = clang_getCursorKind(inc);
  if (ik == CXCursor_CompoundAssignOperator) {
    if (binary_operator(tu_, inc) != "+=" || inc_kids.size() != 2 || !non_negative(inc_kids[1])) return std::nullopt;
  } else if (ik == CXCursor_UnaryOperator) {
    bool prefix = false;
    if (unary_operator(tu_, inc, prefix) != "++") return std::nullopt;
  } else {
    return std::nullopt;
  }
  if (!guard_var_ok(var, inc)) return std::nullopt;
  std::vector<CXCursor> conjuncts;
  split(tu_, kids[1], "&&", conjuncts);
  for (CXCursor c : conjuncts)
    if (std::optional<Guard> g = less_than(c, false); g && clang_equalCursors(g->var, var)) return g;
  return std::nullopt;
}

std::vector<Guard> IndexBounds::if_guards(CXCursor if_stmt) const {
  std::vector<Guard> out;
  std::vector<CXCursor> kids = children(if_stmt);
  if (kids.size() < 2 || !is_expr(kids[0])) return out;
  std::vector<CXCursor> conjuncts;
  split(tu_, kids[0], "&&", conjuncts);
  for (CXCursor c : conjuncts)
    if (std::optional<Guard> g = less_than(c, false); g && guard_var_ok(g->var, clang_getNullCursor()))
      out.push_back(*g);
  return out;
}

std::vector<Guard> IndexBounds::early_return_guards(CXCursor stmt) const {
  std::vector<Guard> out;
  if (clang_getCursorKind(stmt) != CXCursor_IfStmt) return out;
  std::vector<CXCursor> kids = children(stmt);
  if (kids.size() != 2 || !is_expr(kids[0])) return out;
  CXCursor then = kids[1];
  if (clang_getCursorKind(then) == CXCursor_CompoundStmt) {
    std::vector<CXCursor> body = children(then);
    if (body.size() != 1) return out;
    then = body[0];
  }
  if (clang_getCursorKind(then) != CXCursor_ReturnStmt) return out;
  std::vector<CXCursor> disjuncts;
  split(tu_, kids[0], "||", disjuncts);
  for (CXCursor d : disjuncts) {
    std::optional<Guard> g;
    bool prefix = false;
    if (clang_getCursorKind(d) == CXCursor_UnaryOperator && unary_operator(tu_, d, prefix) == "!" && prefix)
      g = less_than(expr_children(d)[0], false);
    else
      g = less_than(d, true);
    if (g && guard_var_ok(g->var, clang_getNullCursor())) out.push_back(*g);
  }
  return out;
}

std::optional<json> IndexBounds::extent_of_index(CXCursor index, const std::vector<Guard>& guards) const {
  CXCursor e = strip_implicit(index);
  if (std::optional<long long> v = integer_value(e)) {
    if (*v < 0) return std::nullopt;
    return json{{"const", *v + 1}};
  }
  CXCursorKind k = clang_getCursorKind(e);
  if (k == CXCursor_DeclRefExpr) {
    CXCursor var = clang_getCursorReferenced(e);
    for (auto g = guards.rbegin(); g != guards.rend(); ++g)
      if (clang_equalCursors(g->var, var))
        return g->inclusive ? json{{"add", json::array({g->bound, json{{"const", 1}}})}} : g->bound;
    return std::nullopt;
  }
  if (k == CXCursor_BinaryOperator && binary_operator(tu_, e) == "+") {
    // i + k with k a non-negative constant or a parameter (negative values are unknown to
    // the evaluator).
    std::vector<CXCursor> kids = expr_children(e);
    for (int side = 0; side < 2; ++side) {
      std::optional<json> base = extent_of_index(kids[side], guards);
      if (!base || clang_getCursorKind(strip_implicit(kids[side])) != CXCursor_DeclRefExpr) continue;
      std::optional<json> offset = extent_expr(kids[1 - side]);
      if (offset) return json{{"add", json::array({*base, *offset})}};
    }
  }
  return std::nullopt;
}

}  // namespace streamhaz::kernels
