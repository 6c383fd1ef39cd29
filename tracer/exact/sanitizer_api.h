// The Compute Sanitizer API entry points the exact tier uses, bound with dlsym from
// libsanitizer-public.so (opened at run time, so that the tracer loads where it is absent).
#pragma once

#include <dlfcn.h>
#include <sanitizer.h>

#include <string>
#include <type_traits>

namespace streamhaz::tracer::glue {

struct SanitizerApi {
  decltype(&sanitizerSubscribe) subscribe = nullptr;
  decltype(&sanitizerEnableDomain) enable_domain = nullptr;
  decltype(&sanitizerAddPatchesFromFile) add_patches = nullptr;
  decltype(&sanitizerPatchInstructions) patch_instructions = nullptr;
  decltype(&sanitizerPatchModule) patch_module = nullptr;
  decltype(&sanitizerUnpatchModule) unpatch_module = nullptr;
  decltype(&sanitizerSetLaunchCallbackData) set_launch_data = nullptr;
  decltype(&sanitizerAlloc) alloc = nullptr;
  decltype(&sanitizerAllocHost) alloc_host = nullptr;
  decltype(&sanitizerMemset) memset = nullptr;
  decltype(&sanitizerMemcpyDeviceToHost) to_host = nullptr;
  decltype(&sanitizerMemcpyHostToDeviceAsync) to_device = nullptr;
  decltype(&sanitizerStreamSynchronize) synchronize = nullptr;
  decltype(&sanitizerGetStreamHandle) stream_handle = nullptr;
  decltype(&sanitizerGetResultString) result_string = nullptr;

  bool bind(void* lib) {
    auto get = [lib](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      return fn != nullptr;
    };
    return get(subscribe, "sanitizerSubscribe") && get(enable_domain, "sanitizerEnableDomain") &&
           get(add_patches, "sanitizerAddPatchesFromFile") && get(patch_instructions, "sanitizerPatchInstructions") &&
           get(patch_module, "sanitizerPatchModule") && get(unpatch_module, "sanitizerUnpatchModule") &&
           get(set_launch_data, "sanitizerSetLaunchCallbackData") && get(alloc, "sanitizerAlloc") &&
           get(alloc_host, "sanitizerAllocHost") && get(memset, "sanitizerMemset") &&
           get(to_host, "sanitizerMemcpyDeviceToHost") && get(to_device, "sanitizerMemcpyHostToDeviceAsync") &&
           get(synchronize, "sanitizerStreamSynchronize") &&
           get(stream_handle, "sanitizerGetStreamHandle") &&
           get(result_string, "sanitizerGetResultString");
  }

  std::string text(SanitizerResult r) const {
    const char* t = nullptr;
    if (result_string) result_string(r, &t);
    return t ? t : "error " + std::to_string(static_cast<int>(r));
  }
};

}  // namespace streamhaz::tracer::glue
