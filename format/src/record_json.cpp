// to_json: walks the same field list as the encoder, so every field on disk is exported.
#include "streamhaz/trace/record_json.h"

#include "record_fields.h"

namespace streamhaz::trace {
namespace {

struct JsonFields {
  nlohmann::json& out;
  void u64(const char* n, uint64_t v) { out[n] = v; }
  void u32(const char* n, uint32_t v) { out[n] = v; }
  void u8(const char* n, uint8_t v) { out[n] = v; }
  void i32(const char* n, int32_t v) { out[n] = v; }
  void flag(const char* n, bool v) { out[n] = v; }
  void e(const char* n, MemcpyKind v, uint8_t) { out[n] = to_string(v); }
  void e(const char* n, NcclKind v, uint8_t) { out[n] = to_string(v); }
  void e(const char* n, AllocKind v, uint8_t) { out[n] = to_string(v); }
  void e(const char* n, FootprintTier v, uint8_t) { out[n] = to_string(v); }
  void e_min1(const char* n, AccessMode v, uint8_t) { out[n] = to_string(v); }
  void e_min1(const char* n, FrameKind v, uint8_t) { out[n] = to_string(v); }
  void str(const char* n, const std::string& v) {
    if (std::string_view(n) == "params") out[n] = hex(v);  // raw bytes, not text
    else out[n] = v;
  }
  void seq(const char* n, uint64_t v) { out[n] = v; }
  void ptr(const char* n, uint64_t v) { out[n] = hex_address(v); }
  void timing_seq(const char* n, uint64_t v) { out[n] = v; }
  void start_ns(const char* n, uint64_t v) { out[n] = v; }
  void end_ns(const char* n, uint64_t v, uint64_t) { out[n] = v; }

  static std::string hex(const std::string& bytes) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string h;
    for (unsigned char c : bytes) {
      h.push_back(digits[c >> 4]);
      h.push_back(digits[c & 15]);
    }
    return h;
  }
  static std::string hex_address(uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
  }
};

}  // namespace

nlohmann::json to_json(const Record& r) {
  nlohmann::json out = nlohmann::json::object();
  out["type"] = record_name(r);
  JsonFields f{out};
  std::visit([&](const auto& rec) { detail::visit_fields(f, const_cast<std::decay_t<decltype(rec)>&>(rec)); }, r);
  return out;
}

}  // namespace streamhaz::trace
