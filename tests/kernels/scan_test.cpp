// The scanner on deliberately hard kernels (data/*.cu): every summary field that matters.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "streamhaz/kernels/scan.h"

namespace {

using nlohmann::ordered_json;
using streamhaz::kernels::scan;
using streamhaz::kernels::ScanOptions;

// Scans one data file once; kernels by name.
const std::map<std::string, ordered_json>& kernels_of(const std::string& file) {
  static std::map<std::string, std::map<std::string, ordered_json>> cache;
  auto it = cache.find(file);
  if (it != cache.end()) return it->second;
  ScanOptions o;
  o.files = {std::string(STREAMHAZ_KERNEL_DATA) + "/" + file};
  auto& m = cache[file];
  streamhaz::kernels::ScanResult r = scan(o);
  for (const ordered_json& k : r.document["kernels"]) m[k["name"].get<std::string>()] = k;
  return m;
}

const ordered_json& kernel(const std::string& file, const std::string& name) {
  const auto& m = kernels_of(file);
  auto it = m.find(name);
  INFO(file << ": " << name);
  REQUIRE(it != m.end());
  return it->second;
}

const ordered_json& param(const ordered_json& k, const std::string& name) {
  for (const ordered_json& p : k["params"])
    if (p["name"] == name) return p;
  FAIL("no parameter " << name);
  throw;
}

std::string access(const std::string& file, const std::string& k, const std::string& p) {
  return param(kernel(file, k), p)["access"].get<std::string>();
}
std::string extent(const std::string& file, const std::string& k, const std::string& p) {
  return param(kernel(file, k), p)["extent"].dump();
}

}  // namespace

TEST_CASE("aliasing parameters are summarised one by one", "[kernels][scan]") {
  CHECK(access("aliasing.cu", "copy_maybe_in_place", "dst") == "write");
  CHECK(access("aliasing.cu", "copy_maybe_in_place", "src") == "read");
  CHECK(extent("aliasing.cu", "copy_maybe_in_place", "dst") == R"({"param":2})");
  CHECK(extent("aliasing.cu", "copy_maybe_in_place", "src") == R"({"param":2})");
  CHECK(kernel("aliasing.cu", "copy_maybe_in_place")["complete"] == true);
}

TEST_CASE("a const_cast write makes the const parameter written", "[kernels][scan]") {
  CHECK(access("aliasing.cu", "const_cast_write", "in") == "write");
  CHECK(extent("aliasing.cu", "const_cast_write", "in") == "null");  // through a cast: not bounded
}

TEST_CASE("writes through a local copy or a moved parameter count, without extent", "[kernels][scan]") {
  CHECK(access("aliasing.cu", "local_copy", "out") == "write");
  CHECK(extent("aliasing.cu", "local_copy", "out") == "null");
  CHECK(access("aliasing.cu", "moved_param", "out") == "write");
  CHECK(extent("aliasing.cu", "moved_param", "out") == "null");
}

TEST_CASE("a pointer only compared is not accessed", "[kernels][scan]") {
  CHECK(access("aliasing.cu", "only_compared", "a") == "none");
  CHECK(access("aliasing.cu", "only_compared", "b") == "none");
  CHECK(access("aliasing.cu", "only_compared", "same") == "write");
  CHECK(extent("aliasing.cu", "only_compared", "same") == R"({"const":1})");
}

TEST_CASE("extents of guarded one-dimensional indices", "[kernels][scan]") {
  CHECK(extent("bounds.cu", "grid_stride", "out") == R"({"param":1})");
  CHECK(extent("bounds.cu", "early_return", "out") == R"({"param":1})");
  CHECK(extent("bounds.cu", "inclusive", "a") == R"({"add":[{"param":2},{"const":1}]})");
  CHECK(extent("bounds.cu", "inclusive", "b") == R"({"add":[{"param":2},{"const":2}]})");
  CHECK(extent("bounds.cu", "two_dims", "m") == R"({"mul":[{"param":1},{"param":2}]})");
}

TEST_CASE("no extent where the index is not provably in [0, bound)", "[kernels][scan]") {
  CHECK(extent("bounds.cu", "index_changed", "out") == "null");
  CHECK(extent("bounds.cu", "signed_start", "out") == "null");
  CHECK(extent("bounds.cu", "unguarded", "out") == "null");
  CHECK(access("bounds.cu", "unguarded", "out") == "write");
}

TEST_CASE("device functions of the same file are followed", "[kernels][scan]") {
  CHECK(access("calls.cu", "through_device_functions", "out") == "write");
  CHECK(access("calls.cu", "through_device_functions", "in") == "read");
  CHECK(kernel("calls.cu", "through_device_functions")["complete"] == true);
}

TEST_CASE("atomics read and write their target", "[kernels][scan]") {
  CHECK(access("calls.cu", "accumulate", "acc") == "readwrite");
  CHECK(extent("calls.cu", "accumulate", "acc") == R"({"param":2})");
  CHECK(access("calls.cu", "accumulate", "v") == "read");
  CHECK(access("calls.cu", "histogram", "bins") == "readwrite");
  CHECK(extent("calls.cu", "histogram", "bins") == "null");  // a data-dependent index
  CHECK(access("calls.cu", "histogram", "keys") == "read");
}

TEST_CASE("a pointer passed to an unseen function or stored is read-write, extent unknown", "[kernels][scan]") {
  CHECK(access("calls.cu", "passes_on", "p") == "readwrite");
  CHECK(extent("calls.cu", "passes_on", "p") == "null");
  CHECK(access("calls.cu", "passes_on", "q") == "none");
  CHECK(access("calls.cu", "stores_pointer", "p") == "readwrite");
  CHECK(access("calls.cu", "stores_pointer", "table") == "write");
}

TEST_CASE("pointers the parameters do not describe make the summary incomplete", "[kernels][scan]") {
  const ordered_json& s = kernel("unknowns.cu", "struct_member");
  CHECK(s["complete"] == false);
  CHECK(param(s, "args")["pointer"] == false);
  CHECK(s["notes"].dump().find("'args' holds pointers") != std::string::npos);
  const ordered_json& t = kernel("unknowns.cu", "pointer_table");
  CHECK(t["complete"] == false);
  CHECK(access("unknowns.cu", "pointer_table", "table") == "read");  // the loaded pointers are written, not the table
}

TEST_CASE("a body with errors is summarised conservatively, never guessed", "[kernels][scan]") {
  const ordered_json& k = kernel("unknowns.cu", "undeclared_call");
  CHECK(k["complete"] == false);
  CHECK(access("unknowns.cu", "undeclared_call", "out") == "readwrite");
  CHECK(access("unknowns.cu", "undeclared_call", "in") == "readwrite");
  CHECK(extent("unknowns.cu", "undeclared_call", "out") == "null");
}

TEST_CASE("parameter offsets follow natural alignment", "[kernels][scan]") {
  const ordered_json& k = kernel("layout.cu", "mixed");
  std::vector<std::pair<int, int>> want = {{0, 1}, {8, 8}, {16, 2}, {24, 8}, {32, 4}, {48, 16}, {64, 1}, {65, 1}, {72, 8}};
  REQUIRE(k["params"].size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("parameter " << i);
    CHECK(k["params"][i]["offset"] == want[i].first);
    CHECK(k["params"][i]["size"] == want[i].second);
  }
  CHECK(k["signature"] == "char, double, short, float*, int, Vec4, Mode, bool, unsigned long long");
  CHECK(param(k, "m")["integer"] == true);  // an enum is read as its underlying integer
  CHECK(param(k, "m")["signed"] == false);
  CHECK(param(k, "n")["signed"] == true);
  CHECK(param(k, "v").contains("integer") == false);
  CHECK(k["layout_known"] == true);
}

TEST_CASE("names: anonymous namespaces dropped, extern C marked", "[kernels][scan]") {
  CHECK(kernel("layout.cu", "outer::hidden")["signature"] == "float*");
  const ordered_json& c = kernel("layout.cu", "plain_c");
  CHECK(c["extern_c"] == true);
}

TEST_CASE("templates: a layout that depends on the argument is unknown", "[kernels][scan]") {
  const ordered_json& s = kernel("templates.cu", "scale");
  CHECK(s["template"] == true);
  CHECK(s["layout_known"] == false);
  CHECK(param(s, "data")["offset"].is_null());
  CHECK(param(s, "n")["offset"].is_null());  // every offset after a dependent one
  CHECK(access("templates.cu", "scale", "data") == "readwrite");
  const ordered_json& f = kernel("templates.cu", "fill_rows");
  CHECK(f["template"] == true);
  CHECK(f["layout_known"] == true);
  CHECK(param(f, "rows")["offset"] == 8);
  CHECK(access("templates.cu", "fill_rows", "out") == "write");
}
