#include "clang_util.h"

namespace streamhaz::kernels {

std::string take(CXString s) {
  const char* c = clang_getCString(s);
  std::string out = c ? c : "";
  clang_disposeString(s);
  return out;
}

std::string spelling(CXCursor c) { return take(clang_getCursorSpelling(c)); }
std::string type_spelling(CXType t) { return take(clang_getTypeSpelling(t)); }

std::vector<CXCursor> children(CXCursor c) {
  std::vector<CXCursor> out;
  clang_visitChildren(
      c,
      [](CXCursor child, CXCursor, CXClientData data) {
        static_cast<std::vector<CXCursor>*>(data)->push_back(child);
        return CXChildVisit_Continue;
      },
      &out);
  return out;
}

bool is_expr(CXCursor c) { return clang_isExpression(clang_getCursorKind(c)) != 0; }

std::vector<CXCursor> expr_children(CXCursor c) {
  std::vector<CXCursor> out;
  for (CXCursor k : children(c))
    if (is_expr(k)) out.push_back(k);
  return out;
}

bool is_kernel(CXCursor c) {
  CXCursorKind k = clang_getCursorKind(c);
  if (k != CXCursor_FunctionDecl && k != CXCursor_FunctionTemplate) return false;
  for (CXCursor a : children(c))
    if (clang_getCursorKind(a) == CXCursor_CUDAGlobalAttr) return true;
  return false;
}

CXCursor strip_implicit(CXCursor e) {
  for (;;) {
    CXCursorKind k = clang_getCursorKind(e);
    if (k != CXCursor_ParenExpr && k != CXCursor_UnexposedExpr) return e;
    std::vector<CXCursor> kids = expr_children(e);
    if (kids.size() != 1) return e;
    e = kids[0];
  }
}

bool is_explicit_cast(CXCursor e) {
  switch (clang_getCursorKind(e)) {
    case CXCursor_CStyleCastExpr:
    case CXCursor_CXXStaticCastExpr:
    case CXCursor_CXXConstCastExpr:
    case CXCursor_CXXReinterpretCastExpr:
    case CXCursor_CXXFunctionalCastExpr:
      return true;
    default:
      return false;
  }
}

CXCursor strip_casts(CXCursor e) {
  for (;;) {
    e = strip_implicit(e);
    if (!is_explicit_cast(e)) return e;
    std::vector<CXCursor> kids = expr_children(e);
    if (kids.empty()) return e;
    e = kids.back();
    // T{x}: a braced functional cast holds an initializer list of one element.
    if (clang_getCursorKind(e) == CXCursor_InitListExpr) {
      std::vector<CXCursor> inner = expr_children(e);
      if (inner.size() != 1) return e;
      e = inner[0];
    }
  }
}

unsigned file_offset(CXSourceLocation loc, std::string* file) {
  CXFile f;
  unsigned line, column, offset;
  clang_getExpansionLocation(loc, &f, &line, &column, &offset);
  if (file) *file = f ? take(clang_getFileName(f)) : "";
  return offset;
}

namespace {

struct Tokens {
  CXTranslationUnit tu;
  CXToken* tokens = nullptr;
  unsigned count = 0;
  Tokens(CXTranslationUnit t, CXSourceRange r) : tu(t) { clang_tokenize(tu, r, &tokens, &count); }
  ~Tokens() {
    if (tokens) clang_disposeTokens(tu, tokens, count);
  }
  unsigned offset(unsigned i) const { return file_offset(clang_getTokenLocation(tu, tokens[i])); }
  std::string text(unsigned i) const { return take(clang_getTokenSpelling(tu, tokens[i])); }
  bool punct(unsigned i) const { return clang_getTokenKind(tokens[i]) == CXToken_Punctuation; }
};

}  // namespace

std::string binary_operator(CXTranslationUnit tu, CXCursor e) {
  std::vector<CXCursor> kids = expr_children(e);
  if (kids.size() != 2) return "";
  unsigned lhs_end = file_offset(clang_getRangeEnd(clang_getCursorExtent(kids[0])));
  unsigned rhs_start = file_offset(clang_getRangeStart(clang_getCursorExtent(kids[1])));
  Tokens t(tu, clang_getCursorExtent(e));
  for (unsigned i = 0; i < t.count; ++i) {
    unsigned at = t.offset(i);
    if (at >= lhs_end && at < rhs_start && t.punct(i)) return t.text(i);
  }
  return "";
}

std::string unary_operator(CXTranslationUnit tu, CXCursor e, bool& prefix) {
  std::vector<CXCursor> kids = expr_children(e);
  if (kids.size() != 1) return "";
  CXSourceRange operand = clang_getCursorExtent(kids[0]);
  unsigned start = file_offset(clang_getRangeStart(operand));
  unsigned end = file_offset(clang_getRangeEnd(operand));
  Tokens t(tu, clang_getCursorExtent(e));
  if (t.count == 0) return "";
  if (t.offset(0) < start && (t.punct(0) || t.text(0) == "__extension__")) {
    prefix = true;
    return t.text(0);
  }
  if (t.offset(t.count - 1) >= end && t.punct(t.count - 1)) {
    prefix = false;
    return t.text(t.count - 1);
  }
  return "";
}

CXType canonical(CXType t) { return clang_getCanonicalType(t); }
bool is_pointer(CXType t) { return canonical(t).kind == CXType_Pointer; }
bool is_array(CXType t) {
  CXTypeKind k = canonical(t).kind;
  return k == CXType_ConstantArray || k == CXType_IncompleteArray || k == CXType_VariableArray ||
         k == CXType_DependentSizedArray;
}
bool is_reference(CXType t) {
  CXTypeKind k = canonical(t).kind;
  return k == CXType_LValueReference || k == CXType_RValueReference;
}
bool is_const_reference(CXType t) {
  CXType c = canonical(t);
  return c.kind == CXType_LValueReference && clang_isConstQualifiedType(clang_getPointeeType(c));
}

namespace {
bool integer_kind(CXTypeKind k, bool* is_signed) {
  switch (k) {
    case CXType_Bool: case CXType_Char_U: case CXType_UChar: case CXType_Char16: case CXType_Char32:
    case CXType_UShort: case CXType_UInt: case CXType_ULong: case CXType_ULongLong:
      *is_signed = false;
      return true;
    case CXType_Char_S: case CXType_SChar: case CXType_WChar: case CXType_Short: case CXType_Int:
    case CXType_Long: case CXType_LongLong:
      *is_signed = true;
      return true;
    default:
      return false;
  }
}
bool integer_info(CXType t, bool* is_signed) {
  CXType c = canonical(t);
  if (c.kind == CXType_Enum) c = canonical(clang_getEnumDeclIntegerType(clang_getTypeDeclaration(c)));
  return integer_kind(c.kind, is_signed);
}
}  // namespace

bool is_integer(CXType t) {
  bool s;
  return integer_info(t, &s);
}
bool is_signed_integer(CXType t) {
  bool s = false;
  return integer_info(t, &s) && s;
}

std::optional<long long> integer_value(CXCursor e) {
  CXEvalResult r = clang_Cursor_Evaluate(e);
  if (!r) return std::nullopt;
  std::optional<long long> out;
  if (clang_EvalResult_getKind(r) == CXEval_Int) {
    if (clang_EvalResult_isUnsignedInt(r)) {
      unsigned long long u = clang_EvalResult_getAsUnsigned(r);
      if (u <= static_cast<unsigned long long>(INT64_MAX)) out = static_cast<long long>(u);
    } else {
      out = clang_EvalResult_getAsLongLong(r);
    }
  }
  clang_EvalResult_dispose(r);
  return out;
}

}  // namespace streamhaz::kernels
