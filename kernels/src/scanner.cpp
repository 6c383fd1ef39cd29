// One translation unit per source file; every __global__ function defined in it (or in a
// header it includes, system headers aside) becomes one entry of kernels.json.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <tuple>

#include "clang_util.h"
#include "cuda_prelude.h"
#include "streamhaz/analysis/kernel_signature.h"
#include "param_layout.h"
#include "pointer_flow.h"
#include "streamhaz/kernels/scan.h"
#include "streamhaz/analysis/demangle.h"

namespace streamhaz::kernels {

namespace {

using ordered = nlohmann::ordered_json;

const std::string kPrelude(kPreludePath);

std::string qualified_name(CXCursor fn) {
  std::string name = spelling(fn);
  for (CXCursor p = clang_getCursorSemanticParent(fn); !clang_Cursor_isNull(p);
       p = clang_getCursorSemanticParent(p)) {
    CXCursorKind k = clang_getCursorKind(p);
    if (k == CXCursor_TranslationUnit) break;
    if (k == CXCursor_Namespace && clang_Cursor_isAnonymous(p)) continue;
    std::string part = spelling(p);
    if (k == CXCursor_LinkageSpec || part.empty()) continue;  // extern "C" { } and the like
    name = part + "::" + name;
  }
  return name;
}

ordered access_text(uint8_t a) {
  switch (a) {
    case kRead: return "read";
    case kWrite: return "write";
    case kReadWrite: return "readwrite";
    default: return "none";
  }
}

struct TranslationUnit {
  CXTranslationUnit tu = nullptr;
  ~TranslationUnit() {
    if (tu) clang_disposeTranslationUnit(tu);
  }
};

class FileScan {
 public:
  FileScan(const std::string& file, CXTranslationUnit tu, ScanResult& result) : file_(file), tu_(tu), result_(result) {}

  // Appends the kernels of the translation unit to `kernels`.
  void run(std::vector<ordered>& kernels, std::set<std::tuple<std::string, std::string, std::string, unsigned>>& seen) {
    std::vector<std::pair<std::string, unsigned>> errors;
    std::string first_error;
    unsigned error_count = 0;
    for (unsigned i = 0, n = clang_getNumDiagnostics(tu_); i < n; ++i) {
      CXDiagnostic d = clang_getDiagnostic(tu_, i);
      if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error) {
        std::string f;
        unsigned off = file_offset(clang_getDiagnosticLocation(d), &f);
        errors.emplace_back(f, off);
        if (error_count++ == 0)
          first_error = take(clang_formatDiagnostic(d, CXDiagnostic_DisplaySourceLocation | CXDiagnostic_DisplayColumn));
      }
      clang_disposeDiagnostic(d);
    }
    if (error_count)
      result_.warnings.push_back(file_ + ": clang reported " + std::to_string(error_count) +
                                 " error(s), the first: " + first_error +
                                 " (kernels with errors in their bodies are summarised as reading and writing every pointer)");
    analyzer_ = std::make_unique<Analyzer>(tu_, std::move(errors));
    std::vector<CXCursor> found;
    find_kernels(clang_getTranslationUnitCursor(tu_), found);
    for (CXCursor k : found) {
      ordered entry = summarise(k);
      auto key = std::make_tuple(entry["name"].get<std::string>(), entry["signature"].get<std::string>(),
                                 entry["file"].get<std::string>(), entry["line"].get<unsigned>());
      if (seen.insert(key).second) kernels.push_back(std::move(entry));
    }
  }

 private:
  void find_kernels(CXCursor parent, std::vector<CXCursor>& out) {
    for (CXCursor c : children(parent)) {
      CXCursorKind k = clang_getCursorKind(c);
      CXSourceLocation loc = clang_getCursorLocation(c);
      if (clang_Location_isInSystemHeader(loc)) continue;
      std::string f;
      file_offset(loc, &f);
      if (f == kPrelude) continue;
      if (k == CXCursor_Namespace || k == CXCursor_LinkageSpec || k == CXCursor_UnexposedDecl) {
        find_kernels(c, out);
      } else if (is_kernel(c) && clang_isCursorDefinition(c)) {
        out.push_back(c);
      }
    }
  }

  ordered summarise(CXCursor k) {
    ordered e;
    bool templated = clang_getCursorKind(k) == CXCursor_FunctionTemplate;
    std::string mangled = templated ? "" : take(clang_Cursor_getMangling(k));
    bool extern_c = !templated && !mangled.empty() && mangled.rfind("_Z", 0) != 0;
    std::string signature;
    if (!templated && !extern_c) {
      if (std::optional<std::string> d = analysis::demangle(mangled))
        if (std::optional<std::string> p = analysis::parameter_list(*d)) signature = *p;
    }
    if (signature.empty()) {  // templates and extern "C": clang's canonical spellings
      for (CXCursor p : parameters(k)) {
        if (!signature.empty()) signature += ", ";
        CXType t = clang_getCursorType(p);
        signature += type_spelling(templated ? t : canonical(t));  // "T *", not clang's internal name
      }
    }
    CXFile cf;
    unsigned line, column, offset;
    clang_getExpansionLocation(clang_getCursorLocation(k), &cf, &line, &column, &offset);
    std::string file = cf ? take(clang_getFileName(cf)) : "";
    CXFile main = clang_getFile(tu_, file_.c_str());
    if (cf && main && clang_File_isEqual(cf, main)) file = file_;

    e["name"] = qualified_name(k);
    e["signature"] = signature;
    e["file"] = file;
    e["line"] = line;
    e["template"] = templated;
    if (extern_c) e["extern_c"] = true;

    const FunctionFacts& facts = analyzer_->analyze(k);
    ordered params = param_layout(k);
    std::set<std::string> notes = facts.notes;
    bool complete = facts.complete;
    bool layout = true;
    std::vector<CXCursor> decls = parameters(k);
    for (size_t i = 0; i < params.size(); ++i) {
      ordered& p = params[i];
      if (p["offset"].is_null()) layout = false;
      if (p["pointer"].get<bool>()) {
        const ParamFacts& pf = i < facts.params.size() ? facts.params[i] : ParamFacts{kReadWrite, true, true, {}};
        p["access"] = access_text(pf.access);
        p["extent"] = ordered::parse(combined_extent(pf).dump());
      } else if (holds_pointers(clang_getCursorType(decls[i]))) {
        complete = false;
        notes.insert("parameter '" + p["name"].get<std::string>() +
                     "' holds pointers: accesses through its members are not described");
      }
    }
    if (!layout) notes.insert("the parameter layout depends on a template argument: the analyzer cannot use this summary");
    e["complete"] = complete;
    e["layout_known"] = layout;
    e["notes"] = ordered(std::vector<std::string>(notes.begin(), notes.end()));
    e["params"] = std::move(params);
    return e;
  }

  const std::string& file_;
  CXTranslationUnit tu_;
  ScanResult& result_;
  std::unique_ptr<Analyzer> analyzer_;
};

}  // namespace

ScanResult scan(const ScanOptions& options) {
  ScanResult result;
  for (const std::string& f : options.files) {
    std::ifstream in(f);
    if (!in) throw ScanError("cannot read " + f + ": " + std::strerror(errno));
  }
  std::vector<std::string> args = {"-x", "cuda", "--cuda-host-only", "-nocudainc", "-nocudalib",
                                   "-std=c++17", "-ferror-limit=0", "-Wno-unknown-cuda-version"};
  if (options.prelude) {
    args.push_back("-include");
    args.push_back(kPrelude);
  }
  args.insert(args.end(), options.clang_args.begin(), options.clang_args.end());
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  std::string prelude(cuda_prelude());
  CXUnsavedFile unsaved{kPrelude.c_str(), prelude.c_str(), static_cast<unsigned long>(prelude.size())};

  CXIndex index = clang_createIndex(0, 0);
  std::vector<ordered> kernels;
  std::set<std::tuple<std::string, std::string, std::string, unsigned>> seen;
  try {
    for (const std::string& f : options.files) {
      TranslationUnit tu;
      CXErrorCode rc = clang_parseTranslationUnit2(index, f.c_str(), argv.data(), static_cast<int>(argv.size()),
                                                   options.prelude ? &unsaved : nullptr, options.prelude ? 1 : 0,
                                                   CXTranslationUnit_KeepGoing, &tu.tu);
      if (rc != CXError_Success || !tu.tu)
        throw ScanError("clang could not parse " + f + " (libclang error " + std::to_string(rc) + ")");
      FileScan(f, tu.tu, result).run(kernels, seen);
    }
  } catch (...) {
    clang_disposeIndex(index);
    throw;
  }
  clang_disposeIndex(index);
  ordered doc;
  doc["format"] = "streamhaz-kernels";
  doc["version"] = 1;
  doc["kernels"] = kernels;
  result.document = std::move(doc);
  return result;
}

}  // namespace streamhaz::kernels
