#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "streamhaz/tracer/settings.h"

using namespace streamhaz::tracer;

namespace {

TracerSettings read(const std::map<std::string, std::string>& env, std::vector<std::string>& warnings) {
  return read_tracer_settings(
      [&env](const char* name) {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
      },
      warnings);
}

const SettingSpec& spec(const std::string& env) {
  for (const SettingSpec& s : tracer_settings())
    if (env == s.env) return s;
  FAIL("no setting " << env);
  throw;
}

}  // namespace

TEST_CASE("settings: an empty environment gives the defaults, without a warning") {
  std::vector<std::string> warnings;
  TracerSettings s = read({}, warnings);
  CHECK(warnings.empty());
  CHECK(s.out_dir == "streamhaz-trace");
  CHECK(s.footprints == Footprints::Pointer);
  CHECK(s.exact_launches == ExactLaunches::Memo);
  CHECK(s.gpu_times.mode == GpuTimes::Steps);
  CHECK(s.flush_period == std::chrono::milliseconds(1000));
  CHECK_FALSE(s.disabled);
}

TEST_CASE("settings: every footprint tier is read by its name") {
  for (auto [text, tier] : {std::pair{"api", Footprints::Api}, {"pointer", Footprints::Pointer},
                            {"static", Footprints::Static}, {"exact", Footprints::Exact}}) {
    std::vector<std::string> warnings;
    CHECK(read({{"STREAMHAZ_FOOTPRINTS", text}}, warnings).footprints == tier);
    CHECK(warnings.empty());
    CHECK(footprints_name(tier) == std::string(text));
  }
}

TEST_CASE("settings: the exact tier's launch choice is read by its name") {
  for (auto [text, mode] : {std::pair{"memo", ExactLaunches::Memo}, {"every", ExactLaunches::Every}}) {
    std::vector<std::string> warnings;
    CHECK(read({{"STREAMHAZ_EXACT_LAUNCHES", text}}, warnings).exact_launches == mode);
    CHECK(warnings.empty());
    CHECK(exact_launches_name(mode) == std::string(text));
  }
  std::vector<std::string> warnings;
  CHECK(read({{"STREAMHAZ_EXACT_LAUNCHES", "some"}}, warnings).exact_launches == ExactLaunches::Memo);
  REQUIRE(warnings.size() == 1);
  CHECK_THAT(warnings[0], Catch::Contains("expected memo or every, got 'some'"));
}

TEST_CASE("settings: good values are taken") {
  std::vector<std::string> warnings;
  TracerSettings s = read({{"STREAMHAZ_OUT_DIR", "/x/y"},
                           {"STREAMHAZ_GPU_TIMES", "off"},
                           {"STREAMHAZ_FLUSH_MS", "0"},
                           {"STREAMHAZ_DISABLE", "1"},
                           {"STREAMHAZ_SELF_PROFILE", "on"}},
                          warnings);
  CHECK(warnings.empty());
  CHECK(s.out_dir == "/x/y");
  CHECK(s.gpu_times.mode == GpuTimes::Off);
  CHECK(s.flush_period.count() == 0);
  CHECK(s.disabled);
  CHECK(s.self_profile);
}

TEST_CASE("settings: every bad value is warned the same way and keeps the default") {
  const std::map<std::string, std::string> bad = {{"STREAMHAZ_FOOTPRINTS", "exactly"},
                                                  {"STREAMHAZ_GPU_TIMES", "sometimes"},
                                                  {"STREAMHAZ_FLUSH_MS", "10x"},
                                                  {"STREAMHAZ_DISABLE", "please"},
                                                  {"STREAMHAZ_SELF_PROFILE", "maybe"}};
  std::vector<std::string> warnings;
  TracerSettings s = read(bad, warnings);
  REQUIRE(warnings.size() == bad.size());
  for (const std::string& w : warnings) {
    const std::string variable = w.substr(0, w.find(':'));
    REQUIRE(bad.count(variable));
    CHECK_THAT(w, Catch::Contains("'" + bad.at(variable) + "'") && Catch::Contains("; using "));
  }
  TracerSettings defaults;
  CHECK(s.footprints == defaults.footprints);
  CHECK(s.gpu_times.describe() == defaults.gpu_times.describe());
  CHECK(s.flush_period == defaults.flush_period);
  CHECK(s.disabled == defaults.disabled);
}

TEST_CASE("settings: the flush period is checked, not atoi'd") {
  for (const char* text : {"-5", "1e3", "", " 100", "99999999999999999999", "86400001"})
    CHECK(setting_error(spec("STREAMHAZ_FLUSH_MS"), text));
  CHECK_FALSE(setting_error(spec("STREAMHAZ_FLUSH_MS"), "86400000"));
  CHECK_FALSE(setting_error(spec("STREAMHAZ_FLUSH_MS"), "250"));
}

TEST_CASE("settings: the table names each variable once, with help and a way to show its default") {
  std::set<std::string> names, options;
  for (const SettingSpec& s : tracer_settings()) {
    CHECK(names.insert(s.env).second);
    if (s.option) CHECK(options.insert(s.option).second);
    CHECK(std::string(s.help).size() > 10);
    CHECK_FALSE(s.show(TracerSettings{}).empty());
    // The default, shown, reads back as a valid value: --help never advertises a bad one.
    CHECK_FALSE(setting_error(s, s.show(TracerSettings{})));
  }
  CHECK(names.count("STREAMHAZ_DISABLE"));
}
