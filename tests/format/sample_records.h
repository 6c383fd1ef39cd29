// One record of every kind with non-default values, and helpers to write and read traces.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "streamhaz/trace/records.h"

namespace streamhaz::trace::testing {

std::vector<Record> one_of_each_kind();
// `n` records cycling through one_of_each_kind() with increasing seqs (no End record).
std::vector<Record> many_records(size_t n);
nlohmann::json test_header();
// A fresh path in a per-test temporary folder.
std::string temp_path(const std::string& name);
std::vector<Record> read_all(const std::string& path);
std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& bytes);

}  // namespace streamhaz::trace::testing
