#include "param_layout.h"

#include "clang_util.h"
#include "pointer_flow.h"

namespace streamhaz::kernels {

using json = nlohmann::ordered_json;

bool holds_pointers(CXType t, int depth) {
  CXType c = canonical(t);
  if (depth > 8) return true;
  if (c.kind == CXType_Pointer) return true;
  if (c.kind == CXType_ConstantArray) return holds_pointers(clang_getArrayElementType(c), depth + 1);
  if (c.kind != CXType_Record) return false;
  struct State {
    int depth;
    bool found;
  } s{depth, false};
  clang_Type_visitFields(
      c,
      [](CXCursor field, CXClientData data) {
        auto* st = static_cast<State*>(data);
        if (holds_pointers(clang_getCursorType(field), st->depth + 1)) {
          st->found = true;
          return CXVisit_Break;
        }
        return CXVisit_Continue;
      },
      &s);
  return s.found;
}

json param_layout(CXCursor kernel) {
  json out = json::array();
  long long offset = 0;
  bool known = true;
  for (CXCursor p : parameters(kernel)) {
    CXType t = clang_getCursorType(p);
    CXType c = canonical(t);
    long long size = clang_Type_getSizeOf(c);
    long long align = clang_Type_getAlignOf(c);
    json j;
    j["name"] = spelling(p);
    j["type"] = type_spelling(t);
    if (known && size >= 0 && align > 0) {
      offset = (offset + align - 1) / align * align;
      j["offset"] = offset;
      j["size"] = size;
      offset += size;
    } else {
      known = false;  // every later offset depends on this one
      j["offset"] = nullptr;
      j["size"] = size >= 0 && align > 0 ? json(size) : json(nullptr);
    }
    bool pointer = c.kind == CXType_Pointer;
    j["pointer"] = pointer;
    if (pointer) {
      CXType pointee = canonical(clang_getPointeeType(c));
      long long bytes = pointee.kind == CXType_Void ? -1 : clang_Type_getSizeOf(pointee);
      j["pointee_bytes"] = bytes > 0 ? json(bytes) : json(nullptr);
    } else if (is_integer(t) && size >= 1 && size <= 8) {
      j["integer"] = true;
      j["signed"] = is_signed_integer(t);
    }
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace streamhaz::kernels
