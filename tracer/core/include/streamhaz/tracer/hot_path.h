// The code every traced call runs. Between two calls the program's own work evicts the tracer's
// code from the caches and its pages from the TLB, so a call pays for each code line and page it
// touches: the functions marked here are placed together (GCC puts `hot` functions in .text.hot,
// which the linker gathers in one stretch) rather than wherever their files fall in the library.
#pragma once

#define STREAMHAZ_HOT [[gnu::hot]]
