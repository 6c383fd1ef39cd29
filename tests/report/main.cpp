// Catch2 provides main() for report_tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
