// Small helpers over libclang's C API: strings, children, implicit nodes, operator spellings.
#pragma once

#include <clang-c/Index.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace streamhaz::kernels {

std::string take(CXString s);  // copies and disposes
std::string spelling(CXCursor c);
std::string type_spelling(CXType t);

std::vector<CXCursor> children(CXCursor c);
// Children that are expressions (casts and declarations also list TypeRefs and the like).
std::vector<CXCursor> expr_children(CXCursor c);
bool is_expr(CXCursor c);
bool is_kernel(CXCursor c);  // a __global__ function or function template

// Skips parentheses and implicit nodes (libclang shows implicit casts as UnexposedExpr).
CXCursor strip_implicit(CXCursor e);
// Also skips explicit casts.
CXCursor strip_casts(CXCursor e);
bool is_explicit_cast(CXCursor e);

// The operator of a BinaryOperator or CompoundAssignOperator ("=", "+=", "<"...), read from
// the tokens after the left operand; empty when it cannot be read (inside a macro).
std::string binary_operator(CXTranslationUnit tu, CXCursor e);
// The operator of a UnaryOperator and whether it is a prefix; empty when unreadable.
std::string unary_operator(CXTranslationUnit tu, CXCursor e, bool& prefix);

CXType canonical(CXType t);
bool is_pointer(CXType t);  // canonical pointer
bool is_array(CXType t);
bool is_reference(CXType t);
bool is_const_reference(CXType t);
bool is_integer(CXType t);
bool is_signed_integer(CXType t);

// An integer constant expression's value, if clang can fold it.
std::optional<long long> integer_value(CXCursor e);

// Expansion-location offset of a source location, and its file name.
unsigned file_offset(CXSourceLocation loc, std::string* file = nullptr);

// Hash and equality of cursors, for maps keyed by declarations.
struct CursorHash {
  size_t operator()(const CXCursor& c) const { return clang_hashCursor(c); }
};
struct CursorEq {
  bool operator()(const CXCursor& a, const CXCursor& b) const { return clang_equalCursors(a, b) != 0; }
};

}  // namespace streamhaz::kernels
