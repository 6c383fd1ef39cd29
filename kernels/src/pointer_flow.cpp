#include "pointer_flow.h"

#include <optional>
#include <set>

#include "cuda_prelude.h"
#include "index_bounds.h"

namespace streamhaz::kernels {

namespace {

using nlohmann::json;

// The parameters a pointer (or the object an lvalue designates) may point into; `unknown`:
// also memory the parameters do not describe (a pointer loaded from memory, a struct member).
struct Prov {
  std::set<int> params;
  bool unknown = false;
  bool add(const Prov& o) {
    size_t before = params.size();
    bool was = unknown;
    params.insert(o.params.begin(), o.params.end());
    unknown = unknown || o.unknown;
    return params.size() != before || unknown != was;
  }
};

// How the value of an expression is used where it appears.
enum class Ctx { Value, Write, ReadWrite, Address, Unevaluated };

uint8_t bits(Ctx c) {
  switch (c) {
    case Ctx::Value: return kRead;
    case Ctx::Write: return kWrite;
    case Ctx::ReadWrite: return kReadWrite;
    default: return kNoAccess;
  }
}

// A canonical type's spelling without its cv-qualifiers ("const float" -> "float").
std::string unqualified_spelling(CXType t) {
  std::string s = type_spelling(canonical(t));
  for (std::string_view q : {"const ", "volatile "})
    while (s.rfind(q, 0) == 0) s.erase(0, q.size());
  return s;
}

std::string where(CXCursor c) {
  CXFile f;
  unsigned line, col, off;
  clang_getExpansionLocation(clang_getCursorLocation(c), &f, &line, &col, &off);
  return "line " + std::to_string(line);
}

class FunctionWalk {
 public:
  FunctionWalk(Analyzer& an, CXTranslationUnit tu, CXCursor fn, FunctionFacts& facts)
      : an_(an), tu_(tu), fn_(fn), f_(facts), bounds_(tu, vars_) {}

  void run() {
    std::vector<CXCursor> params = parameters(fn_);
    f_.params.resize(params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      VarUse u;
      u.param = static_cast<int>(i);
      vars_.emplace(params[i], u);
      Prov p;
      p.params.insert(static_cast<int>(i));
      prov_[params[i]] = p;
    }
    CXCursor body = clang_getNullCursor();
    for (CXCursor c : children(fn_))
      if (clang_getCursorKind(c) == CXCursor_CompoundStmt) body = c;
    if (clang_Cursor_isNull(body)) return;
    collect(body);
    propagate();
    walk(body, Ctx::Value);
  }

 private:
  // ---- pass 1: variables, what changes them, where pointers flow -------------------------
  struct Flow {
    CXCursor var;
    CXCursor expr;
    bool reference;  // the variable is a reference bound to the lvalue `expr`
  };

  VarUse* var_of(CXCursor e) {
    e = strip_implicit(e);
    if (clang_getCursorKind(e) != CXCursor_DeclRefExpr) return nullptr;
    auto it = vars_.find(clang_getCursorReferenced(e));
    return it == vars_.end() ? nullptr : &it->second;
  }
  CXCursor decl_of(CXCursor e) { return clang_getCursorReferenced(strip_implicit(e)); }

  void modified(CXCursor target, CXCursor by, bool may_repoint) {
    VarUse* v = var_of(target);
    if (!v) return;
    v->modified_by.push_back(by);
    if (may_repoint && (is_pointer(clang_getCursorType(decl_of(target))))) repointed_.push_back(decl_of(target));
  }

  void collect(CXCursor c) {
    CXCursorKind k = clang_getCursorKind(c);
    std::vector<CXCursor> kids = expr_children(c);
    if (k == CXCursor_VarDecl) {
      VarUse u;
      if (!kids.empty()) u.init = kids.back();
      vars_.emplace(c, u);
      CXType t = clang_getCursorType(c);
      if (!kids.empty() && (is_pointer(t) || is_reference(t))) flows_.push_back({c, kids.back(), is_reference(t)});
      if (!kids.empty() && is_reference(t) && !is_const_reference(t)) modified(kids.back(), c, true);
    } else if (k == CXCursor_BinaryOperator && kids.size() == 2) {
      std::string op = binary_operator(tu_, c);
      if (op == "=" || op.empty()) {
        modified(kids[0], c, op.empty());
        if (VarUse* v = var_of(kids[0]); v && (is_pointer(clang_getCursorType(kids[0])) || op.empty()))
          flows_.push_back({decl_of(kids[0]), kids[1], false});
      }
    } else if (k == CXCursor_CompoundAssignOperator && kids.size() == 2) {
      modified(kids[0], c, false);
    } else if (k == CXCursor_UnaryOperator && kids.size() == 1) {
      bool prefix = false;
      std::string op = unary_operator(tu_, c, prefix);
      if (op == "++" || op == "--") modified(kids[0], c, false);
      if (op == "&" || op.empty()) modified(kids[0], c, true);
    } else if (k == CXCursor_CallExpr) {
      // An argument bound to a non-const reference parameter (or to an unknown callee) may be
      // changed by the call.
      CXCursor callee = clang_getCursorReferenced(c);
      int n = clang_Cursor_getNumArguments(c);
      CXType ft = clang_getCursorType(callee);
      int np = clang_Cursor_isNull(callee) ? -1 : clang_getNumArgTypes(ft);
      int shift = n > 0 && np >= 0 && n == np + 1 && clang_getCursorKind(callee) == CXCursor_CXXMethod ? 1 : 0;
      for (int i = 0; i < n; ++i) {
        CXCursor arg = clang_Cursor_getArgument(c, static_cast<unsigned>(i));
        int pi = i - shift;
        bool by_ref = np < 0 || pi < 0 || (pi < np && is_reference(clang_getArgType(ft, static_cast<unsigned>(pi))) &&
                                           !is_const_reference(clang_getArgType(ft, static_cast<unsigned>(pi))));
        if (by_ref) modified(arg, c, true);
      }
    } else if (k == CXCursor_GCCAsmStmt || k == CXCursor_MSAsmStmt) {
      collect_asm(c);
    }
    for (CXCursor child : children(c)) collect(child);
  }

  void collect_asm(CXCursor c) {
    for (CXCursor child : children(c)) {
      if (clang_getCursorKind(child) == CXCursor_DeclRefExpr) modified(child, c, true);
      collect_asm(child);
    }
  }

  void propagate() {
    for (CXCursor v : repointed_) prov_[v].unknown = true;
    for (int round = 0;; ++round) {
      bool changed = false;
      for (const Flow& fl : flows_) changed |= prov_[fl.var].add(fl.reference ? lvalue_prov(fl.expr) : prov_of(fl.expr));
      if (!changed) break;
      if (round > 32) {  // cannot happen with finite sets; be safe anyway
        for (auto& [var, p] : prov_) p.unknown = true;
        break;
      }
    }
  }

  // ---- provenance ---------------------------------------------------------------------------
  Prov var_prov(CXCursor decl) {
    auto it = prov_.find(decl);
    if (it != prov_.end()) return it->second;
    Prov p;
    // A global pointer (or reference) reaches memory no parameter describes.
    CXType t = clang_getCursorType(decl);
    if (is_pointer(t) || is_reference(t)) p.unknown = true;
    return p;
  }

  Prov args_prov(CXCursor call) {
    Prov p;
    p.unknown = true;
    int n = clang_Cursor_getNumArguments(call);
    for (int i = 0; i < n; ++i) {
      CXCursor arg = clang_Cursor_getArgument(call, static_cast<unsigned>(i));
      CXType t = clang_getCursorType(arg);
      if (is_pointer(t) || is_array(t)) p.add(prov_of(arg));
      else p.add(lvalue_prov(arg));
    }
    return p;
  }

  // Where a pointer-valued expression may point.
  Prov prov_of(CXCursor e) {
    e = strip_implicit(e);
    CXType t = clang_getCursorType(e);
    if (is_array(t)) return lvalue_prov(e);  // decays to a pointer to itself
    Prov p;
    switch (clang_getCursorKind(e)) {
      case CXCursor_DeclRefExpr: {
        CXCursor d = clang_getCursorReferenced(e);
        if (clang_getCursorKind(d) == CXCursor_FunctionDecl) return p;
        return var_prov(d);
      }
      case CXCursor_IntegerLiteral:
      case CXCursor_CXXNullPtrLiteralExpr:
      case CXCursor_GNUNullExpr:
        return p;
      case CXCursor_UnaryOperator: {
        bool prefix = false;
        std::string op = unary_operator(tu_, e, prefix);
        std::vector<CXCursor> kids = expr_children(e);
        if (op == "&") return lvalue_prov(kids[0]);
        if (op == "++" || op == "--") return prov_of(kids[0]);
        p.unknown = true;  // `*pp`: a pointer loaded from memory
        return p;
      }
      case CXCursor_BinaryOperator: {
        std::string op = binary_operator(tu_, e);
        std::vector<CXCursor> kids = expr_children(e);
        if (op == "=" || op == ",") return prov_of(kids[1]);
        if (op == "+" || op == "-" || op.empty()) {
          for (CXCursor k : kids)
            if (is_pointer(clang_getCursorType(k)) || is_array(clang_getCursorType(k))) p.add(prov_of(k));
          if (op.empty()) p.unknown = true;
          return p;
        }
        return p;  // comparisons and the like give no pointer
      }
      case CXCursor_CompoundAssignOperator:
        return prov_of(expr_children(e)[0]);
      case CXCursor_ConditionalOperator: {
        std::vector<CXCursor> kids = expr_children(e);
        for (size_t i = kids.size() == 3 ? 1 : 0; i < kids.size(); ++i) p.add(prov_of(kids[i]));
        return p;
      }
      case CXCursor_CStyleCastExpr:
      case CXCursor_CXXStaticCastExpr:
      case CXCursor_CXXConstCastExpr:
      case CXCursor_CXXReinterpretCastExpr:
      case CXCursor_CXXFunctionalCastExpr: {
        CXCursor inner = strip_casts(e);
        CXType it = clang_getCursorType(inner);
        if (is_pointer(it) || is_array(it) || clang_getCursorKind(inner) == CXCursor_CXXNullPtrLiteralExpr) return prov_of(inner);
        if (std::optional<long long> v = integer_value(inner); v && *v == 0) return p;
        p.unknown = true;  // an integer made into a pointer
        return p;
      }
      case CXCursor_CallExpr:
        return args_prov(e);
      case CXCursor_ArraySubscriptExpr:
      case CXCursor_MemberRefExpr:
        p.unknown = true;  // a pointer loaded from memory or a struct member
        return p;
      default:
        p.unknown = true;  // loaded from memory, a struct member, something not understood
        for (CXCursor k : expr_children(e))
          if (is_pointer(clang_getCursorType(k))) p.add(prov_of(k));
        return p;
    }
  }

  // Where the object an lvalue designates lives.
  Prov lvalue_prov(CXCursor e) {
    e = strip_implicit(e);
    Prov p;
    switch (clang_getCursorKind(e)) {
      case CXCursor_DeclRefExpr: {
        CXCursor d = clang_getCursorReferenced(e);
        if (is_reference(clang_getCursorType(d))) return var_prov(d);
        return p;  // a local variable, or a global one (module memory, not a parameter's)
      }
      case CXCursor_ArraySubscriptExpr: {
        std::vector<CXCursor> kids = expr_children(e);
        CXCursor base = is_pointer(clang_getCursorType(kids[0])) || is_array(clang_getCursorType(kids[0])) ? kids[0] : kids[1];
        return is_array(clang_getCursorType(strip_implicit(base))) ? lvalue_prov(base) : prov_of(base);
      }
      case CXCursor_UnaryOperator: {
        bool prefix = false;
        std::string op = unary_operator(tu_, e, prefix);
        std::vector<CXCursor> kids = expr_children(e);
        if (op == "*") return prov_of(kids[0]);
        if (op == "++" || op == "--") return lvalue_prov(kids[0]);
        p.unknown = true;
        return p;
      }
      case CXCursor_MemberRefExpr: {
        std::vector<CXCursor> kids = expr_children(e);
        if (kids.empty()) {  // a member of `this`
          p.unknown = true;
          return p;
        }
        return is_pointer(clang_getCursorType(kids[0])) ? prov_of(kids[0]) : lvalue_prov(kids[0]);
      }
      case CXCursor_ConditionalOperator: {
        std::vector<CXCursor> kids = expr_children(e);
        for (size_t i = kids.size() == 3 ? 1 : 0; i < kids.size(); ++i) p.add(lvalue_prov(kids[i]));
        return p;
      }
      case CXCursor_BinaryOperator:
      case CXCursor_CompoundAssignOperator: {
        std::string op = binary_operator(tu_, e);
        std::vector<CXCursor> kids = expr_children(e);
        if (op == ",") return lvalue_prov(kids[1]);
        if (clang_getCursorKind(e) == CXCursor_CompoundAssignOperator || op == "=") return lvalue_prov(kids[0]);
        p.unknown = true;
        return p;
      }
      case CXCursor_CallExpr:
        if (is_reference(clang_getCursorResultType(clang_getCursorReferenced(e)))) return args_prov(e);
        return p;  // a temporary
      default:
        if (is_explicit_cast(e)) return lvalue_prov(strip_casts(e));
        p.unknown = true;
        return p;
    }
  }

  // ---- pass 2: accesses -------------------------------------------------------------------
  void note(const std::string& text) {
    f_.complete = false;
    f_.notes.insert(text);
  }

  // `exact`: the access goes through the parameter itself (never reassigned), at `index`.
  void access(const Prov& p, uint8_t mode, CXCursor at, int exact, CXCursor index, bool const_zero) {
    if (mode == kNoAccess) return;
    if (p.unknown) note("accesses memory through a pointer the parameters do not describe (" + where(at) + ")");
    for (int i : p.params) {
      ParamFacts& pf = f_.params[static_cast<size_t>(i)];
      pf.access |= mode;
      std::optional<json> ext;
      if (i == exact) ext = const_zero ? std::optional<json>(json{{"const", 1}}) : bounds_.extent_of_index(index, guards_);
      if (ext) pf.extents.push_back(*ext);
      else pf.unbounded = true;
    }
  }

  void escape(const Prov& p, CXCursor at, const std::string& why) {
    if (p.unknown) note("passes a pointer the parameters do not describe to " + why + " (" + where(at) + ")");
    for (int i : p.params) {
      ParamFacts& pf = f_.params[static_cast<size_t>(i)];
      pf.access = kReadWrite;
      pf.escaped = true;
      pf.unbounded = true;
    }
  }

  // The parameter index if `base` is a pointer parameter used as it came (never reassigned).
  int exact_param(CXCursor base) {
    VarUse* v = var_of(base);
    if (!v || v->param < 0 || !v->modified_by.empty()) return -1;
    return is_pointer(clang_getCursorType(strip_implicit(base))) ? v->param : -1;
  }

  void walk_children(CXCursor c, Ctx ctx) {
    for (CXCursor k : children(c))
      if (is_expr(k) || clang_isStatement(clang_getCursorKind(k)) || clang_isDeclaration(clang_getCursorKind(k)))
        walk(k, ctx);
  }

  // Something not understood: whatever it touches may be read and written, and pointers in
  // it escape.
  void walk_unknown(CXCursor c, const std::string& why) {
    for (CXCursor k : expr_children(c)) {
      walk(k, Ctx::ReadWrite);
      CXType t = clang_getCursorType(k);
      if (is_pointer(t) || is_array(t)) escape(prov_of(k), c, why);
    }
  }

  void walk(CXCursor c, Ctx ctx) {
    CXCursorKind k = clang_getCursorKind(c);
    switch (k) {
      case CXCursor_DeclRefExpr: {
        CXCursor d = clang_getCursorReferenced(c);
        if (is_reference(clang_getCursorType(d)) && ctx != Ctx::Address && ctx != Ctx::Unevaluated)
          access(var_prov(d), bits(ctx), c, -1, clang_getNullCursor(), false);
        return;
      }
      case CXCursor_ArraySubscriptExpr: {
        std::vector<CXCursor> kids = expr_children(c);
        if (kids.size() != 2) return walk_unknown(c, "an expression not understood");
        bool first = is_pointer(clang_getCursorType(kids[0])) || is_array(clang_getCursorType(kids[0]));
        CXCursor base = first ? kids[0] : kids[1], index = first ? kids[1] : kids[0];
        walk(index, Ctx::Value);
        if (is_array(clang_getCursorType(strip_implicit(base)))) return walk(base, ctx);
        walk(base, Ctx::Value);
        if (ctx != Ctx::Address && ctx != Ctx::Unevaluated)
          access(prov_of(base), bits(ctx), c, exact_param(base), index, false);
        return;
      }
      case CXCursor_UnaryOperator: {
        std::vector<CXCursor> kids = expr_children(c);
        if (kids.size() != 1) return;
        bool prefix = false;
        std::string op = unary_operator(tu_, c, prefix);
        if (op == "*") {
          walk(kids[0], Ctx::Value);
          if (ctx != Ctx::Address && ctx != Ctx::Unevaluated)
            access(prov_of(kids[0]), bits(ctx), c, exact_param(kids[0]), clang_getNullCursor(), true);
        } else if (op == "&") {
          walk(kids[0], Ctx::Address);
          // A pointer variable whose address is taken may be changed through it.
          if (is_pointer(clang_getCursorType(kids[0])) && var_of(kids[0])) escape(prov_of(kids[0]), c, "code holding its address");
        } else if (op == "++" || op == "--") {
          walk(kids[0], Ctx::ReadWrite);
        } else if (op.empty()) {
          walk_unknown(c, "an operator not understood");
          if (is_pointer(clang_getCursorType(kids[0]))) access(prov_of(kids[0]), kReadWrite, c, -1, clang_getNullCursor(), false);
        } else {
          walk(kids[0], Ctx::Value);
        }
        return;
      }
      case CXCursor_BinaryOperator: {
        std::vector<CXCursor> kids = expr_children(c);
        if (kids.size() != 2) return walk_unknown(c, "an expression not understood");
        std::string op = binary_operator(tu_, c);
        if (op == "=") {
          walk(kids[0], Ctx::Write);
          walk(kids[1], Ctx::Value);
          // A pointer stored anywhere but a variable of this function escapes.
          CXType t = clang_getCursorType(kids[0]);
          if ((is_pointer(t) || is_array(t)) && !var_of(kids[0])) escape(prov_of(kids[1]), c, "memory");
        } else if (op.empty()) {
          walk_unknown(c, "an operator not understood");
        } else {
          walk(kids[0], Ctx::Value);
          walk(kids[1], Ctx::Value);
        }
        return;
      }
      case CXCursor_CompoundAssignOperator: {
        std::vector<CXCursor> kids = expr_children(c);
        if (kids.size() != 2) return walk_unknown(c, "an expression not understood");
        walk(kids[0], Ctx::ReadWrite);
        walk(kids[1], Ctx::Value);
        return;
      }
      case CXCursor_ConditionalOperator: {
        std::vector<CXCursor> kids = expr_children(c);
        for (size_t i = 0; i < kids.size(); ++i) walk(kids[i], i == 0 && kids.size() == 3 ? Ctx::Value : ctx);
        return;
      }
      case CXCursor_MemberRefExpr: {
        std::vector<CXCursor> kids = expr_children(c);
        if (kids.empty()) {
          if (ctx != Ctx::Address && ctx != Ctx::Unevaluated) note("accesses a member of `this` (" + where(c) + ")");
          return;
        }
        if (is_pointer(clang_getCursorType(kids[0]))) {  // p->field
          walk(kids[0], Ctx::Value);
          if (ctx != Ctx::Address && ctx != Ctx::Unevaluated)
            access(prov_of(kids[0]), bits(ctx), c, exact_param(kids[0]), clang_getNullCursor(), true);
        } else {
          walk(kids[0], ctx);  // s.field: the access is to part of s
        }
        return;
      }
      case CXCursor_CallExpr:
        return walk_call(c, ctx);
      case CXCursor_UnaryExpr:  // sizeof, alignof: not evaluated
      case CXCursor_CXXTypeidExpr:
        return;
      case CXCursor_LambdaExpr:
        note("holds a lambda (" + where(c) + "): calls to it are not followed");
        return walk_children(c, Ctx::Value);
      case CXCursor_GCCAsmStmt:
      case CXCursor_MSAsmStmt:
        return walk_unknown(c, "inline assembly");
      case CXCursor_VarDecl: {
        std::vector<CXCursor> kids = expr_children(c);
        if (kids.empty()) return;
        CXType t = clang_getCursorType(c);
        walk(kids.back(), is_reference(t) && !is_const_reference(t) ? Ctx::Address : Ctx::Value);
        return;
      }
      case CXCursor_ForStmt: {
        std::vector<CXCursor> kids = children(c);
        std::optional<Guard> g = bounds_.loop_guard(c);
        for (size_t i = 0; i + 1 < kids.size(); ++i) walk(kids[i], Ctx::Value);
        if (g) guards_.push_back(*g);
        if (!kids.empty()) walk(kids.back(), Ctx::Value);
        if (g) guards_.pop_back();
        return;
      }
      case CXCursor_IfStmt: {
        std::vector<CXCursor> kids = children(c);
        std::vector<Guard> g = bounds_.if_guards(c);
        for (size_t i = 0; i < kids.size(); ++i) {
          bool then = i == 1 && is_expr(kids[0]);
          if (then) guards_.insert(guards_.end(), g.begin(), g.end());
          walk(kids[i], Ctx::Value);
          if (then) guards_.resize(guards_.size() - g.size());
        }
        return;
      }
      case CXCursor_CompoundStmt: {
        size_t depth = guards_.size();
        for (CXCursor s : children(c)) {
          walk(s, Ctx::Value);
          std::vector<Guard> g = bounds_.early_return_guards(s);
          guards_.insert(guards_.end(), g.begin(), g.end());
        }
        guards_.resize(depth);
        return;
      }
      case CXCursor_IntegerLiteral:
      case CXCursor_FloatingLiteral:
      case CXCursor_CharacterLiteral:
      case CXCursor_StringLiteral:
      case CXCursor_CXXBoolLiteralExpr:
      case CXCursor_CXXNullPtrLiteralExpr:
      case CXCursor_GNUNullExpr:
        return;
      default:
        if (k == CXCursor_ParenExpr || k == CXCursor_UnexposedExpr || is_explicit_cast(c) ||
            k == CXCursor_InitListExpr) {
          for (CXCursor kid : expr_children(c)) walk(kid, k == CXCursor_InitListExpr ? Ctx::Value : ctx);
          return;
        }
        if (clang_isExpression(k)) return walk_unknown(c, "an expression not understood");
        return walk_children(c, Ctx::Value);  // statements and declarations
    }
  }

  void walk_call(CXCursor call, Ctx ctx) {
    CXCursor callee = clang_getCursorReferenced(call);
    CXCursorKind ck = clang_getCursorKind(callee);
    int n = clang_Cursor_getNumArguments(call);
    bool resolved = !clang_Cursor_isNull(callee) &&
                    (ck == CXCursor_FunctionDecl || ck == CXCursor_CXXMethod || ck == CXCursor_Constructor ||
                     ck == CXCursor_ConversionFunction || ck == CXCursor_Destructor);
    std::string name = resolved ? spelling(callee) : std::string("a call not resolved");
    if (!resolved || n < 0) {
      for (CXCursor k : expr_children(call)) {
        walk(k, Ctx::ReadWrite);
        CXType t = clang_getCursorType(k);
        if (is_pointer(t) || is_array(t)) escape(prov_of(k), call, name);
      }
      if (ctx == Ctx::Write || ctx == Ctx::ReadWrite) access(prov_of(call), bits(ctx), call, -1, clang_getNullCursor(), false);
      return;
    }
    CXType ft = clang_getCursorType(callee);
    int np = clang_getNumArgTypes(ft);
    std::vector<CXCursor> args;
    for (int i = 0; i < n; ++i) args.push_back(clang_Cursor_getArgument(call, static_cast<unsigned>(i)));

    // The object of a member call: the first argument of an operator call, or the base of
    // the member expression naming the method.
    if (ck == CXCursor_CXXMethod && !clang_CXXMethod_isStatic(callee)) {
      std::optional<CXCursor> object;
      if (np >= 0 && n == np + 1) {
        object = args.front();
        args.erase(args.begin());
      } else {
        std::vector<CXCursor> kids = expr_children(call);
        if (!kids.empty()) {
          CXCursor m = strip_implicit(kids.front());
          if (clang_getCursorKind(m) == CXCursor_MemberRefExpr) {
            std::vector<CXCursor> base = expr_children(m);
            if (!base.empty()) {
              if (is_pointer(clang_getCursorType(base[0]))) {
                walk(base[0], Ctx::Value);
                access(prov_of(base[0]), clang_CXXMethod_isConst(callee) ? kRead : kReadWrite, call, -1,
                       clang_getNullCursor(), false);
              } else {
                object = base[0];
              }
            }
          }
        }
      }
      if (object) {
        bool assign = name == "operator=" && clang_CXXMethod_isDefaulted(callee);
        walk(*object, assign ? Ctx::Write : clang_CXXMethod_isConst(callee) ? Ctx::Value : Ctx::ReadWrite);
      }
    }

    bool intrinsic_decl = false;
    {
      std::string file;
      file_offset(clang_getCursorLocation(callee), &file);
      intrinsic_decl = file == kPreludePath;
    }
    IntrinsicAccess intrinsic = intrinsic_decl ? intrinsic_access(name) : IntrinsicAccess::None;
    // Device functions whose bodies we see are followed (not kernels launched from a kernel,
    // not templates: their bodies are patterns).
    const FunctionFacts* known = nullptr;
    CXCursor def = clang_getCursorDefinition(callee);
    bool trivial_copy = ck == CXCursor_Constructor && clang_CXXMethod_isDefaulted(callee) &&
                        (clang_CXXConstructor_isCopyConstructor(callee) || clang_CXXConstructor_isMoveConstructor(callee));
    if (!clang_Cursor_isNull(def) && !is_kernel(def) && clang_getCursorKind(def) == CXCursor_FunctionDecl &&
        !clang_Location_isInSystemHeader(clang_getCursorLocation(def))) {
      const FunctionFacts& ff = an_.analyze(def);
      if (!ff.body_errors) known = &ff;
    }
    if (known && !known->complete) note("calls " + name + ", which " + *known->notes.begin());

    for (size_t i = 0; i < args.size(); ++i) {
      CXCursor arg = args[i];
      bool has_type = static_cast<int>(i) < np;
      CXType pt = has_type ? clang_getArgType(ft, static_cast<unsigned>(i)) : CXType{};
      CXType at = clang_getCursorType(arg);
      bool pointer_arg = has_type ? is_pointer(pt) : (is_pointer(at) || is_array(at));
      if (has_type && is_reference(pt)) {
        if (is_const_reference(pt) || trivial_copy) {
          walk(arg, Ctx::Value);
          continue;
        }
        walk(arg, Ctx::Address);
        Prov p = lvalue_prov(arg);
        if (known && i < known->params.size()) apply(known->params[i], p, call);
        else escape(p, call, name);
        continue;
      }
      if (!pointer_arg) {
        walk(arg, Ctx::Value);
        continue;
      }
      walk(arg, Ctx::Value);
      Prov p = prov_of(arg);
      if (intrinsic != IntrinsicAccess::None && i == 0) {
        intrinsic_access_at(arg, p, intrinsic == IntrinsicAccess::Read ? kRead : kReadWrite, call);
      } else if (intrinsic_decl && intrinsic == IntrinsicAccess::None) {
        escape(p, call, name);  // a prelude function not known to leave memory alone
      } else if (known && i < known->params.size()) {
        apply(known->params[i], p, call);
      } else {
        escape(p, call, name);
      }
    }
    if (ctx == Ctx::Write || ctx == Ctx::ReadWrite) access(prov_of(call), bits(ctx), call, -1, clang_getNullCursor(), false);
  }

  // A callee parameter's facts applied to the argument's provenance (extents do not cross calls).
  void apply(const ParamFacts& callee, const Prov& p, CXCursor call) {
    if (callee.escaped) return escape(p, call, "a function that passes it on");
    if (callee.access == kNoAccess) return;
    access(p, callee.access, call, -1, clang_getNullCursor(), false);
  }

  // atomicAdd(&p[i], v), atomicAdd(p + i, v), atomicAdd(p, v): one element at that place, when
  // the element type is the parameter's.
  void intrinsic_access_at(CXCursor arg, const Prov& p, uint8_t mode, CXCursor call) {
    CXCursor e = strip_implicit(arg);
    CXCursor base = clang_getNullCursor(), index = clang_getNullCursor();
    bool zero = false;
    bool prefix = false;
    if (clang_getCursorKind(e) == CXCursor_UnaryOperator && unary_operator(tu_, e, prefix) == "&") {
      CXCursor lv = strip_implicit(expr_children(e)[0]);
      if (clang_getCursorKind(lv) == CXCursor_ArraySubscriptExpr) {
        std::vector<CXCursor> kids = expr_children(lv);
        bool first = is_pointer(clang_getCursorType(kids[0]));
        base = first ? kids[0] : kids[1];
        index = first ? kids[1] : kids[0];
      }
    } else if (clang_getCursorKind(e) == CXCursor_BinaryOperator && binary_operator(tu_, e) == "+") {
      std::vector<CXCursor> kids = expr_children(e);
      bool first = is_pointer(clang_getCursorType(kids[0]));
      base = first ? kids[0] : kids[1];
      index = first ? kids[1] : kids[0];
    } else {
      base = e;
      zero = true;
    }
    int exact = clang_Cursor_isNull(base) ? -1 : exact_param(base);
    if (exact >= 0) {
      CXType want = canonical(clang_getPointeeType(clang_getCursorType(strip_implicit(base))));
      CXType got = canonical(clang_getPointeeType(clang_getCursorType(arg)));
      if (unqualified_spelling(want) != unqualified_spelling(got)) exact = -1;
    }
    access(p, mode, call, exact, index, zero);
  }

  Analyzer& an_;
  CXTranslationUnit tu_;
  CXCursor fn_;
  FunctionFacts& f_;
  VarUses vars_;
  IndexBounds bounds_;
  std::unordered_map<CXCursor, Prov, CursorHash, CursorEq> prov_;
  std::vector<Flow> flows_;
  std::vector<CXCursor> repointed_;
  std::vector<Guard> guards_;
};

}  // namespace

std::vector<CXCursor> parameters(CXCursor function) {
  std::vector<CXCursor> out;
  for (CXCursor c : children(function))
    if (clang_getCursorKind(c) == CXCursor_ParmDecl) out.push_back(c);
  return out;
}

bool Analyzer::has_errors(CXCursor definition) const {
  CXSourceRange r = clang_getCursorExtent(definition);
  std::string file;
  unsigned begin = file_offset(clang_getRangeStart(r), &file);
  unsigned end = file_offset(clang_getRangeEnd(r));
  for (const auto& [f, off] : errors_)
    if (f == file && off >= begin && off <= end) return true;
  return false;
}

const FunctionFacts& Analyzer::analyze(CXCursor definition) {
  if (auto it = done_.find(definition); it != done_.end()) return it->second;
  size_t nparams = parameters(definition).size();
  // Recursion, or a body clang could not make sense of: every pointer is read-write and
  // passed on, never guessed.
  auto conservative = [&](FunctionFacts& f, const std::string& why) {
    f.params.assign(nparams, ParamFacts{});
    for (ParamFacts& p : f.params) {
      p.access = kReadWrite;
      p.escaped = true;
      p.unbounded = true;
    }
    f.complete = false;
    f.notes.insert(why);
  };
  if (in_progress_[definition]) {
    FunctionFacts& f = recursive_[definition];
    conservative(f, "is recursive: every pointer taken as read-write");
    return f;
  }
  FunctionFacts facts;
  if (has_errors(definition)) {
    facts.body_errors = true;
    conservative(facts, "has errors in its body (a declaration the scan did not see?): every pointer taken as read-write");
  } else {
    in_progress_[definition] = true;
    FunctionWalk(*this, tu_, definition, facts).run();
    in_progress_[definition] = false;
  }
  return done_[definition] = std::move(facts);
}

json combined_extent(const ParamFacts& p) {
  if (p.escaped || p.unbounded || p.extents.empty()) return nullptr;
  bool all_const = true;
  int64_t largest = 0;
  for (const json& e : p.extents) {
    if (!e.contains("const")) {
      all_const = false;
      break;
    }
    largest = std::max(largest, e["const"].get<int64_t>());
  }
  if (all_const) return json{{"const", largest}};
  for (const json& e : p.extents)
    if (e != p.extents.front()) return nullptr;
  return p.extents.front();
}

}  // namespace streamhaz::kernels
