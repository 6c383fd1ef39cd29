// The static tier's evaluator: kernels.json loading, traced-name matching, parameter bytes
// to byte ranges, saturation of hostile values.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "streamhaz/analysis/kernel_signature.h"
#include "footprints/kernel_summary.h"
#include "streamhaz/trace/reader.h"
#include "streamhaz/analysis/demangle.h"

using namespace streamhaz::analysis;
using streamhaz::trace::AccessMode;

namespace {

const std::string kReducerJson = std::string(STREAMHAZ_SOURCE_DIR) + "/traces/reducer-kernels.json";
// The reducer's kernels as nvcc named them (traces/race-2gpu-delay/rank0.shz).
const std::string kAnon = "_ZN7reducer43_GLOBAL__N__3a075992_10_kernels_cu_d5b03bde";

// Parameter bytes laid out as the driver hands them over.
struct Params {
  std::string bytes;
  template <class T>
  Params& at(size_t offset, T value) {
    if (bytes.size() < offset + sizeof(T)) bytes.resize(offset + sizeof(T), '\0');
    std::memcpy(bytes.data() + offset, &value, sizeof(T));
    return *this;
  }
};

std::string one_kernel(const std::string& params_json, const std::string& extra = "") {
  return R"({"format": "streamhaz-kernels", "version": 1, "kernels": [{"name": "k", "signature": "", "file": "k.cu",
             "line": 1, "template": false, "complete": true)" + extra + R"(, "params": )" + params_json + "}]}";
}

std::string load_error(const std::string& text) {
  try {
    KernelSummaries::parse(text, "bad.json");
  } catch (const streamhaz::trace::TraceError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("kernel names: demangled, anonymous namespaces dropped, return type dropped", "[kernels][names]") {
  auto n = split_function_name(*demangle(kAnon + "13fill_gradientEPfliii"));
  REQUIRE(n);
  CHECK(n->qualified == "reducer::fill_gradient");
  CHECK(n->params == "float*,long,int,int,int");
  CHECK_FALSE(n->templated);
  auto t = split_function_name(*demangle("_ZN2ns5scaleILi4EEEvPfl"));  // void ns::scale<4>(float*, long)
  REQUIRE(t);
  CHECK(t->qualified == "ns::scale");
  CHECK(t->templated);
  CHECK(count_params(t->params) == 2);
  CHECK(normalise_types("float const *, unsigned  long") == normalise_types("float const*, unsigned long"));
  CHECK(normalise_types("float const*") != normalise_types("float*"));
  CHECK(anonymous_namespace_stem(kAnon + "4spinEm") == "kernels_cu");
  CHECK_FALSE(demangle("plain_c_kernel"));
}

TEST_CASE("all six reducer kernels are found by their traced names", "[kernels][names]") {
  KernelSummaries s = KernelSummaries::load(kReducerJson);
  const std::pair<std::string, std::string> names[] = {
      {"13fill_gradientEPfliii", "reducer::fill_gradient"},
      {"9fill_bf16EP13__nv_bfloat16l", "reducer::fill_bf16"},
      {"9predivideEPflf", "reducer::predivide"},
      {"4spinEm", "reducer::spin"},
      {"8sgd_stepEPfPKflf", "reducer::sgd_step"},
      {"15check_partitionEPKfllliiPd", "reducer::check_partition"}};
  for (const auto& [tail, name] : names) {
    INFO(name);
    const KernelSummary* k = s.find(kAnon + tail);
    REQUIRE(k);
    CHECK(k->name == name);
    CHECK(k->layout_known());
    CHECK(s.find(kAnon + tail) == k);  // cached
  }
  // Same name, other parameter types: not the same kernel.
  CHECK(s.find(kAnon + "9predivideEPdlf") == nullptr);
  CHECK(s.find("_ZN7reducer9predivideEPflf") != nullptr);  // a named namespace spelling matches too
  CHECK(s.find("_ZN5other9predivideEPflf") == nullptr);
  CHECK(s.find("not_a_kernel") == nullptr);
}

TEST_CASE("a launch of fill_gradient and sgd_step gives their ranges", "[kernels][evaluate]") {
  KernelSummaries s = KernelSummaries::load(kReducerJson);
  const KernelSummary* fill = s.find(kAnon + "13fill_gradientEPfliii");
  REQUIRE(fill);
  Params p;
  p.at<uint64_t>(0, 0x7f0000001000).at<int64_t>(8, 1000).at<int>(16, 3).at<int>(20, 1).at<int>(24, 0);
  EvaluateStatus status = EvaluateStatus::LayoutUnknown;
  std::vector<KernelRange> r = evaluate(*fill, p.bytes, &status);
  CHECK(status == EvaluateStatus::Ok);
  REQUIRE(r.size() == 1);
  CHECK(r[0].ptr == 0x7f0000001000);
  CHECK(r[0].bytes == std::optional<uint64_t>(4000));
  CHECK(r[0].mode == AccessMode::Write);

  const KernelSummary* sgd = s.find(kAnon + "8sgd_stepEPfPKflf");
  REQUIRE(sgd);
  Params q;
  q.at<uint64_t>(0, 0x1000).at<uint64_t>(8, 0x9000).at<int64_t>(16, 256).at<float>(24, 0.1f);
  r = evaluate(*sgd, q.bytes);
  REQUIRE(r.size() == 2);
  CHECK(r[0].ptr == 0x1000);
  CHECK(r[0].mode == AccessMode::ReadWrite);
  CHECK(r[1].ptr == 0x9000);
  CHECK(r[1].mode == AccessMode::Read);
  CHECK(r[1].bytes == std::optional<uint64_t>(1024));

  const KernelSummary* check = s.find(kAnon + "15check_partitionEPKfllliiPd");
  REQUIRE(check);
  Params c;
  c.at<uint64_t>(0, 0x1000).at<int64_t>(8, 10).at<int64_t>(16, 0).at<int64_t>(24, 10).at<int>(32, 0).at<int>(36, 2)
      .at<uint64_t>(40, 0x5000);
  r = evaluate(*check, c.bytes);
  REQUIRE(r.size() == 2);
  CHECK(r[1].ptr == 0x5000);
  CHECK(r[1].bytes == std::optional<uint64_t>(16));  // stats[0], stats[1]
  CHECK(r[1].mode == AccessMode::ReadWrite);
}

TEST_CASE("parameter bytes shorter than the layout give no ranges and say why", "[kernels][evaluate]") {
  KernelSummaries s = KernelSummaries::load(kReducerJson);
  const KernelSummary* fill = s.find(kAnon + "13fill_gradientEPfliii");
  REQUIRE(fill);
  Params p;
  p.at<uint64_t>(0, 0x1000).at<int64_t>(8, 10);  // 16 of 28 bytes
  EvaluateStatus status = EvaluateStatus::Ok;
  CHECK(evaluate(*fill, p.bytes, &status).empty());
  CHECK(status == EvaluateStatus::ParamsTooShort);
  CHECK(evaluate(*fill, "", &status).empty());
}

TEST_CASE("extents: hostile values saturate to unknown instead of wrapping", "[kernels][evaluate]") {
  std::string params = R"([
      {"name": "p", "type": "float *", "offset": 0, "size": 8, "pointer": true, "pointee_bytes": 4, "access": "write",
       "extent": {"mul": [{"param": 1}, {"param": 2}]}},
      {"name": "rows", "type": "long", "offset": 8, "size": 8, "pointer": false, "integer": true, "signed": true},
      {"name": "cols", "type": "int", "offset": 16, "size": 4, "pointer": false, "integer": true, "signed": true},
      {"name": "q", "type": "float *", "offset": 24, "size": 8, "pointer": true, "pointee_bytes": 4, "access": "read",
       "extent": {"add": [{"param": 1}, {"const": 3}]}}])";
  KernelSummaries s = KernelSummaries::parse(one_kernel(params), "k.json");
  const KernelSummary& k = s.kernels().at(0);
  auto launch = [&](uint64_t ptr, int64_t rows, int cols) {
    Params p;
    p.at<uint64_t>(0, ptr).at<int64_t>(8, rows).at<int>(16, cols).at<uint64_t>(24, 0x100);
    return evaluate(k, p.bytes);
  };
  std::vector<KernelRange> r = launch(0x1000, 3, 5);
  REQUIRE(r.size() == 2);
  CHECK(r[0].bytes == std::optional<uint64_t>(60));
  CHECK(r[1].bytes == std::optional<uint64_t>(24));  // (3 + 3) * 4
  CHECK_FALSE(launch(0x1000, -3, 5)[0].bytes);                     // negative count: unknown
  CHECK_FALSE(launch(0x1000, 3, -5)[0].bytes);
  CHECK_FALSE(launch(0x1000, INT64_MAX, 1 << 30)[0].bytes);        // product past 2^64
  CHECK_FALSE(launch(0x1000, INT64_MAX, 1)[0].bytes);              // times 4 bytes past 2^64
  CHECK_FALSE(launch(0x1000, INT64_MAX, 1)[1].bytes);              // INT64_MAX + 3 elements * 4
  r = launch(UINT64_MAX - 16, 100, 1);                              // clipped at the top of memory
  REQUIRE(r[0].bytes);
  CHECK(*r[0].bytes == 16);
  CHECK(launch(0, 3, 5).size() == 1);  // a null pointer is not a range
}

TEST_CASE("a summary without a known layout is not used", "[kernels][evaluate]") {
  std::string params = R"([{"name": "p", "type": "T *", "offset": null, "size": null, "pointer": true,
                            "pointee_bytes": null, "access": "write", "extent": null}])";
  KernelSummaries s = KernelSummaries::parse(one_kernel(params), "k.json");
  EvaluateStatus status = EvaluateStatus::Ok;
  CHECK(evaluate(s.kernels().at(0), std::string(8, '\1'), &status).empty());
  CHECK(status == EvaluateStatus::LayoutUnknown);
}

TEST_CASE("template and extern C summaries match their traced names", "[kernels][names]") {
  std::string text = R"({"format": "streamhaz-kernels", "version": 1, "kernels": [
      {"name": "ns::scale", "signature": "float *, long", "file": "a.cu", "line": 3, "template": true, "complete": true,
       "params": [{"name": "p", "type": "float *", "offset": 0, "size": 8, "pointer": true, "pointee_bytes": 4,
                   "access": "write", "extent": null},
                  {"name": "n", "type": "long", "offset": 8, "size": 8, "pointer": false, "integer": true, "signed": true}]},
      {"name": "plain", "signature": "int *", "file": "a.cu", "line": 9, "template": false, "extern_c": true,
       "complete": true, "params": []}]})";
  KernelSummaries s = KernelSummaries::parse(text, "k.json");
  const KernelSummary* t = s.find("_ZN2ns5scaleILi4EEEvPfl");
  REQUIRE(t);
  CHECK(t->name == "ns::scale");
  CHECK(s.find("_ZN2ns5scaleEPfl") == nullptr);           // not a template instance
  CHECK(s.find("_ZN2ns5scaleILi4EEEvPfli") == nullptr);   // another parameter count
  REQUIRE(s.find("plain"));
  CHECK(s.find("plain")->extern_c);
}

TEST_CASE("kernels of anonymous namespaces in two files are told apart by the file", "[kernels][names]") {
  auto entry = [](const std::string& file) {
    return R"({"name": "ns::k", "signature": "float*", "file": ")" + file +
           R"(", "line": 1, "template": false, "complete": true, "params": [{"name": "p", "type": "float *",
               "offset": 0, "size": 8, "pointer": true, "pointee_bytes": 4, "access": "read", "extent": null}]})";
  };
  std::string text = R"({"format": "streamhaz-kernels", "version": 1, "kernels": [)" + entry("src/a.cu") + "," +
                     entry("src/b.cu") + "]}";
  KernelSummaries s = KernelSummaries::parse(text, "k.json");
  const KernelSummary* b = s.find("_ZN2ns36_GLOBAL__N__0badc0de_4_b_cu_1234abcd1kEPf");
  REQUIRE(b);
  CHECK(b->file == "src/b.cu");
  CHECK(s.find("_ZN2ns1kEPf") == nullptr);  // no file to tell them apart: ambiguous, not guessed
  CHECK(s.ambiguous_names() == 1);
}

TEST_CASE("bad kernels.json: one error naming the file and the JSON path", "[kernels][load]") {
  CHECK(load_error("{\"format\": ").find("bad.json") != std::string::npos);
  CHECK(load_error("{\"format\": ").find("not valid JSON") != std::string::npos);
  CHECK(load_error(R"({"format": "other", "version": 1, "kernels": []})").find("$.format") != std::string::npos);
  CHECK(load_error(R"({"format": "streamhaz-kernels", "version": 2, "kernels": []})").find("$.version") !=
        std::string::npos);
  std::string bad_offset = one_kernel(R"([{"name": "n", "type": "int", "offset": -8, "size": 4, "pointer": false}])");
  CHECK(load_error(bad_offset).find("bad.json") != std::string::npos);
  CHECK(load_error(bad_offset).find("$.kernels[0].params[0].offset: expected a non-negative integer") !=
        std::string::npos);
  std::string float_extent = one_kernel(R"([
      {"name": "p", "type": "float *", "offset": 0, "size": 8, "pointer": true, "pointee_bytes": 4, "access": "write",
       "extent": {"param": 1}},
      {"name": "f", "type": "float", "offset": 8, "size": 4, "pointer": false}])");
  CHECK(load_error(float_extent).find("$.kernels[0].params[0].extent: parameter 1 is not an integer") !=
        std::string::npos);
  std::string missing = one_kernel(R"([{"name": "p", "type": "float *", "offset": 0, "size": 8, "pointer": true,
                                        "access": "written"}])");
  CHECK(load_error(missing).find("$.kernels[0].params[0].access") != std::string::npos);
  std::string deep = R"({"param": 0})";
  for (int i = 0; i < 100; ++i) deep = R"({"add": [)" + deep + R"(, {"const": 1}]})";
  std::string too_deep = one_kernel(R"([{"name": "p", "type": "long *", "offset": 0, "size": 8, "pointer": true,
      "pointee_bytes": 8, "access": "read", "extent": )" + deep + "}]");
  CHECK(load_error(too_deep).find("deeper") != std::string::npos);
  CHECK_THROWS_AS(KernelSummaries::load("/nonexistent/kernels.json"), streamhaz::trace::TraceError);
}
