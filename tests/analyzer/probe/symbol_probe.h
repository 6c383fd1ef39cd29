/* The symbolisation probe: a return address inside symbol_probe_call_site, and the line of the
   call it returns to. */
#pragma once
#ifdef __cplusplus
extern "C" {
#endif
void* symbol_probe_call_site(int* line);
#ifdef __cplusplus
}
#endif
