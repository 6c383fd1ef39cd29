// Offline symbolisation of native frames at check time: the traced process records only a
// module and an offset per frame; here the module's file is opened (with elfutils libdw where
// the build has it) and the offset turned into function, file and line. A file whose build id
// differs from the one the tracer saw is not trusted: the frame then prints as module+offset.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace streamhaz::analysis {

struct SourceLocation {
  std::string function;  // demangled; "" when unknown
  std::string file;      // "" when the object has no line information
  uint32_t line = 0;
};

class NativeSymbolizer {
 public:
  NativeSymbolizer();
  ~NativeSymbolizer();
  NativeSymbolizer(const NativeSymbolizer&) = delete;
  NativeSymbolizer& operator=(const NativeSymbolizer&) = delete;

  // Whether this build can symbolise at all (built with libdw).
  static bool available();

  // `offset` is a return address minus the module's load address: the call is at offset - 1.
  // `build_id` is the lowercase hex the tracer recorded ("" when it found none). Nothing when
  // the file is missing, is not the traced one, or has no symbol there. Cached per module.
  std::optional<SourceLocation> lookup(const std::string& module_path, const std::string& build_id, uint64_t offset);

 private:
  struct Module;
  Module* open(const std::string& path, const std::string& build_id);
  std::map<std::pair<std::string, std::string>, std::unique_ptr<Module>> modules_;
};

}  // namespace streamhaz::analysis
